from pathlib import Path

import pytest
import yaml

from tensile_asm.errors import UserError
from tensile_asm.problem import DATA_TYPES, Problem, ProblemType, data_type

SHARED = Path(__file__).resolve().parents[2] / "shared"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared reference data not found at {SHARED}")


def gemm(**kw):
    return ProblemType.from_dict({"OperationType": "GEMM", "DataType": "s", "Batched": True, **kw})


def test_data_type_table_follows_tensile_order():
    rows = [(t.index, t.char, t.enum, t.bytes) for t in DATA_TYPES]
    assert rows[:9] == [(0, "S", "Float", 4), (1, "D", "Double", 8), (2, "C", "ComplexFloat", 8),
                        (3, "Z", "ComplexDouble", 16), (4, "H", "Half", 2), (5, "4xi8", "Int8x4", 4),
                        (6, "I", "Int32", 4), (7, "B", "BFloat16", 2), (8, "I8", "Int8", 1)]
    assert len(DATA_TYPES) == 14 and DATA_TYPES[13].enum == "BFloat8Float8"


@pytest.mark.parametrize("spelling", ["s", "S", "single", "Float", 0])
def test_data_type_spellings(spelling):
    assert data_type(spelling).char == "S"


def test_unknown_data_type_is_a_user_error():
    with pytest.raises(UserError, match="unknown data type 'q'"):
        data_type("q", "f.yaml: DataType")


@pytest.mark.parametrize("ta,tb,name,op,tlu", [
    (False, False, "Cijk_Ailk_Bljk_SB", "Contraction_l_Ailk_Bljk_Cijk_Dijk", (True, False)),
    (False, True, "Cijk_Ailk_Bjlk_SB", "Contraction_l_Ailk_Bjlk_Cijk_Dijk", (True, True)),
    (True, False, "Cijk_Alik_Bljk_SB", "Contraction_l_Alik_Bljk_Cijk_Dijk", (False, False)),
    (True, True, "Cijk_Alik_Bjlk_SB", "Contraction_l_Alik_Bjlk_Cijk_Dijk", (False, True)),
])
def test_gemm_names_operation_identifiers_and_tlu(ta, tb, name, op, tlu):
    pt = gemm(TransposeA=ta, TransposeB=tb)
    assert pt.name == name
    assert pt.operation_identifier == op
    assert (pt.tlu_a, pt.tlu_b) == tlu
    assert pt.num_indices_c == 3 and pt.index_assignments_ld == (4, 5, 6, 7)


def test_transpose_b_defaults_to_true_and_batched_to_false():
    pt = ProblemType.from_dict({"DataType": "s"})
    assert pt.transpose_b and not pt.transpose_a and not pt.batched
    assert pt.name == "Cij_Aik_Bjk_SB"
    assert pt.operation_identifier == "Contraction_k_Aik_Bjk_Cij_Dij"
    assert pt.index_assignments_a == (0, 2) and pt.index_assignments_b == (1, 2)


@pytest.mark.parametrize("kw,name", [
    (dict(DataType="h", DestDataType="h", ComputeDataType="s", HighPrecisionAccumulate=True), "Cijk_Ailk_Bljk_HHS_BH"),
    (dict(DataType="h", HighPrecisionAccumulate=True), "Cijk_Ailk_Bljk_HHS_BH"),  # HHH + HPA -> HHS
    (dict(DataType="d", StridedBatched=False), "Cijk_Ailk_Bljk_DB_GB"),
    (dict(DataType="c", TransposeA=True, TransposeB=True, ComplexConjugateA=True, ComplexConjugateB=True),
     "Cijk_AlikC_BjlkC_CB"),
    (dict(DataType="i8", DestDataType="i", ComputeDataType="i", HighPrecisionAccumulate=True), "Cijk_Ailk_Bljk_I8II_BH"),
    (dict(UseInitialStridesAB=True, UseInitialStridesCD=True), "Cijk_Ailk_Bljk_SBIIc"),
    (dict(UseBeta=False), "Cijk_Ailk_Bljk_S"),
])
def test_problem_type_names(kw, name):
    pt = gemm(**{"TransposeA": False, "TransposeB": False, **kw})
    assert pt.name == name


def test_conjugate_shows_in_operation_identifier():
    pt = gemm(DataType="c", TransposeA=True, ComplexConjugateA=True, TransposeB=False)
    assert pt.operation_identifier == "Contraction_l_AlikC_Bljk_Cijk_Dijk"


def test_other_operation_types_are_rejected_with_a_sentence():
    with pytest.raises(UserError, match="OperationType 'ConvolutionForward' is not supported yet"):
        ProblemType.from_dict({"OperationType": "ConvolutionForward", "DataType": "s"}, "x.yaml: ProblemType")
    with pytest.raises(UserError, match="x.yaml: ProblemType: a TensorContraction needs NumIndicesC"):
        ProblemType.from_dict({"OperationType": "TensorContraction", "DataType": "s"}, "x.yaml: ProblemType")


def contraction(nc, ia, ib, **kw):
    return ProblemType.from_dict({"OperationType": "TensorContraction", "DataType": "s", "NumIndicesC": nc,
                                  "IndexAssignmentsA": ia, "IndexAssignmentsB": ib, **kw}, "x.yaml: ProblemType")


def test_a_gemm_shaped_contraction_has_the_gemm_indices_and_tensile_ld_keys():
    for ta, tb in ((False, False), (True, False), (False, True), (True, True)):
        g = gemm(TransposeA=ta, TransposeB=tb)
        # TensorContraction ignores TransposeA/B: the index assignments decide (here the opposite flags are given)
        c = contraction(3, list(g.index_assignments_a), list(g.index_assignments_b), TransposeA=not ta,
                        TransposeB=not tb)
        assert c.name == g.name and c.operation_identifier == g.operation_identifier
        assert (c.transpose_a, c.transpose_b, c.batched, c.tlu_a, c.tlu_b) == (ta, tb, True, g.tlu_a, g.tlu_b)
        assert c.is_gemm_shaped and c != g
        d = c.to_logic_dict()  # Tensile: NumIndicesLD 0 and the default IndexAssignmentsLD for a contraction
        assert (d["OperationType"], d["NumIndicesLD"], d["IndexAssignmentsLD"]) == ("TensorContraction", 0, [3, 4, 5, 6])
        assert ProblemType.from_dict(d) == c
        assert g.to_logic_dict()["IndexAssignmentsLD"] == [4, 5, 6, 7]


def test_a_contraction_with_several_free_and_batch_indices():
    # C[i,j,k,l] = sum_m A[i,m,k,l] B[m,j,l]: free i, k (in A) and j (in B), batch l, summation m
    c = contraction(4, [0, 4, 2, 3], [4, 1, 3])
    assert c.indices_free == (0, 1, 2) and c.indices_batch == (3,) and c.indices_summation == (4,)
    assert c.index_unroll == 4 and c.name == "Cijkl_Aimkl_Bmjl_SB" and not c.is_gemm_shaped
    assert ProblemType.from_dict(c.to_logic_dict()) == c
    for bad, message in ((([0, 0, 3], [3, 1]), "repeats an index"), (([0, 2], [1]), "summation index 2 must be in both"),
                         (([0, 3], [3]), "C index 1 is in neither")):
        with pytest.raises(UserError, match=message):
            contraction(2, *bad)


def test_unknown_key_names_the_nearest_valid_one():
    with pytest.raises(UserError, match=r"x.yaml: ProblemType: unknown ProblemType key 'TransposA'.*TransposeA"):
        ProblemType.from_dict({"DataType": "s", "TransposA": True}, "x.yaml: ProblemType")


def test_unsupported_type_combination():
    with pytest.raises(UserError, match="type combination"):
        gemm(DataType="s", DestDataType="h")


def test_missing_data_type():
    with pytest.raises(UserError, match="DataType is required"):
        ProblemType.from_dict({"TransposeA": False})


def test_derived_keys_must_agree():
    d = gemm(TransposeA=False, TransposeB=False).to_logic_dict()
    ProblemType.from_dict(d)  # its own derived keys agree
    d["TLUA"] = False
    with pytest.raises(UserError, match=r"derived key TLUA is False in the file but recomputes to True"):
        ProblemType.from_dict(d, "f.yaml: ProblemType")


@needs_shared
@pytest.mark.parametrize("fname", ["aldebaran_Cijk_Ailk_Bljk_SB.yaml", "aldebaran_Cijk_Alik_Bjlk_SB.yaml"])
def test_logic_file_problem_type_round_trips(fname):
    raw = yaml.load((SHARED / "data/logic/lite_configs" / fname).read_text(), Loader=yaml.CSafeLoader)[4]
    pt = ProblemType.from_dict(raw, fname)
    assert pt.name == fname.split("_", 1)[1].removesuffix(".yaml")
    ours = pt.to_logic_dict()
    for key, value in raw.items():
        assert ours[key] == value, key
    assert isinstance(ours["DataType"], int)


def test_problem_packs_minimal_strides():
    nn = Problem.make(gemm(TransposeA=False, TransposeB=False), 100, 200, 30, batch=2)
    assert (nn.lda, nn.ldb, nn.ldc, nn.ldd) == (100, 30, 100, 100)
    assert (nn.stride_a, nn.stride_b, nn.stride_c, nn.stride_d) == (3000, 6000, 20000, 20000)
    tt = Problem.make(gemm(TransposeA=True, TransposeB=True), 100, 200, 30)
    assert (tt.lda, tt.ldb) == (30, 200)
    assert tt.strides("A") == (1, 30, 3000)
    assert (nn.size(0), nn.size(1), nn.size(2), nn.size(3)) == (100, 200, 2, 30)


def test_problem_accepts_larger_and_rejects_smaller_strides():
    pt = gemm(TransposeA=False, TransposeB=False)
    p = Problem.make(pt, 64, 64, 64, lda=128, stride_a=128 * 64)
    assert p.lda == 128 and p.stride_a == 8192
    with pytest.raises(UserError, match="lda 32 is smaller than the minimum 64"):
        Problem.make(pt, 64, 64, 64, lda=32)
    with pytest.raises(UserError, match="stride_c 100 is smaller than the minimum 4096"):
        Problem.make(pt, 64, 64, 64, stride_c=100)


def test_problem_size_checks():
    with pytest.raises(UserError, match="size K must be a positive integer"):
        Problem.make(gemm(), 4, 4, 0)
    with pytest.raises(UserError, match="not batched"):
        Problem.make(ProblemType.from_dict({"DataType": "s"}), 4, 4, 4, batch=3)
