"""Winners per size and the logic file: per size the fastest valid solution, ties (within TIE of the best)
going to the simpler one; the logic file keeps the winners only (Tensile's SolutionSelectionAlg 1,
keepWinnerSolutions), renumbered, with the exact size -> [solution, GFLOPS] rows."""

from __future__ import annotations

from dataclasses import dataclass

TIE = 1e-6      # relative: results this close are a tie


def simplicity(sol) -> tuple:
    """Smaller is simpler: no GlobalSplitU, fewer prefetch stages, smaller tiles, shallower DepthU, narrower
    vectors, no MFMA."""
    p, d = sol.params, sol.derived
    return (d.global_split_u, int(p.get("PrefetchGlobalRead", 0)), int(p.get("PrefetchLocalRead", 0)),
            d.mt0 * d.mt1, d.depth_u, int(bool(d.is_mfma)), int(p.get("VectorWidth", 1) or 1),
            int(p.get("GlobalReadVectorWidth", 1) or 1), int(p.get("WorkGroupMapping", 1) or 1))


@dataclass
class Winner:
    sizes: tuple
    candidate: object        # tuning.candidates.Candidate
    gflops: float
    provenance: str


def pick_winners(sizes, cands, results) -> tuple[list[Winner], list]:
    """(winners in size order, sizes no valid solution ran on)."""
    winners, none = [], []
    for s in sizes:
        scored = [(results[(c.key, s.sizes)], c) for c in cands if (c.key, s.sizes) in results]
        scored = [(r, c) for r, c in scored if r.valid and r.gflops > 0]
        if not scored:
            none.append(s)
            continue
        best = max(r.gflops for r, _ in scored)
        tied = [(r, c) for r, c in scored if r.gflops >= best * (1 - TIE)]
        r, c = min(tied, key=lambda rc: (simplicity(rc[1].solution), rc[1].fork))
        winners.append(Winner(s.sizes, c, r.gflops, r.provenance))
    return winners, none


# Architectures whose MFMA results can live in arch VGPRs (Tensile 4.44 ArchCaps HasAccCD)
_HAS_ACC_CD = frozenset({"gfx90a", "gfx940", "gfx941", "gfx942", "gfx950"})


def tensile_only_keys(sol, arch: str) -> dict:
    """Keys Tensile 4.44's assignDerivedParameters adds to every solution and writes into a logic file (its
    kernel writer reads them back, since the file says AssignedDerivedParameters) that this project's
    derivation does not compute, by 4.44's rules: LdsInitCVgprs (MFMA, StorePriorityOpt, fp64, an architecture
    with AccCD), NoLdsWriteCode (A and B both DirectToLds/DirectToVgpr), EnableF32XdlMathOp (fp32 inputs with
    another F32XdlMathOp), EnableMatrixInstructionStore (MFMA and LocalSplitU 1), MFMA_BF16_1K (bf16 MFMA on an
    architecture with the 1k instructions), VectorWidthA (= VectorWidth), CodeObjectVersion ("default")."""
    p, pt = sol.params, sol.problem_type
    mfma = bool(sol.derived.is_mfma)
    xdl = pt.f32_xdl_math_op
    return {
        "LdsInitCVgprs": bool(arch in _HAS_ACC_CD and mfma and p.get("StorePriorityOpt")
                              and pt.data_type.char == "D"),
        "NoLdsWriteCode": bool((p.get("DirectToVgprA") or p.get("DirectToLdsA"))
                               and (p.get("DirectToVgprB") or p.get("DirectToLdsB"))),
        "EnableF32XdlMathOp": bool(xdl is not None and xdl.char != "S" and pt.data_type.char == "S"),
        "EnableMatrixInstructionStore": bool(mfma and int(p.get("LocalSplitU", 1)) == 1),
        "MFMA_BF16_1K": bool(mfma and pt.data_type.char == "B" and arch in _HAS_ACC_CD),
        "VectorWidthA": p.get("VectorWidth"),
        "CodeObjectVersion": "default",
    }


def write_logic(path, *, schedule: str, arch: str, device_names, problem_type, winners: list[Winner]):
    """The logic file of one problem type and architecture (list form, as Tensile 4.44 writes it)."""
    from tensile_asm.library.logic import write_logic_file

    used, order = {}, []
    for w in winners:
        if w.candidate.name not in used:
            used[w.candidate.name] = len(order)
            sol = w.candidate.solution
            for key, value in tensile_only_keys(sol, arch).items():
                sol.derived_keys.setdefault(key, value)
            order.append(sol)
    rows = [(list(w.sizes), used[w.candidate.name], w.gflops) for w in winners]
    return write_logic_file(path, schedule=schedule, architecture=arch, device_names=list(device_names),
                            problem_type=problem_type, solutions=order, exact_logic=rows)
