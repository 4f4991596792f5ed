"""nnplot.py — shared helpers of the plot scripts: a headless matplotlib, or a clear skip.

The plot scripts start with a shell/Python polyglot line that runs them under
/usr/bin/python3 when that interpreter has matplotlib (Debian's python3-matplotlib), else
under the python3 on PATH. Without matplotlib they print why and exit 77 (the exit code
CTest and automake read as "skipped"), never a silent success.
"""
import csv
import sys

SKIP = 77


def pyplot():
    """matplotlib.pyplot with the Agg backend (PNG, no display), or exit 77 saying why."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        sys.stderr.write(
            "%s: skipped: matplotlib is not available to %s (%s); on Debian: apt-get install "
            "python3-matplotlib\n" % (sys.argv[0], sys.executable, e))
        sys.exit(SKIP)
    return plt


def fail(msg):
    sys.stderr.write("%s: error: %s\n" % (sys.argv[0], msg))
    sys.exit(2)


def read_csv(path, required):
    """Rows of a CSV as dicts; exits 2 naming the file if it is missing or lacks a column."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail("cannot read %s: %s" % (path, e.strerror))
    if not rows:
        fail("%s: no data rows" % path)
    missing = [c for c in required if c not in rows[0]]
    if missing:
        fail("%s: missing column(s) %s" % (path, ", ".join(missing)))
    return rows


def save(fig, path):
    fig.savefig(path, dpi=110, bbox_inches="tight")
    print("wrote %s" % path)
