"""MFMA (MatrixInstruction) kernels: built by the KernelWriter, assembled and linked by LLVM, run on the
strict CPU emulator (MFMA hazards and waits checked) against the float64 numpy reference with D
poisoned and C all NaN when beta is 0.

Randomized differential test: MFMA parameter sets drawn from the shapes the writer builds (both the
4-value and the 9-value MatrixInstruction forms, MIWaveGroup, MIWaveTile (odd ones too: macro tiles like 80,
144, 160), DepthU, PrefetchGlobalRead 0/1/2,
PrefetchLocalRead, 1LDSBuffer, VectorWidth, types, transposes, GlobalSplitU, LDS layouts: TransposeLDS,
UnrollMajorLDSA/B, LdsPadA/B, LdsBlockSizePerPadA/B, StoreRemapVectorWidth,
SourceSwap, MIArchVgpr, WaveSeparateGlobalReadA/B, LocalSplitU, InnerUnroll, DirectToVgprA), architectures with matrix
cores, edge sizes (1, primes, non-multiples of the macro tile, batch > 1) and scalars (beta 0 included). CI runs ``CI_CASES`` cases
with seed ``SEED`` (and ``INT8_CASES`` int8, ``COMPLEX_CASES`` each of C and Z with conjugates drawn); ``pytest --slow`` runs ``SLOW_CASES``. A failure prints a reproducing
``tensile-asm verify`` command.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import pytest

from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.errors import UserError
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.isa.arch import load_arch
from tensile_asm.isa.mfma_shapes import find_mfma
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import Solution, min_names
from tensile_asm.writer.build import build_kernel, link_kernels, supports

from conftest import have_llvm
from verify_case import reproducer

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

SEED = 20261125
CI_CASES = 24
SLOW_CASES = 850
ARCHS = ("gfx908", "gfx90a", "gfx942")
# (A/B, C/D, compute) types -> MatrixInstruction shapes (one block) the writer builds for them
TYPES = {"SSS": [(32, 32, 2, 1), (16, 16, 4, 1)], "DDD": [(16, 16, 4, 1)],
         "HHS": [(32, 32, 8, 1), (16, 16, 16, 1)], "HSS": [(32, 32, 8, 1), (16, 16, 16, 1)],
         "HHH": [(32, 32, 8, 1), (16, 16, 16, 1)],
         "BBS": [(32, 32, 8, 1), (16, 16, 16, 1), (32, 32, 4, 1), (16, 16, 8, 1)], "BSS": [(32, 32, 8, 1), (16, 16, 8, 1)],
         # int8 (gfx908/gfx90a's x8/x16 shapes, gfx942's x16/x32): drawn by test_random_int8_mfma_kernels
         "I8II": [(32, 32, 8, 1), (16, 16, 16, 1), (32, 32, 16, 1), (16, 16, 32, 1)],
         # complex (four real MFMAs per product, writer/mfma_complex.py): drawn by test_random_complex_mfma_kernels
         "CCC": [(32, 32, 2, 1), (16, 16, 4, 1)], "ZZZ": [(16, 16, 4, 1)],
         # fp8/bf8 and the hybrids (gfx942's FNUZ, gfx950's OCP formats) into fp32, fp16 or fp8/bf8 D: drawn for gfx950
         # (test_float8_mfma.py has gfx942's fixed cases)
         **{t: [(32, 32, 16, 1), (16, 16, 32, 1)] for t in ("F8SS", "F8HS", "F8F8S", "B8SS", "B8B8S", "F8B8SS",
                                                              "B8F8HS", "F8B8B8S")}}
# gfx950 (CDNA4) adds shapes with K doubled (hipBLASLt's validMFMA): f16/bf16 32x32x16 and 16x16x32 (8 values per
# lane), int8 32x32x32 and 16x16x64 (16 per lane); drawn (with the shapes above that gfx950 has) by
# cases(arch="gfx950"), half of the time from these
GFX950_TYPES = {"HHS": [(32, 32, 16, 1), (16, 16, 32, 1)], "HSS": [(32, 32, 16, 1), (16, 16, 32, 1)],
                "HHH": [(32, 32, 16, 1), (16, 16, 32, 1)], "BBS": [(32, 32, 16, 1), (16, 16, 32, 1)],
                "BSS": [(32, 32, 16, 1), (16, 16, 32, 1)], "I8II": [(32, 32, 32, 1), (16, 16, 64, 1)],
                # the f8f6f4 MFMAs with 8-bit A and B (cbsz/blgp 0 fp8, 1 bf8; 32 bytes per lane)
                **{t: [(32, 32, 64, 1), (16, 16, 128, 1)] for t in TYPES if t.startswith(("F8", "B8"))}}
MNEMONIC = {"S": "f32", "D": "f64", "H": "f16", "B": "bf16", "I8": "i8", "C": "f32", "Z": "f64", "F8": "fp8", "B8": "bf8",
            "F8B8": "fp8_bf8", "B8F8": "bf8_fp8"}
TYPE_BYTES = {"S": 4, "D": 8, "H": 2, "B": 2, "I8": 1, "I": 4, "C": 8, "Z": 16, "F8": 1, "B8": 1, "F8B8": 1, "B8F8": 1}
FLOAT8 = ("F8B8", "B8F8", "F8", "B8")
INT8_CASES = 5
COMPLEX_CASES = 2     # of each of CCC and ZZZ
ODD_TILE_CASES = 6


def split_types(types: str) -> tuple[str, str, str]:
    """("I8", "I", "I") from "I8II", ("H", "H", "S") from "HHS", ("F8B8", "B8", "S") from "F8B8B8S"."""
    if types.startswith("I8"):
        return ("I8", types[2], types[3])
    for a in FLOAT8:
        if types.startswith(a):
            rest = types[len(a):]
            c = rest[:2] if rest[:2] in FLOAT8 else rest[0]
            return (a, c, rest[len(c):])
    return tuple(types)
PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97)


def problem(types="SSS", ta=False, tb=True, batched=True, use_beta=True):
    a, c, comp = (t.lower() for t in split_types(types))
    return {"OperationType": "GEMM", "DataType": a, "DestDataType": c, "ComputeDataType": comp,
            "HighPrecisionAccumulate": (a in ("h", "b") and comp == "s") or a == "i8" or a.upper() in FLOAT8,
            "TransposeA": ta, "TransposeB": tb,
            "Batched": batched, "UseBeta": use_beta}


def make(prob: dict, params: dict) -> Solution:
    """A solution of ours, or, with a SolutionIndex, one as a logic file holds it (Tensile's defaults, MacroTile
    sides outside its tuning list allowed), as ``tensile-asm verify --solution`` reads the reproducer."""
    return Solution.from_dict({"ProblemType": prob, **params}, where="mfma test",
                              defaults_from="tensile" if "SolutionIndex" in params else "ours")


def _side(rng: random.Random, tile: int, largest: int) -> int:
    kind = rng.choice(("one", "prime", "tile", "any"))
    if kind == "one":
        return 1
    if kind == "prime":
        return rng.choice([p for p in PRIMES if p <= largest])
    if kind == "tile":
        return max(1, min(largest, tile * rng.randint(1, 2) + rng.choice((-1, 0, 1))))
    return rng.randint(1, largest)


def draw_case(rng: random.Random, largest: int, types: str | None = None, odd_tiles: bool = False,
              dtv_wider: bool = False, arch: str | None = None) -> dict:
    """One random case (for ``arch``: its shapes, GFX950_TYPES' included; else one of ARCHS); ``odd_tiles``: MIWaveTile sides 5, 7 or 9 (macro tiles like 80, 112, 144, 160, 288 of
    rocBLAS's logic, outside Tensile's tuning list) on one side or both; ``dtv_wider``: DirectToVgprA tried with A
    transposed too, with the VectorWidth, ScheduleIterAlg and TransposeLDS its rules need."""
    types = types or rng.choice(("SSS", "SSS", "SSS", "DDD", "HHS", "HSS", "HHH", "BBS", "BSS"))
    if isinstance(types, tuple):    # one of these
        types = rng.choice(types)
    in_t, out_t, _ = split_types(types)
    archs = []
    while not archs:
        new = GFX950_TYPES.get(types, []) if arch else []
        m, n, k, b = rng.choice(new if new and rng.random() < 0.5 else TYPES[types])
        out = "f64" if types in ("DDD", "ZZZ") else "i32" if in_t == "I8" else "f32"
        archs = [a for a in ((arch,) if arch else ARCHS) if find_mfma(a, MNEMONIC[in_t], out, m, n, k, b)]
    lds_bpe = TYPE_BYTES[in_t]   # LDS holds A/B at their own size (int8 as bytes, fp16/bf16 as halves)
    depths = []
    while not depths:   # wave grid and tile again until some DepthU fits
        wave_group = rng.choice(((1, 1), (2, 2), (4, 1), (1, 4), (2, 1), (1, 2)))
        wave_tile = (rng.choice((1, 1, 2, 3, 4)), rng.choice((1, 1, 2, 3)))   # 3: macro tiles like 96
        if odd_tiles:
            wave_tile = rng.choice((((5, 7, 9)[rng.randrange(3)], rng.choice((1, 2, 3))),
                                    (rng.choice((1, 2, 4)), (5, 7, 9)[rng.randrange(3)]),
                                    (rng.choice((5, 7)), rng.choice((5, 7)))))
            if wave_tile[0] * wave_tile[1] * m * n // 64 > 128:   # accumulators that leave the loop its VGPRs
                continue
        waves = wave_group[0] * wave_group[1]
        mt0, mt1 = m * wave_tile[0] * wave_group[0], n * wave_tile[1] * wave_group[1]
        threads = 64 * waves
        # DepthU: a multiple of MatrixInstK whose tiles split into whole loads for every thread and fit
        # LDS twice (PrefetchGlobalRead)
        # (DepthU 64 for 16-bit K-32 shapes, 128 for int8 K-64 ones: drawn for an ``arch`` only)
        depths = [d for d in (8, 16, 32, 64) + ((128,) if arch else ())
                  if d % k == 0 and (d < 64 or in_t == "I8" or (arch and k >= 32)) and (d < 128 or k >= 64)
                  and (mt0 * d) % threads == 0
                  and (mt1 * d) % threads == 0 and (mt0 + mt1) * d * lds_bpe * 2 <= 48 * 1024
                  and (mt0 + mt1) * d // threads * max(1, lds_bpe // 8) <= (96 if arch and k >= 64 else 24)]
        # (few loads per thread: two sets of VGPRs with PGR 2; K-64/128 shapes: 8-bit values in wide loads)
    du = rng.choice(depths)
    if rng.random() < 0.5:   # the 9-value form
        mi = {"MatrixInstruction": [m, n, k, b, 1, wave_tile[0], wave_tile[1], wave_group[0], wave_group[1]]}
    else:                    # the 4-value form with WorkGroup and ThreadTile
        wg0 = m * wave_group[0]
        mi = {"MatrixInstruction": [m, n, k, b], "WorkGroup": [wg0, threads // wg0, 1],
              "ThreadTile": [wave_tile[0], wave_tile[1] * n]}
    # GlobalSplitU: SSS and I8II, and HHH/DDD SingleBuffer (compare-and-swap; fp16 on the dword of two halves,
    # which needs Tensile's AssertFree0ElementMultiple 2: M even below)
    gsu = rng.choice((1, 1, 1, 2)) if types in ("SSS", "I8II") else rng.choice((1, 1, 3)) if types in ("HHH", "DDD") \
        else 1
    pgr = rng.choice((0, 1, 2, 2))
    params = {**mi, "DepthU": du, "PrefetchGlobalRead": pgr, "1LDSBuffer": rng.choice((0, 1)) if pgr else 0,
              "PrefetchLocalRead": rng.choice((0, 1, 1, 2)),
              "VectorWidth": rng.choice([-1] + [v for v in (1, 2, 4) if wave_tile[0] % v == 0 and v * lds_bpe <= 16]),
              "VectorWidthB": rng.choice([-1] + [v for v in (1, 2) if wave_tile[1] % v == 0]),
              # GlobalReadVectorWidth 1 (16-bit types draw wider ones below): -1 would follow VectorWidth,
              # whose loads need not split the tiles
              "GlobalReadVectorWidth": 1,
              "WorkGroupMapping": rng.choice((1, 2, 8)), "StaggerU": rng.choice((0, 4, 32)), "GlobalSplitU": gsu,
              "GlobalSplitUAlgorithm": rng.choice(("SingleBuffer", "MultipleBuffer"))}
    if odd_tiles:   # such tiles come from logic files only (Tensile checks its side list in tuning configs)
        params.update(SolutionIndex=0, KernelLanguage="Assembly")
    if in_t == "I8":    # int32 partial sums add exactly in any order (MultipleBuffer with int32 is refused)
        params["GlobalSplitUAlgorithm"] = "SingleBuffer"
    # LDS layouts (Tensile 4.44): TransposeLDS / UnrollMajorLDS tiles, row pads or a pad every LdsBlockSizePerPad
    # bytes (a block size the writer cannot honour with address + offset is dropped: lds_address.lds_reason)
    params.update(TransposeLDS=rng.choice((0, 0, 1)), UnrollMajorLDSA=rng.random() < 0.2,
                  UnrollMajorLDSB=rng.random() < 0.2)
    if arch and lds_bpe == 1 and m * k * b // 64 >= 16 and wave_tile != (1, 1):
        # 16 or 32 bytes a lane (gfx950's int8 K-64 and f8f6f4 shapes): read K-major, a register per value, the
        # operands of larger wave tiles pass 256 VGPRs when written (not built); unroll-major reads stay packed
        params.update(UnrollMajorLDSA=True, UnrollMajorLDSB=True)
    for tc in "AB":
        # (8- and 16-bit LDS rows stay dword aligned: lds_bpe 1 pads in fours, 2 in twos)
        params["LdsPad" + tc] = rng.choice((0, 0, 1, 2, 4, 8)) * max(1, 4 // lds_bpe)
        params["LdsBlockSizePerPad" + tc] = rng.choice((0, 0, 128, 256))
    use_beta = rng.random() < 0.85
    ta, tb = rng.random() < 0.5, rng.random() < 0.5
    if in_t == "I8":   # the writer refuses int8 A/B contiguous along M/N (TLU) for now: A transposed, B not
        ta, tb = True, False
    prob = problem(types, ta, tb, rng.random() < 0.7, use_beta)
    if in_t in ("C", "Z"):   # conjugated A and/or B (rocBLAS's AlikC logic; the writer builds all four)
        prob.update(ComplexConjugateA=rng.random() < 0.5, ComplexConjugateB=rng.random() < 0.5)
    if in_t in ("H", "B", "I8") + FLOAT8:  # 8/16-bit inputs: GlobalReadVectorWidth up to 16 bytes, where the loads
        grvw = rng.choice((8, 16, 16) if arch and k >= 64 else   # split the tiles
                          (1, 2, 4, 8, 8) + ((16, 16) if TYPE_BYTES[in_t] == 1 else ()))
        def fits(w):
            return (make(prob, {**params, "GlobalReadVectorWidth": w}).valid
                    and all((t * du) % (threads * w) == 0 for t in (mt0, mt1)))
        if grvw > 1 and not fits(grvw):
            # (K-64/128 shapes: up to 96 values a thread, too many registers one by one: the widest that fits)
            grvw = next((w for w in (16, 8, 4, 2) if fits(w)), 1) if arch and k >= 64 else 1
        params["GlobalReadVectorWidth"] = grvw
    # (still one value a load, more than 24 a thread: the loads' registers do not fit; drawn again, see ``accepted``)
    one_by_one = arch and k >= 64 and params["GlobalReadVectorWidth"] == 1 and (mt0 + mt1) * du // threads > 24
    sol = make(prob, params)
    for plr in (1, 0):   # Tensile 4.44's PrefetchLocalRead rules (derive): a smaller one where they reject it
        if not sol.valid and "PrefetchLocalRead" in sol.rejection:
            params["PrefetchLocalRead"] = plr
            sol = make(prob, params)
    for tc in "AB":
        if not sol.valid or (supports(sol, load_arch("gfx90a")) or "").startswith(f"LdsBlockSizePerPad{tc}"):
            params["LdsBlockSizePerPad" + tc] = 0
            sol = make(prob, params)
    size = Size(_side(rng, mt0, largest), _side(rng, mt1, largest), _side(rng, du, largest),
                rng.choice((1, 1, 2, 3)))
    if types in ("HHH", "DDD") and gsu > 1:
        params["GlobalSplitUAlgorithm"] = "SingleBuffer"
        if types == "HHH":
            params["AssertFree0ElementMultiple"] = 2
            size = Size(size.m + size.m % 2, size.n, size.k, size.batch)
    integer = in_t == "I8"    # int32 alpha/beta; large ones make alpha*AB + beta*C wrap
    case = dict(arch=rng.choice(archs), problem=prob, params=params, size=size,
                alpha=rng.choice((1, -3, 123457, 2**30 + 1) if integer else (1.0, -0.75, 2.5)),
                beta=(rng.choice((0, 1, -5, 2**29 + 3) if integer else (0.0, 1.0, 0.5, -1.25, -0.0)) if use_beta
                      else 0), seed=rng.randrange(1 << 20), one_by_one=one_by_one)
    if prob["Batched"] and case["seed"] % 3 == 0:
        # a third of these batched problems pointer-array (_GB), decided by the seed already drawn (no
        # further draws, so the other cases stay as they were)
        case["problem"] = {**prob, "StridedBatched": False}
    # StoreRemapVectorWidth where Tensile accepts it: a power-of-two MT0, no atomic GlobalSplitU, SRVW elements of
    # 4..16 bytes, one store per lane covering a column, the block at least one read of every lane
    out_bytes = 4 if gsu > 1 and params["GlobalSplitUAlgorithm"] == "MultipleBuffer" else TYPE_BYTES[out_t]
    remaps = [w for w in (1, 2, 4, 8) if 4 <= w * out_bytes <= 16 and w * 64 >= mt0 and mt0 * n // wave_group[0] >= w * 64]
    if remaps and not mt0 & (mt0 - 1) and (gsu == 1 or params["GlobalSplitUAlgorithm"] == "MultipleBuffer") \
            and rng.random() < 0.4:
        params["StoreRemapVectorWidth"] = rng.choice(remaps)
        if not make(case["problem"], params).valid:   # its LDS (16-byte complex elements) past 64 KiB
            del params["StoreRemapVectorWidth"]
    # SourceSwap (not with StoreRemapVectorWidth; VectorWidth must divide MIWaveTile[0]); MIArchVgpr from gfx90a on,
    # where the accumulators leave the loop its VGPRs
    vw = params["VectorWidth"] if params["VectorWidth"] > 0 else max(1, 4 // TYPE_BYTES[in_t])
    if "StoreRemapVectorWidth" not in params and wave_tile[0] % vw == 0 and rng.random() < 0.4:
        params["SourceSwap"] = True
    acc_regs = wave_tile[0] * wave_tile[1] * m * n // 64 * {"DDD": 2, "CCC": 2, "ZZZ": 4}.get(types, 1)
    if case["arch"] != "gfx908" and acc_regs <= 64 and rng.random() < 0.3:   # room left for the loop's VGPRs
        params["MIArchVgpr"] = True
    # WaveSeparateGlobalReadA/B (each wave loads its own block of the tile), where the tile splits among the waves
    for tc in "AB":
        if waves > 1 and rng.random() < 0.4:
            params["WaveSeparateGlobalRead" + tc] = 1
            if not make(case["problem"], params).valid:
                del params["WaveSeparateGlobalRead" + tc]
    # LocalSplitU 2 (the 4-value form's WorkGroup[2]) and InnerUnroll 2, decided by the seed already drawn (no
    # further draws, so the other cases stay as they were), kept where Tensile's rules and the writer accept them
    # DirectToVgprA (A's global reads straight into its MFMA operands: writer/direct_to_vgpr.py; Tensile's rules:
    # GlobalLoadVectorWidthA = VectorWidth with A not transposed; transposed, GlobalLoadVectorWidthA =
    # LocalReadVectorWidth and NumLoadsCoalescedA = DepthU // (MatrixInstK x GLVW x LocalSplitU // MIInputPerThread)),
    # decided by the seed as well
    for key, value, wanted in (("LocalSplitU", 2, "WorkGroup" in params and case["seed"] % 4 == 1),
                               ("InnerUnroll", 2, case["seed"] % 5 == 2),
                               ("DirectToVgprA", True, case["seed"] % 3 == 2 and (not ta or dtv_wider))):
        if not wanted:
            continue
        trial = dict(params)
        if key == "LocalSplitU":
            trial["WorkGroup"] = [*params["WorkGroup"][:2], value]
        elif key == "DirectToVgprA" and not ta:
            trial.update(DirectToVgprA=True, GlobalReadVectorWidth=-1, ExpandPointerSwap=True)   # (Tensile's rule)
            if dtv_wider:   # 16-bit: VectorWidth x 2 bytes >= 4 (Tensile's rule); ScheduleIterAlg 3 with PGR 2
                trial.pop("WaveSeparateGlobalReadA", None)
                trial["ScheduleIterAlg"] = 3
                if TYPE_BYTES[in_t] == 2 and trial["VectorWidth"] in (-1, 1):
                    trial["VectorWidth"] = 4 if wave_tile[0] % 4 == 0 else 2
        elif key == "DirectToVgprA":    # one load of GLVW K values along each row: NumLoadsCoalescedA 1
            lsu = trial.get("WorkGroup", [1, 1, 1])[2]
            glvw = max(1, du * (m * k * b // 64) // (k * lsu))
            trial.update(DirectToVgprA=True, GlobalReadVectorWidth=glvw, LocalReadVectorWidth=glvw,
                         ExpandPointerSwap=True, PrefetchLocalRead=max(1, trial["PrefetchLocalRead"]),
                         VectorWidth=1, ScheduleIterAlg=3, TransposeLDS=1)
            trial.pop("WaveSeparateGlobalReadA", None)
        else:
            trial[key] = value
        sol = make(case["problem"], trial)
        if sol.valid and supports(sol, load_arch(case["arch"])) is None:
            params.clear()
            params.update(trial)
    return case


def accepted(case: dict) -> bool:
    """Whether supports() accepts the case's solution (a draw it refuses, e.g. accumulators past the AGPR
    file, is drawn again: the test checks kernels the writer claims to build)."""
    if case.pop("one_by_one", False):   # gfx950's K-64/128 8-bit shapes with one-value loads: too many registers
        return False
    sol = make(case["problem"], case["params"])
    return sol.valid and supports(sol, load_arch(case["arch"])) is None


def cases(count: int, seed: int, largest: int, types: str | None = None, odd_tiles: bool = False,
          arch: str | None = None) -> list[dict]:
    rng, out = random.Random(seed), []
    for _ in range(20 * count):
        if len(out) == count:
            break
        case = draw_case(rng, largest, types, odd_tiles, arch=arch)
        if accepted(case):
            out.append(case)
    assert len(out) == count, f"only {len(out)} of {20 * count} draws were accepted by supports()"
    return out


_BUILT: dict = {}
_TMP = Path(tempfile.mkdtemp(prefix="mfma-kernels-"))


def built(arch_name: str, prob: dict, params: dict):
    key = (arch_name, repr(sorted(prob.items())), repr(sorted(params.items())))
    if key not in _BUILT:
        arch = load_arch(arch_name)
        sol = make(prob, params)
        assert sol.valid, sol.rejection
        reason = supports(sol, arch)
        assert reason is None, reason
        name = min_names([sol])[0]
        kernel = build_kernel(sol, arch, name)
        co = _TMP / f"k{len(_BUILT)}.co"
        link_kernels([kernel], arch, co)
        _BUILT[key] = (co, GemmKernelContract.from_solution(sol, name), kernel)
    return _BUILT[key]


def check(case: dict) -> None:
    co, contract, _ = built(case["arch"], case["problem"], case["params"])
    [r] = verify_sizes(co, contract, [case["size"]], case["alpha"], case["beta"], case["seed"], EmulatedRuntime())
    assert r.passed, (f"{r.size} alpha {r.alpha} beta {r.beta}: {r.detail} (max rel err {r.max_rel_error})\n"
                      f"reproduce with:\n{reproducer(case)}")


@pytest.mark.parametrize("index", range(CI_CASES))
def test_random_mfma_kernels_match_reference(index):
    check(cases(CI_CASES, SEED, 80)[index])


@pytest.mark.parametrize("index", range(ODD_TILE_CASES))
def test_random_mfma_odd_macro_tiles_match_reference(index):
    """MacroTile sides that are not powers of two (MIWaveTile 5, 7, 9: 80, 112, 144, 160, ...): global-read
    tiling by constant division, LDS addressing, the store's edges."""
    check(cases(ODD_TILE_CASES, SEED + 4, 200, odd_tiles=True)[index])


@pytest.mark.parametrize("index", range(INT8_CASES))
def test_random_int8_mfma_kernels_match_reference(index):
    """I8II (int8 A/B, int32 C/D, alpha and beta): int8 MFMAs, LDS holding bytes, exact wrapping integer
    reference."""
    check(cases(INT8_CASES, SEED + 2, 80, "I8II")[index])


@pytest.mark.parametrize("index", range(2 * COMPLEX_CASES))
def test_random_complex_mfma_kernels_match_reference(index):
    """C and Z (complex fp32/fp64, either operand conjugated): four real MFMAs per product."""
    check((cases(COMPLEX_CASES, SEED + 4, 80, "CCC") + cases(COMPLEX_CASES, SEED + 6, 80, "ZZZ"))[index])


DTV_CASES = 4


def dtv_cases(count: int, seed: int, largest: int, wider: bool = False) -> list[dict]:
    """Random cases that the draw made DirectToVgprA (fp32, fp64 and complex types, A not transposed; ``wider``:
    fp16, bf16, fp64 and int8, A transposed or not)."""
    rng, out = random.Random(seed), []
    for _ in range(200 * count):
        if len(out) == count:
            break
        if wider:
            case = draw_case(rng, largest, rng.choice(("HHS", "HSS", "BBS", "HHH", "DDD", "I8II")), dtv_wider=True)
        else:
            case = draw_case(rng, largest, rng.choice(("SSS", "SSS", "DDD", "ZZZ", "CCC")))
        if case["params"].get("DirectToVgprA") and accepted(case):
            out.append(case)
    assert len(out) == count, f"only {len(out)} of {200 * count} draws were DirectToVgprA"
    return out


@pytest.mark.parametrize("index", range(DTV_CASES))
def test_random_direct_to_vgpr_mfma_kernels_match_reference(index):
    """DirectToVgprA (writer/direct_to_vgpr.py): A's global reads are its MFMA operands, two register sets
    across PrefetchGlobalRead 0/1/2, the tail loop's guarded loads, LocalSplitU groups' K-steps."""
    check(dtv_cases(DTV_CASES, SEED + 10, 80)[index])


GFX950_CASES = 10
GFX950_FLOAT8_TYPES = tuple(t for t in TYPES if t.startswith(FLOAT8))


def gfx950_cases(count: int, seed: int, largest: int) -> list[dict]:
    """gfx950 (CDNA4): every type the MFMA writer builds there, the K-doubled f16/bf16/int8 shapes half of the time;
    a fifth int8, three tenths fp8/bf8 (OCP) and their hybrids with fp32, fp16 or fp8/bf8 D."""
    i8, f8 = count // 5, 3 * count // 10
    return (cases(count - i8 - f8, seed, largest, arch="gfx950") + cases(i8, seed + 1, largest, "I8II", arch="gfx950")
            + cases(f8, seed + 2, largest, GFX950_FLOAT8_TYPES, arch="gfx950"))


@pytest.mark.parametrize("index", range(GFX950_CASES))
def test_random_gfx950_mfma_kernels_match_reference(index):
    """gfx950: fp32/fp64/fp16/bf16/int8 MFMA kernels, the new 16x16x32 / 32x32x16 f16 and bf16 shapes (8 halves per
    lane) and 16x16x64 / 32x32x32 int8 (16 bytes per lane), gfx950's hazard rules (the emulator's strict checker
    reads the same isa/gfx950.yaml), OCP fp8 where drawn."""
    check(gfx950_cases(GFX950_CASES, SEED + 20, 80)[index])


def slow_cases() -> list[dict]:
    """The --slow run's cases (bench/random_mfma_slow_run.py runs the same list case by case)."""
    return (cases(SLOW_CASES, SEED + 1, 160) + cases(SLOW_CASES // 8, SEED + 3, 160, "I8II")
            + cases(SLOW_CASES // 8, SEED + 5, 160, "CCC") + cases(SLOW_CASES // 8, SEED + 7, 160, "ZZZ")
            + cases(SLOW_CASES // 4, SEED + 9, 320, odd_tiles=True) + dtv_cases(SLOW_CASES // 8, SEED + 11, 160)
            + dtv_cases(SLOW_CASES // 8, SEED + 13, 160, wider=True) + gfx950_cases(SLOW_CASES // 2, SEED + 21, 160))


DTV16_CASES = 2


@pytest.mark.parametrize("index", range(DTV16_CASES))
def test_random_direct_to_vgpr_16_bit_and_transposed_match_reference(index):
    """DirectToVgprA with fp16/bf16 (halves packed from one load per K value: direct_to_vgpr.step_operand) and
    with A transposed (one load per output and K-step), fp64 and int8 too."""
    check(dtv_cases(DTV16_CASES, SEED + 12, 80, wider=True)[index])


def test_random_mfma_kernels_slow(request):
    if not request.config.getoption("--slow"):
        pytest.skip("the --slow run")
    failures = []
    for case in slow_cases():
        try:
            check(case)
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, f"{len(failures)} cases failed:\n" + "\n\n".join(failures)


EDGE_SIZES = [Size(1, 1, 1, 1), Size(2, 3, 1, 2), Size(37, 29, 19, 2), Size(131, 67, 33, 1), Size(64, 64, 16, 3)]


@pytest.mark.parametrize("ta,tb", [(False, False), (False, True), (True, False), (True, True)])
@pytest.mark.parametrize("mi", [[32, 32, 2, 1, 1, 2, 1, 2, 2], [16, 16, 4, 1, 1, 1, 2, 1, 4]])
def test_transposes_edges_beta_gfx90a(mi, ta, tb):
    params = {"MatrixInstruction": mi, "DepthU": 16, "PrefetchGlobalRead": 1, "PrefetchLocalRead": 1}
    co, contract, _ = built("gfx90a", problem("SSS", ta, tb), params)
    for beta in (0.0, 0.75):
        results = verify_sizes(co, contract, EDGE_SIZES, -1.5, beta, 11, EmulatedRuntime())
        assert all(r.passed for r in results), [(r.size, r.detail) for r in results if not r.passed]


def test_accumulators_are_agprs_after_accum_offset():
    """gfx90a: the MFMA accumulates in AGPRs, placed after .amdhsa_accum_offset in the unified file;
    gfx908: a separate AGPR file, the wave allocates the larger of the two counts."""
    params = {"MatrixInstruction": [32, 32, 2, 1, 1, 2, 2, 1, 1], "DepthU": 8}
    _, _, kernel = built("gfx90a", problem("SSS"), params)
    text = kernel.text()
    r = kernel.resources
    assert r.agprs == 4 * 16   # 2x2 outputs of 16 registers
    accum = -(-r.vgprs // 4) * 4
    assert f".amdhsa_accum_offset {accum}" in text
    assert f".amdhsa_next_free_vgpr {accum + r.agprs}" in text
    assert "v_mfma_f32_32x32x2f32 a[" in text and "v_accvgpr_read_b32" in text
    _, _, k908 = built("gfx908", problem("SSS"), params)
    assert f".amdhsa_next_free_vgpr {max(k908.resources.vgprs, k908.resources.agprs)}" in k908.text()


def test_bf16_1k_shapes_are_mfma_shapes():
    """bf16 MatrixInstruction takes the _1k shapes (the f16 ones) too, as Tensile's validMFMA["B1k"]."""
    for mi in ([32, 32, 8, 1], [16, 16, 16, 1], [32, 32, 4, 1]):
        sol = make(problem("BBS"), {"MatrixInstruction": mi, "WorkGroup": [mi[0], 4, 1], "ThreadTile": [1, mi[1]],
                                  "DepthU": 16})
        assert sol.valid, (mi, sol.rejection)
    assert find_mfma("gfx90a", "bf16", "f32", 32, 32, 8, 1).opcode == "v_mfma_f32_32x32x8bf16_1k"
    assert find_mfma("gfx90a", "bf16", "f32", 32, 32, 4, 1).opcode == "v_mfma_f32_32x32x4bf16"
    assert find_mfma("gfx942", "f32", "f32", 16, 16, 4, 1).opcode == "v_mfma_f32_16x16x4_f32"
    assert find_mfma("gfx908", "bf16", "f32", 32, 32, 8, 1) is None


def test_gfx950_shapes_and_refusals():
    """gfx950's table (isa/mfma_shapes.py over isa/instructions/gfx950.txt and the operand table): K-doubled f16/bf16
    with 4 registers (8 halves) a lane, int8 with 4 (16 bytes), f8f6f4 with 8 and the formats in cbsz/blgp; no xf32
    (CDNA4 removed it: refused with that reason); the new shapes are not gfx942's."""
    s = find_mfma("gfx950", "f16", "f32", 16, 16, 32, 1)
    assert (s.opcode, s.a_regs, s.d_regs, s.values_per_lane) == ("v_mfma_f32_16x16x32_f16", 4, 4, 8)
    s = find_mfma("gfx950", "bf16", "f32", 32, 32, 16, 1)
    assert (s.opcode, s.a_regs, s.d_regs, s.values_per_lane) == ("v_mfma_f32_32x32x16_bf16", 4, 16, 8)
    s = find_mfma("gfx950", "i8", "i32", 16, 16, 64, 1)
    assert (s.opcode, s.a_regs, s.values_per_lane) == ("v_mfma_i32_16x16x64_i8", 4, 16)
    s = find_mfma("gfx950", "bf8_fp8", "f32", 32, 32, 64, 1)
    assert (s.opcode, s.a_regs, s.values_per_lane, s.modifiers) == ("v_mfma_f32_32x32x64_f8f6f4", 8, 32,
                                                                    (("cbsz", 1),))
    assert find_mfma("gfx950", "fp8", "f32", 16, 16, 128, 1).modifiers == ()
    assert find_mfma("gfx950", "fp8_bf8", "f32", 16, 16, 128, 1).modifiers == (("blgp", 1),)
    assert find_mfma("gfx942", "f16", "f32", 16, 16, 32, 1) is None
    assert find_mfma("gfx942", "fp8", "f32", 16, 16, 128, 1) is None
    assert find_mfma("gfx950", "xf32", "f32", 16, 16, 8, 1) is None
    sol = make({**problem("SSS"), "F32XdlMathOp": "x"}, {"MatrixInstruction": [16, 16, 8, 1, 1, 2, 2, 2, 2],
                                                         "DepthU": 16})
    assert supports(sol, load_arch("gfx942")) is None
    assert supports(sol, load_arch("gfx950")).startswith("F32XdlMathOp X (xf32) with MatrixInstruction "
                                                        "[16, 16, 8, 1]: gfx950 has no xf32 MFMAs")
    sol = make(problem("HHS", True, False), {"MatrixInstruction": [16, 16, 32, 1, 1, 2, 2, 2, 2], "DepthU": 32})
    assert supports(sol, load_arch("gfx950")) is None
    assert supports(sol, load_arch("gfx942")) == "MatrixInstruction [16, 16, 32, 1]: gfx942 has no MFMA for this " \
                                                 "shape and type"


@pytest.mark.parametrize("extra,arch,reason", [
    ({"MIArchVgpr": True}, "gfx908", "MIArchVgpr is not supported by gfx908"),
    ({}, "gfx906", "gfx906 has no matrix cores"),
])
def test_refusals_name_one_reason(extra, arch, reason):
    params = {"MatrixInstruction": [32, 32, 2, 1], "WorkGroup": [32, 8, 1], "ThreadTile": [1, 32], "DepthU": 16,
              **extra}
    sol = make(problem("SSS"), params)
    assert sol.valid, sol.rejection
    got = supports(sol, load_arch(arch))
    assert got is not None and reason in got, got
    with pytest.raises(UserError, match="cannot be built"):
        build_kernel(sol, load_arch(arch), "k")


@pytest.mark.parametrize("one_buffer", [0, 1])
def test_valu_prefetch_global_read_2(one_buffer):
    """PrefetchGlobalRead 2 is the loop's, so VALU kernels have it too: K of 1, 2, 3 tiles and a tail."""
    params = {"WorkGroup": [16, 16, 1], "ThreadTile": [4, 2], "DepthU": 8, "PrefetchGlobalRead": 2,
              "1LDSBuffer": one_buffer, "PrefetchLocalRead": 1, "VectorWidth": 2}
    co, contract, _ = built("gfx90a", problem("SSS", True, False), params)
    sizes = [Size(1, 1, 1, 1), Size(64, 32, 8, 1), Size(65, 31, 16, 2), Size(37, 29, 24, 1), Size(70, 40, 43, 1)]
    results = verify_sizes(co, contract, sizes, 0.5, -1.25, 5, EmulatedRuntime())
    assert all(r.passed for r in results), [(r.size, r.detail) for r in results if not r.passed]


# LDS layouts of real rocBLAS logic (Tensile 4.44's meaning): unroll-major tiles (TransposeLDS) with a pad
# every LdsBlockSizePerPad bytes; 16-bit values read V at a time by one wide ds_read
@pytest.mark.parametrize("arch,types,ta,tb,params", [
    ("gfx90a", "HHS", False, False, {"MatrixInstruction": [32, 32, 8, 1, 1, 2, 1, 2, 2], "DepthU": 32,
                                     "TransposeLDS": 1, "LdsPadB": 8, "LdsBlockSizePerPadB": 128}),
    ("gfx90a", "DDD", True, False, {"MatrixInstruction": [16, 16, 4, 1, 1, 1, 2, 2, 2], "DepthU": 16,
                                    "TransposeLDS": 1, "LdsPadA": 2, "LdsBlockSizePerPadA": 128,
                                    "LdsPadB": 2, "LdsBlockSizePerPadB": 256}),
])
def test_lds_layouts_edges(arch, types, ta, tb, params):
    params = {**params, "PrefetchGlobalRead": 2, "PrefetchLocalRead": 1, "GlobalReadVectorWidth": 1}
    sol = make(problem(types, ta, tb), params)
    lay = [sol.derived.lds_a, sol.derived.lds_b]
    assert any(t.unroll_major and t.block_padded for t in lay), lay
    co, contract, kernel = built(arch, problem(types, ta, tb), params)
    if types == "HHS":   # V = 4 fp16 values per lane, 16-bit in LDS: one ds_read_b64 per output and step
        assert "ds_read_b64" in kernel.text() and "ds_read_b128" not in kernel.text()
        assert kernel.resources.lds_bytes == sol.derived_keys["LdsNumElements"] * 2
        assert GemmKernelContract.from_solution(sol, "k").lds_bytes == kernel.resources.lds_bytes
    results = verify_sizes(co, contract, EDGE_SIZES, -1.5, 0.75, 7, EmulatedRuntime())
    assert all(r.passed for r in results), [(r.size, r.detail) for r in results if not r.passed]


def test_operand_lds_addresses_and_splits():
    """Element addresses of Tensile's LDS tiles and the check that keeps block pads out of address+offset."""
    from tensile_asm.solution.layout import OperandLds
    km = OperandLds(macro_tile=8, depth=4, pad=2)                   # K-major, a pad after each row of 8
    assert [km.index(t, k) for t, k in ((0, 0), (7, 0), (0, 1), (3, 2))] == [0, 7, 10, 23]
    assert km.elements == 8 * 4 + 4 * 2
    um = OperandLds(macro_tile=8, depth=4, pad=1, unroll_major=True)  # a pad after each row of 4 K values
    assert [um.index(t, k) for t, k in ((0, 3), (1, 0), (2, 1))] == [3, 5, 11]
    blk = OperandLds(macro_tile=4, depth=8, pad=3, interval=16, unroll_major=True)   # rows not padded
    assert [blk.index(t, k) for t, k in ((1, 7), (2, 0), (3, 7))] == [15, 16 + 3, 31 + 3]
    assert blk.elements == 32 + 2 * 3
    # an access at base 8 + offset 8 lands on element 16, past a pad neither part has
    assert blk.splits([0, 8], [0, 7]) is False and blk.splits([0, 8], [0, 8]) is True
    assert blk.padded(8 + 8) != blk.padded(8) + blk.padded(8)


def test_lds_keys_of_real_unroll_major_solutions_are_tensiles():
    """aldebaran HHS TN (Alik_Bljk): both operands unroll-major (TransposeLDS) with a pad every 256 or 128
    bytes; the LDS keys Tensile wrote into the file (LdsNumElements 12800, 8448, 11520, 18432, 13824, 4608,
    13824, 27904: 4.44 derives the same) are what this derivation gives."""
    import yaml
    # the first 8 solutions of rocblas-asm_full/aldebaran/aldebaran_Cijk_Alik_Bljk_HHS_BH.yaml (tools/cut_logic.py)
    path = Path(__file__).parent / "data" / "aldebaran_Alik_Bljk_HHS_BH_lds.yaml"
    data = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    pt = data[4]
    checked = 0
    for raw in data[5][:8]:
        sol = Solution.from_dict(dict(raw, ProblemType=pt), where="logic", defaults_from="tensile")
        assert sol.valid, sol.rejection
        assert sol.derived.lds_a.unroll_major and sol.derived.lds_a.block_padded
        lds_keys = {k: v for k, v in sol.stored_differences.items() if k.startswith("Lds")}
        assert not lds_keys, lds_keys
        assert sol.derived_keys["LdsNumElements"] == raw["LdsNumElements"]
        checked += 1
    assert checked == 8
@pytest.mark.skipif(not have_llvm(), reason="LLVM 22 not installed")
def test_real_16bit_solution_with_tensiles_lds():
    """A real arcturus BSS solution (rocblas-asm_full arcturus_Cijk_Ailk_Bljk_BSS_BH.yaml #70, tools/cut_logic.py):
    MT 64x64, DepthU 64, TransposeLDS (A K-major: ds_read_u16 per value, packed; B unroll-major with a pad every
    128 bytes: V halves per ds_read), StoreRemapVectorWidth 4. Its LDS is Tensile's, LdsNumElements x 2 bytes
    (50,176); at fp32 it would need 100,352, more than gfx908 has. Poisoned D, random data, edge sizes."""
    import yaml
    path = Path(__file__).parent / "data" / "arcturus_Ailk_Bljk_BSS_BH_lds16.yaml"
    data = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    sol = Solution.from_dict(dict(data[5][0], ProblemType=data[4]), where="logic", defaults_from="tensile")
    arch = load_arch("gfx908")
    assert sol.valid and supports(sol, arch) is None, (sol.rejection, supports(sol, arch))
    assert sol.derived.lds.layout(4).bytes > arch.max_lds_bytes_per_workgroup
    kernel = build_kernel(sol, arch, "real_bss")
    assert kernel.resources.lds_bytes == data[5][0]["LdsNumElements"] * 2 == 50176
    text = kernel.text()
    assert "ds_read_u16" in text and "ds_write_b16" not in text    # A read per value; both written as vectors
    co = _TMP / "real_bss.co"
    link_kernels([kernel], arch, co)
    contract = GemmKernelContract.from_solution(sol, "real_bss")
    assert contract.lds_bytes == 50176
    results = verify_sizes(co, contract, [Size(65, 3, 131, 1), Size(1, 1, 1, 2)], -1.25, 0.5, 5, EmulatedRuntime())
    results += verify_sizes(co, contract, [Size(7, 66, 67, 2)], 0.75, 0.0, 6, EmulatedRuntime())
    assert all(r.passed for r in results), [(r.size, r.detail) for r in results if not r.passed]


@pytest.mark.parametrize("arch,types,mi,srvw,extra", [
    ("gfx90a", "SSS", [32, 32, 2, 1, 1, 2, 2, 2, 2], 4, {}),
    ("gfx908", "BBS", [32, 32, 4, 1, 1, 1, 2, 1, 4], 2, {}),
    ("gfx942", "HHS", [16, 16, 16, 1, 1, 4, 1, 1, 4], 8, {}),
    ("gfx90a", "DDD", [16, 16, 4, 1, 1, 2, 2, 2, 2], 2, {}),
    ("gfx90a", "HSS", [16, 16, 16, 1, 1, 2, 2, 2, 2], 4, {"GlobalSplitU": 3, "GlobalSplitUAlgorithm": "MultipleBuffer"}),
    # MFMAs of several blocks along M (rocBLAS's arcturus BBS 32x32x2x2 and S 4x4x1x16 logic)
    ("gfx908", "BBS", [32, 32, 2, 2, 2, 1, 2, 2, 2], 4, {}),
    ("gfx908", "SSS", [4, 4, 1, 16, 16, 1, 4, 2, 2], 2, {}),
])
def test_store_remap_vector_width(arch, types, mi, srvw, extra):
    """StoreRemapVectorWidth: C through LDS, then SRVW-element vector stores where the tile is whole along M
    and element stores at the edge (odd leading dimensions: 16-bit vectors straddle dwords), beta 0 and not,
    GlobalSplitU MultipleBuffer's workspace; the vector reads and stores are in the kernel."""
    params = {"MatrixInstruction": mi, "DepthU": 16, "PrefetchGlobalRead": 1, "StoreRemapVectorWidth": srvw,
              "GlobalReadVectorWidth": 1, **extra}
    co, contract, kernel = built(arch, problem(types, True, False), params)
    vec = srvw * (4 if extra else TYPE_BYTES[types[1]])
    text = kernel.text()
    assert {4: "ds_read_b32", 8: "ds_read_b64", 16: "ds_read_b128"}[vec] in text
    assert {4: "buffer_store_dword ", 8: "buffer_store_dwordx2", 16: "buffer_store_dwordx4"}[vec] in text
    for beta, sizes in ((0.0, [Size(37, 29, 19, 2)]), (-0.5, [Size(1, 1, 1, 1), Size(131, 67, 33, 1)])):
        results = verify_sizes(co, contract, sizes, 1.5, beta, 3, EmulatedRuntime())
        assert all(r.passed for r in results), [(r.size, r.detail) for r in results if not r.passed]


@pytest.mark.parametrize("extra,why", [
    ({"StoreRemapVectorWidth": 4, "SourceSwap": True}, "SourceSwap is not compatible"),
    ({"StoreRemapVectorWidth": 4, "GlobalSplitU": 2, "GlobalSplitUAlgorithm": "SingleBuffer"}, "GlobalSplitU"),
    ({"StoreRemapVectorWidth": 8}, "not allowed for this data type"),
    ({"StoreRemapVectorWidth": 1, "MatrixInstruction": [32, 32, 2, 1, 1, 4, 1, 1, 2]}, "larger StoreRemapVectorWidth"),
    ({"StoreRemapVectorWidth": 8, "MatrixInstruction": [16, 16, 16, 1, 1, 1, 1, 4, 1]}, "smaller StoreRemapVectorWidth"),
])
def test_store_remap_rejections_are_tensiles(extra, why):
    params = {"MatrixInstruction": [32, 32, 2, 1, 1, 2, 2, 2, 2], "DepthU": 16, **extra}
    sol = make(problem("HHS" if params["MatrixInstruction"][2] == 16 else "SSS"), params)
    assert not sol.valid and why in sol.rejection, sol.rejection


def test_store_remap_automatic_width_and_lds():
    """StoreRemapVectorWidth -1: 8 bytes per store, at least MT0/64 elements; the LDS holds (MT0 + pad) x N x
    MIWaveGroup[1] C elements (Tensile's LdsNumElements counts them in A/B elements)."""
    sol = make(problem("HHS"), {"MatrixInstruction": [32, 32, 8, 1, 1, 4, 1, 1, 4], "DepthU": 8,
                                "StoreRemapVectorWidth": -1, "PrefetchGlobalRead": 0})
    assert sol.valid, sol.rejection
    assert sol.params["StoreRemapVectorWidth"] == 4 and sol.derived.store_remap == 4
    assert sol.derived.lds_layout.num_elements >= (128 + 4) * 32 * 4
    swapped = make(problem("SSS"), {"MatrixInstruction": [32, 32, 2, 1, 1, 2, 2, 2, 2], "DepthU": 16,
                                    "StoreRemapVectorWidth": -1, "SourceSwap": True})
    assert swapped.valid and swapped.params["StoreRemapVectorWidth"] == 0


@pytest.mark.parametrize("arch,types,mi,extra", [
    ("gfx90a", "SSS", [32, 32, 2, 1, 1, 2, 2, 2, 2], {"SourceSwap": True}),
    ("gfx942", "HHS", [16, 16, 16, 1, 1, 4, 2, 2, 2], {"SourceSwap": True, "VectorWidth": 2, "VectorWidthB": 2,
                                                       "MIArchVgpr": True}),
    ("gfx908", "BBS", [32, 32, 4, 1, 1, 2, 1, 2, 2], {"SourceSwap": True, "VectorWidth": 2}),
    ("gfx90a", "DDD", [16, 16, 4, 1, 1, 2, 2, 2, 2], {"MIArchVgpr": True, "VectorWidth": 2}),
])
def test_source_swap_and_arch_vgpr_accumulators(arch, types, mi, extra):
    """SourceSwap: B is the MFMA's first operand (the output comes transposed, lanes along C's rows);
    MIArchVgpr: the MFMAs accumulate in arch VGPRs, no AGPR is used and the store reads them in place."""
    params = {"MatrixInstruction": mi, "DepthU": 16, "PrefetchGlobalRead": 1, "GlobalReadVectorWidth": 1, **extra}
    co, contract, kernel = built(arch, problem(types, False, True), params)
    mfma = next(line.split() for line in kernel.text().splitlines() if line.strip().startswith("v_mfma"))
    if extra.get("MIArchVgpr"):
        assert kernel.resources.agprs == 0 and mfma[1].startswith("v[") and "v_accvgpr_read" not in kernel.text()
    else:
        assert mfma[1].startswith("a[")
    for beta, sizes in ((0.0, [Size(37, 29, 19, 2)]), (0.25, [Size(1, 1, 1, 1), Size(131, 67, 33, 1)])):
        results = verify_sizes(co, contract, sizes, -0.5, beta, 5, EmulatedRuntime())
        assert all(r.passed for r in results), [(r.size, r.detail) for r in results if not r.passed]


@pytest.mark.parametrize("arch,mi", [("gfx90a", [32, 32, 8, 1, 1, 1, 1, 2, 2]), ("gfx942", [16, 16, 32, 1, 1, 2, 2, 2, 2])])
@pytest.mark.parametrize("ta", [False, True])
def test_int8_wide_vectors_at_edges(arch, mi, ta):
    """I8II as rocBLAS's logic has it: GlobalReadVectorWidth 16 (16 bytes along M when A is not transposed:
    partial vectors at the free edge load byte by byte), TransposeLDS, LdsPad 4 or 16, sizes 1, primes, not
    multiples of the tile, batch > 1, wrapping alpha/beta and beta 0."""
    # (LocalReadVectorWidth 16 would need more LoopIters than gfx942's 16x16x32 has at DepthU 64: Tensile's rule)
    params = {"MatrixInstruction": mi, "DepthU": 64, "GlobalReadVectorWidth": 16,
              "LocalReadVectorWidth": 16 if arch == "gfx90a" else 8,
              "TransposeLDS": 1, "PrefetchGlobalRead": 2, "PrefetchLocalRead": 1, "LdsPadA": 16, "LdsPadB": 4}
    co, contract, kernel = built(arch, problem("I8II", ta, False), params)
    text = kernel.text()
    assert ("v_mfma_i32_32x32x8i8" if arch == "gfx90a" else "v_mfma_i32_16x16x32_i8") in text
    assert "buffer_load_ubyte" in text and "ds_write_b128" in text
    for alpha, beta, sizes in ((2**30 + 1, -5, [Size(1, 1, 1, 1), Size(67, 29, 131, 2)]), (-3, 0, [Size(17, 65, 64, 1)])):
        results = verify_sizes(co, contract, sizes, alpha, beta, 5, EmulatedRuntime())
        assert all(r.passed for r in results), [(r.size, r.detail) for r in results if not r.passed]


@pytest.mark.parametrize("mi,ta,tb", [([32, 32, 4, 1, 1, 1, 2, 2, 2], False, False), ([16, 16, 8, 1, 1, 2, 1, 2, 2], True, True)])
def test_xf32_gfx942(mi, ta, tb):
    """F32XdlMathOp X on an S problem (Tensile's EnableF32XdlMathOp, rocBLAS's gfx942 SB_MX logic): fp32 A/B
    through the xf32 MFMAs, two K values per lane (the emulator takes xf32 inputs as exact fp32)."""
    params = {"MatrixInstruction": mi, "DepthU": 16, "PrefetchGlobalRead": 2, "PrefetchLocalRead": 1,
              "TransposeLDS": 1, "GlobalReadVectorWidth": 4}
    co, contract, kernel = built("gfx942", {**problem("SSS", ta, tb), "F32XdlMathOp": "x"}, params)
    assert f"v_mfma_f32_{mi[0]}x{mi[1]}x{mi[2]}_xf32" in kernel.text()
    for beta, sizes in ((0.5, [Size(1, 1, 1, 1), Size(67, 29, 37, 2)]), (0.0, [Size(65, 130, 16, 1)])):
        results = verify_sizes(co, contract, sizes, -1.25, beta, 3, EmulatedRuntime())
        assert all(r.passed for r in results), [(r.size, r.detail) for r in results if not r.passed]


@pytest.mark.parametrize("arch,types,mi,ta,tb", [
    ("gfx90a", "SSS", [32, 32, 1, 2, 2, 2, 1, 2, 2], False, True),    # two blocks along M
    ("gfx908", "HSS", [16, 16, 4, 4, 2, 1, 2, 2, 2], True, False),    # four blocks, 2 x 2
    ("gfx90a", "I8II", [4, 4, 4, 16, 4, 2, 1, 2, 2], True, False),    # 4x4: sixteen blocks along the lanes, 4 x 4
    ("gfx908", "BBS", [32, 32, 2, 2, 1, 1, 2, 2, 2], True, True),     # two blocks along N
])
def test_mfma_of_several_blocks(arch, types, mi, ta, tb):
    """MatrixInstruction B > 1 with MIBlockM blocks along M (MatrixInstBN = B / MIBlockM along N): operand lanes
    read the rows of their block (Tensile's LraTileAssignmentMFMA), the store maps each block's registers (or,
    for the 4x4 shapes, lanes) to its rows and columns; both transposes, edges, batch and beta."""
    params = {"MatrixInstruction": mi, "DepthU": 16, "PrefetchGlobalRead": 1, "PrefetchLocalRead": 1}
    integer = types == "I8II"
    co, contract, _ = built(arch, problem(types, ta, tb), params)
    results = verify_sizes(co, contract, [Size(1, 1, 1, 1), Size(67, 131, 37, 2)], -3 if integer else 1.5,
                           0 if ta else (5 if integer else 0.5), 3, EmulatedRuntime())
    assert all(r.passed for r in results), [(r.size, r.detail) for r in results if not r.passed]


def test_thread_separate_with_direct_to_lds_is_refused():
    """ThreadSeparateGlobalRead changes which lane loads what (tests/test_thread_separate_global_read.py); with
    DirectToLds, where the lane order is the LDS order, the writer refuses it rather than ignore it."""
    from tensile_asm.writer.build import geometry
    from tensile_asm.writer.limits import geometry_reason
    sol = make(problem("HHS", False, True), {"MatrixInstruction": [32, 32, 8, 1, 1, 1, 1, 2, 2], "DepthU": 16,
                                             "PrefetchGlobalRead": 1, "ThreadSeparateGlobalReadA": 1})
    from dataclasses import replace
    from tensile_asm.writer.context import Geometry
    assert sol.valid, sol.rejection
    assert supports(sol, load_arch("gfx90a")) is None
    g = geometry(sol)
    why = geometry_reason(Geometry(g.problem_type, replace(g.derived, direct_to_lds_a=True)))
    assert why is not None and why.startswith("ThreadSeparateGlobalReadA=1 is implemented with"), why


@pytest.mark.parametrize("grvw,af0em", [(8, 1), (4, 4)])
def test_int8_narrow_tile_contiguous_loads(request, grvw, af0em):
    """I8II with A contiguous along M read 4 or 8 bytes at a time (rocBLAS's aldebaran Cijk_Ailk_Bljk_I8II_BH_GB
    logic, once refused): partial vectors at the free edge load byte by byte (AssertFree0ElementMultiple 1: M 1
    and primes), or M is a multiple of the width (AssertFree0ElementMultiple = width, Tensile's Free0SizeMultiple
    predicate); K a prime past two DepthU steps, batch 2, beta 0. The (4, 4) case runs with --slow."""
    if af0em > 1 and not request.config.getoption("--slow"):
        pytest.skip("the --slow run")
    params = {"MatrixInstruction": [32, 32, 8, 1, 1, 1, 1, 2, 2], "DepthU": 32, "PrefetchGlobalRead": 2,
              "PrefetchLocalRead": 1, "GlobalReadVectorWidth": grvw, "LocalReadVectorWidth": 8, "TransposeLDS": 1,
              "UnrollMajorLDSB": 1, "LdsPadB": 4, "WaveSeparateGlobalReadA": 1, "WaveSeparateGlobalReadB": 1,
              "AssertFree0ElementMultiple": af0em}
    co, contract, kernel = built("gfx90a", problem("I8II", False, False), params)
    assert ("buffer_load_dwordx2" if grvw == 8 else "buffer_load_dword") in kernel.text()
    m = (lambda v: -(-v // af0em) * af0em)
    for alpha, beta, sizes in ((7, -3, [Size(m(1), 1, 1, 1), Size(m(67), 29, 71, 2)]), (-2, 0, [Size(m(13), 65, 64, 1)])):
        results = verify_sizes(co, contract, sizes, alpha, beta, 5, EmulatedRuntime())
        assert all(r.passed for r in results), [(r.size, r.detail) for r in results if not r.passed]


# LocalSplitU: the groups' partial tiles from AGPRs (or MIArchVgpr VGPRs) summed through LDS (writer/split_u.py);
# InnerUnroll: its K-steps computed one after another. K past several DepthU steps and a tail, M/N past the tile.
@pytest.mark.parametrize("arch,types,ta,tb,params", [
    ("gfx90a", "SSS", False, True, {"MatrixInstruction": [32, 32, 2, 1], "WorkGroup": [32, 4, 2],
                                    "ThreadTile": [1, 32], "DepthU": 16, "PrefetchGlobalRead": 2}),
    ("gfx942", "HHS", True, False, {"MatrixInstruction": [16, 16, 16, 1], "WorkGroup": [32, 8, 4],
                                    "ThreadTile": [2, 16], "DepthU": 64, "MIArchVgpr": True, "TransposeLDS": 1,
                                    "GlobalReadVectorWidth": 8}),
    ("gfx90a", "BBS", False, False, {"MatrixInstruction": [16, 16, 8, 1], "WorkGroup": [16, 16, 2],
                                     "ThreadTile": [2, 16], "DepthU": 32, "SourceSwap": True, "InnerUnroll": 2,
                                     "VectorWidth": 2}),
    ("gfx908", "SSS", True, True, {"MatrixInstruction": [16, 16, 4, 1], "WorkGroup": [16, 16, 1],
                                   "ThreadTile": [1, 16], "DepthU": 16, "InnerUnroll": 2}),
])
def test_local_split_u_and_inner_unroll(arch, types, ta, tb, params):
    params = {"PrefetchGlobalRead": 1, "PrefetchLocalRead": 1, **params}
    sol = make(problem(types, ta, tb), params)
    assert sol.valid, sol.rejection
    assert (sol.derived.local_split_u, sol.derived.inner_unroll) == (params["WorkGroup"][2],
                                                                      params.get("InnerUnroll", 1))
    co, contract, kernel = built(arch, problem(types, ta, tb), params)
    if sol.derived.local_split_u > 1:     # the partial tiles go through LDS, read back once per group
        assert kernel.text().count("ds_write_b32") >= sol.derived.mi_wave_tile[0] * sol.derived.mi_wave_tile[1]
    mt0, mt1 = sol.derived.mt0, sol.derived.mt1
    sizes = [Size(1, 1, 1, 1), Size(mt0 + 1, mt1 + 3, 2 * params["DepthU"] + 3, 2)]
    for beta, these in ((0.75, sizes[:1]), (0.0 if ta else -0.5, sizes[1:])):   # beta 0: C all NaN, never read
        results = verify_sizes(co, contract, these, 1.5, beta, 7, EmulatedRuntime())
        assert all(r.passed for r in results), [(r.size, r.detail) for r in results if not r.passed]


def test_local_split_u_lds_holds_the_fp32_partials_of_pure_half():
    """HHH without HighPrecisionAccumulate (compute type fp16, which Tensile's LDS count uses) accumulates in
    fp32 MFMA registers, and LocalSplitU writes those 4-byte partials: the kernel's LDS must hold
    LocalSplitU x MT0 x MT1 of them (the --slow run's case 121 wrote past 32 KiB of 64 needed)."""
    from tensile_asm.writer.build import geometry

    for lsu, types, tt in ((2, "HHH", [2, 64]), (2, "HHH", [1, 32]), (2, "HHS", [2, 64])):
        params = {"MatrixInstruction": [32, 32, 8, 1], "WorkGroup": [32, 4, lsu], "ThreadTile": tt,
                  "DepthU": 16, "PrefetchGlobalRead": 0, "PrefetchLocalRead": 1}
        sol = make(problem(types, True, True), params)
        assert sol.valid, sol.rejection
        g = geometry(sol)
        assert g.lds_bytes >= lsu * g.mt0 * g.mt1 * 4, (types, g.lds_bytes)


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
def test_pure_half_local_split_u_kernel_matches_reference():
    """The --slow run's case 121 (HHH TT, MT64x128, LocalSplitU 2, StoreRemapVectorWidth 8) at a small
    edge size: the LSU reduction stays inside the kernel's LDS."""
    params = {"1LDSBuffer": 0, "DepthU": 16, "GlobalReadVectorWidth": 1, "LdsBlockSizePerPadB": 256,
              "MatrixInstruction": [32, 32, 8, 1], "PrefetchGlobalRead": 0, "PrefetchLocalRead": 1,
              "StoreRemapVectorWidth": 8, "ThreadTile": [2, 64], "VectorWidth": 2, "VectorWidthB": 2,
              "WaveSeparateGlobalReadA": 1, "WorkGroup": [32, 4, 2], "StaggerU": 4}
    prob = {**problem("HHH", True, True), "UseBeta": True}
    check(dict(arch="gfx942", problem=prob, params=params, size=Size(37, 71, 19, 2), alpha=1.0, beta=0.5,
               seed=482545))
