"""GFLOPS and winner maps of a 2-D size range (as the Tensile paper draws them): for a size group whose sizes
vary in two of M, N, K (the rest fixed), one PNG of the winning GFLOPS per size and one of which solution
wins. ``grid`` computes them (numpy only); ``write_maps`` draws them with matplotlib (the ``plots`` extra,
imported only here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tensile_asm.errors import UserError

AXES = ("m", "n", "k", "batch")


def grid(sizes, winners) -> tuple[str, str, list[int], list[int], np.ndarray, np.ndarray, list[str]] | None:
    """(x axis, y axis, x values, y values, GFLOPS[y, x] (NaN: no winner), winner index[y, x] (-1: none),
    winner names); None unless exactly two of M, N, K, batch vary."""
    varying = [a for a in AXES if len({getattr(s, a) for s in sizes}) > 1]
    if len(varying) != 2:
        return None
    xa, ya = varying
    xs = sorted({getattr(s, xa) for s in sizes})
    ys = sorted({getattr(s, ya) for s in sizes})
    gf = np.full((len(ys), len(xs)), np.nan)
    win = np.full((len(ys), len(xs)), -1)
    names: list[str] = []
    by_sizes = {w.sizes: w for w in winners}
    for s in sizes:
        w = by_sizes.get(s.sizes)
        if w is None:
            continue
        j, i = ys.index(getattr(s, ya)), xs.index(getattr(s, xa))
        gf[j, i] = w.gflops
        if w.candidate.name not in names:
            names.append(w.candidate.name)
        win[j, i] = names.index(w.candidate.name)
    return xa, ya, xs, ys, gf, win, names


def write_maps(group_name: str, sizes, winners, out_dir: Path, provenance: str) -> list[Path]:
    g = grid(sizes, winners)
    if g is None:
        return []
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UserError("--maps needs matplotlib (pip install tensile-asm[plots])") from None
    xa, ya, xs, ys, gf, win, names = g
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    # one cell per size, labelled with its value: size ranges are often not evenly spaced
    extent = (-0.5, len(xs) - 0.5, -0.5, len(ys) - 0.5)
    for kind, data in (("gflops", gf), ("winners", win)):
        fig, ax = plt.subplots(figsize=(7, 5.5))
        if kind == "gflops":
            im = ax.imshow(data, origin="lower", aspect="auto", extent=extent, cmap="viridis")
            fig.colorbar(im, ax=ax, label=f"GFLOPS of the winner ({provenance})")
        else:
            from matplotlib.colors import ListedColormap
            masked = np.ma.masked_less(data, 0)
            colours = ListedColormap([plt.cm.tab20(i % 20) for i in range(max(len(names), 1))])
            im = ax.imshow(masked, origin="lower", aspect="auto", extent=extent, cmap=colours,
                           vmin=-0.5, vmax=max(len(names), 1) - 0.5)
            cb = fig.colorbar(im, ax=ax, ticks=range(len(names)))
            cb.ax.set_yticklabels([n[-40:] for n in names], fontsize=6)
        for set_ticks, set_labels, values in ((ax.set_xticks, ax.set_xticklabels, xs),
                                              (ax.set_yticks, ax.set_yticklabels, ys)):
            step = max(1, len(values) // 12)
            set_ticks(range(0, len(values), step))
            set_labels([str(v) for v in values[::step]], fontsize=7)
        ax.set_xlabel(xa.upper())
        ax.set_ylabel(ya.upper())
        ax.set_title(f"{group_name}: {'winning GFLOPS' if kind == 'gflops' else 'winning solution'} ({provenance})",
                     fontsize=9)
        path = out_dir / f"{group_name}_{kind}.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        paths.append(path)
    return paths
