"""Reading code objects back: metadata notes, kernel descriptors, entry points; the tool lookup."""

import subprocess

import numpy as np
import pytest

from tensile_asm.codeobject import read_code_object
from tensile_asm.errors import ToolchainError, UserError
from tensile_asm.toolchain_paths import find_llvm_tool

from conftest import have_llvm
from emulator_asm import _CACHE, build, kernel_source

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")


def test_descriptor_and_metadata_fields():
    co = read_code_object(build("s_endpgm", args=(("a", 8), ("n", 4)), vgprs=20, sgprs=24, lds=1536,
                                wg_ids="xz", workitem_id=1))
    assert co.processor == "gfx90a" and co.target.endswith("gfx90a")
    k = co.kernels["k"]
    kd = k.descriptor
    assert kd.group_segment_fixed_size == 1536
    assert kd.kernarg_size == 12
    assert kd.user_sgpr_count == 2 and kd.enable_sgpr_kernarg_segment_ptr
    assert not kd.enable_sgpr_dispatch_ptr and not kd.enable_sgpr_private_segment_buffer
    assert kd.enable_sgpr_workgroup_id == (True, False, True)
    assert kd.enable_vgpr_workitem_id == 1
    assert kd.accum_offset == 20                         # .amdhsa_accum_offset rounded to 4
    assert kd.vgprs(8) >= 20 and kd.vgprs(8) % 8 == 0
    assert kd.sgprs(8) >= 24
    assert kd.float_denorm_mode_32 == 3
    assert k.entry == co.functions["k"][0] and k.code_size == 4
    assert [a[".name"] for a in k.args] == ["a", "n"] and k.args[1][".offset"] == 8


def test_several_metadata_notes_are_merged():
    objs = []
    for name in ("one", "two"):
        src = kernel_source("s_endpgm", name=name)
        path = _CACHE / f"multi_{name}.s"
        _CACHE.mkdir(parents=True, exist_ok=True)
        path.write_text(src)
        obj = path.with_suffix(".o")
        subprocess.run([find_llvm_tool("clang"), "-x", "assembler", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx90a",
                        "-mcode-object-version=5", "-c", str(path), "-o", str(obj)], check=True)
        objs.append(str(obj))
    out = _CACHE / "multi.co"
    subprocess.run([find_llvm_tool("ld.lld"), "-shared", *objs, "-o", str(out)], check=True)
    co = read_code_object(out)
    assert set(co.kernels) == {"one", "two"}
    assert len(co.metadata["amdhsa.kernels"]) == 2
    assert co.kernels["one"].entry != co.kernels["two"].entry

    from tensile_asm.emulator import Emulator
    em = Emulator.load(out)
    assert em.kernels == ["one", "two"]
    assert em.launch("two", grid=(2, 1, 1), block=(64, 1, 1), args=[np.zeros(1, np.float32)]).waves == 2


def test_not_a_code_object(tmp_path):
    p = tmp_path / "x.co"
    p.write_bytes(b"hello")
    with pytest.raises(UserError, match="not an ELF"):
        read_code_object(p)
    with pytest.raises(UserError, match="does not exist"):
        read_code_object(tmp_path / "missing.co")


def test_unknown_kernel_name_is_a_user_error():
    from tensile_asm.emulator import Emulator
    em = Emulator.load(build("s_endpgm", name="only"))
    with pytest.raises(UserError, match="no kernel 'other'; it has only"):
        em.launch("other", args=[np.zeros(1)])


def test_missing_tool_names_the_install_command():
    with pytest.raises(ToolchainError, match="apt-get install"):
        find_llvm_tool("llvm-no-such-tool")
