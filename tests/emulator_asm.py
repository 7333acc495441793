"""Build small hand-written kernels for the emulator tests: wrap an instruction body in the kernel
descriptor and metadata, assemble with clang and link with ld.lld into a code object."""

from __future__ import annotations

import hashlib
import subprocess
import tempfile
from pathlib import Path

from tensile_asm.toolchain_paths import find_llvm_tool

_CACHE = Path(tempfile.gettempdir()) / "tensile-asm-emulator-tests"


def kernel_source(body: str, name: str = "k", args=(("out", 8),), vgprs: int = 16, sgprs: int = 16,
                  lds: int = 0, wg_ids: str = "x", workitem_id: int = 0, arch: str = "gfx90a",
                  max_wg: int = 1024, extra_kd: str = "") -> str:
    """``args``: (name, size) pairs (8-byte ones are addresses in spirit, all ``by_value``, as Tensile)."""
    offset, md_args = 0, []
    for arg_name, size in args:
        offset = (offset + size - 1) // size * size
        md_args.append(f"      - {{ .name: {arg_name}, .size: {size}, .offset: {offset}, .value_kind: by_value }}")
        offset += size
    kernarg = max(offset, 4)
    wg = "\n".join(f"  .amdhsa_system_sgpr_workgroup_id_{d} {int(d in wg_ids)}" for d in "xyz")
    accum = f"  .amdhsa_accum_offset {max(4, (vgprs + 3) // 4 * 4)}\n" if arch in ("gfx90a", "gfx942", "gfx950") else ""
    body = "\n".join("  " + line.strip() if line.strip() and not line.strip().endswith(":") else line.strip()
                     for line in body.strip().splitlines())
    return f""".amdgcn_target "amdgcn-amd-amdhsa--{arch}"
.amdhsa_code_object_version 5
.text
.globl {name}
.p2align 8
.type {name},@function
{name}:
{body}
.Lfunc_end_{name}:
.size {name}, .Lfunc_end_{name}-{name}
.rodata
.p2align 6
.amdhsa_kernel {name}
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size {kernarg}
  .amdhsa_group_segment_fixed_size {lds}
{wg}
  .amdhsa_system_vgpr_workitem_id {workitem_id}
  .amdhsa_next_free_vgpr {vgprs}
  .amdhsa_next_free_sgpr {sgprs}
  .amdhsa_float_denorm_mode_32 3
{accum}{extra_kd}.end_amdhsa_kernel
.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--{arch}
amdhsa.kernels:
  - .name: {name}
    .symbol: {name}.kd
    .kernarg_segment_size: {kernarg}
    .group_segment_fixed_size: {lds}
    .private_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .wavefront_size: 64
    .sgpr_count: {sgprs}
    .vgpr_count: {vgprs}
    .max_flat_workgroup_size: {max_wg}
    .args:
{chr(10).join(md_args)}
...
.end_amdgpu_metadata
"""


def assemble(source: str, arch: str = "gfx90a") -> Path:
    """Assemble and link ``source``; returns the .co path (cached by content)."""
    digest = hashlib.sha1(f"{arch}\n{source}".encode()).hexdigest()[:16]
    out = _CACHE / f"{digest}.co"
    if out.is_file():
        return out
    _CACHE.mkdir(parents=True, exist_ok=True)
    src, obj = _CACHE / f"{digest}.s", _CACHE / f"{digest}.o"
    src.write_text(source)
    _run([find_llvm_tool("clang"), "-x", "assembler", "-target", "amdgcn-amd-amdhsa", f"-mcpu={arch}",
          "-mcode-object-version=5", "-c", str(src), "-o", str(obj)])
    tmp = out.with_suffix(".tmp")
    _run([find_llvm_tool("ld.lld"), "-shared", str(obj), "-o", str(tmp)])
    tmp.replace(out)
    return out


def _run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise AssertionError(f"{cmd[0]} failed:\n{proc.stderr}")


def lane_op_kernel(stores: int = 2, settle: bool = False) -> str:
    """A lane-wise operation test: rows 0-5 of ``in`` (64 dwords each) -> v2..v7, the ``{op}`` slot (for
    ``str.format``), then v8 (and v9 when ``stores`` is 2) -> rows of ``out``. ``settle`` puts ``s_nop 1``
    before and after the operation (wait states some gfx950 forms need)."""
    loads = "\n".join(f"global_load_dword v{2 + r}, v1, s[4:5]" + (f" offset:{256 * r}" if r else "") for r in range(6))
    nop = "s_nop 1\n" if settle else ""
    outs = "\n".join(f"global_store_dword v1, v{8 + r}, s[6:7]" + (f" offset:{256 * r}" if r else "")
                      for r in range(stores))
    return f"""
s_load_dwordx4 s[4:7], s[0:1], 0x0
v_lshlrev_b32 v1, 2, v0
s_waitcnt lgkmcnt(0)
{loads}
s_waitcnt vmcnt(0)
{nop}{{op}}
{nop}{outs}
s_endpgm
"""


SIX_ROWS_IN_TWO_OUT = lane_op_kernel()


def build(body: str, **kw) -> Path:
    return assemble(kernel_source(body, **kw), kw.get("arch", "gfx90a"))
