#!/bin/sh
''''true; for p in /usr/bin/python3 python3; do "$p" -c "import matplotlib" 2>/dev/null && exec "$p" "$0" "$@"; done; exec python3 "$0" "$@" # '''
"""plot_surface.py — the seed articles' figure: the training surface beside the network's
prediction on the CPU and on the GPU (3 panels; 2 when only one device ran).

Usage: scripts/plot/plot_surface.py RUN_DIR [-o surface.png]
Needs the run's surface.<device>.csv files: `nntrain train --write-surface N ...`.
Exit 77 (skipped) without matplotlib, 2 on a bad input.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nnplot  # noqa: E402


def grid(rows, column):
    n = int(round(math.sqrt(len(rows))))
    if n * n != len(rows):
        nnplot.fail("surface has %d rows, not a square grid" % len(rows))
    # x1 varies fastest: row j of the grid is x2 = g[j].
    x1 = [[float(rows[j * n + i]["x1"]) for i in range(n)] for j in range(n)]
    x2 = [[float(rows[j * n + i]["x2"]) for i in range(n)] for j in range(n)]
    z = [[float(rows[j * n + i][column]) for i in range(n)] for j in range(n)]
    return x1, x2, z


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="run folder with surface.cpu.csv and/or surface.gpu.csv")
    ap.add_argument("-o", "--output", help="PNG to write (default: RUN_DIR/surface.png)")
    a = ap.parse_args()
    surfaces = {}
    for dev in ("cpu", "gpu"):
        p = os.path.join(a.run, "surface.%s.csv" % dev)
        if os.path.exists(p):
            surfaces[dev] = nnplot.read_csv(p, ["x1", "x2", "y_true", "y_pred"])
    if not surfaces:
        nnplot.fail("no surface.cpu.csv or surface.gpu.csv in %s (train with --write-surface N)" % a.run)
    plt = nnplot.pyplot()
    import mpl_toolkits.mplot3d  # noqa: F401  (registers the 3d projection)
    import numpy as np

    first = next(iter(surfaces.values()))
    panels = [("Training data (peaks)", grid(first, "y_true"))]
    for dev, rows in surfaces.items():
        x1, x2, z = grid(rows, "y_pred")
        zt = np.array(grid(rows, "y_true")[2])
        rmse = float(np.sqrt(np.mean((np.array(z) - zt) ** 2)))
        panels.append(("Prediction on %s (RMSE %.3g)" % (dev.upper(), rmse), (x1, x2, z)))
    zmin = min(np.min(p[1][2]) for p in panels)
    zmax = max(np.max(p[1][2]) for p in panels)
    fig = plt.figure(figsize=(5.2 * len(panels), 4.6))
    for k, (title, (x1, x2, z)) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), k + 1, projection="3d")
        ax.plot_surface(np.array(x1), np.array(x2), np.array(z), cmap="viridis", vmin=zmin, vmax=zmax,
                        linewidth=0, antialiased=True)
        ax.set_zlim(zmin, zmax)
        ax.set_xlabel("x1")
        ax.set_ylabel("x2")
        ax.set_title(title)
    out = a.output or os.path.join(a.run, "surface.png")
    nnplot.save(fig, out)


if __name__ == "__main__":
    main()
