"""The committed instruction lists (isa/instructions/) and the emulator-coverage report built on them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tensile_asm.cli.main import main
from tensile_asm.emulator import coverage
from tensile_asm.emulator.registry import registry
from tensile_asm.isa.instruction_lists import LISTED_ARCHES, load_instructions, rejected_mnemonics

# Registered names that LLVM never prints for a gfx9 target (checked against every list below):
# gfx10+ and gfx6/7 spellings (v_add_nc_u32, v_lshl_b32, v_lshr_b32, v_ashr_i32) and v_mul_lo_i32,
# which llvm-mc accepts as an alias of v_mul_lo_u32 but never disassembles to.
NOT_GFX9_NAMES = {"v_add_nc_u32", "v_lshl_b32", "v_lshr_b32", "v_ashr_i32", "v_mul_lo_i32"}


@pytest.mark.parametrize("arch", LISTED_ARCHES)
def test_every_listed_name_is_a_mnemonic_llvm_mc_accepts_for_its_arch(arch):
    names = sorted(load_instructions(arch))
    assert len(names) > 1500
    assert rejected_mnemonics(arch, names) == {}


def test_the_assembler_check_rejects_unknown_and_other_arch_names():
    rejected = rejected_mnemonics("gfx908", ["v_fmac_f32", "v_bogus_b32", "v_pk_fma_f32", "v_mfma_f32_32x32x1_2b_f32"])
    assert set(rejected) == {"v_bogus_b32", "v_pk_fma_f32", "v_mfma_f32_32x32x1_2b_f32"}
    with pytest.raises(RuntimeError, match="gfx9999"):      # an arch llvm-mc does not know checks nothing
        rejected_mnemonics("gfx9999", ["v_fmac_f32"])


def test_every_registered_handler_name_is_an_instruction_of_some_arch():
    """Catches a typo in a @handles(...) name. The <op>_dpp / <op>_sdwa wrappers are registered for
    every VOP handler (forms that do not exist are never met), so only base names are checked."""
    listed = {coverage.canonical(n) for arch in LISTED_ARCHES for n in load_instructions(arch)}
    stray = {n for n in registry().handlers if not n.endswith(("_dpp", "_sdwa")) and n not in listed}
    assert stray <= NOT_GFX9_NAMES, sorted(stray - NOT_GFX9_NAMES)


def test_gfx90a_coverage_adds_up_and_follows_the_handlers(monkeypatch):
    listed = load_instructions("gfx90a")
    fams = coverage.coverage("gfx90a")
    assert sum(f.total for f in fams) == len(listed)
    assert sorted(n for f in fams for n in f.implemented + f.missing) == sorted(listed)
    assert all(set(f.implemented).isdisjoint(f.missing) for f in fams)
    by_family = {f.family: f for f in fams}
    assert {"v_fmac_f32_e32", "v_fmac_f32_dpp"} <= set(by_family["VOP2"].implemented + by_family["DPP"].implemented)
    assert "v_fmac_f32_e64" in by_family["VOP3"].implemented
    assert "v_mfma_f32_32x32x8f16" in by_family["MFMA/SMFMAC"].implemented
    assert set(by_family) >= {"SOP1", "SMEM", "VOPC", "DS", "GLOBAL", "FLAT", "SCRATCH"} and by_family["MIMG"].graphics
    monkeypatch.delitem(registry().handlers, "v_fmac_f32")       # the count follows the registry
    assert not coverage.is_implemented("v_fmac_f32_e32") and coverage.is_implemented("v_fmac_f32_dpp")


def test_importing_emulator_modules_registers_nothing():
    """Only registry.build_registry() builds the registry: importing every emulator module in a fresh
    interpreter leaves it unbuilt, and two builds give the same opcodes and builders."""
    code = ("import importlib, pkgutil, tensile_asm.emulator as e\n"
            "for m in pkgutil.walk_packages(e.__path__, 'tensile_asm.emulator.'): importlib.import_module(m.name)\n"
            "from tensile_asm.emulator import registry\n"
            "print(registry.registry.cache_info().currsize)\n"
            "a, b = registry.build_registry(), registry.build_registry()\n"
            "print(len(a.handlers), sorted(a.handlers) == sorted(b.handlers), sorted(a.prefixes))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "0"
    assert out[1] == f"{len(registry().handlers)} True ['v_mfma_', 'v_smfmac_']"


def test_a_prefix_handler_counts_only_the_names_it_parses():
    assert coverage.is_implemented("v_mfma_f32_32x32x1_2b_f32")        # gfx942 spelling
    assert not coverage.is_implemented("v_mfma_ld_scale_b32")


def test_families():
    assert coverage.family("v_add_f32_sdwa", "VOP2") == "SDWA"
    assert coverage.family("v_smfmac_f32_16x16x32_f16", "VOP3P") == "MFMA/SMFMAC"
    assert coverage.family("scratch_load_dword", "FLAT") == "SCRATCH"
    assert coverage.family("v_interp_p1ll_f16", "VOP3") == "VINTRP"
    assert coverage.canonical("v_add_f32_e64") == "v_add_f32"


def test_cli_json_matches_the_module(capsys):
    assert main(["emulator-coverage", "--arch", "gfx942", "--missing", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["gfx942"]
    fams = coverage.coverage("gfx942")
    assert report["total"] == len(load_instructions("gfx942"))
    assert report["implemented"] == sum(len(f.implemented) for f in fams)
    assert [(f["family"], f["implemented"], len(f["missing"])) for f in report["families"]] == \
        [(f.family, len(f.implemented), len(f.missing)) for f in fams]


def test_cli_text_and_markdown(capsys):
    assert main(["emulator-coverage", "--arch", "gfx908", "--missing"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("gfx908: ") and "graphics-only (not used by compute kernels):" in text and "missing: " in text
    assert main(["emulator-coverage", "--arch", "gfx90a", "--markdown"]) == 0
    page = capsys.readouterr().out
    assert "`tensile-asm emulator-coverage --arch gfx90a --markdown > docs/emulator-coverage.md`" in page
    assert "| gfx90a |" in page and "## gfx90a" in page


def test_cli_bad_arch_is_one_sentence_naming_it(capsys):
    assert main(["emulator-coverage", "--arch", "gfx90a", "--arch", "gfx1100"]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tensile-asm: error: --arch gfx1100") and "gfx90a" in lines[0], err
    assert "Traceback" not in out + err
