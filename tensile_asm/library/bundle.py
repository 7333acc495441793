"""Clang offload bundles, the container Tensile ships its code objects in, written and read here.

Tensile 4.44 (``BuildCommands/SharedCommands.py: compressCodeObject``) packs each merged code object with
``clang-offload-bundler --compress --type=o --bundle-align=4096
--targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--<gfx> --input=/dev/null --input=CO``.

Uncompressed bundle (all integers little-endian u64)::

    "__CLANG_OFFLOAD_BUNDLE__"  number of entries
    per entry: offset  size  id length  id   (ids as the bundler normalises them: the host's
               "host-x86_64-unknown-linux-gnu-", the device's "hipv4-amdgcn-amd-amdhsa--gfx90a")
    zero padding; each entry's bytes at its offset, aligned to the bundle alignment (4096)

Compressed bundle ("CCOB"), wrapping the whole uncompressed bundle; method 0 zlib, 1 zstd::

    v1: "CCOB" u16 version u16 method u32 uncompressed size             u64 hash
    v2: "CCOB" u16 version u16 method u32 file size  u32 uncompressed size  u64 hash
    v3: "CCOB" u16 version u16 method u64 file size  u64 uncompressed size  u64 hash

The hash is the first 8 bytes of the MD5 of the uncompressed bundle. LLVM 19's bundler writes v2 and
reads v1 and v2; LLVM 22's writes v3 and reads all three. We write v2 (what ROCm 6's runtime reads) with zstd, as the bundler
does when built with zstd (Debian's is). zstd comes from the system's libzstd through ctypes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import struct
import zlib
from dataclasses import dataclass

from tensile_asm.errors import UserError

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
COMPRESSED_MAGIC = b"CCOB"
HOST_ID = "host-x86_64-unknown-linux-gnu-"
ALIGN = 4096
ZLIB, ZSTD = 0, 1
# LLVM 19's clang-offload-bundler --compress uses zstd's level 3: at it our compressed bundle is byte for
# byte the bundler's (tests/test_bundle.py)
ZSTD_LEVEL = 3
METHODS = {"zlib": ZLIB, "zstd": ZSTD}


def device_id(gfx: str) -> str:
    """The bundle entry id of a HIP code object for ``gfx`` (target id features kept: gfx90a:xnack-)."""
    return f"hipv4-amdgcn-amd-amdhsa--{gfx}"


def is_bundle(data: bytes) -> bool:
    return data.startswith(MAGIC) or data.startswith(COMPRESSED_MAGIC)


# ---------------------------------------------------------------------------------------------- zstd

class _Zstd:
    def __init__(self) -> None:
        name = ctypes.util.find_library("zstd") or "libzstd.so.1"
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            raise UserError("zstd-compressed offload bundles need the system's zstd library (libzstd.so.1); "
                            "install it (Debian: apt install libzstd1) or write with --compress zlib") from None
        lib.ZSTD_compressBound.restype = ctypes.c_size_t
        lib.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
        lib.ZSTD_compress.restype = ctypes.c_size_t
        lib.ZSTD_compress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t,
                                      ctypes.c_int]
        lib.ZSTD_decompress.restype = ctypes.c_size_t
        lib.ZSTD_decompress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
        lib.ZSTD_isError.restype = ctypes.c_uint
        lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
        lib.ZSTD_getErrorName.restype = ctypes.c_char_p
        lib.ZSTD_getErrorName.argtypes = [ctypes.c_size_t]
        self.lib = lib

    def _check(self, n: int) -> int:
        if self.lib.ZSTD_isError(n):
            raise ValueError(f"zstd: {self.lib.ZSTD_getErrorName(n).decode()}")
        return n

    def compress(self, data: bytes, level: int) -> bytes:
        cap = self.lib.ZSTD_compressBound(len(data))
        out = ctypes.create_string_buffer(cap)
        n = self._check(self.lib.ZSTD_compress(out, cap, data, len(data), level))
        return out.raw[:n]

    def decompress(self, data: bytes, size: int) -> bytes:
        out = ctypes.create_string_buffer(max(size, 1))
        n = self._check(self.lib.ZSTD_decompress(out, size, data, len(data)))
        if n != size:
            raise ValueError(f"zstd: {n} bytes decompressed, the header says {size}")
        return out.raw[:n]


_zstd: _Zstd | None = None


def _zstd_lib() -> _Zstd:
    global _zstd
    if _zstd is None:
        _zstd = _Zstd()
    return _zstd


# ------------------------------------------------------------------------------------------- writing

def write_bundle(entries: list[tuple[str, bytes]], align: int = ALIGN) -> bytes:
    """An uncompressed bundle of (id, bytes) entries in the order given, each aligned to ``align``."""
    ids = [ident.encode() for ident, _ in entries]
    offset = _align(len(MAGIC) + 8 + sum(24 + len(i) for i in ids), align)
    header, placed = bytearray(MAGIC + struct.pack("<Q", len(entries))), []
    for ident, (_, data) in zip(ids, entries):
        header += struct.pack("<QQQ", offset, len(data), len(ident)) + ident
        placed.append((offset, data))
        offset = _align(offset + len(data), align)
    out = header
    for off, data in placed:
        out += bytes(off - len(out)) + data if data else b""
    return bytes(out)


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def compress_bundle(bundle: bytes, method: str = "zstd", version: int = 2, level: int | None = None) -> bytes:
    """Wrap an uncompressed bundle in a CCOB header (version 1, 2 or 3) with zlib or zstd."""
    if method not in METHODS:
        raise UserError(f"compression method {method!r} is not known; use zstd or zlib")
    if method == "zstd":
        payload = _zstd_lib().compress(bundle, ZSTD_LEVEL if level is None else level)
    else:
        payload = zlib.compress(bundle, 6 if level is None else level)
    digest = hashlib.md5(bundle).digest()[:8]
    m = METHODS[method]
    if version == 1:
        head = COMPRESSED_MAGIC + struct.pack("<HHI", 1, m, len(bundle)) + digest
    elif version == 2:
        total = 24 + len(payload)
        if total >= 2 ** 32 or len(bundle) >= 2 ** 32:
            raise UserError(f"a {len(bundle)}-byte code object bundle is too large for the version 2 compressed "
                            f"format; use version 3")
        head = COMPRESSED_MAGIC + struct.pack("<HHII", 2, m, total, len(bundle)) + digest
    elif version == 3:
        head = COMPRESSED_MAGIC + struct.pack("<HHQQ", 3, m, 32 + len(payload), len(bundle)) + digest
    else:
        raise UserError(f"compressed bundle version {version} is not known; use 1, 2 or 3")
    return head + payload


def bundle_code_object(code_object: bytes, gfx: str, compress: str | None = "zstd", version: int = 2) -> bytes:
    """A code object packed as Tensile asks clang-offload-bundler to: an empty host entry, the device entry
    for ``gfx`` aligned to 4096, compressed with ``compress`` (None: not compressed)."""
    bundle = write_bundle([(HOST_ID, b""), (device_id(gfx), code_object)])
    return bundle if compress is None else compress_bundle(bundle, compress, version)


# ------------------------------------------------------------------------------------------- reading

@dataclass(frozen=True)
class BundleEntry:
    id: str
    data: bytes

    @property
    def gfx(self) -> str | None:
        """The target's processor (``gfx90a``, features dropped) for an amdgcn entry, else None."""
        if "amdgcn" not in self.id or "--" not in self.id:
            return None
        return self.id.rsplit("--", 1)[1].split(":")[0] or None


def decompress_bundle(data: bytes, where: str = "bundle") -> bytes:
    """The uncompressed bundle inside a CCOB file (checked against its sizes and hash)."""
    if len(data) < 16 or not data.startswith(COMPRESSED_MAGIC):
        raise UserError(f"{where}: not a compressed offload bundle (no CCOB magic)")
    version, method = struct.unpack_from("<HH", data, 4)
    if version == 1:
        (size,), digest, start, total = struct.unpack_from("<I", data, 8), data[12:20], 20, len(data)
    elif version == 2:
        total, size = struct.unpack_from("<II", data, 8)
        digest, start = data[16:24], 24
    elif version == 3:
        total, size = struct.unpack_from("<QQ", data, 8)
        digest, start = data[24:32], 32
    else:
        raise UserError(f"{where}: compressed offload bundle version {version} is not known (1, 2 and 3 are)")
    if total > len(data):
        raise UserError(f"{where}: truncated compressed bundle ({len(data)} bytes, its header says {total})")
    payload = data[start:total]
    try:
        if method == ZLIB:
            out = zlib.decompress(payload)
        elif method == ZSTD:
            out = _zstd_lib().decompress(payload, size)
        else:
            raise UserError(f"{where}: compression method {method} is not known (0 zlib, 1 zstd)")
    except (zlib.error, ValueError) as e:
        raise UserError(f"{where}: the compressed bundle does not decompress ({e})") from None
    if len(out) != size:
        raise UserError(f"{where}: {len(out)} bytes decompressed, the header says {size}")
    if hashlib.md5(out).digest()[:8] != digest:
        raise UserError(f"{where}: the decompressed bundle does not match its hash")
    return out


def read_bundle(data: bytes, where: str = "bundle") -> list[BundleEntry]:
    """The entries of an offload bundle, compressed or not."""
    if data.startswith(COMPRESSED_MAGIC):
        data = decompress_bundle(data, where)
    if not data.startswith(MAGIC):
        raise UserError(f"{where}: not an offload bundle (no {MAGIC.decode()} magic)")
    try:
        (count,) = struct.unpack_from("<Q", data, len(MAGIC))
        pos, entries = len(MAGIC) + 8, []
        for _ in range(count):
            offset, size, id_len = struct.unpack_from("<QQQ", data, pos)
            ident = data[pos + 24:pos + 24 + id_len].decode()
            pos += 24 + id_len
            if offset + size > len(data):
                raise struct.error(f"entry {ident} runs past the end")
            entries.append(BundleEntry(ident, data[offset:offset + size]))
    except (struct.error, UnicodeDecodeError) as e:
        raise UserError(f"{where}: broken offload bundle header ({e})") from None
    return entries


def code_object_for(data: bytes, gfx: str | None = None, where: str = "code object") -> bytes:
    """The ELF code object in ``data``: ``data`` itself if it is an ELF, else the bundle's amdgcn entry
    (for ``gfx`` when given; the only one otherwise)."""
    if data.startswith(b"\x7fELF"):
        return data
    if not is_bundle(data):
        raise UserError(f"{where}: neither an ELF code object nor an offload bundle")
    devices = [e for e in read_bundle(data, where) if e.gfx is not None and e.data]
    if gfx is not None:
        devices = [e for e in devices if e.gfx == gfx.split(":")[0]]
    if len(devices) != 1:
        ids = ", ".join(e.id for e in read_bundle(data, where))
        want = f"for {gfx}" if gfx else "(one amdgcn entry)"
        raise UserError(f"{where}: the bundle has {len(devices)} code objects {want}; its entries: {ids}")
    return devices[0].data
