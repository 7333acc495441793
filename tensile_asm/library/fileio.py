"""Reading YAML/msgpack files with user-facing errors, and writing them atomically (``atomic_file.py``)."""

from __future__ import annotations

import gzip
import hashlib
import marshal
import re
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
        data = _load_fast(text)
        if data is _NOT_FAST:
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


# Logic files are mostly their exact-size table: thousands of lines of nested block sequences of numbers
# (``- - - - 4`` / ``      - 2368`` / ``    - - 6``). PyYAML builds a node, resolves a tag and constructs a
# value for each of them in Python (about 0.1 s per lite_configs file). ``_load_fast`` reads such a
# top-level entry itself when every line of it is in that narrow grammar (plain decimal ints, and floats
# with a fraction, as YAML 1.1 resolves them), hands the rest of the text to PyYAML with the entry
# replaced by a tagged placeholder, and puts its value back. Anything else (another scalar, a comment, a
# tab, flow style, an entry followed by an indented line) leaves the whole text to PyYAML; so does a
# placeholder PyYAML did not construct as a node (it ended up inside a quoted scalar, say).
_NOT_FAST = object()
_FAST_MIN_LINES = 64
_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+(?:[eE][-+][0-9]+)?)?"
# one line of such an entry: indentation, dashes, then a number or a flow list of numbers ([704, 1024, 1, 128])
_BLOCK_LINE = re.compile(rf"^( *)((?:- )+)({_NUMBER}|\[{_NUMBER}(?:, {_NUMBER})*\])$", re.M)
_PLACEHOLDER = "!tensile-asm-block"


class _BlockLoader(Loader):
    """``Loader`` that constructs ``_PLACEHOLDER`` nodes from ``blocks`` (each used once), and resolves a
    plain scalar's tag once per distinct text (``resolve`` depends on nothing else without path resolvers)."""

    blocks: list
    used: int = 0

    def __init__(self, stream):
        super().__init__(stream)
        self._scalar_tags: dict = {}

    def resolve(self, kind, value, implicit):
        if kind is not yaml.ScalarNode or self.yaml_path_resolvers:
            return super().resolve(kind, value, implicit)
        key = (value, implicit)
        tag = self._scalar_tags.get(key)
        if tag is None:
            tag = self._scalar_tags[key] = super().resolve(kind, value, implicit)
        return tag


def _construct_block(loader: _BlockLoader, node) -> Any:
    if not isinstance(node, yaml.ScalarNode) or not node.value.isdigit() or int(node.value) >= len(loader.blocks):
        raise yaml.constructor.ConstructorError(None, None, f"unexpected {_PLACEHOLDER} node", node.start_mark)
    loader.used += 1
    return loader.blocks[int(node.value)]


_BlockLoader.add_constructor(_PLACEHOLDER, _construct_block)


def _number(text: str) -> int | float:
    return float(text) if "." in text else int(text)


def _numeric_block(lines: list[str]) -> Any:
    """The value of the top-level block-sequence entry ``lines`` (the first at column 0), or _NOT_FAST."""
    found = _BLOCK_LINE.findall("\n".join(lines))
    if len(found) != len(lines):                    # a line outside the grammar
        return _NOT_FAST
    root: list = []
    stack: list[tuple[int, list]] = [(0, root)]     # (column of a sequence's dashes, the sequence)
    col_top, seq_top = 0, root
    for indent, dashes, value in found:
        col = len(indent)
        if col != col_top:
            while stack[-1][0] > col:
                stack.pop()
                if not stack:
                    return _NOT_FAST
            if stack[-1][0] != col:
                return _NOT_FAST
            col_top, seq_top = stack[-1]
        seq = seq_top
        for k in range(1, len(dashes) >> 1):        # "- - x": an entry that is itself a sequence
            inner: list = []
            seq.append(inner)
            seq = inner
            stack.append((col + 2 * k, inner))
        if seq is not seq_top:
            col_top, seq_top = stack[-1]
        if value[0] == "[":
            seq.append([_number(x) for x in value[1:-1].split(", ")])
        else:
            seq.append(float(value) if "." in value else int(value))
    return root[0] if len(root) == 1 else _NOT_FAST


def _load_fast(text: bytes) -> Any:
    """``yaml.load(text, Loader)``'s value, its numeric table entries read directly; _NOT_FAST when this
    path does not apply (the caller then parses the whole text with PyYAML)."""
    if len(text) < 4096 or b"\r" in text or text[:3] == b"\xef\xbb\xbf":
        return _NOT_FAST
    try:
        lines = text.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return _NOT_FAST
    blocks, out, i, n = [], [], 0, len(lines)
    while i < n:
        line = lines[i]
        j = i + 1
        if line.startswith("- - "):
            while j < n and lines[j].startswith(" "):
                j += 1
            # the entry must end at the next top-level entry, a document marker or the end of the text
            ends = j == n or lines[j].startswith(("-", "...")) or (j == n - 1 and lines[j] == "")
            value = _numeric_block(lines[i:j]) if ends and j - i >= _FAST_MIN_LINES else _NOT_FAST
            if value is not _NOT_FAST:
                out.append(f"- {_PLACEHOLDER} {len(blocks)}")
                blocks.append(value)
                i = j
                continue
        out.extend(lines[i:j])
        i = j
    if not blocks:
        return _NOT_FAST
    loader = _BlockLoader("\n".join(out))
    loader.blocks = blocks
    try:
        data = loader.get_single_data()
    except yaml.YAMLError:
        return _NOT_FAST
    finally:
        loader.dispose()
    return data if loader.used == len(blocks) else _NOT_FAST


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
