"""Tensile's own kernels (a library AMD's Tensile 4.44 TensileCreateLibrary wrote from rocBLAS logic,
tests/data/tensile_library) verify on our emulator from the library files alone: offload bundles,
TensileLibrary.dat, predicates, and our kernel-argument contract laid onto their metadata."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tensile_asm.benchmark.verify import Size, verify_library
from tensile_asm.errors import UserError
from tensile_asm.library.codeobjects import LibraryFolder

DATA = Path(__file__).parent / "data" / "tensile_library"

# one of each kind: VALU gfx906 SB, VALU gfx90a with WorkGroupMapping 8, MFMA gfx90a SB (WorkGroupMapping 5,
# StaggerU) and HHS (HighPrecisionAccumulate). (The HB kernels' tail loops need d16 loads that zero the other
# half, as on SRAM-ECC boards; see bench/tensile_kernels_verified.md.)
KERNELS = {
    "Cijk_Ailk_Bljk_SB_MT8x8x8_SE_AF0EM1_AMAS3_ASEM1_EPS1_GLVWA1_GLVWB1_GRVW2_ISA906_K1_LBSPPB0_LPB0_LRVW2_FMA_"
    "NEPBS0_PGR1_PLR1_SIA1_SS0_SU32_SUS256_SRVW0_SVW4_TT2_2_TLDS0_UMLDSB0_USFGRO1_VAW1_VS1_VW2_VWB2_WSGRA0_WSGRB0_"
    "WG4_4_4_WGM1",
    "Cijk_Alik_Bljk_SB_MT32x32x32_SE_AF0EM1_AMAS3_ASEM1_EPS1_GLVWA4_GLVWB4_GRVW4_ISA90a_K1_LBSPPB0_LPB0_LRVW4_FMA_"
    "NEPBS0_PGR1_PLR1_SIA1_SS0_SU32_SUS256_SRVW0_SVW4_TT4_4_TLDS0_UMLDSB0_USFGRO1_VAW1_VS1_VW4_VWB4_WSGRA0_WSGRB0_"
    "WG8_8_4_WGM8",
    "Cijk_Ailk_Bljk_SB_MT16x16x32_MI16x16x4x1_SN_AF0EM1_AMAS0_ASEM1_EPS0_GLVWA4_GLVWB4_GRVW4_ISA90a_K1_LBSPPB128_LPB4_"
    "LRVW2_MAC_NEPBS8_PGR2_PLR9_SIA3_SS1_SU32_SUS128_SRVW0_SVW1_TT1_16_TLDS1_UMLDSB1_USFGROn1_VAW1_VSn1_VW1_VWB1_"
    "WSGRA1_WSGRB1_WG16_4_1_WGM5",
    "Cijk_Ailk_Bljk_HHS_BH_MT32x32x32_MI16x16x16x1_SE_AF0EM8_AMAS0_ASEM1_EPS1_GLVWA2_GLVWB2_GRVW2_ISA90a_K1_LBSPPB128_"
    "LPB16_LRVW8_MAC_NEPBS0_PGR1_PLR2_SIA3_SS0_SU0_SUS0_SRVW4_SVW4_TT1_16_TLDS1_UMLDSB1_USFGROn1_VAW2_VSn1_VW1_VWB1_"
    "WSGRA1_WSGRB1_WG32_8_1_WGM1",
}
# not tile multiples; 40 x 100 x 38 for the HHS kernel's Free0SizeMultiple 8;
# N = 100 gives the WorkGroupMapping 5 kernel (MT 16) a full block of 5 work-group rows and a remainder of 2
SIZES = [Size(17, 13, 9), Size(40, 100, 38)]


@pytest.fixture(scope="module")
def results():
    with LibraryFolder(DATA) as folder:
        return {r.name: r for r in verify_library(folder, SIZES, 1.5, None, seed=3, names=set(KERNELS))}


def test_library_lists_every_solution_with_its_architecture():
    with LibraryFolder(DATA) as folder:
        sols = folder.solutions()
        assert len(sols) == 21
        by_gfx = {g: sum(1 for _, _, x in sols if x == g) for g in ("gfx906", "gfx90a")}
        assert by_gfx == {"gfx906": 5, "gfx90a": 16}
        for _, entry, gfx in sols:       # every kernel is in the bundle for its architecture
            assert folder.code_object(entry["name"], gfx).is_file()


def test_tensile_kernels_pass(results):
    assert set(results) == KERNELS
    for name, r in results.items():
        assert r.not_run is None, (name, r.not_run)
        assert r.results, (name, "no size accepted")
        assert all(c.passed for c in r.results), (name, [(str(c.size), c.max_rel_error, c.detail) for c in r.results])
    # the predicates keep 17x13x9 from the HHS kernel (Free0SizeMultiple 8)
    assert {n.split("_MT")[0] + n.split("_ISA")[1][:3]: [str(s) for s in r.skipped] for n, r in results.items()} == {
        "Cijk_Ailk_Bljk_SB906": [], "Cijk_Alik_Bljk_SB90a": [], "Cijk_Ailk_Bljk_SB90a": [],
        "Cijk_Ailk_Bljk_HHS_BH90a": ["17x13x9"]}


def test_contract_mismatch_is_named():
    """Our arguments laid onto a Tensile kernel's metadata: a missing or moved argument is an error."""
    from tensile_asm.codeobject import read_code_object
    from tensile_asm.gemm import argument_layout
    from tensile_asm.runtime.emulated import kernel_arguments

    name = next(n for n in KERNELS if "MI16x16x4" in n)
    with LibraryFolder(DATA) as folder:
        ko = read_code_object(folder.code_object(name, "gfx90a")).kernels[name]
        good = argument_layout(True, True, "S", stagger_u=True, workgroup_mapping=True)
        values = {a.name: 1 for a in good}
        assert len(kernel_arguments(ko, good, values)) == len([a for a in ko.args
                                                               if not a[".value_kind"].startswith("hidden")])
        no_stagger = argument_layout(True, True, "S", stagger_u=False, workgroup_mapping=True)
        with pytest.raises(UserError, match="OrigStaggerUIter"):
            kernel_arguments(ko, no_stagger, values)
        no_wgm = argument_layout(True, True, "S", stagger_u=True, workgroup_mapping=False)
        with pytest.raises(UserError, match="NumFullBlocks"):
            kernel_arguments(ko, no_wgm, values)
        extra = good + [dataclasses.replace(good[-1], name="Extra", offset=good[-1].offset + 4)]
        with pytest.raises(UserError, match="Extra"):
            kernel_arguments(ko, extra, {**values, "Extra": 0})


def test_without_the_guard_the_read_past_a_faults():
    """Tensile's kernels read past the end of A (a scalar offset the range check leaves out): with no
    guard region after A this is a memory fault, which is why verify_library puts one there."""
    with LibraryFolder(DATA) as folder:
        name = next(e["name"] for _, e, _ in folder.solutions() if "_SB_MT64x4x16_MI4x4x1x16_" in e["name"])
        (r,) = verify_library(folder, [Size(17, 13, 9)], 1.5, None, seed=3, names={name}, guard_bytes=0)
        assert not r.results[0].passed and "memory fault" in r.results[0].detail
        (r,) = verify_library(folder, [Size(17, 13, 9)], 1.5, None, seed=3, names={name})
        assert r.results[0].passed, r.results[0].detail


def _without_rows_of(tmp_path: Path, index: int) -> Path:
    """The library copied to tmp_path as TensileLibrary.yaml, no row of its selection tree naming solution
    ``index`` (as in rocBLAS logic, where some solutions are in no row of the exact table)."""
    import shutil

    import yaml

    from tensile_asm.library.select import Library
    for p in DATA.iterdir():
        if p.suffix in (".co", ".hsaco"):
            shutil.copy(p, tmp_path / p.name)
    data = Library.load(DATA / "TensileLibrary.dat").data
    dropped = 0

    def drop(node):
        nonlocal dropped
        if isinstance(node, list):
            for v in node:
                drop(v)
        elif isinstance(node, dict):
            if node.get("type") == "Matching":
                kept = [e for e in node["table"] if e["index"] != index]
                dropped += len(node["table"]) - len(kept)
                node["table"] = kept
            for v in node.values():
                drop(v)
    drop(data["library"])
    assert dropped
    (tmp_path / "TensileLibrary.yaml").write_text(yaml.safe_dump(data))
    return tmp_path


def test_a_solution_no_row_selects_is_still_listed(tmp_path):
    folder_path = _without_rows_of(tmp_path, 14)
    with LibraryFolder(folder_path) as folder:
        sols = folder.solutions()
        assert len(sols) == 21
        [(lib, entry, gfx)] = [s for s in sols if s[1]["index"] == 14]
        assert "_MT64x4x16_MI4x4x1x16_" in entry["name"] and gfx == "gfx90a"
        assert folder.code_object(entry["name"], gfx).is_file()
