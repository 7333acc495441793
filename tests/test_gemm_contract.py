"""The GEMM kernel contract (tensile_asm.gemm): one set of launch facts, whether it comes from a solution,
from a library entry, or from a kernel the writer wrote; the launches it gives; and the import rule
that keeps runtimes, benchmark, inspect and library off the writer."""

import ast
import dataclasses
from pathlib import Path

import pytest

from tensile_asm.errors import UserError
from tensile_asm.gemm import GemmKernelContract, argument_layout
from tensile_asm.gemm.helpers import BLOCK
from tensile_asm.isa.arch import load_arch
from tensile_asm.library.master import solution_entry
from tensile_asm.problem import HPA_TYPES, VALID_GEMM_TYPES
from tensile_asm.solution import Solution

PACKAGE = Path(__file__).resolve().parents[1] / "tensile_asm"
PLAIN = {"VectorWidth": 1, "GlobalReadVectorWidth": 1, "PrefetchGlobalRead": 0, "PrefetchLocalRead": 0,
         "WorkGroupMapping": 1, "StaggerU": 0}
CASES = [  # (data, dest, compute, transposes, batched, use_beta, extra parameters)
    ("s", "s", "s", (False, False), True, True, {}),
    ("s", "s", "s", (True, False), False, True, {"GlobalSplitU": 3}),
    ("s", "s", "s", (False, True), True, False, {"GlobalSplitU": 2, "GlobalSplitUAlgorithm": "MultipleBuffer"}),
    ("s", "s", "s", (True, True), False, False, {"WorkGroupMapping": 4, "WorkGroup": [8, 8, 2]}),
    ("h", "h", "s", (False, False), True, True, {}),
    ("h", "s", "s", (True, False), True, True, {}),
    ("h", "h", "h", (False, True), True, True, {"PrefetchGlobalRead": 1}),
    ("b", "b", "s", (True, True), True, True, {}),
    ("d", "d", "d", (False, False), False, True, {"VectorWidth": 2, "GlobalReadVectorWidth": 2}),
]


def solution(data, dest, compute, transposes, batched, use_beta, extra):
    pt = {"OperationType": "GEMM", "DataType": data, "DestDataType": dest, "ComputeDataType": compute,
          "TransposeA": transposes[0], "TransposeB": transposes[1], "Batched": batched, "UseBeta": use_beta,
          "HighPrecisionAccumulate": compute == "s" and data != "s"}
    sol = Solution.from_dict({"ProblemType": pt, "WorkGroup": [8, 8, 1], "ThreadTile": [4, 2], "DepthU": 16,
                              **PLAIN, **extra}, where="test")
    assert sol.valid, sol.rejection
    return sol


@pytest.mark.parametrize("case", CASES, ids=lambda c: "".join(c[:3]) + "_" + "_".join(f"{k}{v}" for k, v in c[6].items()))
def test_solution_library_entry_and_written_kernel_agree(case):
    """The contract from a solution, from its library entry and from the kernel the writer wrote is one."""
    from tensile_asm.writer.build import build_kernel, supports
    from tensile_asm.writer.contract import kernel_contract

    sol = solution(*case)
    arch = load_arch("gfx90a")
    assert supports(sol, arch) is None
    kernel = build_kernel(sol, arch, "k")
    ours = GemmKernelContract.from_solution(sol, "k")
    written = kernel_contract(kernel)
    assert dataclasses.replace(written, lds_bytes=None) == dataclasses.replace(ours, lds_bytes=None)
    assert written.lds_bytes == ours.lds_bytes == kernel.resources.lds_bytes
    assert GemmKernelContract.from_library_entry(solution_entry(sol, "k", 0, 0)) == \
        dataclasses.replace(ours, lds_bytes=None)
    assert [(a.name, a.size, a.offset) for a in ours.layout()] == [(a.name, a.size, a.offset) for a in kernel.layout]


def _launches(contract, m=37, n=29, k=19, batch=2):
    ld = {"A": 50, "B": 40, "C": 41, "D": 43}
    stride = {t: 5000 + i for i, t in enumerate("ABCD")}
    addresses = {t: 0x1000 * (i + 1) for i, t in enumerate("ABCD")} | {"WS": 0x9000}
    return contract.launches(m=m, n=n, k=k, batch=batch, ld=ld, batch_stride=stride, alpha=1.5, beta=0.25,
                             addresses=addresses, cu_count=104)


def test_launches_of_each_global_split_u_algorithm():
    plain = GemmKernelContract.from_solution(solution(*CASES[0]), "g")
    [gemm] = _launches(plain)
    assert (gemm.kernel, gemm.grid, gemm.block) == ("g", (-(-37 // 32), -(-29 // 16), 2), (64, 1, 1))
    assert gemm.values["AddressD"] == 0x4000 and gemm.values["Tensor2dSizeA"] == 1 + 36 + 18 * 50   # Tensile's allocatedElementsNonBatchA
    assert len(gemm.kernarg()) == 8 * -(-(gemm.layout[-1].offset + gemm.layout[-1].size) // 8)

    single = GemmKernelContract.from_solution(solution(*CASES[1]), "g")
    beta_only, gemm = _launches(single, batch=1)
    # Tensile's host: a 1-D grid of 256-thread work-groups, one element of D each thread
    assert (beta_only.kernel, beta_only.grid, beta_only.block) == ("Cij_S", (-(-37 * 29 // 256), 1, 1), BLOCK)
    assert beta_only.values["Beta"] == 0.25 and gemm.grid == (2, 2 * 3, 1)
    assert single.workspace(37, 29) is None

    multiple = GemmKernelContract.from_solution(solution(*CASES[2]), "g")
    gemm, post = _launches(multiple)
    assert post.kernel == "Cijk_S_PostGSU2" and post.grid == (-(-37 * 29 * 2 // 256), 1, 1)
    assert gemm.grid == (2, 2 * 2, 2)
    ws = multiple.workspace(37, 29, 2)
    assert (ws.elements, ws.element_bytes) == (2 * 37 * 29 * 2, 4)
    assert gemm.values["AddressD"] == 0x9000 and gemm.values["StridesD0"] == 37 and gemm.values["StridesD1"] == 37 * 29
    assert gemm.values["AddressC"] == 0x9000     # Tensile's host passes the workspace as C too (ws_c)
    assert post.values["AddressWS"] == 0x9000 and post.values["AddressD"] == 0x4000 and post.values["StridesD1"] == 43
    assert post.values["Beta"] == 0.0      # the problem type has no beta: C is not read
    assert [a.name for a in post.layout][:5] == ["AddressD", "AddressWS", "AddressC", "Alpha", "Beta"]
    assert post.values["GSU"] == 2 and post.values["StridesWS1"] == 37 and post.values["StridesWS2"] == 37 * 29
    # a large D on a small device: the host's two-elements-per-thread variant
    gemm, post = _launches(multiple, m=1000, n=300)
    assert post.kernel == "Cijk_S_PostGSU2_VW2" and post.grid == (-(-1000 * 300 * 2 // 512), 1, 1)


def test_kernel_argument_layout_is_tensiles():
    names = [a.name for a in argument_layout(batched=True, use_beta=True)]
    assert names[:8] == ["Tensor2dSizeA", "Tensor2dSizeB", "AddressD", "AddressC", "AddressA", "AddressB",
                         "Alpha", "Beta"]
    double = argument_layout(batched=False, use_beta=True, compute_type="D")
    assert [(a.name, a.offset, a.size) for a in double if a.name in ("Alpha", "Beta")] == [("Alpha", 48, 8),
                                                                                          ("Beta", 56, 8)]


@pytest.mark.parametrize("types", sorted(VALID_GEMM_TYPES), ids="".join)
def test_library_entry_gives_the_solutions_compute_type(types):
    """Tensile's library entry has no compute type; reading one back gives the solution's for every type
    Tensile supports (fp8 inputs with H or 8-bit D accumulate in fp32: read as H before, alpha then half)."""
    ab, dest, compute = types
    pt = {"OperationType": "GEMM", "DataType": ab, "DestDataType": dest, "ComputeDataType": compute,
          "TransposeA": False, "TransposeB": True, "Batched": True,
          "HighPrecisionAccumulate": types in HPA_TYPES}
    sol = Solution.from_dict({"ProblemType": pt, "WorkGroup": [8, 8, 1], "ThreadTile": [4, 4], "DepthU": 16,
                              **PLAIN}, where="test")
    ours = GemmKernelContract.from_solution(sol, "k")
    read = GemmKernelContract.from_library_entry(solution_entry(sol, "k", 0, 0))
    assert (read.data_type, read.dest_type, read.compute_type) == (ours.data_type, ours.dest_type, compute)


def test_bad_library_entries_are_one_sentence():
    entry = solution_entry(solution(*CASES[0]), "k", 0, 0)
    with pytest.raises(UserError, match="operationIdentifier Contraction_x"):
        GemmKernelContract.from_library_entry({**entry, "problemType": {**entry["problemType"],
                                                                        "operationIdentifier": "Contraction_x"}})
    with pytest.raises(UserError, match="sizeMapping"):
        GemmKernelContract.from_library_entry({k: v for k, v in entry.items() if k != "sizeMapping"})
    with pytest.raises(UserError, match="streamK is not launched"):
        GemmKernelContract.from_library_entry({**entry, "sizeMapping": {**entry["sizeMapping"], "streamK": 3}})
    contract = GemmKernelContract.from_library_entry(entry)
    with pytest.raises(UserError, match="not batched"):
        dataclasses.replace(contract, batched=False).grid(4, 4, 2)


def _writer_imports(path: Path) -> list[tuple[int, str, bool]]:
    """(line, module, inside a function) for every import of tensile_asm.writer in ``path``."""
    tree = ast.parse(path.read_text(), str(path))
    out = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            names = []
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                names = [child.module] + [f"{child.module}.{a.name}" for a in child.names]
            for name in names:
                if name == "tensile_asm.writer" or name.startswith("tensile_asm.writer."):
                    out.append((child.lineno, name, in_function))
                    break
            visit(child, inner)

    visit(tree, False)
    return out


BUILDERS = ("library/create.py", "tuning/candidates.py", "source/build.py")


def test_nothing_outside_the_writer_and_cli_imports_the_writer():
    """Runtimes, benchmark, inspect, library, emulator, ... reach kernels through tensile_asm.gemm. The
    exceptions are the modules that build kernels, each importing the writer lazily inside the function that
    needs it: create-library's default builder, the tuner's candidate check and build, and the source
    builder's GlobalSplitU helper kernels (written in assembly)."""
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 100
    offenders = []
    for path in modules:
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(("writer/", "cli/")):
            continue
        for line, name, in_function in _writer_imports(path):
            if rel in BUILDERS and in_function and name.startswith("tensile_asm.writer"):
                continue
            offenders.append(f"tensile_asm/{rel}:{line} imports {name}")
    assert not offenders, offenders
    # the walk sees what it looks for: the CLI does import the writer
    assert _writer_imports(PACKAGE / "cli" / "main.py")
