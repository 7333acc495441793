"""The committed per-architecture instruction lists (``isa/instructions/<arch>.txt``) and their check
against the installed assembler.

Each list line is ``name encoding``: a mnemonic as LLVM prints it (with its ``_e32``/``_e64``/
``_dpp``/``_sdwa`` form) and the encoding it was decoded from (the section headings of LLVM's
AMDGPUAsmGFX*.rst: SOP1, VOP2, DS, FLAT, ...). tools/make_isa_instructions.py writes the lists;
tools/check_isa_instructions.py re-validates them.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from tensile_asm.isa.arch import ISA_DIR

INSTRUCTIONS_DIR = ISA_DIR / "instructions"
LISTED_ARCHES = ("gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950")

# llvm-mc's answer to a bare mnemonic: these say the name is not an instruction of this arch;
# any other complaint ("too few operands", "invalid operand") means the mnemonic exists.
REJECTIONS = ("invalid instruction", "instruction not supported on this GPU", "variant of this instruction is not supported")
_DIAGNOSTIC = re.compile(r"^[^:]*:(\d+):\d+: error: (.*)$")


def list_path(arch: str) -> Path:
    return INSTRUCTIONS_DIR / f"{arch}.txt"


def load_instructions(arch: str) -> dict[str, str]:
    """name -> encoding for every instruction listed for ``arch`` (``#`` lines are comments)."""
    entries = {}
    for line in list_path(arch).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, encoding = line.split()
            entries[name] = encoding
    return entries


def rejected_mnemonics(arch: str, names: list[str]) -> dict[str, str]:
    """name -> llvm-mc's diagnostic for each of ``names`` that llvm-mc does not accept for ``arch``
    (one llvm-mc run, one bare mnemonic a line)."""
    from tensile_asm.toolchain_paths import find_llvm_tool

    with tempfile.TemporaryDirectory(prefix="tensile-asm-isa-") as tmp:
        src = Path(tmp) / "names.s"
        src.write_text("".join(f"{n}\n" for n in names))
        out = subprocess.run([find_llvm_tool("llvm-mc"), "-arch=amdgcn", f"-mcpu={arch}", str(src), "-o", "/dev/null"],
                             capture_output=True, text=True)
    if "not a recognized processor" in out.stderr or (out.returncode and not _DIAGNOSTIC.search(out.stderr.split("\n")[0])):
        raise RuntimeError(f"llvm-mc -mcpu={arch} did not check the names: {out.stderr.strip()[:300]}")
    rejected = {}
    for line in out.stderr.splitlines():
        m = _DIAGNOSTIC.match(line)
        if m and any(r in m.group(2) for r in REJECTIONS):
            rejected[names[int(m.group(1)) - 1]] = m.group(2)
    return rejected


def llvm_mc_version() -> str:
    from tensile_asm.toolchain_paths import find_llvm_tool

    out = subprocess.run([find_llvm_tool("llvm-mc"), "--version"], capture_output=True, text=True).stdout
    m = re.search(r"LLVM version (\S+)", out)
    return m.group(1) if m else "unknown"
