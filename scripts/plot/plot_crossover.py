#!/bin/sh
''''true; for p in /usr/bin/python3 python3; do "$p" -c "import matplotlib" 2>/dev/null && exec "$p" "$0" "$@"; done; exec python3 "$0" "$@" # '''
# The line above is a string statement too, so Python takes it as the module docstring:
# the real one is assigned to __doc__ (argparse's --help shows it).
__doc__ = """plot_crossover.py — training time against data size per device, from a bench export
(`nntrain bench --sweep data.grid=... --export-json F`), log-log, with the crossover marked.

Usage: scripts/plot/plot_crossover.py BENCH.json [-o crossover.png]
Points are the median time; the bars span min to max over the repeats. The crossover is the
bench's own (docs/BENCH.md): where the GPU becomes faster for good, and the interpolated
break-even size. With `bench --price` (schema 2) the cost crossover is marked too: where the
GPU becomes cheaper per run at the given prices. Reads schema 1 and 2. Exit 77 (skipped)
without matplotlib, 2 on a bad input.
"""
import argparse
import json
import os
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nnplot  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench_json")
    ap.add_argument("-o", "--output", help="PNG to write (default: beside the JSON, .png)")
    a = ap.parse_args()
    try:
        with open(a.bench_json) as f:
            b = json.load(f)
    except (OSError, ValueError) as e:
        nnplot.fail("cannot read %s: %s" % (a.bench_json, e))
    if b.get("schema_version") not in (1, 2):
        nnplot.fail("%s: schema_version %r, this script reads 1 and 2" % (a.bench_json, b.get("schema_version")))
    series = {}
    for r in b["results"]:
        if r["status"] != "ok":
            continue
        s = series.setdefault(r["device"], [])
        s.append((r["samples"], r["median"], r["min"], r["max"]))
    if not series:
        nnplot.fail("%s: no finished results to plot" % a.bench_json)
    plt = nnplot.pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    colors = {"cpu": "tab:blue", "gpu": "tab:orange"}
    for dev, pts in sorted(series.items()):
        pts.sort()
        x = [p[0] for p in pts]
        y = [p[1] for p in pts]
        err = [[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]]
        backend = next(r["backend"] for r in b["results"] if r["device"] == dev)
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, color=colors.get(dev), label="%s (%s)" % (dev.upper(), backend))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("training samples")
    epochs = {r["epochs"] for r in b["results"]}
    ax.set_ylabel("training time, %s epochs (s)" % ("/".join(str(e) for e in sorted(epochs))))
    ctx = b.get("context", {})
    gpu = ctx.get("gpu", {})
    gpu_name = gpu.get("name") if gpu.get("available") else "no GPU"
    ax.set_title("Time vs data size — %s; %s" % (ctx.get("cpu_model", "CPU"), gpu_name), fontsize=9)
    c = b.get("crossover")
    if c is None:
        note = "CPU only: no GPU ran, no crossover" if "cpu" in series else "GPU only: no crossover"
    else:
        note = "Crossover: " + c["message"]
        x_mark = c.get("interpolated_samples") or (c["gpu_faster_from"] or {}).get("samples")
        if x_mark:
            ax.axvline(x_mark, color="tab:red", ls=":", lw=1.5, label="crossover ≈ %.0f samples" % x_mark)
    cc = b.get("cost_crossover")
    if cc is not None:
        prices = ctx.get("prices") or {}
        unit = prices.get("currency") or "price units"
        at = "cpu %g, gpu %g %s/h" % (prices.get("cpu") or 0, prices.get("gpu") or 0, unit)
        note += "\nCost crossover (%s): %s" % (at, cc["message"])
        x_cost = cc.get("interpolated_samples") or (cc.get("gpu_cheaper_from") or {}).get("samples")
        if x_cost:
            ax.axvline(x_cost, color="tab:green", ls="--", lw=1.5,
                       label="GPU cheaper per run from ≈ %.0f samples (%s)" % (x_cost, at))
    # Wrapped to the axes by hand (matplotlib's wrap=True wraps to the figure, and a tight
    # bounding box then widens the figure to the longest line).
    note = "\n".join(textwrap.fill(line, 95) for line in note.split("\n"))
    ax.text(0.01, 0.99, note, transform=ax.transAxes, va="top", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    out = a.output or os.path.splitext(a.bench_json)[0] + ".png"
    nnplot.save(fig, out)


if __name__ == "__main__":
    main()
