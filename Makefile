# make demo / make test install what they need (tools/setup), then run.
VENV := .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?= -n 2   # two workers: the machines have two cores

.PHONY: setup test demo clean

setup:
	@tools/setup

test: setup
	$(PY) -m pytest $(PYTEST_ARGS)

demo: setup
	$(PY) -m tensile_asm.cli.demo

clean:
	rm -rf out build .pytest_cache
