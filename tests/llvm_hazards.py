"""Ask LLVM's own hazard recognizer how many wait states a sequence needs, to check isa/*.yaml against it.

A sequence is written once, as assembly text our parser reads; ``to_mir`` turns it into MIR with
physical registers, and ``llc -run-pass=post-RA-hazard-rec`` (GCNHazardRecognizer in its s_nop-
inserting mode) fills in the s_nops it wants. With nothing between producer and consumer, the wait
states LLVM inserts before the consumer are exactly what it requires.

``python3 tests/llvm_hazards.py`` prints the comparison table of docs/hazards-vs-llvm.md (the probe
cases below, for gfx942 and gfx950): our required wait states next to LLVM's.
"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import lru_cache

from tensile_asm.toolchain_paths import find_llvm_tool

_MIR_HEAD = """---
name: k
tracksRegLiveness: false
machineFunctionInfo:
  isEntryFunction: true
body: |
  bb.0:
"""


def _reg(text: str) -> str:
    """``v5`` / ``v[0:3]`` / ``a[0:3]`` / ``s[10:11]`` / ``vcc`` / ``exec`` -> MIR physical register."""
    text = text.strip()
    if text in ("vcc", "exec", "m0"):
        return "$" + text
    m = re.fullmatch(r"([vas])(?:(\d+)|\[(\d+):(\d+)\])", text)
    if not m:
        raise ValueError(f"not a register: {text!r}")
    kind = {"v": "vgpr", "a": "agpr", "s": "sgpr"}[m.group(1)]
    lo = int(m.group(2) or m.group(3))
    hi = int(m.group(2) or m.group(4))
    return "$" + "_".join(f"{kind}{i}" for i in range(lo, hi + 1))


_MC_NAMES: dict = {}


def _mc_name(arch: str, line: str) -> str:
    """LLVM's MC opcode of one assembly line (``llvm-mc -show-inst``)."""
    if (arch, line) not in _MC_NAMES:
        _prefetch_mc_names(arch, [line])
    return _MC_NAMES[arch, line]


def _prefetch_mc_names(arch: str, lines) -> None:
    """One llvm-mc run for the MC opcodes of many lines (each must assemble)."""
    lines = sorted({line for line in lines if (arch, line) not in _MC_NAMES})
    if not lines:
        return
    p = subprocess.run([find_llvm_tool("llvm-mc"), "-triple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-show-inst"],
                       input="\n".join(lines) + "\n", capture_output=True, text=True)
    names = re.findall(r"<MCInst #\d+ (\w+)", p.stdout)
    if p.returncode or len(names) != len(lines):
        raise ValueError(f"llvm-mc -mcpu={arch} does not take all of {lines}: {p.stderr.strip()}")
    _MC_NAMES.update({(arch, line): name for line, name in zip(lines, names)})


# Non-MFMA instructions the probes use: mnemonic -> MIR template over the operands {0}, {1}, ...
_SIMPLE = {
    "v_add_f32": "{0} = V_ADD_F32_e32 {1}, {2}, implicit $mode, implicit $exec",
    "v_mov_b32": "{0} = V_MOV_B32_e32 {1}, implicit $exec",
    "v_exp_f32": "{0} = V_EXP_F32_e32 {1}, implicit $mode, implicit $exec",
    "v_accvgpr_read_b32": "{0} = V_ACCVGPR_READ_B32_e64 {1}, implicit $exec",
    "v_accvgpr_write_b32": "{0} = V_ACCVGPR_WRITE_B32_e64 {1}, implicit $exec",
    "v_readfirstlane_b32": "{0} = V_READFIRSTLANE_B32 {1}, implicit $exec",
    "v_cndmask_b32": "{0} = V_CNDMASK_B32_e32 {1}, {2}, implicit $vcc, implicit $exec",
    "v_cmp_lt_u32": "{0} = V_CMP_LT_U32_e64 {1}, {2}, implicit $exec",
    "v_cmpx_lt_u32": "V_CMPX_LT_U32_e32 {1}, {2}, implicit-def $vcc, implicit-def $exec, implicit $exec",
    "v_fma_f64": "{0} = V_FMA_F64_e64 0, {1}, 0, {2}, 0, {3}, 0, 0, implicit $mode, implicit $exec",
    "v_permlane16_swap_b32": "{0}, {1} = V_PERMLANE16_SWAP_B32_e64 {0}, {1}, 0, 0, implicit $exec",
    "v_permlane32_swap_b32": "{0}, {1} = V_PERMLANE32_SWAP_B32_e64 {0}, {1}, 0, 0, implicit $exec",
    "ds_write_b32": "DS_WRITE_B32_gfx9 {0}, {1}, 0, 0, implicit $exec",
    "global_store_dword": "GLOBAL_STORE_DWORD {0}, {1}, 0, 0, implicit $exec",
    "global_store_dwordx4": "GLOBAL_STORE_DWORDX4 {0}, {1}, 0, 0, implicit $exec",
    "s_mov_b32": "{0} = S_MOV_B32 {1}",
}


def _operand(text: str) -> str:
    text = text.strip()
    return text if re.fullmatch(r"-?\d+", text) else _reg(text)


def to_mir(arch: str, line: str) -> str:
    """One assembly line (the vocabulary above, or any MFMA / SMFMAC) as a MIR instruction."""
    mnemonic, _, rest = line.strip().partition(" ")
    if mnemonic.startswith(("v_mfma", "v_smfmac")):
        rest = re.sub(r"\s+\w+:\S+", "", rest)          # cbsz:/blgp:/op_sel_hi: (formats are in the opcode)
    ops = [o for o in rest.split(",") if o.strip() and o.strip() != "off"]
    if mnemonic.startswith(("v_mfma", "v_smfmac")):
        return _mfma_mir(arch, line, mnemonic, [o.strip() for o in ops])
    if mnemonic in _SIMPLE:
        return _SIMPLE[mnemonic].format(*[_operand(o) for o in ops])
    return _from_mc(arch, line)


_FORMS: dict = {}     # assembly line -> MIR form found on some target (tried first on the next)


def _verified(arch: str, text: str) -> tuple:
    q = subprocess.run([find_llvm_tool("llc"), "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-run-pass=none",
                        "-verify-machineinstrs", "-o", "/dev/null", "-x", "mir", "-"],
                       input=_MIR_HEAD + f"    {text}\n    S_ENDPGM 0\n...\n", capture_output=True, text=True)
    return q.returncode == 0, q.stderr.strip()


@lru_cache(maxsize=None)
def _from_mc(arch: str, line: str) -> str:
    """Any other one-destination line: llvm-mc's operand list as a MIR instruction, under the pseudo
    name the MIR parser knows, with the implicit operands it asks for added one by one."""
    if line in _FORMS and _verified(arch, _FORMS[line])[0]:
        return _FORMS[line]
    p = subprocess.run([find_llvm_tool("llvm-mc"), "-triple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-show-inst"],
                       input=line + "\n", capture_output=True, text=True)
    base = re.sub(r"_(vi|gfx9|gfx940|gfx90a)$", "", _mc_name(arch, line))
    ops = [value if kind == "Imm" else "$" + value.lower()
           for kind, value in re.findall(r"<MCOperand (Reg|Imm):(\w+)>", p.stdout)]
    defs = 0 if re.match(r"(buffer|global)_store|ds_write", line) else 1
    err = ""
    for name in (base, base + "_e64", base + "_e32"):
        implicit, pad = ["implicit $mode", "implicit $exec"], []
        for _ in range(6):
            text = f"{', '.join(ops[:defs])}{' = ' if defs else ''}{name} {', '.join(ops[defs:] + pad + implicit)}"
            good, err = _verified(arch, text)
            if good:
                _FORMS[line] = text
                return text
            if "unknown machine instruction name" in err:
                break
            missing = re.search(r"missing implicit register operand '([^']+)'", err)
            extra = re.search(r"extraneous implicit register operand '([^']+)'", err)
            if missing:
                implicit.append(missing.group(1))
            elif "Expected a non-register operand" in err and len(pad) < 2:   # an immediate MC leaves out
                pad.append("0")
            elif extra and f"implicit {extra.group(1).split()[-1]}" in implicit:
                implicit.remove(f"implicit {extra.group(1).split()[-1]}")
            else:
                break
    raise ValueError(f"no MIR form for '{line}' on {arch}: {err[:300]}")


def _mfma_mir(arch, line, mnemonic, ops):
    base = re.sub(r"_(gfx940|gfx90a)(_[av]cd)?$|_vi$", "", _mc_name(arch, line))
    acc = ops[0].startswith("a")
    d, a, b = (_reg(o) for o in ops[:3])
    if mnemonic.startswith("v_smfmac"):           # D = op A, B, idx, cbsz, abid, C (C tied to D)
        return f"{d} = {base}_e64 {a}, {b}, {_reg(ops[3])}, 0, 0, {d}, implicit $mode, implicit $exec"
    c = _reg(ops[3])
    pseudo = base + ("_e64" if acc else "_vgprcd_e64")
    # f8f6f4: the register sizes are in the opcode, the formats in cbsz/blgp (LLVM's pass count reads them)
    cbsz, blgp = (int(m.group(1)) if (m := re.search(rf"{f}:(\d+)", line)) else 0 for f in ("cbsz", "blgp"))
    if mnemonic.startswith("v_mfma_scale"):        # ..., C, cbsz, blgp, scale A, scale B, op_sel, op_sel_hi
        return (f"{d} = {pseudo} {a}, {b}, {c}, {cbsz}, {blgp}, {_reg(ops[4])}, {_reg(ops[5])}, 0, 0, "
                f"implicit $mode, implicit $exec")
    imms = f"{cbsz}, {blgp}" if "F8F6F4" in base else "0, 0, 0"
    return f"{d} = {pseudo} {a}, {b}, {c}, {imms}, implicit $mode, implicit $exec"


def llvm_wait_states(arch: str, lines) -> list:
    """The wait states LLVM's hazard recognizer inserts before each of ``lines`` (assembly text)."""
    return llvm_wait_states_many(arch, [lines])[0]


def llvm_wait_states_many(arch: str, sequences) -> list:
    """``llvm_wait_states`` of several sequences, each its own MIR function, in one llc run."""
    _prefetch_mc_names(arch, [line for seq in sequences for line in seq if line.startswith(("v_mfma", "v_smfmac"))])
    docs = []
    for n, seq in enumerate(sequences):
        body = "".join(f"    {to_mir(arch, line)}\n" for line in seq)
        docs.append(_MIR_HEAD.replace("name: k", f"name: k{n}") + body + "    S_ENDPGM 0\n")
    mir = "".join(docs) + "...\n"
    p = subprocess.run([find_llvm_tool("llc"), "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={arch}",
                        "-run-pass=post-RA-hazard-rec", "-o", "-", "-x", "mir", "-"],
                       input=mir, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"llc -mcpu={arch} failed on\n{mir}\n{p.stderr}")
    bodies = p.stdout.split("bb.0:")[1:]
    assert len(bodies) == len(sequences), p.stdout
    return [_nops_before(body, len(seq)) for body, seq in zip(bodies, sequences)]


def _nops_before(body: str, count: int) -> list:
    out, pending = [], 0
    for text in body.splitlines():
        text = text.strip()
        if not text or text.startswith(("liveins", ";")):
            continue
        nop = re.match(r"S_NOP (\d+)", text)
        if nop:
            pending += int(nop.group(1)) + 1
        elif text.startswith("S_ENDPGM"):
            break
        else:
            out.append(pending)
            pending = 0
    assert len(out) == count, body
    return out


def llvm_need(arch: str, history, consumer: str) -> int:
    return llvm_wait_states(arch, [*history, consumer])[-1]


# -- the probes: (name, LLVM function / constant, archs, producer lines, consumer) -------------------------
_ARCHS = ("gfx942", "gfx950")
_CDNA3 = ("gfx942", "gfx950")
XDL = {  # XDL MFMAs by passes (as LLVM 22 counts them), on both targets
    2: "v_mfma_f32_4x4x4_16b_f16 v[0:3], v[32:33], v[48:49], v[0:3]",
    4: "v_mfma_f32_16x16x16_f16 v[0:3], v[32:33], v[48:49], v[0:3]",
    8: "v_mfma_f32_32x32x8_f16 v[0:15], v[32:33], v[48:49], v[0:15]",
    16: "v_mfma_f32_32x32x4_2b_f16 v[0:31], v[32:33], v[48:49], v[0:31]",
}
SGEMM = {
    2: "v_mfma_f32_4x4x1_16b_f32 v[0:3], v32, v48, v[0:3]",
    8: "v_mfma_f32_16x16x4_f32 v[0:3], v32, v48, v[0:3]",
    16: "v_mfma_f32_32x32x2_f32 v[0:15], v32, v48, v[0:15]",
}
SMFMAC = "v_smfmac_f32_16x16x32_f16 v[0:3], v[32:33], v[48:51], v60"
DGEMM4 = "v_mfma_f64_4x4x4_4b_f64 v[0:1], v[32:33], v[48:49], v[0:1]"
DGEMM16 = "v_mfma_f64_16x16x4_f64 v[0:7], v[32:33], v[48:49], v[0:7]"
GFX950_NEW = [  # gfx950's new shapes, written to v[0:..] like the others
    "v_mfma_f32_16x16x32_f16 v[0:3], v[32:35], v[48:51], v[0:3]",
    "v_mfma_f32_32x32x16_bf16 v[0:15], v[32:35], v[48:51], v[0:15]",
    "v_mfma_i32_16x16x64_i8 v[0:3], v[32:35], v[48:51], v[0:3]",
    "v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[32:39], v[48:55], v[0:3]",
    "v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[32:39], v[48:55], v[0:15]",
    "v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[32:39], v[48:55], v[0:3], v60, v61",
    "v_smfmac_f32_16x16x64_f16 v[0:3], v[32:35], v[48:55], v60",
    "v_smfmac_f32_32x32x64_fp8_fp8 v[0:15], v[32:35], v[48:55], v60",
]


# -- every MFMA / SMFMAC of gfx942 and gfx950, as llvm-mc prints it (canonical names) -------------------------
MFMA_BOTH = [
    'v_mfma_f32_16x16x16_bf16 v[0:3], v[32:33], v[48:49], v[0:3]',
    'v_mfma_f32_16x16x16_f16 v[0:3], v[32:33], v[48:49], v[0:3]',
    'v_mfma_f32_16x16x1_4b_f32 v[0:15], v32, v48, v[0:15]',
    'v_mfma_f32_16x16x32_bf8_bf8 v[0:3], v[32:33], v[48:49], v[0:3]',
    'v_mfma_f32_16x16x32_bf8_fp8 v[0:3], v[32:33], v[48:49], v[0:3]',
    'v_mfma_f32_16x16x32_fp8_bf8 v[0:3], v[32:33], v[48:49], v[0:3]',
    'v_mfma_f32_16x16x32_fp8_fp8 v[0:3], v[32:33], v[48:49], v[0:3]',
    'v_mfma_f32_16x16x4_4b_bf16 v[0:15], v[32:33], v[48:49], v[0:15]',
    'v_mfma_f32_16x16x4_4b_f16 v[0:15], v[32:33], v[48:49], v[0:15]',
    'v_mfma_f32_16x16x4_f32 v[0:3], v32, v48, v[0:3]',
    'v_mfma_f32_32x32x16_bf8_bf8 v[0:15], v[32:33], v[48:49], v[0:15]',
    'v_mfma_f32_32x32x16_bf8_fp8 v[0:15], v[32:33], v[48:49], v[0:15]',
    'v_mfma_f32_32x32x16_fp8_bf8 v[0:15], v[32:33], v[48:49], v[0:15]',
    'v_mfma_f32_32x32x16_fp8_fp8 v[0:15], v[32:33], v[48:49], v[0:15]',
    'v_mfma_f32_32x32x1_2b_f32 v[0:31], v32, v48, v[0:31]',
    'v_mfma_f32_32x32x2_f32 v[0:15], v32, v48, v[0:15]',
    'v_mfma_f32_32x32x4_2b_bf16 v[0:31], v[32:33], v[48:49], v[0:31]',
    'v_mfma_f32_32x32x4_2b_f16 v[0:31], v[32:33], v[48:49], v[0:31]',
    'v_mfma_f32_32x32x8_bf16 v[0:15], v[32:33], v[48:49], v[0:15]',
    'v_mfma_f32_32x32x8_f16 v[0:15], v[32:33], v[48:49], v[0:15]',
    'v_mfma_f32_4x4x1_16b_f32 v[0:3], v32, v48, v[0:3]',
    'v_mfma_f32_4x4x4_16b_bf16 v[0:3], v[32:33], v[48:49], v[0:3]',
    'v_mfma_f32_4x4x4_16b_f16 v[0:3], v[32:33], v[48:49], v[0:3]',
    'v_mfma_f64_16x16x4_f64 v[0:7], v[32:33], v[48:49], v[0:7]',
    'v_mfma_f64_4x4x4_4b_f64 v[0:1], v[32:33], v[48:49], v[0:1]',
    'v_mfma_i32_16x16x32_i8 v[0:3], v[32:33], v[48:49], v[0:3]',
    'v_mfma_i32_16x16x4_4b_i8 v[0:15], v32, v48, v[0:15]',
    'v_mfma_i32_32x32x16_i8 v[0:15], v[32:33], v[48:49], v[0:15]',
    'v_mfma_i32_32x32x4_2b_i8 v[0:31], v32, v48, v[0:31]',
    'v_mfma_i32_4x4x4_16b_i8 v[0:3], v32, v48, v[0:3]',
    'v_smfmac_f32_16x16x32_bf16 v[0:3], v[32:33], v[48:51], v60',
    'v_smfmac_f32_16x16x32_f16 v[0:3], v[32:33], v[48:51], v60',
    'v_smfmac_f32_16x16x64_bf8_bf8 v[0:3], v[32:33], v[48:51], v60',
    'v_smfmac_f32_16x16x64_bf8_fp8 v[0:3], v[32:33], v[48:51], v60',
    'v_smfmac_f32_16x16x64_fp8_bf8 v[0:3], v[32:33], v[48:51], v60',
    'v_smfmac_f32_16x16x64_fp8_fp8 v[0:3], v[32:33], v[48:51], v60',
    'v_smfmac_f32_32x32x16_bf16 v[0:15], v[32:33], v[48:51], v60',
    'v_smfmac_f32_32x32x16_f16 v[0:15], v[32:33], v[48:51], v60',
    'v_smfmac_f32_32x32x32_bf8_bf8 v[0:15], v[32:33], v[48:51], v60',
    'v_smfmac_f32_32x32x32_bf8_fp8 v[0:15], v[32:33], v[48:51], v60',
    'v_smfmac_f32_32x32x32_fp8_bf8 v[0:15], v[32:33], v[48:51], v60',
    'v_smfmac_f32_32x32x32_fp8_fp8 v[0:15], v[32:33], v[48:51], v60',
    'v_smfmac_i32_16x16x64_i8 v[0:3], v[32:33], v[48:51], v60',
    'v_smfmac_i32_32x32x32_i8 v[0:15], v[32:33], v[48:51], v60',
]
MFMA_GFX942_ONLY = [
    'v_mfma_f32_16x16x8_xf32 v[0:3], v[32:33], v[48:49], v[0:3]',
    'v_mfma_f32_32x32x4_xf32 v[0:15], v[32:33], v[48:49], v[0:15]',
]
MFMA_GFX950_ONLY = [
    'v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[32:35], v[48:51], v[0:3] cbsz:4 blgp:4',
    'v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[32:39], v[48:55], v[0:3]',
    'v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[32:39], v[48:51], v[0:3] blgp:4',
    'v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[32:35], v[48:55], v[0:15] cbsz:4 blgp:1',
    'v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[32:35], v[48:51], v[0:15], v60, v61 cbsz:4 blgp:4',
    'v_mfma_f32_16x16x32_bf16 v[0:3], v[32:35], v[48:51], v[0:3]',
    'v_mfma_f32_16x16x32_f16 v[0:3], v[32:35], v[48:51], v[0:3]',
    'v_mfma_f32_32x32x16_bf16 v[0:15], v[32:35], v[48:51], v[0:15]',
    'v_mfma_f32_32x32x16_f16 v[0:15], v[32:35], v[48:51], v[0:15]',
    'v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[32:37], v[48:53], v[0:15] cbsz:2 blgp:3',
    'v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[32:39], v[48:55], v[0:15]',
    'v_mfma_i32_16x16x64_i8 v[0:3], v[32:35], v[48:51], v[0:3]',
    'v_mfma_i32_32x32x32_i8 v[0:15], v[32:35], v[48:51], v[0:15]',
    'v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[32:39], v[48:55], v[0:3], v60, v61 op_sel_hi:[0,0,0]',
    'v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[32:39], v[48:55], v[0:15], v60, v61 op_sel_hi:[0,0,0]',
    'v_smfmac_f32_16x16x128_bf8_bf8 v[0:3], v[32:35], v[48:55], v60',
    'v_smfmac_f32_16x16x128_bf8_fp8 v[0:3], v[32:35], v[48:55], v60',
    'v_smfmac_f32_16x16x128_fp8_bf8 v[0:3], v[32:35], v[48:55], v60',
    'v_smfmac_f32_16x16x128_fp8_fp8 v[0:3], v[32:35], v[48:55], v60',
    'v_smfmac_f32_16x16x64_bf16 v[0:3], v[32:35], v[48:55], v60',
    'v_smfmac_f32_16x16x64_f16 v[0:3], v[32:35], v[48:55], v60',
    'v_smfmac_f32_32x32x32_bf16 v[0:15], v[32:35], v[48:55], v60',
    'v_smfmac_f32_32x32x32_f16 v[0:15], v[32:35], v[48:55], v60',
    'v_smfmac_f32_32x32x64_bf8_bf8 v[0:15], v[32:35], v[48:55], v60',
    'v_smfmac_f32_32x32x64_bf8_fp8 v[0:15], v[32:35], v[48:55], v60',
    'v_smfmac_f32_32x32x64_fp8_bf8 v[0:15], v[32:35], v[48:55], v60',
    'v_smfmac_f32_32x32x64_fp8_fp8 v[0:15], v[32:35], v[48:55], v60',
    'v_smfmac_i32_16x16x128_i8 v[0:3], v[32:35], v[48:55], v60',
    'v_smfmac_i32_32x32x64_i8 v[0:15], v[32:35], v[48:55], v60',
]


def mfma_lines(arch: str) -> list:
    return MFMA_BOTH + (MFMA_GFX942_ONLY if arch == "gfx942" else MFMA_GFX950_ONLY)


_WAR_PASSES = {1: 2, 3: 4, 7: 8, 15: 16}     # XDL SrcC read -> VALU overwrite, by passes (the same on both)


def llvm_passes(arch: str, lines) -> list:
    """The pass count LLVM's hazard recognizer gives each non-DGEMM MFMA, read back from two probes:
    a VALU overwriting its SrcC (XDL only: 1/3/7/15 for 2/4/8/16 passes) and a VALU reading its result
    (XDL: passes + 3, + 1 on gfx950 above 2 passes; SGEMM: passes + 2)."""
    seqs = []
    for line in lines:
        seqs.append([line, "v_add_f32 v100, v1, v1"])
        seqs.append([_with_srcc(line, 64) if not line.startswith("v_smfmac") else line, "v_mov_b32 v200, 0"])
        if not line.startswith("v_smfmac"):
            seqs[-1][1] = "v_mov_b32 v65, 0"
    waits = llvm_wait_states_many(arch, seqs)
    out = []
    for i, line in enumerate(lines):
        read, war = waits[2 * i][-1], waits[2 * i + 1][-1]
        if war:
            out.append(_WAR_PASSES[war])
        elif line.startswith("v_smfmac"):              # XDL, SrcC is its destination: from the read
            n = read - 3
            out.append(n - 1 if arch == "gfx950" and n - 1 != 2 else n)
        else:
            out.append(read - 2)
    return out


def _with_srcc(line: str, base: int) -> str:
    """The same MFMA reading SrcC from v[base..] (its result still goes to v[0..])."""
    ops = line.split(",")
    m = re.fullmatch(r"\s*v\[(\d+):(\d+)\](.*)", ops[3])
    n = int(m.group(2)) - int(m.group(1))
    ops[3] = f" v[{base}:{base + n}]{m.group(3)}"
    return ",".join(ops)


def _srcc_partial(line: str) -> str:
    """The same MFMA writing v[70..] from a SrcC that overlaps v[0..] partly (from v2)."""
    ops = line.split(",")
    first, _, dst = ops[0].partition(" ")
    m = re.fullmatch(r"v\[(\d+):(\d+)\]", dst)
    n = int(m.group(2)) - int(m.group(1))
    return ",".join([f"{first} v[70:{70 + n}]", *ops[1:3], f" v[2:{2 + n}]", *ops[4:]])


def _srcab_reader(line: str) -> str:
    """The same MFMA with SrcA taken from v[0..] (the previous result), writing v[70..]."""
    ops = line.split(",")
    first, _, dst = ops[0].partition(" ")
    m = re.fullmatch(r"v\[(\d+):(\d+)\]", dst)
    n = int(m.group(2)) - int(m.group(1))
    a = re.fullmatch(r"\s*v(?:(\d+)|\[(\d+):(\d+)\])", ops[1])
    na = 0 if a.group(1) else int(a.group(3)) - int(a.group(2))
    a_new = " v0" if a.group(1) else f" v[0:{na}]"
    return ",".join([f"{first} v[70:{70 + n}]", a_new, ops[2], f" v[70:{70 + n}]", *ops[4:]])


def probes():
    """(rule, archs, producer lines, consumer) for every rule the tables have on gfx942/gfx950."""
    out = []
    producers = ([(f"xdl{n}", line) for n, line in XDL.items()] + [(f"sgemm{n}", line) for n, line in SGEMM.items()]
                 + [("dgemm4", DGEMM4), ("dgemm16", DGEMM16)])
    for tag, p in producers:
        out.append((f"{tag} -> VALU read", _ARCHS, [p], "v_add_f32 v100, v1, v1"))
        out.append((f"{tag} -> VALU write (WAW)", _ARCHS, [p], "v_mov_b32 v1, 0"))
        out.append((f"{tag} -> DS read", _ARCHS, [p], "ds_write_b32 v1, v90"))
        out.append((f"{tag} -> VMEM store data", _ARCHS, [p], "global_store_dword v[90:91], v1, off"))
        out.append((f"{tag} SrcC -> VALU write (WAR)", _ARCHS, [_with_srcc(p, 64)], "v_mov_b32 v65, 0"))
        out.append((f"{tag} -> same MFMA, SrcC the same registers", _ARCHS, [p], p))
        for ctag, c in ((f"xdl4", XDL[4]), ("sgemm8", SGEMM[8]), ("dgemm16", DGEMM16)):
            out.append((f"{tag} -> {ctag} SrcC overlapped", _ARCHS, [p], _srcc_partial(c)))
            out.append((f"{tag} -> {ctag} SrcA", _ARCHS, [p], _srcab_reader(c)))
    for line in GFX950_NEW:
        tag = line.split()[0]
        out.append((f"{tag} -> VALU read", ("gfx950",), [line], "v_add_f32 v100, v1, v1"))
        out.append((f"{tag} -> VALU write (WAW)", ("gfx950",), [line], "v_mov_b32 v1, 0"))
        if not tag.startswith("v_smfmac"):
            out.append((f"{tag} SrcC -> VALU write (WAR)", ("gfx950",), [_with_srcc(line, 64)], "v_mov_b32 v65, 0"))
            out.append((f"{tag} -> xdl4 SrcC overlapped", ("gfx950",), [line], _srcc_partial(XDL[4])))
        out.append((f"{tag} -> xdl4 SrcA", ("gfx950",), [line], _srcab_reader(XDL[4])))
    out += [
        ("AGPR result -> v_accvgpr_read", _ARCHS, ["v_mfma_f32_32x32x8_f16 a[0:15], v[32:33], v[48:49], a[0:15]"],
         "v_accvgpr_read_b32 v3, a1"),
        ("v_accvgpr_write -> MFMA SrcC", _ARCHS, ["v_accvgpr_write_b32 a1, v9"],
         "v_mfma_f32_32x32x8_f16 a[0:15], v[32:33], v[48:49], a[0:15]"),
        ("VALU write -> MFMA SrcA", _ARCHS, ["v_mov_b32 v32, 0"], XDL[8]),
        ("VALU write -> MFMA SrcC", _ARCHS, ["v_mov_b32 v1, 0"], XDL[8]),
        ("VALU write -> MFMA scale operand", ("gfx950",), ["v_mov_b32 v60, 0"], GFX950_NEW[5]),
        ("VALU write exec -> MFMA", _ARCHS, ["v_cmpx_lt_u32 vcc, v1, v2"], XDL[4]),
        ("DGEMM -> v_fma_f64", _ARCHS, [DGEMM4], "v_fma_f64 v[20:21], v[22:23], v[24:25], v[26:27]"),
        ("VALU write SGPR -> VALU read", _ARCHS, ["v_cmp_lt_u32 vcc, v1, v2"], "v_cndmask_b32 v3, v4, v5, vcc"),
        ("VALU write VGPR -> v_readfirstlane", _ARCHS, ["v_mov_b32 v1, 0"], "v_readfirstlane_b32 s4, v1"),
        ("VALU write exec -> v_readfirstlane", _ARCHS, ["v_cmpx_lt_u32 vcc, v1, v2"], "v_readfirstlane_b32 s4, v7"),
        ("trans -> VALU read", _ARCHS, ["v_exp_f32 v1, v2"], "v_add_f32 v3, v1, v1"),
        ("VMEM store > 8 bytes -> VALU overwrite", _ARCHS, ["global_store_dwordx4 v[90:91], v[4:7], off"],
         "v_mov_b32 v5, 0"),
        ("v_smfmac chain (SrcC = its destination)", _ARCHS, [SMFMAC], SMFMAC),
        ("XDL result -> v_smfmac index", _ARCHS, [XDL[4]], "v_smfmac_f32_16x16x32_f16 v[70:73], v[32:33], v[48:51], v1"),
        ("XDL result -> v_smfmac accumulator", _ARCHS, [XDL[4]], "v_smfmac_f32_16x16x32_f16 v[0:3], v[32:33], v[48:51], v60"),
        ("VALU write -> v_smfmac accumulator", _ARCHS, ["v_mov_b32 v1, 0"], SMFMAC),
        ("VALU write -> v_smfmac index", _ARCHS, ["v_mov_b32 v60, 0"], SMFMAC),
        ("v_smfmac -> VALU read", _ARCHS, [SMFMAC], "v_add_f32 v100, v1, v1"),
        ("v_smfmac -> SGEMM SrcC overlapped", _ARCHS, [SMFMAC], _srcc_partial(SGEMM[8])),
        ("v_cvt_pk_fp8_f32 op_sel dst -> VALU read", _ARCHS, ["v_cvt_pk_fp8_f32 v1, v2, v3 op_sel:[0,0,1]"],
         "v_add_f32 v10, v1, v1"),
        ("v_cvt_sr_fp8_f32 byte 2 -> VALU read", _ARCHS, ["v_cvt_sr_fp8_f32 v1, v2, v3 op_sel:[0,0,1,0]"],
         "v_add_f32 v10, v1, v1"),
        ("v_cvt_sr_fp8_f32 byte 1 -> VALU read", _ARCHS, ["v_cvt_sr_fp8_f32 v1, v2, v3 op_sel:[0,0,0,1]"],
         "v_add_f32 v10, v1, v1"),
        ("v_cvt_sr_fp8_f32 byte 0 -> VALU read", _ARCHS, ["v_cvt_sr_fp8_f32 v1, v2, v3"], "v_add_f32 v10, v1, v1"),
        ("v_cvt_scalef32_pk_fp8_f32 op_sel dst -> VALU read", ("gfx950",),
         ["v_cvt_scalef32_pk_fp8_f32 v1, v2, v3, v4 op_sel:[0,0,0,1]"], "v_add_f32 v10, v1, v1"),
        ("v_cvt_scalef32_sr_fp8_f32 byte 2 -> VALU read", ("gfx950",),
         ["v_cvt_scalef32_sr_fp8_f32 v1, v2, v3, v4 op_sel:[0,0,1,0]"], "v_add_f32 v10, v1, v1"),
        ("v_cvt_scalef32_sr_pk_fp4_f32 -> VALU read", ("gfx950",), ["v_cvt_scalef32_sr_pk_fp4_f32 v1, v[2:3], v3, v4"],
         "v_add_f32 v10, v1, v1"),
        ("v_cvt_scalef32_pk_fp4_f32 -> VALU read", ("gfx950",), ["v_cvt_scalef32_pk_fp4_f32 v1, v2, v3, v4"],
         "v_add_f32 v10, v1, v1"),
        ("v_pk_fma_f16 -> VALU read", _ARCHS, ["v_pk_fma_f16 v1, v2, v3, v4"], "v_add_f32 v10, v1, v1"),
        ("v_pk_fma_f16 op_sel_hi:[0,1,1] -> VALU read", _ARCHS, ["v_pk_fma_f16 v1, v2, v3, v4 op_sel_hi:[0,1,1]"],
         "v_add_f32 v10, v1, v1"),
        ("v_pk_mul_f32 -> VALU read", _ARCHS, ["v_pk_mul_f32 v[0:1], v[2:3], v[4:5]"], "v_add_f32 v10, v1, v1"),
        ("v_pk_mov_b32 -> VALU read", _ARCHS, ["v_pk_mov_b32 v[0:1], v[2:3], v[4:5] op_sel:[0,1]"],
         "v_add_f32 v10, v1, v1"),
        ("v_fma_mix_f32 -> VALU read", _ARCHS, ["v_fma_mix_f32 v1, v2, v3, v4"], "v_add_f32 v10, v1, v1"),
        ("v_fma_mix_f32 op_sel_hi:[1,0,0] -> VALU read", _ARCHS, ["v_fma_mix_f32 v1, v2, v3, v4 op_sel_hi:[1,0,0]"],
         "v_add_f32 v10, v1, v1"),
        ("dot -> VALU read", _ARCHS, ["v_dot2_f32_f16 v1, v2, v3, v4"], "v_add_f32 v5, v1, v1"),
        ("dot -> same dot SrcA", _ARCHS, ["v_dot2_f32_f16 v1, v2, v3, v4"], "v_dot2_f32_f16 v6, v1, v3, v4"),
        ("dot -> same dot SrcC", _ARCHS, ["v_dot2_f32_f16 v1, v2, v3, v4"], "v_dot2_f32_f16 v6, v7, v3, v1"),
        ("dot -> VALU write (WAW)", _ARCHS, ["v_dot2_f32_f16 v1, v2, v3, v4"], "v_mov_b32 v1, 0"),
        ("dot -> MFMA SrcA", _ARCHS, ["v_dot2_f32_f16 v1, v2, v3, v4"], XDL[4].replace("v[32:33]", "v[0:1]")),
        ("integer dot -> other dot SrcA", _ARCHS, ["v_dot4_i32_i8 v1, v2, v3, v4"], "v_dot2_f32_f16 v6, v1, v3, v4"),
        ("VALU write VCC -> v_div_fmas", _ARCHS, ["v_cmp_lt_u32 vcc, v1, v2"], "v_div_fmas_f32 v0, v1, v2, v3"),
        ("VALU write SGPR -> v_readlane lane select", _ARCHS, ["v_readfirstlane_b32 s8, v1"], "v_readlane_b32 s9, v2, s8"),
        ("VALU write VGPR -> DPP read", _ARCHS, ["v_add_f32 v1, v2, v3"],
         "v_mov_b32_dpp v3, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf"),
        ("VALU write exec -> DPP", _ARCHS, ["v_cmpx_lt_u32 vcc, v1, v2"],
         "v_mov_b32_dpp v3, v4 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf"),
        ("VALU write SGPR -> VMEM", _ARCHS, ["v_readfirstlane_b32 s4, v1"], "buffer_load_dword v1, v2, s[4:7], 0 offen"),
        ("SALU write m0 -> s_movrels", _ARCHS, ["s_mov_b32 m0, s1"], "s_movrels_b32 s2, s3"),
        ("VALU write VGPR -> v_readlane", _ARCHS, ["v_add_f32 v1, v2, v3"], "v_readlane_b32 s9, v1, s8"),
        ("VALU write -> v_permlane16_swap", ("gfx950",), ["v_mov_b32 v1, 0"], "v_permlane16_swap_b32 v1, v2"),
        ("VALU write -> v_permlane32_swap", ("gfx950",), ["v_mov_b32 v2, 0"], "v_permlane32_swap_b32 v1, v2"),
        ("v_cmpx (exec) -> v_permlane32_swap", ("gfx950",), ["v_cmpx_lt_u32 vcc, v7, v8"], "v_permlane32_swap_b32 v1, v2"),
    ]
    everywhere = ("gfx942", "gfx950", "gfx90a", "gfx908")        # rules of every gfx9, and their absence
    out = [(name, everywhere if name in _GENERIC else on, p, c) for name, on, p, c in out]
    return out + _probes_gfx90a() + _probes_gfx908()


_GENERIC = {"VALU write VCC -> v_div_fmas", "VALU write SGPR -> v_readlane lane select", "VALU write VGPR -> DPP read",
            "VALU write exec -> DPP", "VALU write SGPR -> VMEM", "SALU write m0 -> s_movrels",
            "VMEM store > 8 bytes -> VALU overwrite", "VALU write SGPR -> VALU read", "VALU write VGPR -> v_readfirstlane",
            "VALU write exec -> v_readfirstlane", "trans -> VALU read", "v_pk_fma_f16 -> VALU read", "dot -> VALU read",
            "dot -> same dot SrcA", "VALU write VGPR -> v_readlane"}


_OLD_NAMES = {  # gfx90a spells the same MFMAs without the gfx940 underscores
    "v_mfma_f32_4x4x4_16b_f16": "v_mfma_f32_4x4x4f16", "v_mfma_f32_16x16x16_f16": "v_mfma_f32_16x16x16f16",
    "v_mfma_f32_32x32x8_f16": "v_mfma_f32_32x32x8f16", "v_mfma_f32_32x32x4_2b_f16": "v_mfma_f32_32x32x4f16",
    "v_mfma_f32_4x4x1_16b_f32": "v_mfma_f32_4x4x1f32", "v_mfma_f32_16x16x4_f32": "v_mfma_f32_16x16x4f32",
    "v_mfma_f32_32x32x2_f32": "v_mfma_f32_32x32x2f32", "v_mfma_f64_4x4x4_4b_f64": "v_mfma_f64_4x4x4f64",
    "v_mfma_f64_16x16x4_f64": "v_mfma_f64_16x16x4f64",
}


def _old(line: str) -> str:
    first, _, rest = line.partition(" ")
    return f"{_OLD_NAMES.get(first, first)} {rest}"


def _probes_gfx90a():
    """The MFMA probes again for gfx90a (passes 2/8/16; every non-DGEMM MFMA is XDL there)."""
    out = []
    producers = [(f"mfma{n}", _old(XDL[n] if n in XDL else SGEMM[n])) for n in (2, 8, 16)] + \
        [("f32 mfma8", _old(SGEMM[8])), ("dgemm4", _old(DGEMM4)), ("dgemm16", _old(DGEMM16))]
    for tag, p in producers:
        out.append((f"{tag} -> VALU read", ("gfx90a",), [p], "v_add_f32 v100, v1, v1"))
        out.append((f"{tag} -> VALU write (WAW)", ("gfx90a",), [p], "v_mov_b32 v1, 0"))
        out.append((f"{tag} -> DS read", ("gfx90a",), [p], "ds_write_b32 v1, v90"))
        out.append((f"{tag} SrcC -> VALU write (WAR)", ("gfx90a",), [_with_srcc(p, 64)], "v_mov_b32 v65, 0"))
        out.append((f"{tag} -> same MFMA, SrcC the same registers", ("gfx90a",), [p], p))
        for ctag, c in (("mfma8", _old(XDL[8])), ("dgemm16", _old(DGEMM16))):
            out.append((f"{tag} -> {ctag} SrcC overlapped", ("gfx90a",), [p], _srcc_partial(c)))
            out.append((f"{tag} -> {ctag} SrcA", ("gfx90a",), [p], _srcab_reader(c)))
    out.append(("DGEMM between VALU write and VMEM read", ("gfx90a",),
                ["v_mov_b32 v1, 0", "v_mfma_f64_4x4x4f64 v[10:11], v[32:33], v[48:49], v[10:11]"],
                "global_store_dword v[90:91], v1, off"))
    out.append(("DGEMM between VALU write and DS read", ("gfx90a",),
                ["v_mov_b32 v1, 0", "v_mfma_f64_4x4x4f64 v[10:11], v[32:33], v[48:49], v[10:11]"], "ds_write_b32 v88, v1"))
    out.append(("VALU between VALU write and VMEM read", ("gfx90a",), ["v_mov_b32 v1, 0", "v_mov_b32 v2, 0"],
                "global_store_dword v[90:91], v1, off"))
    return out


def _probes_gfx908():
    """gfx908: results in AGPRs only, read by v_accvgpr_read; checkMAIHazards908 and checkMAILdStHazards."""
    mfma = {2: "v_mfma_f32_4x4x1f32 a[0:3], v1, v2, a[{c}:{c3}]", 8: "v_mfma_f32_16x16x4f32 a[0:3], v1, v2, a[{c}:{c3}]",
            16: "v_mfma_f32_32x32x2f32 a[0:15], v1, v2, a[{c}:{c15}]"}
    out = []
    for n, form in mfma.items():
        p, war = (form.format(c=c, c3=c + 3, c15=c + 15) for c in (0, 40))
        out.append((f"mfma{n} -> v_accvgpr_read", ("gfx908",), [p], "v_accvgpr_read_b32 v3, a1"))
        out.append((f"mfma{n} -> MFMA SrcC overlapped", ("gfx908",), [p],
                    "v_mfma_f32_4x4x1f32 a[20:23], v1, v2, a[2:5]"))
        out.append((f"mfma{n} SrcC -> v_accvgpr_write", ("gfx908",), [war], "v_accvgpr_write_b32 a41, v9"))
    mfma = {n: form.format(c=0, c3=3, c15=15) for n, form in mfma.items()}
    out += [
        ("v_accvgpr_write -> MFMA SrcC", ("gfx908",), ["v_accvgpr_write_b32 a1, v9"], mfma[2]),
        ("v_accvgpr_write -> v_accvgpr_read", ("gfx908",), ["v_accvgpr_write_b32 a1, v9"], "v_accvgpr_read_b32 v3, a1"),
        ("VALU write -> MFMA SrcA", ("gfx908",), ["v_mov_b32 v1, 0"], mfma[2]),
        ("VALU write exec -> MFMA", ("gfx908",), ["v_cmpx_lt_u32 vcc, v7, v8"], mfma[2]),
        ("v_accvgpr_read -> VMEM store data", ("gfx908",), ["v_accvgpr_read_b32 v3, a1"],
         "global_store_dword v[90:91], v3, off"),
        ("v_accvgpr_read -> DS address", ("gfx908",), ["v_accvgpr_read_b32 v3, a1"], "ds_write_b32 v3, v90"),
    ]
    return out


def compare(archs=_ARCHS, select=None):
    """[(rule, arch, ours, llvm)] over every probe (``select(name)`` picks some)."""
    from tensile_asm.isa.arch import load_arch
    from tensile_asm.isa.hazards import required_wait_states
    from tensile_asm.isa.parser import parse_instruction as P
    rows = []
    for arch in archs:
        cases = [(name, producers, consumer) for name, on, producers, consumer in probes()
                 if arch in on and (select is None or select(name))]
        theirs = llvm_wait_states_many(arch, [[*producers, consumer] for _, producers, consumer in cases])
        for (name, producers, consumer), waits in zip(cases, theirs):
            ours = required_wait_states([P(h) for h in producers], P(consumer), load_arch(arch))
            rows.append((name, arch, ours, waits[-1]))
    return rows


if __name__ == "__main__":
    archs = tuple(sys.argv[1:]) or ("gfx942", "gfx950", "gfx90a", "gfx908")
    table: dict = {}
    for name, arch, ours, llvm in compare(archs):
        table.setdefault(name, {})[arch] = str(llvm) if ours == llvm else f"**ours {ours}, LLVM {llvm}**"
    print("| probe | " + " | ".join(archs) + " |\n|---|" + "---|" * len(archs))
    for name, cells in table.items():
        print(f"| {name} | " + " | ".join(cells.get(a, "") for a in archs) + " |")
