#!/usr/bin/env python3
"""Write isa/instructions/<arch>.txt: every instruction LLVM knows for each gfx9 arch of isa/.

How: build one instruction word for every opcode of every GFX9 encoding (SOP*, SMEM, VOP1/2/C with
their DPP and SDWA forms, VOP3, VOP3P, DS, MUBUF, MTBUF, MIMG, FLAT/GLOBAL/SCRATCH, EXP, VINTRP),
let LLVM's own disassembler (``llvm-mc --disassemble --show-encoding``) name each, and keep the
names ``llvm-mc`` also accepts as mnemonics for that arch. The encoding of each name is read back
from the bytes LLVM decoded, so a word that decodes as something else is still listed correctly.
LLVM's llvm/docs/AMDGPU/AMDGPUAsmGFX{9,908,90a,940,950}.rst tables come from the same TableGen records
(for some LLVM commit); this reads them from the LLVM actually installed, with the _e32/_e64/_dpp/_sdwa
forms the disassembler prints. Checked when written (LLVM 22.1.8): every name of AMDGPUAsmGFX908.rst is
listed for gfx908; the rows read of AMDGPUAsmGFX940.rst (DS, ds_add_f32 .. ds_read_u8_d16),
AMDGPUAsmGFX90a.rst (VOP2, v_add_co_u32_sdwa .. v_lshlrev_b16_sdwa, with their _dpp/_sdwa forms) and
AMDGPUAsmGFX950.rst (VOP3P, v_pk_minimum3_f16 .. v_smfmac_i32_16x16x64_i8) match exactly; every mnemonic in
libLLVM's assembler table that llvm-mc accepts for an arch is listed (after removing the suffix), but for
v_mul_lo_i32 (an assembler alias of v_mul_lo_u32) and, on gfx942/gfx950, the pre-gfx940 MFMA spellings
(aliases of the names the disassembler prints).

  .venv/bin/python tools/make_isa_instructions.py [--arch gfx90a ...]
"""

from __future__ import annotations

import argparse
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tensile_asm.isa.instruction_lists import LISTED_ARCHES, list_path, llvm_mc_version, rejected_mnemonics  # noqa: E402
from tensile_asm.toolchain_paths import find_llvm_tool  # noqa: E402

S_NOP = 0xBF800000
V6, DPP, SDWA = 0x106, 0xFA, 0xF9
# DPP words: quad_perm identity (gfx9) and row_newbcast:1 (the only control 64-bit DPP takes on gfx90a+).
DPP_WORDS = (0xFF00E406, 0xFF015106)
SDWA_WORD = 0x06060606           # src0 v6, dst/src0/src1 sel DWORD
SDWA_VOPC_WORD = 0x06060006      # VOPC: sdst vcc


def candidate_words() -> list[tuple[int, int]]:
    """(first, second) 32-bit words; 32-bit encodings are followed by s_nop (or a literal/DPP/SDWA word)."""
    words = []
    add = words.append
    for op in range(0x60):                       # SOP2: s3 = op(s[2:3], s[6:7])
        add((0x80000000 | op << 23 | 4 << 16 | 6 << 8 | 2, S_NOP))
    for op in range(0x1D):                       # SOPK
        add((0xB0000000 | op << 23 | 4 << 16, S_NOP))
    for op in range(0x100):                      # SOP1
        add((0xBE800000 | 4 << 16 | op << 8 | 2, S_NOP))
    for op in range(0x80):                       # SOPC, SOPP
        add((0xBF000000 | op << 16 | 6 << 8 | 2, S_NOP))
        add((0xBF800000 | op << 16, S_NOP))
    for op in range(0x100):                      # SMEM: sdata s4, sbase s[2:3], imm offset
        add((0xC0000000 | op << 18 | 1 << 17 | 4 << 6 | 1, 0))
    for op in range(0x40):                       # VOP2: v2 = op(v6, v4)
        base = op << 25 | 2 << 17 | 4 << 9
        words += [(base | V6, S_NOP), (base | SDWA, SDWA_WORD)] + [(base | DPP, w) for w in DPP_WORDS]
    for op in range(0x100):                      # VOP1, VOPC
        for base, sdwa in ((0x7E000000 | 2 << 17 | op << 9, SDWA_WORD), (0x7C000000 | op << 17 | 4 << 9, SDWA_VOPC_WORD)):
            words += [(base | V6, S_NOP), (base | SDWA, sdwa)] + [(base | DPP, w) for w in DPP_WORDS]
    srcs = V6 | 0x108 << 9 | 0x10A << 18
    for op in range(0x400):                      # VOP3: v2 = op(v6, v8, v10)
        add((0xD0000000 | op << 16 | 2, srcs))
    for op in range(0x80):                       # VOP3P (and MAI), with op_sel_hi set and clear, VGPR or AGPR dst
        for acc_cd in (0, 1):
            for hi in (0x18000000, 0):
                add((0xD3800000 | op << 16 | acc_cd << 15 | 2, srcs | hi))
    # Memory encodings: the decoder wants the fields an opcode does not use to be zero, so each
    # operand field is tried both set and clear.
    for op in range(0x100):                      # DS: addr v2, data0 v4, data1 v6, vdst v8
        for gds in (0, 1):
            words += [(0xD8000000 | op << 17 | gds << 16, a | d0 << 8 | d1 << 16 | vd << 24)
                      for a in (0, 2) for d0 in (0, 4) for d1 in (0, 6) for vd in (0, 8)]
    for op in range(0x80):                       # MUBUF (with and without lds): vaddr v2, vdata v4, s[8:11]
        for lds in (0, 1):
            words += [(0xE0000000 | op << 18 | lds << 16 | offen << 12, va | vd << 8 | 2 << 16 | 0x80 << 24)
                      for offen, va in ((0, 0), (1, 2)) for vd in (0, 4)]
        for dmask in (0x1, 0xF):                 # MIMG: vaddr v2, vdata v4, s[8:15], s[12:15]
            words += [(0xF0000000 | op << 18 | dmask << 8, 2 | vd << 8 | 2 << 16 | samp << 21)
                      for vd in (0, 4) for samp in (0, 3)]
    for op in range(0x10):                       # MTBUF (dfmt 1)
        add((0xE8000000 | 1 << 19 | op << 15 | 1 << 12, 2 | 4 << 8 | 2 << 16 | 0x80 << 24))
    for op in range(0x80):                       # FLAT / SCRATCH / GLOBAL (with and without lds): v2, v4, v6
        for seg in (0, 1, 2):
            for lds in (0, 1):
                words += [(0xDC000000 | op << 18 | seg << 14 | lds << 13, va | vd << 8 | sa << 16 | dst << 24)
                          for va in (0, 2) for vd in (0, 4) for sa in (0, 2, 0x7F) for dst in (0, 6)]
    for op in range(0x80):                       # gfx950 scaled MFMA: v_mfma_ld_scale_b32 v20, v21 + an MFMA word
        words += [(0xD3AC0000, 0x114 | 0x115 << 9), (0xD3800800 | op << 16, 0x104 | 0x10C << 9 | 0x100 << 18)]
    # Instructions without operands want every operand field zero (s_memtime, v_nop, ds_nop ...).
    words += [(base | op << shift, S_NOP) for base, shift, n in
              ((0x80000000, 23, 0x60), (0xB0000000, 23, 0x1D), (0xBE800000, 8, 0x100), (0x7E000000, 9, 0x100),
               (0x7C000000, 17, 0x100), (0x00000000, 25, 0x40)) for op in range(n)]
    words += [(base | op << shift, 0) for base, shift, n in
              ((0xC0000000, 18, 0x100), (0xD0000000, 16, 0x400), (0xD8000000, 17, 0x100)) for op in range(n)]
    add((0xC400000F, 2 | 4 << 8 | 6 << 16 | 8 << 24))   # EXP
    for op in range(4):                          # VINTRP
        add((0xD4000000 | 2 << 18 | op << 16 | 4, S_NOP))
    return words


def encoding_of(word: int, name: str) -> str:
    """The encoding (AMDGPUAsmGFX*.rst section) of a decoded instruction from its first word."""
    if word >> 31 == 0:
        return {0x3F: "VOP1", 0x3E: "VOPC"}.get(word >> 25, "VOP2")
    if word >> 30 == 2:
        return {0x17D: "SOP1", 0x17E: "SOPC", 0x17F: "SOPP"}.get(word >> 23, "SOPK" if word >> 28 == 0xB else "SOP2")
    if word >> 23 == 0x1A7:
        return "VOP3P"
    formats = {0x30: "SMEM", 0x31: "EXP", 0x34: "VOP3", 0x35: "VINTRP", 0x36: "DS", 0x37: "FLAT",
               0x38: "MUBUF", 0x3A: "MTBUF", 0x3C: "MIMG"}
    if word >> 26 not in formats:
        raise ValueError(f"{name}: unexpected encoding {word:#010x}")
    return formats[word >> 26]


_DECODED = re.compile(r"^\s+(\S+).*; encoding: \[([^\]]*)\]")


def disassembled(arch: str, words: list[tuple[int, int]]) -> dict[str, str]:
    """name -> encoding of every instruction LLVM decodes from ``words`` for ``arch``."""
    text = "".join(",".join(f"{b:#04x}" for b in struct.pack("<II", a, b)) + "\n" for a, b in words)
    with tempfile.TemporaryDirectory(prefix="tensile-asm-isa-") as tmp:
        path = Path(tmp) / "words.txt"
        path.write_text(text)
        out = subprocess.run([find_llvm_tool("llvm-mc"), "--disassemble", "--show-encoding", "-arch=amdgcn",
                              f"-mcpu={arch}", str(path)], capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        m = _DECODED.match(line)
        if m:
            first = int.from_bytes(bytes(int(b, 16) for b in m.group(2).split(",")[:4]), "little")
            found.setdefault(m.group(1), encoding_of(first, m.group(1)))
    return found


def write_list(arch: str) -> int:
    found = disassembled(arch, candidate_words())
    rejected = rejected_mnemonics(arch, sorted(found))
    kept = {n: e for n, e in found.items() if n not in rejected}
    mc = Path(find_llvm_tool("llvm-mc")).name
    header = [
        f"# Instructions of {arch} known to LLVM {llvm_mc_version()}: every opcode of every GFX9 encoding decoded by",
        f"#   {mc} --disassemble --show-encoding -arch=amdgcn -mcpu={arch}",
        f"# keeping the names that {mc} -arch=amdgcn -mcpu={arch} accepts as mnemonics ({len(rejected)} dropped).",
        "# LLVM's llvm/docs/AMDGPU/AMDGPUAsmGFX{9,908,90a,940,950}.rst list the same instructions (generated from the",
        "# same TableGen records) for some LLVM commit; this list is for the LLVM installed here.",
        "# Regenerate: .venv/bin/python tools/make_isa_instructions.py; re-validate: .venv/bin/python tools/check_isa_instructions.py",
        "# name  encoding",
    ]
    width = max(map(len, kept)) + 2
    list_path(arch).parent.mkdir(parents=True, exist_ok=True)
    list_path(arch).write_text("\n".join(header + [f"{n:<{width}}{kept[n]}" for n in sorted(kept)]) + "\n")
    return len(kept)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", action="append", choices=LISTED_ARCHES, help="default: all")
    args = p.parse_args()
    for arch in args.arch or LISTED_ARCHES:
        print(f"{arch}: {write_list(arch)} instructions -> {list_path(arch)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
