#!/usr/bin/env bash
# crossover.sh — is the GPU worth it? Runs `nntrain bench --sweep data.grid=...` on CPU and
# GPU (CPU only where no GPU can be used: bench says so) and draws the crossover plot.
#
#   scripts/bench/crossover.sh [OUT_PREFIX]      (default: runs/crossover/bench)
#
# Writes OUT_PREFIX.json (bench export, docs/BENCH.md), OUT_PREFIX.md and OUT_PREFIX.png.
# Environment: NNTRAIN (default build/nntrain), CONFIG (configs/peaks.json), GRIDS
# ("10,20,50,100,200,500"), EPOCHS (2000), REPS (3); extra arguments after OUT_PREFIX go to
# nntrain bench (e.g. --backend fast, train.epochs=500).
set -euo pipefail
cd "$(dirname "$0")/../.."
NNTRAIN=${NNTRAIN:-build/nntrain}
CONFIG=${CONFIG:-configs/peaks.json}
GRIDS=${GRIDS:-10,20,50,100,200,500}
EPOCHS=${EPOCHS:-2000}
REPS=${REPS:-3}
prefix=${1:-runs/crossover/bench}
shift || true
[[ -x $NNTRAIN ]] || { echo "crossover.sh: $NNTRAIN not found; build first (scripts/build.sh)" >&2; exit 1; }
mkdir -p "$(dirname "$prefix")"

bench() {
  "$NNTRAIN" bench --config "$CONFIG" --device "$1" --reps "$REPS" --sweep "data.grid=$GRIDS" \
    --export-json "$prefix.json" --export-markdown "$prefix.md" "train.epochs=$EPOCHS" "${@:2}"
}

# Without a usable GPU, bench runs the CPU half after its one-line warning and exits 0 (the
# `both` rule): the export then has one device and no crossover.
rc=0
bench cpu,gpu "$@" || rc=$?
[[ $rc == 0 ]] || { echo "crossover.sh: nntrain bench exited $rc" >&2; exit "$rc"; }

plot_rc=0
scripts/plot/plot_crossover.py "$prefix.json" -o "$prefix.png" || plot_rc=$?
if [[ $plot_rc == 77 ]]; then
  echo "crossover.sh: no plot (matplotlib missing); the numbers are in $prefix.json and $prefix.md" >&2
elif [[ $plot_rc != 0 ]]; then
  exit "$plot_rc"
fi
