#!/usr/bin/env bash
# gpusim-check.sh — GPU correctness on GPGPU-Sim, for machines without a GPU (docs/GPU.md).
#
# Needs the simulator's tools beside the repository (../shared/tools/gpgpu-sim, or
# GPGPUSIM_TOOLS=DIR); where they are absent it says so and exits 0, having checked nothing.
# Otherwise it
#   1. builds the simulator into a cache (NNTRAIN_GPGPUSIM_PREFIX, default
#      ~/.cache/nntrain/gpgpusim; build-gpgpusim.sh returns at once when it is built already),
#   2. builds nntrain, nntrain_gpu_tests and nntrain_grid_barrier for it in build-sim/
#      (BUILD_DIR=...): PTX for compute_75 only and the shared CUDA runtime (which the
#      simulator replaces), Release,
#   3. runs the simulator's per-instruction micro tests (run-microtests.sh),
#   4. runs every [gpu] test case that does not need cuBLAS, chosen by tag ("[gpu]~[cublas]"),
#      several cases to a simulator process (CASE_BATCHES processes, default 5 per job: each
#      process pays 12-17 s of start-up reading the PTX), balanced by each case's time in the
#      last run (CASE_TIMES, beside the cache; listing order round-robin without it), each
#      case's result and time read from Catch2's XML report of its batch,
#   5. trains small configs with `nntrain train --device both --gpu-path fused` and `resident`
#      (full batch and mini-batch with shuffle, ReLU and tanh, 400 samples) and compares the GPU's loss curve
#      with the CPU reference backend's over the first 20 epochs (<= 1e-4 relative), and
#      checks that nntrain says the device is simulated (info, console, summary.json, bench),
#   6. runs bench/grid_barrier.cu's three loops at 2, 5 and 40 blocks (its exchange checked
#      exactly; on the simulator it prints no time), and the stamped grid
#      (NNTRAIN_RESIDENT_STAMPS) with scripts/gpu/stamps_summary.py on its file.
# Steps 3-6 run as parallel jobs (JOBS, default nproc), each simulator process in a folder of
# its own (GPGPU-Sim writes fixed-name scratch files where it runs).
# Prints one line per check, a closing "N passed, M failed" line, and exits 1 on any failure.
# Logs: build-sim/gpusim-logs/ (batch-K.log and batch-K.xml for the [gpu] cases). Env: CMAKE_ARGS
# (extra cmake arguments, e.g. a compiler launcher), JOBS, CASE_BATCHES, CASE_TIMES.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS=${GPGPUSIM_TOOLS:-$ROOT/../shared/tools/gpgpu-sim}
if [ ! -f "$TOOLS/build-gpgpusim.sh" ] || [ ! -f "$TOOLS/microtests/run-microtests.sh" ]; then
  echo "gpusim-check: GPGPU-Sim's tools are absent ($TOOLS; set GPGPUSIM_TOOLS=DIR to point at them):"
  echo "gpusim-check: nothing was checked, no GPU code ran."
  exit 0
fi
TOOLS=$(cd "$TOOLS" && pwd)
PREFIX=${NNTRAIN_GPGPUSIM_PREFIX:-$HOME/.cache/nntrain/gpgpusim}
BUILD=${BUILD_DIR:-$ROOT/build-sim}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
LOGS=$BUILD/gpusim-logs
RUN=$BUILD/simrun
JOBS=${JOBS:-$(nproc)}
# "seconds<TAB>name" per [gpu] case from the last run, beside the simulator's cache (a CI run
# starts from a clean clone, the simulator cached): only the batches' balance depends on it.
CASE_TIMES=${CASE_TIMES:-$PREFIX.case-seconds.tsv}
EPOCHS=20
RTOL=1e-4
export PATH="/usr/local/cuda/bin:$PATH"

PASSED=0
FAILED=0
T0=$(date +%s)
ok() { PASSED=$((PASSED + 1)); echo "ok    $*"; }
bad() { FAILED=$((FAILED + 1)); echo "FAIL  $*"; }
elapsed() { echo "$(($(date +%s) - T0)) s"; }
finish() {
  echo "gpusim-check: done in $(elapsed) (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" = 0 ]
  exit
}
rm -rf "$LOGS" "$RUN" && mkdir -p "$LOGS" "$RUN"

# --- 1. the simulator (cached) ----------------------------------------------------------
echo "== GPGPU-Sim into $PREFIX (tools: $TOOLS)"
mkdir -p "$(dirname "$PREFIX")"
# One build at a time into a prefix: build-gpgpusim.sh deletes and re-creates its tree.
LOCK=()
command -v flock >/dev/null && LOCK=(flock "$PREFIX.lock")
if ! "${LOCK[@]}" "$TOOLS/build-gpgpusim.sh" "$PREFIX" >"$LOGS/simulator-build.log" 2>&1 ||
  [ ! -f "$PREFIX/env.sh" ]; then
  tail -20 "$LOGS/simulator-build.log"
  bad "simulator build (log: $LOGS/simulator-build.log)"
  finish
fi
ok "simulator: $(tail -1 "$LOGS/simulator-build.log" | cut -c1-90) [$(elapsed)]"

# --- 2. nntrain for the simulator --------------------------------------------------------
echo "== nntrain for the simulator in $BUILD"
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
CUDART_SO=$(dirname "$(dirname "$(command -v nvcc)")")/lib64/libcudart.so
# C++ and CUDA through ccache where installed, paths relative to the tree (as
# scripts/build.sh): the units build/ compiled with the same flags are hits, and so are the
# CUDA units on a machine that ran this before (NNTRAIN_CCACHE=0: no ccache).
LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER= -DCMAKE_CUDA_COMPILER_LAUNCHER=)
if [ "${NNTRAIN_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$ROOT CCACHE_NOHASHDIR=1
fi
# shellcheck disable=SC2086  # CMAKE_ARGS is a list of arguments
if ! cmake -S "$ROOT" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=75-virtual \
  -DCMAKE_CUDA_RUNTIME_LIBRARY=Shared -DCUDA_cudart_static_LIBRARY="$CUDART_SO" "${LAUNCHER[@]}" ${CMAKE_ARGS:-} \
  >"$LOGS/configure.log" 2>&1; then
  tail -20 "$LOGS/configure.log"
  bad "configure $BUILD (log: $LOGS/configure.log)"
  finish
fi
if ! grep -q "CUDA backend ON" "$LOGS/configure.log"; then
  bad "configure $BUILD: no CUDA backend (is nvcc installed?), see $LOGS/configure.log"
  finish
fi
if ! nice cmake --build "$BUILD" --parallel "$JOBS" --target nntrain nntrain_gpu_tests nntrain_grid_barrier >"$LOGS/build.log" 2>&1; then
  grep -E "error|FAILED" "$LOGS/build.log" | head -20
  bad "build nntrain + nntrain_gpu_tests + nntrain_grid_barrier (log: $LOGS/build.log)"
  finish
fi
ok "build nntrain + nntrain_gpu_tests + nntrain_grid_barrier (compute_75 PTX, shared cudart) [$(elapsed)]"
NN=$BUILD/nntrain
GT=$BUILD/tests/nntrain_gpu_tests
# Listed before the simulator's environment is set: listing runs no GPU code.
mapfile -t CASES < <("$GT" --list-test-names-only "[gpu]~[cublas]" | sed -e 's/[[:space:]]*$//' -e '/^$/d')

set +u
# shellcheck disable=SC1091
source "$PREFIX/env.sh"  # the simulator's libcudart.so first on LD_LIBRARY_PATH
set -u

# --- jobs: each writes $LOGS/<id>.log and $LOGS/<id>.rc, and runs in $RUN/<id>/ -----------
job() {  # job ID CMD...
  local id=$1 t rc
  shift
  mkdir -p "$RUN/$id" && cp "$PREFIX"/simcfg/* "$RUN/$id"/
  t=$(date +%s)
  (cd "$RUN/$id" && "$@") >"$LOGS/$id.log" 2>&1
  rc=$?
  echo "$rc $(($(date +%s) - t))" >"$LOGS/$id.rc"
}
spawn() {  # spawn ID CMD...: run job in the background, at most $JOBS at a time
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  job "$@" &
}
result() { cat "$LOGS/$1.rc" 2>/dev/null || echo "255 0"; }  # "rc seconds"

# plan_batches N: reads the case names (one a line) and prints each one's batch, 1..N, by
# longest-first onto the least-loaded batch with the last run's times (cases it lacks count as
# its mean; without times all count alike: round-robin in listing order); batch 1 the longest.
plan_batches() {
  python3 - "$1" "$CASE_TIMES" 3<&0 <<'PY'
import os, sys
names = os.fdopen(3).read().splitlines()
cost = {}
try:
    for line in open(sys.argv[2]):
        secs, _, name = line.rstrip("\n").partition("\t")
        cost[name] = float(secs)
except (OSError, ValueError):
    cost = {}
known = [cost[n] for n in names if n in cost]
mean = sum(known) / len(known) if known else 1.0
est = [cost.get(n, mean) for n in names]
nb = max(1, min(int(sys.argv[1]), len(names)))
load, of = [0.0] * nb, [0] * len(names)
for i in sorted(range(len(names)), key=lambda i: -est[i]):
    b = min(range(nb), key=lambda k: load[k])
    of[i], load[b] = b, load[b] + est[i]
rank = {b: r + 1 for r, b in enumerate(sorted(range(nb), key=lambda k: -load[k]))}
print("\n".join(str(rank[b]) for b in of))
PY
}
# case_results XML: one line per case the batch's Catch2 XML report finished, "ok|FAIL<TAB>seconds
# <TAB>name", then for a failed one up to 16 lines of what failed, each "why<TAB>-<TAB>name<TAB>text".
# A report cut short (the process died) still gives the cases finished before.
case_results() {
  python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
parser = ET.XMLPullParser(events=("end",))
try:
    parser.feed(open(sys.argv[1], "rb").read())
except (OSError, ET.ParseError):
    pass
def what_failed(case):
    for el in case.iter():
        where = "%s:%s" % (el.get("filename", "?"), el.get("line", "?"))
        if el.tag == "Expression" and el.get("success") == "false":
            orig = (el.findtext("Original") or "").strip()
            expd = (el.findtext("Expanded") or "").strip()
            yield "%s: %s(%s) with expansion: %s" % (where, el.get("type", ""), orig, expd)
        elif el.tag == "Info":  # the INFO/CAPTURE messages of the failure that follows
            yield "  %s" % (el.text or "").strip()
        elif el.tag in ("Exception", "FatalErrorCondition", "Failure"):
            yield "%s: %s %s" % (where, el.tag, (el.text or "").strip())
try:
    for _, el in parser.read_events():
        if el.tag != "TestCase" or el.find("OverallResult") is None:
            continue
        res, name = el.find("OverallResult"), el.get("name", "")
        ok = res.get("success") == "true" and res.get("skips", "0") == "0"  # Catch2 v3: a SKIP passes
        print("%s\t%.1f\t%s" % ("ok" if ok else "FAIL", float(res.get("durationInSeconds", "0")), name))
        for n, text in enumerate(() if ok else what_failed(el)):
            if n < 16:
                print("why\t-\t%s\t%s" % (name, " ".join(text.split())))
except ET.ParseError:
    pass
PY
}

# shellcheck disable=SC2317  # called through job()
train_run() {  # train_run LABEL PATH key=value...: one --device both run of GPU path PATH into ./out
  local path=$2
  shift 2
  "$NN" train --config "$ROOT/configs/small_data.json" --device both --gpu-path "$path" --backend reference \
    --epochs "$EPOCHS" --out out timing.warmup_epochs=2 train.log_every=10 "$@"
}

# shellcheck disable=SC2317  # called through job()
stamps_run() {  # the stamped grid (gpu-profile.sh's 0f) on 625 samples, 3 blocks, and its summary
  NNTRAIN_RESIDENT_STAMPS=stamps.csv NNTRAIN_RESIDENT_GRID_BLOCKS=3 "$NN" train --config \
    "$ROOT/configs/small_data.json" --device gpu --gpu-path resident --epochs 3 --out out timing.warmup_epochs=0 \
    data.grid=25 && python3 "$ROOT/scripts/gpu/stamps_summary.py" stamps.csv
}

# A job per train config, per [gpu] case and one for the micro tests, longest first.
# The first word is the GPU path.
declare -A TRAIN=(
  [relu-fullbatch]="fused model.activation=relu"
  [tanh-fullbatch]="fused model.activation=tanh"
  [relu-minibatch150-shuffle]="fused model.activation=relu train.batch_size=150 train.shuffle=true"
  [tanh-minibatch128-shuffle]="fused model.activation=tanh train.batch_size=128 train.shuffle=true"
  [resident-relu-fullbatch]="resident model.activation=relu"
  [resident-tanh-fullbatch]="resident model.activation=tanh"
  [resident-relu-minibatch150-shuffle]="resident model.activation=relu train.batch_size=150 train.shuffle=true"
  [resident-tanh-minibatch128-shuffle-sgd]="resident model.activation=tanh train.batch_size=128 train.shuffle=true optimizer.type=sgd"
)
TRAIN_ORDER=(relu-fullbatch tanh-fullbatch relu-minibatch150-shuffle tanh-minibatch128-shuffle resident-relu-fullbatch
  resident-tanh-fullbatch resident-relu-minibatch150-shuffle resident-tanh-minibatch128-shuffle-sgd)
# The [gpu] cases in batches: BATCH_OF[i] is case i's, SPEC[b] its Catch2 test spec (names
# joined by ',', which is OR; a backslash makes , [ ] * ~ and \ in a name literal).
BATCH_OF=()
[ ${#CASES[@]} -gt 0 ] && mapfile -t BATCH_OF < <(printf '%s\n' "${CASES[@]}" | plan_batches "${CASE_BATCHES:-$((5 * JOBS))}")
declare -A SPEC=() NCASES=()
for i in "${!CASES[@]}"; do
  b=${BATCH_OF[$i]}
  SPEC[$b]+=",$(printf '%s' "${CASES[$i]}" | sed -e 's/[][\\,*~]/\\&/g')"
  NCASES[$b]=$((${NCASES[$b]:-0} + 1))
done
echo "== simulating: micro tests, ${#CASES[@]} [gpu] cases in ${#SPEC[@]} processes, ${#TRAIN_ORDER[@]} train runs ($JOBS at a time)"
spawn microtests env WORK="$RUN/microtests/work" "$TOOLS/microtests/run-microtests.sh" "$PREFIX/env.sh" "$PREFIX/simcfg"
for label in "${TRAIN_ORDER[@]}"; do
  # shellcheck disable=SC2086  # the overrides are words
  spawn "train-$label" train_run "$label" ${TRAIN[$label]}
done
for ((b = 1; b <= ${#SPEC[@]}; b++)); do  # the longest first
  spawn "batch-$b" "$GT" -r xml -d yes -o "$LOGS/batch-$b.xml" "${SPEC[$b]#,}"
done
job info "$NN" info
job bench "$NN" bench --config "$ROOT/configs/small_data.json" --devices gpu --reps 1 train.epochs=1
# The barrier bench of gpu-profile.sh (0a) runs its three loops and checks its exchange.
job barrier "$BUILD/nntrain_grid_barrier" --blocks 2,5,40 --iters 3 --reps 1
job stamps stamps_run
wait

# --- 3. PTX micro tests ------------------------------------------------------------------
echo "== PTX micro tests (each instruction against the PTX ISA's definition)"
read -r rc secs < <(result microtests)
mt_pass=$(grep -c '^PASS ' "$LOGS/microtests.log")
mt_fail=$(grep -c '^FAIL ' "$LOGS/microtests.log")
grep -E '^FAIL |^  >> ' "$LOGS/microtests.log" | head -40
if [ "$rc" = 0 ] && [ "$mt_fail" = 0 ] && [ "$mt_pass" -gt 0 ]; then
  ok "micro tests: $mt_pass/$((mt_pass + mt_fail)) (${secs} s)"
else
  bad "micro tests: $mt_pass/$((mt_pass + mt_fail)) passed, runner rc $rc (log: $LOGS/microtests.log)"
fi

# --- 4. [gpu] test cases without cuBLAS ----------------------------------------------------
echo "== [gpu] test cases without cuBLAS (tag filter [gpu]~[cublas])"
[ ${#CASES[@]} -eq 0 ] && bad "[gpu] cases: none listed by $GT"
# Each batch's results: STATUS[name] ok or FAIL, SECS[name], WHY[name] what failed.
declare -A STATUS=() SECS=() WHY=() ONSIM=() BFAILED=() BDIED=()
for ((b = 1; b <= ${#SPEC[@]}; b++)); do
  grep -q '^GPU: GPGPU-Sim' "$LOGS/batch-$b.log" 2>/dev/null && ONSIM[$b]=1
  while IFS=$'\t' read -r st secs name text; do
    if [ "$st" = why ]; then WHY[$name]+="      $text"$'\n'; else STATUS[$name]=$st SECS[$name]=$secs; fi
  done < <(case_results "$LOGS/batch-$b.xml")
done
for i in "${!CASES[@]}"; do
  name=${CASES[$i]} b=${BATCH_OF[$i]}
  log=$LOGS/batch-$b.log
  read -r rc secs < <(result "batch-$b")
  # It must have run on the simulator, and this case must have passed in its batch's report.
  if [ -n "${ONSIM[$b]:-}" ] && [ "${STATUS[$name]:-}" = ok ]; then
    ok "[gpu] $name (${SECS[$name]} s)"
    continue
  fi
  BFAILED[$b]=1
  if [ -z "${ONSIM[$b]:-}" ]; then
    BDIED[$b]=1
    bad "[gpu] $name (batch-$b, rc $rc: not run on the simulator, log: $log)"
  elif [ -n "${STATUS[$name]:-}" ]; then
    printf '%s' "${WHY[$name]:-}"
    bad "[gpu] $name (${SECS[$name]} s, batch-$b rc $rc, log: $LOGS/batch-$b.xml, $log)"
  else
    BDIED[$b]=1
    bad "[gpu] $name (no result: batch-$b rc $rc, ${secs} s, died or never ran it; log: $log)"
  fi
done
for ((b = 1; b <= ${#SPEC[@]}; b++)); do
  read -r rc secs < <(result "batch-$b")
  if [ -n "${BDIED[$b]:-}" ]; then  # why it died, if it said (not the simulator's option lines)
    grep -E -i 'skipped:|terminate|what\(\)|error|abort|assert|fault|signal' "$LOGS/batch-$b.log" | grep -v '^-' |
      tail -5 | sed 's/^/      /'
  elif [ -z "${BFAILED[$b]:-}" ] && [ "$rc" != 0 ]; then  # its cases passed, yet the process failed (on the way out?)
    bad "[gpu] batch-$b: its ${NCASES[$b]} cases passed but it exited $rc (log: $LOGS/batch-$b.log)"
  fi
  echo "      batch-$b: ${NCASES[$b]} cases, ${secs} s, rc $rc"
done
# Their times balance the next run's batches.
for name in "${CASES[@]}"; do
  if [ -n "${SECS[$name]:-}" ]; then printf '%s\t%s\n' "${SECS[$name]}" "$name"; fi
done >"$CASE_TIMES.$$" && mv "$CASE_TIMES.$$" "$CASE_TIMES"  # whole, if two runs share it

# --- 5. nntrain on the simulated GPU ---------------------------------------------------------
echo "== nntrain on the simulated GPU"
if grep -q "SIMULATED" "$LOGS/info.log"; then ok "nntrain info marks the GPU SIMULATED"
else bad "nntrain info does not mark the GPU as simulated (log: $LOGS/info.log)"; fi
read -r rc secs < <(result bench)
if [ "$rc" = 2 ] && grep -q "nntrain: error: .*simulator" "$LOGS/bench.log"; then
  ok "nntrain bench refuses to time the simulated GPU (exit 2)"
else
  bad "nntrain bench on the simulated GPU: exit $rc, expected 2 naming the simulator (log: $LOGS/bench.log)"
fi
read -r rc secs < <(result barrier)
if [ "$rc" = 0 ] && [ "$(grep -cE '^ +[0-9]+ +[0-9]+ +ran +ran +ran, exact$' "$LOGS/barrier.log")" = 3 ] &&
  grep -q 'no time is printed' "$LOGS/barrier.log"; then
  ok "nntrain_grid_barrier: grid.sync, the flag barrier and the grid's exchange at 2, 5 and 40 blocks, exact, no time shown"
else
  bad "nntrain_grid_barrier on the simulator: exit $rc (log: $LOGS/barrier.log)"
fi
read -r rc secs < <(result stamps)
if [ "$rc" = 0 ] && grep -q '^resident grid stamps: 3 blocks, 4 steps each' "$LOGS/stamps.log" &&
  grep -q 'cycles only' "$LOGS/stamps.log"; then
  ok "NNTRAIN_RESIDENT_STAMPS: the stamped grid's file and its summary (scripts/gpu/stamps_summary.py)"
else
  bad "NNTRAIN_RESIDENT_STAMPS on the simulator: exit $rc (log: $LOGS/stamps.log)"
fi

# compare_curves METRICS_CSV: the first $EPOCHS gpu losses against the cpu's, relative.
compare_curves() { awk -F, -v n="$EPOCHS" -v tol="$RTOL" -f "$ROOT/scripts/compare_curves.awk" "$1"; }
for label in "${TRAIN_ORDER[@]}"; do
  id=train-$label
  out=$RUN/$id/out
  log=$LOGS/$id.log
  read -r rc secs < <(result "$id")
  if [ "$rc" != 0 ] || [ ! -f "$out/metrics.csv" ]; then
    grep -E "error" "$log" | grep -v '^GPGPU-Sim' | tail -5 | sed 's/^/      /'
    bad "train $label: exit $rc (log: $log)"
    continue
  fi
  if diff=$(compare_curves "$out/metrics.csv"); then ok "train $label: GPU vs CPU reference, $diff (${secs} s)"
  else bad "train $label: GPU vs CPU reference, $diff; tolerance $RTOL (${secs} s, $out/metrics.csv)"; fi
  if grep -q '"simulated": true' "$out/summary.json" && grep -q "SIMULATED" "$log"; then
    ok "train $label: the console and summary.json mark the GPU simulated"
  else
    bad "train $label: the simulated GPU is not marked in the console or summary.json ($log, $out/summary.json)"
  fi
done

finish
