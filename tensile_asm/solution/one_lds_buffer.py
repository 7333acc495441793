"""Tensile 4.44's kernel-writer check on MFMA kernels with ScheduleIterAlg 3 and 1LDSBuffer, estimated.

With one LDS buffer the local writes of the next tile must start only after every local read of the current loop
has been issued. Tensile's writer (KernelWriter.makeSubIterSchedule) places the local writes from
``lwStartMfmaIndex``: where PrefetchLocalRead >= LoopIters (every iteration's reads may move ahead), the MFMAs needed
to issue the current loop's local reads (``countNumMfmaForCurrentOrNextLoopLR``) plus their latency; otherwise the
start of the last iterations plus the next loop's first reads. It clamps that index to ``lwEndMfmaIndex`` (a few
MFMAs before the barrier). When the clamp bites, local reads may still be unscheduled where writes start and the
writer fails with
"reading and writing LDS at same time require 2 LDS buffer" (overflowedResources 5): TensileCreateLibrary then
reports a kernel generation failure for the whole library.

This project's writer has no such limit, so the rule is not a rejection in ``derive``; the tuner uses it so that
the logic files it writes are ones Tensile's TensileCreateLibrary builds. It is an estimate on the conservative side:
every LDS read is counted once per iteration (Tensile's wider coalesced reads issue fewer), and a kernel is refused
as soon as the unclamped index passes ``lwEndMfmaIndex`` (Tensile builds some of these: its reads also fill
earlier iterations' gaps). ``tools/tcl_check_tuned.py`` checks the tuner's output with Tensile's own
TensileCreateLibrary.
"""

from __future__ import annotations

import math


def one_lds_buffer_rejection(sol, arch_name: str | None = None) -> str | None:
    """Why Tensile 4.44's writer is expected to refuse ``sol`` (1LDSBuffer + ScheduleIterAlg 3 + MFMA), or None."""
    p, k, d = sol.params, sol.derived_keys, sol.derived
    if not d.is_mfma or int(p.get("ScheduleIterAlg", 0)) != 3 or not int(p.get("1LDSBuffer", 0) or 0) == 1:
        return None
    if p.get("DirectToLdsA") or p.get("DirectToLdsB") or p.get("DirectToVgprA") or p.get("DirectToVgprB"):
        return None  # other scheduling paths; not estimated here
    iters, plr = int(k["LoopIters"]), int(p["PrefetchLocalRead"])
    plr_iters = plr % iters
    if not plr_iters:
        return None  # no barrier inside the loop: local writes end with the loop
    wt0, wt1 = k["MIWaveTile"]
    iu = int(p.get("InnerUnroll", 1))
    per_iter = wt0 * wt1 * iu
    mi_m = int(k["MatrixInstM"])
    mi_lat, mi_issue = mi_m // 2, 2
    dt = sol.problem_type.data_type.char
    if arch_name == "gfx942" and int(k["MatrixInstB"]) == 1 and dt in ("H", "B", "I8", "F8", "B8"):
        mi_lat, mi_issue = mi_lat // 2, mi_issue // 2
    left0 = max(mi_lat - 1 - mi_issue, 1) + int(p.get("ExtraMiLatencyLeft", 0) or 0)
    bpe = sol.problem_type.data_type.bytes
    read_bytes = min(16, bpe * int(p["LocalReadVectorWidth"]))
    issue = min(left0, 2 * (2 if read_bytes == 16 else 1))

    def lr_mfmas(reads: int, curr: bool) -> tuple[int, int]:  # countNumMfmaForCurrentOrNextLoopLR
        left, extra = left0, 0
        for _ in range(reads):
            left -= issue
            if left < 0:
                extra += 1
                left = left0 - issue
        latency = math.ceil(read_bytes / 4) * 10 - max(left, 0) - (0 if curr else mi_lat)
        latency += int(p.get("ExtraLatencyForLR", 0) or 0)
        count = math.ceil(latency / mi_lat) if latency > 0 else 0
        return 1 + extra, (max(count, 1) if curr else count)

    per_iter_reads = iu * (wt0 + wt1)
    reads = (iters - plr_iters) * per_iter_reads
    cur_mfmas, cur_lat = lr_mfmas(reads, True)
    next_mfmas, next_lat = lr_mfmas(per_iter_reads, False)
    if plr >= iters:   # every iteration's reads may move ahead: writes wait for all of the loop's reads
        lw_start = cur_mfmas + cur_lat
    else:              # reads stay in their iteration: writes start in the last iterations
        lw_start = per_iter * (iters - 1 - plr_iters) + next_mfmas + cur_lat
    next_lr = min(next_mfmas + next_lat, per_iter - 1)
    barrier = per_iter * (iters - plr_iters + 1) - next_lr - 1
    between = 2 if mi_m == 32 else 3
    if mi_lat <= 4 and iters >= 4:
        between *= 2
    lw_end = max(barrier - between, 0)
    if lw_start > lw_end:
        return (f"1LDSBuffer with ScheduleIterAlg 3: the {reads} LDS reads of a loop need about {lw_start} MFMAs "
                f"before local writes may start, but Tensile 4.44's writer starts them at MFMA {lw_end} "
                f"(LoopIters {iters}, PrefetchLocalRead {plr}, {per_iter} MFMAs per iteration); its "
                f"TensileCreateLibrary fails on such a kernel")
    return None
