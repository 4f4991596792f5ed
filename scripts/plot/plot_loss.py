#!/bin/sh
''''true; for p in /usr/bin/python3 python3; do "$p" -c "import matplotlib" 2>/dev/null && exec "$p" "$0" "$@"; done; exec python3 "$0" "$@" # '''
"""plot_loss.py — loss curves of an nntrain run (metrics.csv), CPU and GPU overlaid.

Usage: scripts/plot/plot_loss.py RUN_DIR|metrics.csv [-o loss.png]
Default output: loss.png next to metrics.csv. Log-scale loss against epoch, one line per
device in the file. Exit 77 (skipped) without matplotlib, 2 on a bad input.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nnplot  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="run folder (with metrics.csv) or a metrics.csv file")
    ap.add_argument("-o", "--output", help="PNG to write (default: loss.png beside metrics.csv)")
    a = ap.parse_args()
    path = os.path.join(a.run, "metrics.csv") if os.path.isdir(a.run) else a.run
    rows = nnplot.read_csv(path, ["device", "epoch", "loss"])
    curves = {}
    for r in rows:
        try:
            loss = float(r["loss"])
            epoch = int(r["epoch"])
        except ValueError:
            nnplot.fail("%s: bad row %r" % (path, r))
        curves.setdefault(r["device"], ([], []))
        curves[r["device"]][0].append(epoch)
        curves[r["device"]][1].append(loss)
    plt = nnplot.pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    styles = {"cpu": dict(color="tab:blue", lw=1.6), "gpu": dict(color="tab:orange", lw=1.2, ls="--")}
    for dev, (ep, loss) in curves.items():
        ax.plot(ep, loss, label=dev.upper(), **styles.get(dev, {}))
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("MSE loss (before the epoch's update)")
    title = "Training loss"
    if len(curves) == 2:
        title += " — CPU and GPU from the same initial weights"
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    out = a.output or os.path.join(os.path.dirname(os.path.abspath(path)), "loss.png")
    nnplot.save(fig, out)


if __name__ == "__main__":
    main()
