"""A kernel of a library built earlier verifies on the emulator from the library files alone
(TensileLibrary.yaml or .dat + the .co), in a process where the kernel writer cannot be imported: the
launch facts, GlobalSplitU's helper kernels and workspace included, come from the library entry."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tensile_asm.library import Library, write_master_library, write_logic_file
from tensile_asm.library.create import create_library
from tensile_asm.problem import ProblemType
from tensile_asm.solution import Solution

from conftest import have_llvm

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

REPO = Path(__file__).resolve().parents[1]
PT = {"OperationType": "GEMM", "DataType": "s", "TransposeA": True, "TransposeB": False, "Batched": True,
      "UseBeta": True}
BASE = {"WorkGroup": [8, 8, 1], "ThreadTile": [4, 2], "DepthU": 16, "VectorWidth": 1, "GlobalReadVectorWidth": 1,
        "PrefetchGlobalRead": 0, "PrefetchLocalRead": 0, "WorkGroupMapping": 1, "StaggerU": 0}
VARIANTS = [{}, {"GlobalSplitU": 3}, {"GlobalSplitU": 2, "GlobalSplitUAlgorithm": "MultipleBuffer"},
            {"WorkGroupMapping": 4, "PrefetchGlobalRead": 1}]
SIZES = ["1,1,1", "37,31,29", "45,23,83,2"]      # 1x1x1, primes, not tile multiples with a batch of 2

# Installed first in each subprocess: any import of tensile_asm.writer fails.
NO_WRITER = '''
import sys
class _NoWriter:
    def find_spec(self, name, path=None, target=None):
        if name == "tensile_asm.writer" or name.startswith("tensile_asm.writer."):
            raise ImportError(name + " is made unimportable for this test")
        return None
sys.meta_path.insert(0, _NoWriter())
'''
VERIFY = NO_WRITER + '''
import json
from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.emulator import Emulator
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.library import Library
from tensile_asm.runtime.emulated import EmulatedRuntime

try:
    import tensile_asm.writer.build  # noqa: F401
    raise SystemExit("the writer is importable")
except ImportError:
    pass
launched = []
real_launch = Emulator.launch
def launch(self, kernel, **kw):
    launched.append(kernel)
    return real_launch(self, kernel, **kw)
Emulator.launch = launch

lib = Library.load(sys.argv[1])
sizes = [Size(*map(int, s.split(","))) for s in sys.argv[2:]]
out = []
for entry in sorted(lib.solutions.values(), key=lambda e: e["index"]):
    contract = GemmKernelContract.from_library_entry(entry)
    for beta in (0.5, 0.0):
        launched.clear()
        paths = {k: lib.code_object(k) for k in (entry["name"], contract.helper_name()) if k}
        for r in verify_sizes(paths, contract, sizes, -1.25, beta, 7, EmulatedRuntime(strict=True)):
            out.append({"kernel": entry["name"], "gsu": contract.global_split_u,
                        "algorithm": contract.global_split_u_algorithm, "size": str(r.size), "beta": beta,
                        "passed": bool(r.passed), "detail": r.detail, "max_rel_error": r.max_rel_error})
        out[-1]["launched"] = sorted(set(launched))
print(json.dumps({"results": out, "writer_modules": [m for m in sys.modules if m.startswith("tensile_asm.writer")]}))
'''
CLI = NO_WRITER + '''
from tensile_asm.cli.main import main
sys.exit(main(sys.argv[1:]))
'''


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", script, *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=900)


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """A gfx90a library of four kernels: plain, GlobalSplitU SingleBuffer, MultipleBuffer, WorkGroupMapping."""
    root = tmp_path_factory.mktemp("liblaunch")
    logic = root / "logic"
    logic.mkdir()
    sols = [Solution.from_dict({"ProblemType": PT, **BASE, **v}, where="test") for v in VARIANTS]
    write_logic_file(logic / "aldebaran_Cijk_Alik_Bljk_SB.yaml", schedule="aldebaran", architecture="gfx90a",
                     device_names=["Device 7400"], problem_type=ProblemType.from_dict(PT), solutions=sols,
                     exact_logic=[([64 * (i + 1), 64, 1, 256], i, 100.0 - i) for i in range(len(sols))])
    report = create_library(logic, root / "out", "gfx90a")
    assert len(report.built) == len(VARIANTS), report.table()
    return root / "out"


def test_library_kernels_verify_without_the_writer(library):
    proc = _run(VERIFY, str(library), *SIZES)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["writer_modules"] == []
    results = report["results"]
    print("\n".join(f"{r['kernel']:<58} GSU {r['gsu']} {r['algorithm']:<14} {r['size']:<10} beta {r['beta']:<4} "
                    f"{'PASS' if r['passed'] else 'FAIL'} {r['max_rel_error']:.2e} {r['detail']}"
                    + (f"  launched {r['launched']}" if "launched" in r else "") for r in results))
    assert len(results) == len(VARIANTS) * len(SIZES) * 2
    assert all(r["passed"] for r in results), [r for r in results if not r["passed"]]
    helpers = {r["algorithm"] if r["gsu"] > 1 else "none": [k for k in r["launched"] if k != r["kernel"]]
               for r in results if "launched" in r}
    assert helpers == {"none": [], "SingleBuffer": ["Cijk_S"], "MultipleBuffer": ["Cijk_S_PostGSU2"]}


def test_cli_verifies_a_dat_library_without_the_writer(library, tmp_path):
    """The same from TensileLibrary.dat (msgpack), through ``tensile-asm verify --library --kernel``."""
    lib = Library.load(library)
    dat_dir = tmp_path / "out" / "library"
    dat_dir.mkdir(parents=True)
    write_master_library(lib.data, dat_dir, "msgpack")
    for co in [*(library / "library").glob("*.co"), *(library / "library").glob("*.hsaco")]:
        shutil.copy(co, dat_dir)
    multiple = next(s["name"] for s in lib.solutions.values() if s["sizeMapping"]["globalAccumulation"] == 2)
    proc = _run(CLI, "verify", "--library", str(tmp_path / "out"), "--kernel", multiple, "--size", "37,31,29",
                "--size", "1,1,1")
    assert proc.returncode == 2 and "predicates accept" in proc.stderr     # GlobalSplitUCheckMinK: K >= 512
    proc = _run(CLI, "verify", "--library", str(tmp_path / "out"), "--kernel", multiple, "--size", "37,31,29",
                "--size", "1,1,1", "--ignore-predicates")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{multiple} (gfx90a, TensileLibrary_gfx90a.co)" in proc.stdout
    assert "2 passed, 0 failed" in proc.stdout


def test_cli_library_errors_are_one_sentence(library, capsys):
    from tensile_asm.cli.main import main

    assert main(["verify", "--library", str(library), "--kernel", "nope", "--size", "4,4,4"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no solution named nope" in err
    assert main(["verify", "--library", str(library), "--arch", "gfx90a", "--size", "4,4,4"]) == 2
    assert "drop --arch" in capsys.readouterr().err
    assert main(["verify", "--size", "4,4,4"]) == 2
    assert "verify needs --arch and --solution (or --library OUT_DIR" in capsys.readouterr().err
