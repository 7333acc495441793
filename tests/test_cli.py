"""tensile-asm emit / verify / inspect, run in-process: solution files, logic files with --index, solution
dicts copied out of logic files (derived keys recomputed), and user errors as one sentence with exit code 2,
no traceback and no output files."""

import json

import pytest
import yaml

from tensile_asm.cli.main import main
from tensile_asm.codeobject import read_code_object

from conftest import SHARED, have_llvm

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

LITE = SHARED / "data" / "logic" / "lite_configs" / "aldebaran_Cijk_Ailk_Bljk_SB.yaml"
needs_lite = pytest.mark.skipif(not LITE.is_file(), reason=f"{LITE} not found (shared data beside the checkout)")

PLAIN = {"ProblemType": {"OperationType": "GEMM", "DataType": "s", "TransposeA": False, "TransposeB": True,
                         "Batched": True, "UseBeta": True},
         "WorkGroup": [8, 8, 1], "ThreadTile": [2, 2], "DepthU": 8}


def write(path, data):
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, default_flow_style=None))
    return path


def one_sentence_error(capsys, argv, *expect):
    """The command fails with exit code 2 and one line on stderr naming what is wrong; no traceback."""
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tensile-asm: error: "), err
    assert "Traceback" not in err + out
    for text in expect:
        assert text in lines[0], (text, lines[0])
    return lines[0]


def test_emit_writes_s_and_co_and_prints_resources(tmp_path, capsys):
    sol = write(tmp_path / "sol.yaml", PLAIN)
    out = tmp_path / "out"
    assert main(["emit", "--arch", "gfx90a", "--solution", str(sol), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    name = "Cijk_Ailk_Bjlk_SB_MT16x16x8_SN_K1"
    assert sorted(p.name for p in out.iterdir()) == [f"{name}.co", f"{name}.s"]
    assert f"kernel     {name}" in printed
    for label in ("registers", "VGPR", "SGPR", "LDS", "bytes", "occupancy", "waves/SIMD"):
        assert label in printed, label
    assert name in read_code_object(out / f"{name}.co").kernels
    assert f".amdgcn_target" in (out / f"{name}.s").read_text()


def test_verify_passes_on_good_sizes(tmp_path, capsys):
    sol = write(tmp_path / "sol.yaml", PLAIN)
    code = main(["verify", "--arch", "gfx942", "--solution", str(sol), "--size", "16,16,8", "--size", "19,7,13,2",
                 "--beta", "0"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count("PASS") == 2 and "2 passed, 0 failed" in out


def test_verify_exits_1_on_a_hand_broken_asm_file(tmp_path, capsys):
    sol = write(tmp_path / "sol.yaml", PLAIN)
    assert main(["emit", "--arch", "gfx90a", "--solution", str(sol), "-o", str(tmp_path)]) == 0
    capsys.readouterr()
    [s] = tmp_path.glob("*.s")
    text = s.read_text()
    assert "v_fmac_f32" in text
    broken = write(tmp_path / "broken.s", text.replace("v_fmac_f32", "v_mul_f32"))  # FMAs forget C
    code = main(["verify", "--arch", "gfx90a", "--solution", str(sol), "--asm", str(broken), "--size", "16,16,8"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert f"verifying {broken}" in out and "FAIL" in out and "0 passed, 1 failed" in out


@needs_lite
def test_a_lite_logic_file_with_index(tmp_path, capsys):
    raw = yaml.safe_load(LITE.read_text())
    index = 3
    stored = raw[5][index]
    out = tmp_path / "out"
    assert main(["emit", "--arch", "gfx90a", "--solution", str(LITE), "--index", str(index), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    mt = f"MT{stored['MacroTile0']}x{stored['MacroTile1']}x{stored['DepthU']}"
    assert mt in printed and len(list(out.glob("*.co"))) == 1
    code = main(["verify", "--arch", "gfx90a", "--solution", str(LITE), "--index", str(index), "--size", "17,9,5"])
    assert code == 0, capsys.readouterr().out
    capsys.readouterr()
    code = main(["inspect", "--arch", "gfx90a", "--solution", str(LITE), "--index", str(index), "--json",
                 "--no-emulate"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["lds_bytes"] > 0 and report["loop"]["fma_instructions"] > 0
    one_sentence_error(capsys, ["emit", "--arch", "gfx90a", "--solution", str(LITE), "-o", str(tmp_path / "x")],
                       "with an index 0..")
    one_sentence_error(capsys, ["verify", "--arch", "gfx90a", "--solution", str(LITE), "--index", "99",
                                "--size", "1,1,1"], "index 99 is out of range")
    assert not (tmp_path / "x").exists()


@needs_lite
def test_a_solution_dict_as_it_appears_in_a_logic_file(tmp_path, capsys):
    raw = yaml.safe_load(LITE.read_text())
    stored = dict(raw[5][1])
    assert "MacroTile0" in stored and "LdsNumElements" in stored and "SolutionIndex" in stored
    good = write(tmp_path / "good.yaml", stored)
    out = tmp_path / "out"
    assert main(["emit", "--arch", "gfx90a", "--solution", str(good), "-o", str(out)]) == 0
    assert f"MT{stored['MacroTile0']}x{stored['MacroTile1']}x{stored['DepthU']}" in capsys.readouterr().out
    # the same dict read out of the logic file builds the same kernel text
    assert main(["emit", "--arch", "gfx90a", "--solution", str(LITE), "--index", "1", "-o", str(tmp_path / "o2")]) == 0
    capsys.readouterr()
    [a], [b] = out.glob("*.s"), (tmp_path / "o2").glob("*.s")
    assert a.read_text() == b.read_text()
    # derived keys are recomputed from the parameters, as Tensile's TensileCreateLibrary does: a stored value of
    # another rule (or a wrong one) changes nothing in the kernel
    other = {**stored, "MacroTile0": stored["MacroTile0"] * 2, "LdsNumElements": stored["LdsNumElements"] + 1,
             "NumLoadsA": stored["NumLoadsA"] + 1}
    dest = tmp_path / "out_other"
    assert main(["emit", "--arch", "gfx90a", "--solution", str(write(tmp_path / "other.yaml", other)),
                 "-o", str(dest)]) == 0
    capsys.readouterr()
    [c] = dest.glob("*.s")
    assert c.read_text() == a.read_text()


def test_user_errors_are_one_sentence_exit_2_and_leave_no_files(tmp_path, capsys):
    sol = write(tmp_path / "sol.yaml", PLAIN)
    out = tmp_path / "out"
    emit = ["emit", "--solution", str(sol), "-o", str(out)]
    broken = write(tmp_path / "broken.yaml", "WorkGroup: [16, 16\nThreadTile: [4, 4]\n")
    one_sentence_error(capsys, ["emit", "--arch", "gfx90a", "--solution", str(broken), "-o", str(out)],
                       str(broken), "not valid YAML")
    one_sentence_error(capsys, ["emit", "--arch", "gfx1234"] + emit[1:], "gfx1234", "gfx90a")
    one_sentence_error(capsys, ["emit", "--arch", "gfx90a", "--solution", str(tmp_path / "missing.yaml"), "-o",
                                str(out)], "missing.yaml")
    for size, expect in (("1,2", "expected M,N,K"), ("0,2,3", "at least 1"), ("a,2,3", "integer")):
        one_sentence_error(capsys, ["verify", "--arch", "gfx90a", "--solution", str(sol), "--size", size],
                           f"--size {size!r}", expect)
    bad_param = write(tmp_path / "bad_param.yaml", {**PLAIN, "PrefetchGlobalRead": 3})
    one_sentence_error(capsys, ["emit", "--arch", "gfx90a", "--solution", str(bad_param), "-o", str(out)],
                       "PrefetchGlobalRead 3 is not allowed")
    invalid = write(tmp_path / "invalid.yaml", {**PLAIN, "ThreadTile": [5, 3]})
    one_sentence_error(capsys, ["emit", "--arch", "gfx90a", "--solution", str(invalid), "-o", str(out)],
                       "invalid solution", "MacroTile 40x24 is not allowed")
    one_sentence_error(capsys, ["verify", "--arch", "gfx90a", "--solution", str(sol), "--size", "4,4,4",
                                "--asm", str(tmp_path / "none.s")], "--asm")
    one_sentence_error(capsys, ["inspect", "--solution", str(sol)], "--arch")
    one_sentence_error(capsys, ["inspect"], "--solution")
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["sol.yaml", "broken.yaml", "bad_param.yaml", "invalid.yaml"])


def test_inspect_a_solution(tmp_path, capsys):
    sol = write(tmp_path / "sol.yaml", PLAIN)
    assert main(["inspect", "--arch", "gfx90a", "--solution", str(sol), "--no-emulate"]) == 0
    out = capsys.readouterr().out
    assert "Cijk_Ailk_Bjlk_SB_MT16x16x8_SN_K1" in out and "static efficiency" in out and "occupancy" in out
