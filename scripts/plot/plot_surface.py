#!/bin/sh
''''true; for p in /usr/bin/python3 python3; do "$p" -c "import matplotlib" 2>/dev/null && exec "$p" "$0" "$@"; done; exec python3 "$0" "$@" # '''
# The line above is a string statement too, so Python takes it as the module docstring:
# the real one is assigned to __doc__ (argparse's --help shows it).
__doc__ = """plot_surface.py — the seed articles' figure: the true function (peaks) beside the
network's prediction on the CPU and on the GPU, and below each prediction its residual.

Usage: scripts/plot/plot_surface.py RUN_DIR [-o surface.png]
Needs the run's surface.<device>.csv files: `nntrain train --write-surface N ...`.
Top row: 3-D surfaces of y on one colour scale (colour bar at the right), the true function
first, then one prediction per device with its RMSE. Bottom row: the residual
prediction - true of each device as a map over (x1, x2), on a symmetric diverging scale with
its own colour bar. Exit 77 (skipped) without matplotlib, 2 on a bad input.
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
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    panels = [("True function (peaks)", grid(first, "y_true"))]
    residuals = []
    for dev, rows in surfaces.items():
        x1, x2, z = grid(rows, "y_pred")
        zt = np.array(grid(rows, "y_true")[2])
        r = np.array(z) - zt
        rmse = float(np.sqrt(np.mean(r ** 2)))
        panels.append(("Prediction on %s (RMSE %.3g)" % (dev.upper(), rmse), (x1, x2, z)))
        residuals.append(("Residual on %s: prediction - true" % dev.upper(), (x1, x2, r)))
    zmin = min(np.min(p[1][2]) for p in panels)
    zmax = max(np.max(p[1][2]) for p in panels)
    ncols = len(panels)
    fig = plt.figure(figsize=(5.0 * ncols + 0.8, 8.6))
    sm = None
    for k, (title, (x1, x2, z)) in enumerate(panels):
        ax = fig.add_subplot(2, ncols, k + 1, projection="3d")
        sm = ax.plot_surface(np.array(x1), np.array(x2), np.array(z), cmap="viridis", vmin=zmin, vmax=zmax,
                             linewidth=0, antialiased=True)
        ax.set_zlim(zmin, zmax)
        ax.set_xlabel("x1")
        ax.set_ylabel("x2")
        ax.set_zlabel("y")
        ax.set_title(title, fontsize=10)
    # Its own axes at the right edge: beside the last 3-D panel it would cover its z label.
    fig.subplots_adjust(right=0.86)
    fig.colorbar(sm, cax=fig.add_axes([0.91, 0.56, 0.015, 0.32]), label="y (true or predicted)")
    rmax = max(float(np.max(np.abs(p[1][2]))) for p in residuals) or 1.0
    for k, (title, (x1, x2, r)) in enumerate(residuals):
        ax = fig.add_subplot(2, ncols, ncols + k + 2)
        im = ax.pcolormesh(np.array(x1), np.array(x2), r, cmap="RdBu_r", vmin=-rmax, vmax=rmax, shading="auto")
        ax.set_aspect("equal")
        ax.set_xlabel("x1")
        ax.set_ylabel("x2")
        ax.set_title(title, fontsize=10)
        fig.colorbar(im, ax=ax, shrink=0.85, label="prediction - true")
    out = a.output or os.path.join(a.run, "surface.png")
    nnplot.save(fig, out)


if __name__ == "__main__":
    main()
