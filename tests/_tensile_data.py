"""Shared, cached access to the reference data in ../shared/data for the Tensile-format tests.

Parsing the logic files is the slow part of these tests (pure-Python YAML construction, ~0.3 s per file);
each file is read once per test session here. Callers must not mutate what they get.
"""

import gzip
from functools import lru_cache
from pathlib import Path

import yaml

from tensile_asm.library.logic import read_logic_file

SHARED = Path(__file__).resolve().parents[2] / "shared"
LOGIC = SHARED / "data" / "logic"
LIBS = SHARED / "data" / "libraries"


@lru_cache(maxsize=None)
def raw_logic(path) -> list:
    return yaml.load(Path(path).read_text(), Loader=yaml.CSafeLoader)


@lru_cache(maxsize=None)
def logic_file(path):
    return read_logic_file(path, data=raw_logic(Path(path)))


@lru_cache(maxsize=None)
def kernels_lite() -> dict:
    return yaml.load(gzip.open(LIBS / "KernelsLite.yaml.gz"), Loader=yaml.CSafeLoader)
