#!/usr/bin/env bash
# user-path.sh [NNTRAIN] — README's commands walked as a newcomer would, against a built
# binary (NNTRAIN, else build/nntrain; scripts/build.sh builds it when it is missing): the
# reference run, `--device both` (on a machine without a GPU too), a bench exported as
# Markdown, a 4-point sweep interrupted and resumed by the command it prints, predict on a
# CSV with its columns shuffled and an id column. Each step checks exit codes and the files
# written (not wording, which other work changes), and prints one line; the last line is
#   user-path: N of N steps ok
# Exit 0 when every step passed, 1 otherwise. CI runs it after scripts/test.sh (.ci/run);
# ~30 s on 2 loaded cores. USER_PATH_KEEP=1 keeps the scratch folder (its path is printed).
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=$(pwd)
BIN=${1:-build/nntrain}
if [[ ! -x $BIN ]]; then
  echo "user-path: $BIN not built: scripts/build.sh" >&2
  BUILD_DIR="$(dirname "$BIN")" scripts/build.sh >/dev/null || { echo "user-path: build failed" >&2; exit 1; }
fi
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
W=$(mktemp -d /tmp/nntrain-user-path.XXXXXX)
cleanup() { if [[ ${USER_PATH_KEEP:-0} == 1 ]]; then echo "user-path: kept $W" >&2; else rm -rf "$W"; fi; }
trap cleanup EXIT

steps=0 passed=0
# step NAME FUNCTION: runs it (in this shell: steps set variables later steps read); the
# function prints nothing on success and one reason on failure.
step() {
  local name=$1 why t=$SECONDS
  steps=$((steps + 1))
  if "$2" >"$W/why" 2>&1; then
    passed=$((passed + 1))
    echo "user-path: ok    $steps. $name ($((SECONDS - t)) s)"
  else
    why=$(tail -n 3 "$W/why" | tr '\n' ' ')
    echo "user-path: FAIL  $steps. $name: $why"
  fi
}
need_file() { [[ -s $1 ]] || { echo "missing or empty: ${1#"$W"/}"; return 1; }; }
# summary.json's top-level status (no jq on a fresh machine: the writer puts it on its own line).
status_of() { sed -n 's/^  "status": "\([a-z]*\)",*$/\1/p' "$1" | head -n 1; }
# How many runs summary.json holds (each run has its "device" line at the runs' depth).
runs_in() { grep -c '^      "device": ' "$1"; }

has_gpu=0
step_info() {
  "$BIN" info >"$W/info.txt" 2>&1 || { echo "nntrain info: exit $?"; return 1; }
  grep -Eq '^gpu +none' "$W/info.txt" || has_gpu=1
  return 0
}

# README, quick start: scripts/run-reference.sh (bootstrap, build, then this command).
step_reference() {
  local d="$W/ref" rc=0
  "$BIN" --config configs/peaks.json --device cpu --out "$d" >"$W/ref.out" 2>"$W/ref.err" || rc=$?
  [[ $rc == 0 ]] || { echo "exit $rc: $(tail -n 1 "$W/ref.err")"; return 1; }
  for f in config.resolved.json metrics.csv summary.json model.json; do need_file "$d/$f" || return 1; done
  [[ $(wc -l <"$d/metrics.csv") -ge 2001 ]] || { echo "metrics.csv has $(wc -l <"$d/metrics.csv") lines, not 2001"; return 1; }
  [[ $(status_of "$d/summary.json") == ok ]] || { echo "summary.json status $(status_of "$d/summary.json")"; return 1; }
}

# `--device both`: both halves with a GPU; without one either the CPU half with a warning
# (exit 0) or exit 3 with a hint and nothing written (issue 44 leaves the choice; bench below
# must make the same one).
both_class=""
step_both() {
  local d="$W/both" rc=0
  "$BIN" --config configs/peaks.json --device both --epochs 50 --out "$d" >/dev/null 2>"$W/both.err" || rc=$?
  if ((has_gpu)); then
    [[ $rc == 0 ]] || { echo "exit $rc with a GPU: $(tail -n 1 "$W/both.err")"; return 1; }
    [[ $(runs_in "$d/summary.json") == 2 ]] || { echo "summary.json does not hold two runs"; return 1; }
  elif [[ $rc == 0 ]]; then
    both_class=cpu-half
    need_file "$d/model.json" || return 1
    [[ $(runs_in "$d/summary.json") == 1 ]] || { echo "summary.json does not hold the CPU run alone"; return 1; }
    [[ -s $W/both.err ]] || { echo "no warning that the GPU half did not run"; return 1; }
  elif [[ $rc == 3 ]]; then
    both_class=exit-3
    [[ ! -e $d ]] || { echo "exit 3 but $d was written"; return 1; }
    grep -q -- '--device cpu' "$W/both.err" || { echo "exit 3 without the hint --device cpu"; return 1; }
  else
    echo "exit $rc without a GPU (expected 0 with the CPU half, or 3): $(tail -n 1 "$W/both.err")"
    return 1
  fi
}

# bench with its default devices and a Markdown export, small: two data sizes, 50 epochs.
step_bench() {
  local md="$W/bench.md" rc=0
  "$BIN" bench --config configs/peaks.json --reps 1 --warmup 0 --sweep data.grid=10,20 train.epochs=50 \
    --export-markdown "$md" >"$W/bench.out" 2>"$W/bench.err" || rc=$?
  if ((!has_gpu)) && [[ $both_class == exit-3 ]]; then
    [[ $rc == 3 && ! -e $md ]] || { echo "bench exit $rc where train --device both exited 3"; return 1; }
    return 0
  fi
  [[ $rc == 0 ]] || { echo "exit $rc: $(tail -n 1 "$W/bench.err")"; return 1; }
  need_file "$md" || return 1
  grep -q '^|' "$md" || { echo "bench.md holds no table"; return 1; }
}

# A 4-point sweep (SWEEP.md's example, smaller), Ctrl-C while its second point runs, then the
# command it prints to resume: exit 130 with points left, then exit 0 with all four ok.
step_sweep() {
  local d="$W/sweep" rc=0 pid resume
  set -m  # (a background job of its own: SIGINT reaches it, as Ctrl-C would)
  # 20,000 epochs: the wide points train ~1 s on a fast core (3,000: 0.17 s on a Zen 5), so the
  # interrupt lands mid-sweep with room to spare. `env --default-signal=INT`: SIGINT as Ctrl-C
  # delivers it to a terminal's job; a runner that starts this script as a background job
  # without job control passes SIGINT ignored, which nntrain keeps (as train does), and the
  # sweep would run to its end (two CI runs of f9c34c6/11b7cac launched so failed here).
  env --default-signal=INT "$BIN" sweep --config configs/peaks.json --epochs 20000 --threads 1 data.grid=20 \
    timing.warmup_epochs=0 \
    --grid optimizer.lr=0.003,0.01 --grid 'model.layers=[2,20,5,1],[2,64,64,1]' --out "$d" \
    >"$W/sweep.out" 2>"$W/sweep.err" &
  pid=$!
  set +m
  for _ in $(seq 3000); do [[ -e $d/points/001/sweep-run.json ]] && break; sleep 0.02; done
  kill -INT "$pid" 2>/dev/null
  wait "$pid" || rc=$?
  need_file "$d/results.csv" || return 1
  resume=$(sed -n 's/^.*to run them: //p' "$W/sweep.err" | tail -n 1)
  if [[ $rc == 0 ]]; then
    echo "finished before the interrupt (no resume to check)"
    return 1
  fi
  [[ $rc == 130 ]] || { echo "interrupted sweep: exit $rc, not 130: $(tail -n 1 "$W/sweep.err")"; return 1; }
  [[ -n $resume ]] || { echo "the interrupted sweep printed no command to resume"; return 1; }
  rc=0
  bash -c "$resume" >"$W/resume.out" 2>"$W/resume.err" || rc=$?
  [[ $rc == 0 ]] || { echo "resume ($resume): exit $rc: $(tail -n 1 "$W/resume.err")"; return 1; }
  [[ $(grep -c ',ok,' "$d/results.csv") == 4 ]] || { echo "results.csv does not hold 4 ok rows"; return 1; }
  for p in 000 001 002 003; do need_file "$d/points/$p/model.json" || return 1; done
}

# predict: the same rows with the columns shuffled and an id column first must give the same
# predictions, the id kept.
step_predict() {
  local m="$W/ref/model.json" rc=0
  need_file "$m" || return 1
  awk 'BEGIN { print "x1,x2"; for (i = 0; i < 25; ++i) printf "%.3f,%.3f\n", -3 + 0.25 * i, 2.5 - 0.2 * i }' >"$W/in.csv"
  awk -F, 'NR == 1 { print "id,x2,x1"; next } { printf "row%d,%s,%s\n", NR - 1, $2, $1 }' "$W/in.csv" >"$W/in-shuffled.csv"
  "$BIN" predict --model "$m" --input "$W/in.csv" --output "$W/pred.csv" 2>"$W/pred.err" || rc=$?
  [[ $rc == 0 ]] || { echo "predict: exit $rc: $(tail -n 1 "$W/pred.err")"; return 1; }
  "$BIN" predict --model "$m" --input "$W/in-shuffled.csv" --output "$W/pred-shuffled.csv" 2>"$W/pred.err" || rc=$?
  [[ $rc == 0 ]] || { echo "predict (shuffled, id): exit $rc: $(tail -n 1 "$W/pred.err")"; return 1; }
  [[ $(wc -l <"$W/pred-shuffled.csv") == 26 ]] || { echo "pred-shuffled.csv: not 25 rows and a header"; return 1; }
  # The prediction column (last) row by row, and the ids in their order.
  if ! diff <(awk -F, '{ print $NF }' "$W/pred.csv") <(awk -F, '{ print $NF }' "$W/pred-shuffled.csv") >/dev/null; then
    echo "the predictions differ when the columns are shuffled"
    return 1
  fi
  diff <(cut -d, -f1 "$W/in-shuffled.csv") <(cut -d, -f1 "$W/pred-shuffled.csv") >/dev/null ||
    { echo "the id column did not survive"; return 1; }
}

cd "$SRC" || exit 1
step "nntrain info" step_info
step "reference run (README quick start)" step_reference
step "--device both$( ((has_gpu)) || echo ' without a GPU')" step_both
step "bench --export-markdown" step_bench
step "4-point sweep, interrupted, resumed by the printed command" step_sweep
step "predict with shuffled columns and an id column" step_predict
echo "user-path: $passed of $steps steps ok"
((passed == steps))
