#!/bin/sh
# plot_scripts_test.sh — the plot scripts run headless on a small real run and bench export
# and write non-empty PNG files. Exit 77 (CTest: skipped) when no Python with matplotlib
# exists, saying so; any other failure fails the test.
# Usage: plot_scripts_test.sh NNTRAIN_BINARY SOURCE_DIR
set -eu
bin=$1
src=$2
py=""
for p in /usr/bin/python3 python3; do
  if "$p" -c "import matplotlib, numpy" 2>/dev/null; then py=$p; break; fi
done
if [ -z "$py" ]; then
  echo "SKIPPED: no python3 with matplotlib and numpy (Debian: apt-get install python3-matplotlib)"
  exit 77
fi
echo "using $py"
work=$(mktemp -d "${TMPDIR:-/tmp}/nntrain_plots.XXXXXX")
trap 'rm -rf "$work"' EXIT

cd "$src"
"$bin" --config configs/peaks.json --epochs 40 --quiet --write-surface 12 --out "$work/run" data.grid=12 \
  data.validation_fraction=0.2 >/dev/null
"$bin" bench --config configs/peaks.json --devices cpu --reps 2 --warmup 1 --quiet --sweep data.grid=4,8,16 \
  --target-loss 0.5 --price cpu=0.2 --export-json "$work/bench.json" train.epochs=5 >/dev/null

scripts/plot/plot_loss.py "$work/run" -o "$work/loss.png" >"$work/loss.out"
cat "$work/loss.out"
# The title names the experiment, the device, the epochs and the final losses (the trained
# model's and the last epoch's), and the held-out loss of a run with a validation split.
for want in "peaks" "CPU 40 epochs" "model loss" "last epoch" "validation"; do
  grep -q "^title: .*$want" "$work/loss.out" || { echo "FAIL: loss plot title lacks \"$want\""; exit 1; }
done
# --help is each script's docstring, not the shell launcher line that starts the file.
for s in plot_loss plot_surface plot_crossover; do
  scripts/plot/$s.py --help >"$work/help.txt"
  grep -q "^$s.py — " "$work/help.txt" || { echo "FAIL: $s.py --help does not show its docstring"; exit 1; }
  if grep -q "exec python3" "$work/help.txt"; then echo "FAIL: $s.py --help shows the launcher line"; exit 1; fi
done
# The PyTorch peer has the same launcher line (its --help needs no torch).
scripts/bench/torch_peer.py --help >"$work/help.txt"
grep -q "^torch_peer.py — " "$work/help.txt" || { echo "FAIL: torch_peer.py --help does not show its docstring"; exit 1; }
scripts/plot/plot_surface.py "$work/run" -o "$work/surface.png"
scripts/plot/plot_crossover.py "$work/bench.json" -o "$work/crossover.png"
# A CPU and GPU bench (GPU times invented from the CPU's, halved at the largest size) so
# the crossover marker is drawn too.
"$py" - "$work/bench.json" "$work/both.json" <<'PY'
import json, sys, copy
b = json.load(open(sys.argv[1]))
gpu = []
for r in b["results"]:
    g = copy.deepcopy(r)
    g["device"], g["backend"] = "gpu", "synthetic"
    f = 4.0 if r["samples"] < 64 else 0.5
    for k in ("median", "min", "max"):
        g[k] = r[k] * f
    gpu.append(g)
b["results"] += gpu
b["crossover"] = {"found": True, "message": "synthetic", "interpolated_samples": 32.0,
                  "gpu_faster_from": {"samples": 64}}
b["context"]["prices"] = {"cpu": 0.2, "gpu": 1.0, "currency": "EUR", "per": "hour"}
b["cost_crossover"] = {"found": True, "message": "synthetic cost", "interpolated_samples": None,
                       "gpu_cheaper_from": {"samples": 256}}
json.dump(b, open(sys.argv[2], "w"))
PY
scripts/plot/plot_crossover.py "$work/both.json" -o "$work/both.png"

for f in loss surface crossover both; do
  png="$work/$f.png"
  [ -s "$png" ] || { echo "FAIL: $png missing or empty"; exit 1; }
  magic=$(head -c 8 "$png" | od -An -c | tr -d ' ')
  [ "$magic" = '211PNG\r\n032\n' ] || { echo "FAIL: $png is not a PNG ($magic)"; exit 1; }
  echo "ok: $f.png ($(wc -c <"$png") bytes)"
done
# A run without surface files is refused with exit 2, not an empty plot.
rc=0
scripts/plot/plot_surface.py "$work" -o "$work/none.png" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || { echo "FAIL: plot_surface.py on a folder without surfaces gave exit $rc, expected 2"; exit 1; }
[ ! -e "$work/none.png" ] || { echo "FAIL: none.png written"; exit 1; }
echo "all plot scripts ok"
