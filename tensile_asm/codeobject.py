"""Read an AMDGPU code object (``.co``) back: target, per-kernel metadata, kernel descriptors, code.

Reading only; the writing side lives elsewhere. Facts used here (LLVM AMDGPUUsage, "Kernel
Descriptor" and ``llvm/Support/AMDHSAKernelDescriptor.h``): the descriptor is the 64-byte object
``<kernel>.kd``; its fields are group_segment_fixed_size @0, private_segment_fixed_size @4,
kernarg_size @8, kernel_code_entry_byte_offset @16 (int64, relative to the descriptor),
compute_pgm_rsrc3 @44, rsrc1 @48, rsrc2 @52, kernel_code_properties @56 (u16), kernarg_preload @58.
The metadata is a msgpack map in the ``NT_AMDGPU_METADATA`` note (type 32, owner "AMDGPU").
"""

from __future__ import annotations

import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tensile_asm.errors import ToolchainError, UserError

NT_AMDGPU_METADATA = 32
KERNEL_DESCRIPTOR_BYTES = 64


def _bits(value: int, shift: int, width: int) -> int:
    return (value >> shift) & ((1 << width) - 1)


@dataclass(frozen=True)
class KernelDescriptor:
    """The decoded 64-byte kernel descriptor (the fields the emulator and inspection need)."""

    group_segment_fixed_size: int
    private_segment_fixed_size: int
    kernarg_size: int
    kernel_code_entry_byte_offset: int
    compute_pgm_rsrc1: int
    compute_pgm_rsrc2: int
    compute_pgm_rsrc3: int
    kernel_code_properties: int
    kernarg_preload: int

    @classmethod
    def decode(cls, raw: bytes) -> "KernelDescriptor":
        if len(raw) != KERNEL_DESCRIPTOR_BYTES:
            raise ValueError(f"a kernel descriptor is {KERNEL_DESCRIPTOR_BYTES} bytes, not {len(raw)}")
        g, p, ka = struct.unpack_from("<III", raw, 0)
        (entry,) = struct.unpack_from("<q", raw, 16)
        rsrc3, rsrc1, rsrc2 = struct.unpack_from("<III", raw, 44)
        props, preload = struct.unpack_from("<HH", raw, 56)
        return cls(g, p, ka, entry, rsrc1, rsrc2, rsrc3, props, preload)

    # compute_pgm_rsrc1
    @property
    def granulated_workitem_vgpr_count(self) -> int:
        return _bits(self.compute_pgm_rsrc1, 0, 6)

    @property
    def granulated_wavefront_sgpr_count(self) -> int:
        return _bits(self.compute_pgm_rsrc1, 6, 4)

    @property
    def float_round_mode_32(self) -> int:
        return _bits(self.compute_pgm_rsrc1, 12, 2)

    @property
    def float_round_mode_16_64(self) -> int:
        return _bits(self.compute_pgm_rsrc1, 14, 2)

    @property
    def float_denorm_mode_32(self) -> int:
        return _bits(self.compute_pgm_rsrc1, 16, 2)    # 0 flush src+dst ... 3 flush none

    @property
    def float_denorm_mode_16_64(self) -> int:
        return _bits(self.compute_pgm_rsrc1, 18, 2)

    @property
    def enable_dx10_clamp(self) -> bool:
        return bool(_bits(self.compute_pgm_rsrc1, 21, 1))

    @property
    def enable_ieee_mode(self) -> bool:
        return bool(_bits(self.compute_pgm_rsrc1, 23, 1))

    # compute_pgm_rsrc2
    @property
    def enable_private_segment(self) -> bool:
        return bool(_bits(self.compute_pgm_rsrc2, 0, 1))

    @property
    def user_sgpr_count(self) -> int:
        return _bits(self.compute_pgm_rsrc2, 1, 5)

    @property
    def enable_sgpr_workgroup_id(self) -> tuple[bool, bool, bool]:
        return tuple(bool(_bits(self.compute_pgm_rsrc2, 7 + i, 1)) for i in range(3))

    @property
    def enable_sgpr_workgroup_info(self) -> bool:
        return bool(_bits(self.compute_pgm_rsrc2, 10, 1))

    @property
    def enable_vgpr_workitem_id(self) -> int:
        return _bits(self.compute_pgm_rsrc2, 11, 2)     # 0: x, 1: x y, 2: x y z

    @property
    def granulated_lds_size(self) -> int:
        return _bits(self.compute_pgm_rsrc2, 15, 9)

    # kernarg_preload (gfx940+): LLVM's KERNARG_PRELOAD_SPEC_LENGTH (bits 0-6) and _OFFSET (bits 7-15), in dwords
    @property
    def kernarg_preload_length(self) -> int:
        """Dwords of the kernarg segment a preloading dispatch puts in the user SGPRs after the enabled ones."""
        return _bits(self.kernarg_preload, 0, 7)

    @property
    def kernarg_preload_offset(self) -> int:
        """The first of them, in dwords from the start of the kernarg segment."""
        return _bits(self.kernarg_preload, 7, 9)

    # compute_pgm_rsrc3 (gfx90a+)
    @property
    def accum_offset(self) -> int:
        """First AGPR's position in the unified register file (gfx90a+), in registers."""
        return (_bits(self.compute_pgm_rsrc3, 0, 6) + 1) * 4

    @property
    def tg_split(self) -> bool:
        return bool(_bits(self.compute_pgm_rsrc3, 16, 1))

    # kernel_code_properties
    def _prop(self, bit: int) -> bool:
        return bool(_bits(self.kernel_code_properties, bit, 1))

    @property
    def enable_sgpr_private_segment_buffer(self) -> bool:
        return self._prop(0)

    @property
    def enable_sgpr_dispatch_ptr(self) -> bool:
        return self._prop(1)

    @property
    def enable_sgpr_queue_ptr(self) -> bool:
        return self._prop(2)

    @property
    def enable_sgpr_kernarg_segment_ptr(self) -> bool:
        return self._prop(3)

    @property
    def enable_sgpr_dispatch_id(self) -> bool:
        return self._prop(4)

    @property
    def enable_sgpr_flat_scratch_init(self) -> bool:
        return self._prop(5)

    @property
    def enable_sgpr_private_segment_size(self) -> bool:
        return self._prop(6)

    @property
    def enable_wavefront_size32(self) -> bool:
        return self._prop(10)

    @property
    def uses_dynamic_stack(self) -> bool:
        return self._prop(11)

    def vgprs(self, granule: int) -> int:
        """Registers per lane the descriptor grants (VGPRs plus AGPRs on a unified file)."""
        return (self.granulated_workitem_vgpr_count + 1) * granule

    def sgprs(self, granule: int = 8) -> int:
        """SGPRs the descriptor grants, VCC and the other reserved registers included (gfx9 encoding)."""
        return (self.granulated_wavefront_sgpr_count + 1) * granule


@dataclass
class KernelObject:
    name: str
    metadata: dict                  # this kernel's entry of amdhsa.kernels
    descriptor: KernelDescriptor
    descriptor_address: int
    entry: int                      # address of the first instruction
    code_size: int                  # bytes of the kernel's function symbol (0 when unknown)

    @property
    def args(self) -> list[dict]:
        return list(self.metadata.get(".args", []))


@dataclass
class CodeObject:
    path: Path
    target: str                     # e.g. amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-
    e_flags: int
    abi_version: int
    metadata: dict                  # merged metadata map (amdhsa.kernels concatenated across notes)
    kernels: dict = field(default_factory=dict)
    functions: dict = field(default_factory=dict)     # function symbol -> (address, size)

    @property
    def processor(self) -> str:
        """The bare processor name (gfx90a) from the target id."""
        tail = self.target.split("--")[-1] if "--" in self.target else self.target.split("-")[-1]
        return tail.split(":")[0]


def _read_notes(elf) -> list[dict]:
    import msgpack

    docs = []
    for sec in elf.iter_sections():
        if sec["sh_type"] != "SHT_NOTE":
            continue
        for note in sec.iter_notes():
            if note["n_name"] == "AMDGPU" and note["n_type"] in (NT_AMDGPU_METADATA, "NT_AMDGPU_METADATA"):
                desc = note["n_descdata"]
                if isinstance(desc, str):
                    desc = desc.encode("latin-1")
                docs.append(msgpack.unpackb(desc, raw=False, strict_map_key=False))
    return docs


_UNPACKED: dict = {}
_UNPACK_DIR: tempfile.TemporaryDirectory | None = None


def elf_file(path) -> Path:
    """``path`` itself for an ELF; for a clang offload bundle (compressed or not: Tensile's
    ``TensileLibrary_<gfx>.co``), its one amdgcn code object unpacked into a temporary file (once per file
    version; removed when the process ends)."""
    global _UNPACK_DIR
    from tensile_asm.library import bundle

    path = Path(path)
    with open(path, "rb") as f:
        head = f.read(32)
    if not bundle.is_bundle(head):
        return path
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _UNPACKED:
        if _UNPACK_DIR is None:
            _UNPACK_DIR = tempfile.TemporaryDirectory(prefix="tensile-asm-unbundled-")
        out = Path(_UNPACK_DIR.name) / f"{len(_UNPACKED)}-{path.stem}.co"
        out.write_bytes(bundle.code_object_for(path.read_bytes(), None, str(path)))
        _UNPACKED[key] = out
    return _UNPACKED[key]


def read_code_object(path) -> CodeObject:
    """Read ``path``; a file that is not an AMDGPU code object is a ``UserError``."""
    try:
        from elftools.common.exceptions import ELFError
        from elftools.elf.elffile import ELFFile
    except ImportError:
        raise UserError("reading code objects needs pyelftools and msgpack; install them with "
                        "'pip install pyelftools msgpack'") from None
    path = Path(path)
    if not path.is_file():
        raise UserError(f"code object {path} does not exist; build it first")
    with open(elf_file(path), "rb") as f:
        try:
            elf = ELFFile(f)
        except ELFError as e:
            raise UserError(f"{path} is not an ELF code object ({e}); pass a .co built for an AMD GPU") from None
        if elf["e_machine"] not in ("EM_AMDGPU", 224):
            raise UserError(f"{path} is an ELF for {elf['e_machine']}, not an AMDGPU code object")
        docs = _read_notes(elf)
        merged: dict[str, Any] = {}
        kernels_md: list[dict] = []
        for doc in docs:
            kernels_md.extend(doc.get("amdhsa.kernels", []))
            merged.update({k: v for k, v in doc.items() if k != "amdhsa.kernels"})
        merged["amdhsa.kernels"] = kernels_md
        symtab = elf.get_section_by_name(".symtab") or elf.get_section_by_name(".dynsym")
        symbols = list(symtab.iter_symbols()) if symtab is not None else []
        functions = {s.name: (s["st_value"], s["st_size"]) for s in symbols
                     if s["st_info"]["type"] == "STT_FUNC" and s.name}
        descriptors = {}
        for s in symbols:
            if s.name.endswith(".kd") and s["st_shndx"] not in ("SHN_UNDEF", "SHN_ABS"):
                sec = elf.get_section(s["st_shndx"])
                off = s["st_value"] - sec["sh_addr"]
                descriptors[s.name] = (s["st_value"], sec.data()[off:off + KERNEL_DESCRIPTOR_BYTES])
        target = merged.get("amdhsa.target", "")
        co = CodeObject(path, target, elf["e_flags"], elf["e_ident"]["EI_ABIVERSION"], merged,
                        functions=functions)
    by_symbol = {k.get(".symbol", k.get(".name", "") + ".kd"): k for k in kernels_md}
    for sym, (kd_addr, raw) in descriptors.items():
        md = by_symbol.get(sym, {".name": sym[:-3], ".symbol": sym})
        kd = KernelDescriptor.decode(raw)
        entry = kd_addr + kd.kernel_code_entry_byte_offset
        name = md.get(".name", sym[:-3])
        size = next((sz for a, sz in functions.values() if a == entry), 0)
        co.kernels[name] = KernelObject(name, md, kd, kd_addr, entry, size)
    if not co.target:
        co.target = f"amdgcn-amd-amdhsa--{_processor_from_flags(co.e_flags)}"
    return co


# EF_AMDGPU_MACH values (AMDGPUUsage, "AMDGPU ELF Header") for the processors we know.
_MACH = {0x2C: "gfx900", 0x2F: "gfx906", 0x30: "gfx908", 0x3F: "gfx90a", 0x4C: "gfx942", 0x4F: "gfx950"}


def _processor_from_flags(e_flags: int) -> str:
    return _MACH.get(e_flags & 0xFF, f"unknown-mach-0x{e_flags & 0xFF:x}")


def disassemble(path, mcpu: str) -> str:
    """``llvm-objdump -d --symbolize-operands`` text of the code object at ``path``."""
    from tensile_asm.toolchain_paths import find_llvm_tool

    tool = find_llvm_tool("llvm-objdump")
    cmd = [tool, "-d", f"--mcpu={mcpu}", "--symbolize-operands", "--no-show-raw-insn", str(elf_file(path))]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise ToolchainError(f"could not run {tool}: {e}") from None
    if proc.returncode != 0:
        first = (proc.stderr.strip().splitlines() or ["(no message)"])[0]
        raise ToolchainError(f"llvm-objdump could not disassemble {path}: {first}")
    return proc.stdout


def kernel_instructions(co: CodeObject, name: str, text: str | None = None) -> list:
    """The parsed instructions of kernel ``name`` (disassembling the code object if ``text`` is None)."""
    from tensile_asm.isa.parser import parse_objdump

    if name not in co.kernels:
        raise UserError(f"{co.path} has no kernel '{name}'; it has {', '.join(sorted(co.kernels)) or 'none'}")
    if text is None:
        text = disassemble(co.path, co.processor)
    functions = parse_objdump(text, {n: a for n, (a, _) in co.functions.items()})
    ko = co.kernels[name]
    for fn in functions.values():
        if fn.address == ko.entry:
            return fn.instructions
    raise UserError(f"{co.path}: no code at kernel '{name}' entry 0x{ko.entry:x}")


__all__ = ["CodeObject", "KernelDescriptor", "KernelObject", "disassemble", "kernel_instructions",
           "read_code_object"]
