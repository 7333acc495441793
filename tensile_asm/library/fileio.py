"""Reading YAML/msgpack files with user-facing errors, and writing them atomically (``atomic_file.py``)."""

from __future__ import annotations

import gzip
import hashlib
import marshal
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import msgpack
import yaml

from tensile_asm.atomic_file import publish, write_atomic
from tensile_asm.errors import UserError

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _read_bytes(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except OSError as e:
        raise UserError(f"{path}: cannot read it ({e.strerror})") from None
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return data


# Parsed YAML kept by a hash of the file's bytes (``parse_cache``): PyYAML builds Python objects in Python
# even with the C parser (about 0.1 s per logic file of lite_configs); marshal reads them back in
# milliseconds. The cache holds plain data only (a document marshal cannot write is not cached).
_parse_cache: Path | None = None


@contextmanager
def parse_cache(directory: str | Path | None) -> Iterator[None]:
    """Within this block, ``load_yaml`` keeps and reuses parsed files under ``directory`` (None: not)."""
    global _parse_cache
    before, _parse_cache = _parse_cache, (Path(directory) if directory is not None else None)
    try:
        yield
    finally:
        _parse_cache = before


def _parse_cache_path(text: bytes) -> Path | None:
    if _parse_cache is None:
        return None
    key = hashlib.sha256(f"yaml:{yaml.__version__}:{sys.version}\0".encode() + text).hexdigest()
    return _parse_cache / "parsed" / key[:2] / key


def load_yaml(path: str | Path) -> Any:
    """Parse a YAML file (``.gz`` allowed); broken YAML is a UserError naming the file and line."""
    path = Path(path)
    text = _read_bytes(path)
    cached = _parse_cache_path(text)
    if cached is not None:
        try:
            return marshal.loads(cached.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            pass
    try:
        data = yaml.load(text, Loader=Loader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        what = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise UserError(f"{where}: not valid YAML ({what}); fix the file") from None
    if cached is not None:
        try:
            write_atomic(cached, marshal.dumps(data))
        except (ValueError, OSError):
            pass
    return data


def load_msgpack(path: str | Path) -> Any:
    path = Path(path)
    try:
        return msgpack.unpackb(_read_bytes(path), strict_map_key=False, raw=False)
    except (msgpack.UnpackException, ValueError) as e:
        raise UserError(f"{path}: not a valid msgpack file ({e})") from None


def dump_yaml(data: Any, explicit: bool = False) -> str:
    """YAML text in Tensile's style: sorted keys, flow style for leaf lists and maps."""
    return yaml.dump(data, Dumper=Dumper, default_flow_style=None, explicit_start=explicit,
                     explicit_end=explicit, width=120)


__all__ = ["Loader", "Dumper", "parse_cache", "load_yaml", "load_msgpack", "dump_yaml", "publish", "write_atomic"]
