"""Render ``inspect`` results: a readable text report, or one JSON object."""

from __future__ import annotations

import json

from tensile_asm.inspect.core import KernelReport


def to_json(reports: list[KernelReport]) -> str:
    """One kernel: its object. Several: ``{"file", "arch", "kernels": [...]}``."""
    if len(reports) == 1:
        return json.dumps(reports[0].as_dict(), indent=2)
    first = reports[0]
    return json.dumps({"file": str(first.path), "arch": first.arch.name,
                       "kernels": [r.as_dict() for r in reports]}, indent=2)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def render_text(r: KernelReport, conflicts_listed: int = 8) -> str:
    res, occ = r.resources, r.resources.occupancy
    limits = ", ".join(f"{k} {v}" for k, v in occ["limits"].items())
    lines = [
        f"kernel       {r.name}",
        f"file         {r.path} ({r.arch.name})",
        f"registers    {res.vgpr} VGPR, {res.agpr} AGPR, {res.sgpr} SGPR declared "
        f"(code names v0..v{res.used_vgpr - 1 if res.used_vgpr else '-'}, "
        f"{res.used_agpr} AGPR, s0..s{res.used_sgpr - 1 if res.used_sgpr else '-'})",
        f"LDS          {res.lds_bytes} bytes; workgroup {res.workgroup_size} work-items",
        f"occupancy    {occ['waves_per_simd']} waves/SIMD, limited by {occ['limited_by']} ({limits})",
    ]
    if r.issue is None:
        lines.append(f"main loop    none: {r.loop_reason}")
    else:
        s = r.issue
        lines.append(f"main loop    0x{r.loop.start_address:x}..0x{r.loop.end_address:x}: {s.instructions} "
                     f"instructions, {s.fma_instructions} FMA")
        lines.append("  mix        " + ", ".join(f"{c} {n}" for c, n in s.mix.items()))
        lines.append("  cycles     " + ", ".join(f"{c} {n}" for c, n in s.clocks.items()))
        lines.append(f"  static efficiency {_pct(s.static_efficiency)} = FMA issue cycles {s.fma_clocks} / "
                     f"{s.total_clocks} (modelled: issue_cycles of isa/{r.arch.name}.yaml)")
        lines.append(f"  count ratio       {_pct(s.count_ratio)} = FMA instructions {s.fma_instructions} / "
                     f"{s.instructions} (the Tensile paper's estimate)")
        if r.overlap is not None:
            o = r.overlap
            lines.append(f"  MFMA busy         {_pct(o.mfma_busy)} = MFMA pipe cycles {o.mfma_clocks} / {o.period} per "
                         f"pass (modelled: in-order issue, later instructions overlap a running MFMA)")
    b = r.banks
    if b is None:
        lines.append(f"LDS banks    {r.banks_reason}")
    else:
        worst = sorted((i for i in b.instructions if i.conflict_cycles), key=lambda i: -i.conflict_cycles)
        lines.append(f"LDS banks    {b.conflict_cycles} conflict cycles per iteration (worst wave per "
                     f"instruction) over {len(b.instructions)} DS instructions, {b.cycles} LDS cycles in all")
        waves = f"{b.waves} wave{'s' if b.waves != 1 else ''}"
        lines.append(f"  model      {b.banks} banks x {b.bank_bytes} bytes (modelled); {b.source}, {waves}")
        for i in worst[:conflicts_listed]:
            where = f"0x{i.address:x}" if i.address is not None else "?"
            lines.append(f"  {where:>10} {i.text:<44} {i.conflict_cycles} extra cycles "
                         f"({i.cycles} for {i.ideal_cycles} phases of {i.lanes_per_phase} lanes)")
        if len(worst) > conflicts_listed:
            lines.append(f"  ... and {len(worst) - conflicts_listed} more conflicting instructions (--json lists all)")
        if b.not_executed:
            lines.append(f"  {len(b.not_executed)} DS instructions of the loop did not run in the observed iteration")
    return "\n".join(lines)


def render(reports: list[KernelReport]) -> str:
    return "\n\n".join(render_text(r) for r in reports)
