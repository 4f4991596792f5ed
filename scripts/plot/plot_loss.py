#!/bin/sh
''''true; for p in /usr/bin/python3 python3; do "$p" -c "import matplotlib" 2>/dev/null && exec "$p" "$0" "$@"; done; exec python3 "$0" "$@" # '''
# The line above is a string statement too, so Python takes it as the module docstring:
# the real one is assigned to __doc__ (argparse's --help shows it).
__doc__ = """plot_loss.py — loss curves of an nntrain run (metrics.csv), CPU and GPU overlaid.

Usage: scripts/plot/plot_loss.py RUN_DIR|metrics.csv [-o loss.png]
Default output: loss.png next to metrics.csv. Log-scale loss against epoch, one line per
device in the file, and the held-out validation loss (metrics.csv's val_loss column, with
data.validation_fraction) dashed beside it. The title names the experiment, the device(s),
the epochs and the final losses from the summary.json beside metrics.csv (the trained
model's loss, and the last epoch's, which is before the last update); without a summary
it says so. Exit 77 (skipped) without matplotlib, 2 on a bad input.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nnplot  # noqa: E402


def read_summary(path):
    """summary.json beside metrics.csv, or None when there is none (or it is unreadable)."""
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(path)), "summary.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fmt_loss(v):
    return "n/a" if v is None else "%.4g" % v


def title_of(summary, curves):
    """The experiment, device(s), epochs and final losses, in two lines."""
    if summary is None:
        return "Training loss — %s (no summary.json beside metrics.csv)" % ", ".join(d.upper() for d in curves)
    parts = []
    for r in summary.get("runs", []):
        text = "%s %s epochs (%s): model loss %s, last epoch %s" % (
            r.get("device", "?").upper(), r.get("epochs"), r.get("status", "?"), fmt_loss(r.get("model_loss")),
            fmt_loss(r.get("final_loss")))
        v = r.get("validation")
        if v:
            text += ", validation %s" % fmt_loss(v.get("model_loss"))
        parts.append(text)
    return "Training loss — %s\n%s" % (summary.get("name", "?"), "; ".join(parts))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="run folder (with metrics.csv) or a metrics.csv file")
    ap.add_argument("-o", "--output", help="PNG to write (default: loss.png beside metrics.csv)")
    a = ap.parse_args()
    path = os.path.join(a.run, "metrics.csv") if os.path.isdir(a.run) else a.run
    rows = nnplot.read_csv(path, ["device", "epoch", "loss"])
    curves, val = {}, {}
    for r in rows:
        try:
            loss = float(r["loss"])
            epoch = int(r["epoch"])
            v = r.get("val_loss")
            v = float(v) if v not in (None, "") else None
        except ValueError:
            nnplot.fail("%s: bad row %r" % (path, r))
        curves.setdefault(r["device"], ([], []))
        curves[r["device"]][0].append(epoch)
        curves[r["device"]][1].append(loss)
        if v is not None:
            val.setdefault(r["device"], ([], []))
            val[r["device"]][0].append(epoch)
            val[r["device"]][1].append(v)
    summary = read_summary(path)
    plt = nnplot.pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    styles = {"cpu": dict(color="tab:blue", lw=1.6), "gpu": dict(color="tab:orange", lw=1.2, ls="--")}
    for dev, (ep, loss) in curves.items():
        ax.plot(ep, loss, label="%s training" % dev.upper(), **styles.get(dev, {}))
    for dev, (ep, loss) in val.items():
        color = styles.get(dev, {}).get("color", "tab:green")
        ax.plot(ep, loss, ls=":", marker="." if len(ep) < 200 else None, color=color, alpha=0.8,
                label="%s validation (held out)" % dev.upper())
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("MSE loss (before the epoch's update)")
    title = title_of(summary, curves)
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    out = a.output or os.path.join(os.path.dirname(os.path.abspath(path)), "loss.png")
    nnplot.save(fig, out)
    print("title: %s" % title.replace("\n", " | "))


if __name__ == "__main__":
    main()
