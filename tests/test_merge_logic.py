"""tensile-asm merge-logic on real logic files: rocBLAS's lite vega10 SGEMM NT logic as the original, rows
of the full rocblas-asm logic of the same problem as the incremental tuning result (some sizes both have,
half of those made slower than the original, and sizes only the incremental has)."""

import copy
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from tensile_asm.benchmark.sample import cut_logic
from tensile_asm.cli.main import main
from tensile_asm.library.fileio import load_yaml
from tensile_asm.library.merge import merge_documents

SHARED = Path(__file__).resolve().parents[2] / "shared"
LITE = SHARED / "data/logic/lite_configs/vega10_Cijk_Ailk_Bljk_SB.yaml"
FULL = SHARED / "data/logic/rocblas-asm_full/vega10/vega10_Cijk_Ailk_Bljk_SB.yaml"
TENSILE_TGZ = SHARED / "reference/tensile/tensile-4.44.0-a164ed70.tgz"
NAME = LITE.name

pytestmark = pytest.mark.skipif(not (LITE.is_file() and FULL.is_file()), reason="shared logic files not found")


def _load(path):
    return load_yaml(path)


def _strip(s):
    return {k: v for k, v in s.items() if k not in ("SolutionIndex", "SolutionNameMin")}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("merge")
    (root / "orig").mkdir()
    (root / "inc").mkdir()
    (root / "orig" / NAME).write_bytes(LITE.read_bytes())
    lite, full = _load(LITE), _load(FULL)
    lite_eff = {tuple(size[:4]): eff for size, (_, eff) in lite[7]}
    both = [r for r in full[7] if tuple(r[0][:4]) in lite_eff][:30]
    only = [r for r in full[7] if tuple(r[0][:4]) not in lite_eff][:50]
    assert len(both) == 30 and len(only) == 50
    for r in both[::2]:                       # half of the shared sizes: slower than the original
        r[1][1] = lite_eff[tuple(r[0][:4])] / 2
    inc = copy.deepcopy(full)
    inc[7] = both + only
    # only the solutions those rows name (the full file's hundreds of others would be dropped by the merge
    # anyway, and writing and parsing them was most of this test's time)
    inc = cut_logic(inc, sorted({r[1][0] for r in inc[7]}))
    (root / "inc" / NAME).write_text(yaml.dump(inc, Dumper=yaml.CSafeDumper, default_flow_style=None))
    (root / "inc" / "vega10_Cijk_Alik_Bljk_SB.yaml").write_text("[]\n")   # no original of that name
    return root


@pytest.mark.parametrize("force", [False, True])
def test_merge_semantics(folders, tmp_path, capsys, force):
    out = tmp_path / "out"
    assert main(["merge-logic", "--force" if force else "--no-force", str(folders / "orig"), str(folders / "inc"),
                 str(out)]) == 0
    printed = capsys.readouterr().out
    assert "vega10_Cijk_Alik_Bljk_SB.yaml: skipped" in printed and "1 file(s) merged" in printed
    assert sorted(p.name for p in out.iterdir()) == [NAME]
    orig, inc, merged = _load(folders / "orig" / NAME), _load(folders / "inc" / NAME), _load(out / NAME)
    sols = merged[5]
    assert [s["SolutionIndex"] for s in sols] == list(range(len(sols)))           # renumbered
    assert {i for _, (i, _) in merged[7]} == set(range(len(sols)))               # every solution used
    assert all(len(size) == 4 for size, _ in merged[7])                         # trimmed to M, N, batch, K
    chosen = {tuple(size): (_strip(sols[i]), eff) for size, (i, eff) in merged[7]}
    orig_rows = {tuple(size[:4]): (_strip(orig[5][i]), eff) for size, (i, eff) in orig[7]}
    inc_rows = {tuple(size[:4]): (_strip(inc[5][i]), eff) for size, (i, eff) in inc[7]}
    assert set(chosen) == set(orig_rows) | set(inc_rows)                        # new sizes added
    replaced = kept = 0
    for size, got in chosen.items():
        if size not in inc_rows:
            assert got == orig_rows[size]
        elif size not in orig_rows:
            assert got == inc_rows[size]
        elif force or inc_rows[size][1] > orig_rows[size][1]:
            assert got == inc_rows[size]
            replaced += 1
        else:
            assert got == orig_rows[size]
            kept += 1
    assert (replaced, kept) == ((30, 0) if force else (15, 15))
    assert f"50 size(s) added, {replaced} replaced, {kept} kept" in printed
    # equal solutions are not duplicated
    assert len({repr(sorted(_strip(s).items())) for s in sols}) == len(sols)


def test_merge_documents_reuses_an_equal_solution_and_drops_unused():
    base = _load(LITE)
    inc = copy.deepcopy(base)
    size, (index, eff) = inc[7][0]
    inc[7] = [[size, [index, eff + 1]], [[7, 7, 1, 7], [index, 1.0]]]   # faster same kernel, and a new size
    merged, stats = merge_documents(base, inc, force=False)
    assert len(merged[5]) == len(_load(LITE)[5]) and stats.solutions_added == 0
    assert merged[7][-1] == [[7, 7, 1, 7], [index, 1.0]] and stats.sizes_added == 1 and stats.sizes_replaced == 1


def test_not_a_logic_folder_is_one_line(tmp_path, capsys):
    (tmp_path / "inc").mkdir()
    (tmp_path / "orig").mkdir()
    (tmp_path / "orig" / "x.yaml").write_text("{a: 1}\n")
    (tmp_path / "inc" / "x.yaml").write_text("{a: 1}\n")
    assert main(["merge-logic", str(tmp_path / "missing"), str(tmp_path / "inc"), str(tmp_path / "out")]) == 2
    assert "ORIGINAL folder" in capsys.readouterr().err
    assert main(["merge-logic", str(tmp_path / "orig"), str(tmp_path / "inc"), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "x.yaml: not a list-form logic file" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not TENSILE_TGZ.is_file(), reason="Tensile's sources are not in the shared reference")
@pytest.mark.parametrize("force", ["false", "true"])
def test_same_bytes_as_tensiles_merge_py(folders, tmp_path, force):
    with tarfile.open(TENSILE_TGZ) as tgz:
        wanted = [m for m in tgz.getmembers() if m.name.endswith(("Tensile/__init__.py", "Utilities/__init__.py",
                                                                  "Utilities/ConditionalImports.py",
                                                                  "Utilities/merge.py"))]
        tgz.extractall(tmp_path / "tensile", members=wanted, filter="data")
    merge_py = next((tmp_path / "tensile").rglob("Utilities/merge.py"))
    env = {"PYTHONPATH": str(merge_py.parents[2])}
    subprocess.run([sys.executable, str(merge_py), "-v", "0", "--force_merge", force, str(folders / "orig"),
                    str(folders / "inc"), str(tmp_path / "tensile-out")], check=True, env=env, capture_output=True)
    assert main(["merge-logic", "--force" if force == "true" else "--no-force", str(folders / "orig"),
                 str(folders / "inc"), str(tmp_path / "ours")]) == 0
    assert (tmp_path / "ours" / NAME).read_bytes() == (tmp_path / "tensile-out" / NAME).read_bytes()
