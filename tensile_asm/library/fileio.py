"""Reading YAML/msgpack files with user-facing errors, and writing files atomically (temp name + rename)."""

from __future__ import annotations

import gzip
import os
import tempfile
from pathlib import Path
from typing import Any

import msgpack
import yaml

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


def load_yaml(path: str | Path) -> Any:
    """Parse a YAML file (``.gz`` allowed); broken YAML is a UserError naming the file and line."""
    path = Path(path)
    text = _read_bytes(path)
    try:
        return yaml.load(text, Loader=Loader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        what = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise UserError(f"{where}: not valid YAML ({what}); fix the file") from None


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


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def publish(tmp: str | Path, path: str | Path) -> None:
    """Give a temporary file normal permissions and rename it over ``path``."""
    os.chmod(tmp, 0o666 & ~_umask())
    os.replace(tmp, path)


def write_atomic(path: str | Path, data: bytes | str) -> Path:
    """Write ``data`` to a temporary file beside ``path`` and rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        publish(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
