"""Kernel names Tensile 4.44's TensileCreateLibrary gives a logic directory: its own entry point (unmodified, from
../shared/reference/tensile, as tensile-tcl runs it), stopped right after it names the kernels (no kernel is
written). Run with the reference's Python (tensile-tcl sets it up under ~/.cache/tensile-ref):

    REF=~/.cache/tensile-ref; TENSILE_SRC=$REF/src TCL_CAPS_FILE=$REF/asmcaps-clang19.pkl \
      $REF/venv/bin/python tools/tensile_kernel_names.py OUT.json 'gfx900;gfx906;gfx908;gfx90a' LOGIC_DIR

OUT.json: one row per solution {kernel, solution, SolutionNameMin, index}. tests/data/tensile444_kernel_names_*
were made with it; tests/test_naming.py compares create-library's names with them."""
import os, sys, json, pickle, copy
sys.path.insert(0, os.environ["TENSILE_SRC"])
import Tensile.TensileCreateLibrary as T
from Tensile.SolutionStructs import Solution
out_json, arch, logic = sys.argv[1:4]
cache = os.environ["TCL_CAPS_FILE"]
orig = T.assignGlobalParameters
def patched(config, capabilitiesCache=None):
    with open(cache, "rb") as f:
        return orig(config, pickle.load(f))
T.assignGlobalParameters = patched
def names(solutions, kernels, removeTemporaries):
    kmin = Solution.getMinNaming(kernels)
    smin = Solution.getMinNaming(solutions)
    rows = [{"kernel": Solution.getNameMin(k, kmin), "solution": Solution.getNameMin(s, smin),
             "SolutionNameMin": s._state.get("SolutionNameMin"), "index": s._state.get("SolutionIndex")}
            for s, k in zip(solutions, kernels)]
    json.dump(rows, open(out_json, "w"))
    raise SystemExit(0)
T.getKernelWriters = names
sys.argv = ["TensileCreateLibrary", "--cxx-compiler=/usr/lib/llvm-19/bin/clang++", "--c-compiler=/usr/lib/llvm-19/bin/clang",
            "--assembler=/usr/lib/llvm-19/bin/clang++", "--offload-bundler=/usr/lib/llvm-19/bin/clang-offload-bundler",
            f"--architecture={arch}", "--code-object-version=default", "--no-enumerate", "--merge-files",
            "--library-format=msgpack", "--jobs", "1", logic, os.path.join(os.environ.get("TMPDIR", "/tmp"), "tensile_kernel_names_out"), "HIP"]
T.TensileCreateLibrary()
