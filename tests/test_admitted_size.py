"""admitted_size: the sizes a sampling verifier gives a library solution are rounded up to what its Assert*
predicates admit (a kernel run at other sizes may be wrong there without being wrong where it is selected)."""

from tensile_asm.benchmark.verify import Size, admitted_size


def test_sizes_round_up_to_the_asserted_multiples():
    params = {"AssertFree0ElementMultiple": 8, "AssertFree1ElementMultiple": 1, "AssertSummationElementMultiple": 2}
    assert admitted_size(params, Size(13, 11, 29, 2)) == Size(16, 11, 30, 2)
    assert admitted_size(params, Size(1, 1, 1)) == Size(8, 1, 2)
    assert admitted_size(params, Size(16, 7, 30, 3)) == Size(16, 7, 30, 3)     # already admitted: unchanged


def test_missing_or_empty_assertions_admit_every_size():
    assert admitted_size({}, Size(13, 11, 29, 2)) == Size(13, 11, 29, 2)
    assert admitted_size({"AssertFree0ElementMultiple": None, "AssertSummationElementMultiple": 0},
                         Size(7, 5, 3)) == Size(7, 5, 3)
