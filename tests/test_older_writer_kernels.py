"""Real rocBLAS solutions whose stored values show an older Tensile writer's rule (solution/writer_rules.py):
built with that writer's LDS (the file's LdsNumElements is the kernel's LDS) and verified on the emulator
at edge sizes (1, primes, partial tiles, batch > 1, beta 0 and non-zero)."""

import tempfile
from pathlib import Path

import pytest

from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.isa.arch import load_arch
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import min_names
from tensile_asm.writer.build import build_kernel, link_kernels, supports

from conftest import have_llvm
from test_logic_versions import cases, read

_TMP = Path(tempfile.mkdtemp(prefix="older_writer_"))

# (sample case, architecture, sizes): the sizes respect the solution's AssertFree0ElementMultiple
CASES = [
    # 4.21, ScheduleIterAlg 2 with 1LDSBuffer 0: two LDS buffers (3136 complex elements, not 4.44's 1088)
    (("aquavanjaram942_Cijk_AlikC_Bljk_CB.yaml", 7), "gfx942", [Size(1, 1, 1, 1), Size(37, 29, 19, 2)]),
    # 4.14-headed bf16, LdsBlockSizePerPad -1 without LdsBlockSizePerPadA/B: LdsPadB 2 after each row
    (("aldebaran_Cijk_Ailk_Bljk_BBS_BH_GB.yaml", 10), "gfx90a", [Size(8, 1, 1, 1), Size(72, 131, 17, 2)]),
]


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0][0].removesuffix('.yaml')}-{c[0][1]}")
def test_older_writer_lds_is_the_kernel_s_and_it_verifies(case):
    key, arch_name, sizes = case
    sol, raw = read(*key), cases()[key]["solution"]
    arch = load_arch(arch_name)
    assert supports(sol, arch) is None
    name = min_names([sol])[0]
    kernel = build_kernel(sol, arch, name)
    assert kernel.resources.lds_bytes == raw["LdsNumElements"] * sol.derived.bytes_per_element
    co = _TMP / f"{name}_{arch_name}.co"
    link_kernels([kernel], arch, co)
    contract = GemmKernelContract.from_solution(sol, name)
    runtime = EmulatedRuntime()
    for beta in (0.0, 1.25):
        for r in verify_sizes(co, contract, sizes, -0.75, beta, 5, runtime):
            assert r.passed, f"{name} {r.size} beta {beta}: {r.detail} (max rel err {r.max_rel_error})"
