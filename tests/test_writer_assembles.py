"""Every kernel shape the writer supports assembles and links with the real LLVM toolchain, and the
descriptor the writer computes covers every register the allocation uses."""

import itertools
import re

import pytest

from tensile_asm import toolchain
from tensile_asm.isa.arch import load_arch
from tensile_asm.writer.kernel import write_kernel

from conftest import have_llvm
from gemm_geometry import gemm_geometry

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

SHAPES = [  # wg0, wg1, tt0, tt1, du
    (16, 16, 4, 4, 16), (8, 8, 4, 4, 8), (16, 16, 8, 4, 8), (8, 8, 2, 2, 16), (16, 8, 3, 6, 8), (4, 16, 1, 2, 32),
]


@pytest.mark.parametrize("arch_name", ["gfx90a", "gfx942"])
@pytest.mark.parametrize("shape,trans", list(itertools.product(SHAPES[:3], [(False, False), (True, True)]))
                         + [(SHAPES[3], (False, True)), (SHAPES[4], (True, False)), (SHAPES[5], (False, False))])
def test_kernel_assembles(tmp_path, arch_name, shape, trans):
    wg0, wg1, tt0, tt1, du = shape
    g = gemm_geometry((wg0, wg1), (tt0, tt1), du, trans)
    arch = load_arch(arch_name)
    k = write_kernel(g, arch, f"k_{wg0}_{wg1}_{tt0}_{tt1}_{du}")
    text = k.text()
    co = tmp_path / "k.co"
    toolchain.assemble_and_link(text, arch, co)
    assert co.stat().st_size > 0
    # The highest register named in the text is within what the descriptor declares.
    vgprs = [int(x) for x in re.findall(r"\bv(\d+)\b", text)] + \
            [int(b) for b in re.findall(r"\bv\[\d+:(\d+)\]", text)]
    sgprs = [int(x) for x in re.findall(r"\bs(\d+)\b", text)] + \
            [int(b) for b in re.findall(r"\bs\[\d+:(\d+)\]", text)]
    assert max(vgprs) < k.resources.vgprs and max(sgprs) < k.resources.sgprs
    assert k.resources.lds_bytes == (g.mt0 + g.mt1) * du * 4


def test_assembler_errors_are_user_errors(tmp_path):
    from tensile_asm.errors import ToolchainError
    arch = load_arch("gfx90a")
    with pytest.raises(ToolchainError, match="rejected bad.s"):
        toolchain.assemble('.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"\nv_bogus v0\n', arch, "bad.s")
