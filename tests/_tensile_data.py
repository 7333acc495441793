"""Shared, cached access to the reference data in ../shared/data for the Tensile-format tests.

Parsing the logic files is the slow part of these tests: they are read with the library's own loader
(``fileio.load_yaml``: the fast path for Tensile's YAML, PyYAML for the rest; tests/test_fast_yaml.py checks the
two agree), each once per test session. Callers must not mutate what they get.
"""

import gzip
from functools import lru_cache
from pathlib import Path

import msgpack

from tensile_asm.library.fileio import load_yaml
from tensile_asm.library.logic import read_logic_file

SHARED = Path(__file__).resolve().parents[2] / "shared"
LOGIC = SHARED / "data" / "logic"
LIBS = SHARED / "data" / "libraries"


@lru_cache(maxsize=None)
def raw_logic(path) -> list:
    return load_yaml(Path(path))


@lru_cache(maxsize=None)
def logic_file(path):
    return read_logic_file(path, data=raw_logic(Path(path)))


@lru_cache(maxsize=None)
def kernels_lite() -> dict:
    """Tensile's KernelsLite library, from its .dat (0.2 s; its .yaml holds the same data and takes ~15 s to
    parse: test_library's --slow test checks the two select alike)."""
    return msgpack.unpackb(gzip.decompress((LIBS / "KernelsLite.dat.gz").read_bytes()), raw=False,
                           strict_map_key=False)
