"""fileio's fast path for logic files' numeric tables gives exactly PyYAML's value, or steps aside."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from tensile_asm.library import fileio

LITE = Path(__file__).resolve().parents[1].parent / "shared/data/logic/lite_configs"


def _pyyaml(text: str):
    return yaml.load(text, Loader=fileio.Loader)


def _table(rng: random.Random, rows: int, flow: bool) -> str:
    """A logic-file-like document: a head PyYAML must read, then a block table of sizes and [index, perf]."""
    lines = ["- {MinimumRequiredVersion: 4.9.4}", "- vega10", "- 'quoted: - - 1'", "- - Name: x",
             "    Value: [1, 2.5, null, true]"]
    for r in range(rows):
        sizes = [rng.choice([0, 1, rng.randrange(2, 10**6), -rng.randrange(1, 99)]) for _ in range(4)]
        perf = rng.choice([0.0, -0.0, 176.125, rng.random() * 1e3, 1.0e-05, 3.5e+20])
        lead = "- - " if r == 0 else "  - "
        if flow:
            lines.append(f"{lead}- [{', '.join(map(str, sizes))}]")
            lines.append(f"    - [{r % 7}, {yaml.dump(perf).split(chr(10))[0]}]")
        else:
            lines.append(f"{lead}- - {sizes[0]}")
            lines += [f"      - {v}" for v in sizes[1:]]
            lines.append(f"    - - {r % 7}")
            lines.append(f"      - {yaml.dump(perf).split(chr(10))[0]}")
    lines += ["- null", "- [DeviceEfficiency]", ""]
    return "\n".join(lines)


@pytest.mark.parametrize("flow", [False, True])
def test_fast_path_equals_pyyaml_on_random_tables(flow):
    rng = random.Random(7 + flow)
    text = _table(rng, 300, flow)
    fast = fileio._load_fast(text.encode())
    assert fast is not fileio._NOT_FAST                 # the table was read by the fast path
    assert repr(fast) == repr(_pyyaml(text))            # repr: 1 vs 1.0 and -0.0 vs 0.0 differ too


@pytest.mark.parametrize("breaker", ["      - 0x10", "      - 012", "      - 1e5", "      - .inf", "      # note",
                                     "      - 1_000", "\t    - 5", "      - ~", "      - 7 "])
def test_a_line_outside_the_grammar_leaves_the_entry_to_pyyaml(breaker):
    lines = _table(random.Random(3), 100, False).split("\n")
    lines.insert(30, breaker)
    text = "\n".join(lines)
    try:
        expected = repr(_pyyaml(text))
    except yaml.YAMLError:
        expected = None
    fast = fileio._load_fast(text.encode())
    if fast is fileio._NOT_FAST:
        return                                          # the caller parses it all with PyYAML
    assert repr(fast) == expected


def test_placeholder_inside_a_quoted_scalar_falls_back(tmp_path):
    table = _table(random.Random(5), 80, False).split("\n")
    at = next(i for i, line in enumerate(table) if line.startswith("- - - "))
    text = "\n".join(table[:at] + ['- "open', *table[at:-3], 'close"', *table[-3:]])
    fast = fileio._load_fast(text.encode())
    assert fast is fileio._NOT_FAST or repr(fast) == repr(_pyyaml(text))
    (tmp_path / "logic.yaml").write_text(text)
    assert repr(fileio.load_yaml(tmp_path / "logic.yaml")) == repr(_pyyaml(text))


def test_lite_configs_read_identically():
    files = sorted(LITE.glob("*.yaml"))
    assert files
    for path in files:
        text = path.read_bytes()
        fast = fileio._load_fast(text)
        assert fast is not fileio._NOT_FAST, path
        assert repr(fast) == repr(_pyyaml(text)), path
