#!/usr/bin/env bash
# gpusim-check.sh — GPU correctness on GPGPU-Sim, for machines without a GPU (docs/GPU.md).
#
# Needs the simulator's tools beside the repository (../shared/tools/gpgpu-sim, or
# GPGPUSIM_TOOLS=DIR); where they are absent it says so and exits 0, having checked nothing.
# Otherwise it
#   1. builds the simulator into a cache (NNTRAIN_GPGPUSIM_PREFIX, default
#      ~/.cache/nntrain/gpgpusim; build-gpgpusim.sh returns at once when it is built already),
#   2. builds nntrain and nntrain_gpu_tests for it in build-sim/ (BUILD_DIR=...): PTX for
#      compute_75 only and the shared CUDA runtime (which the simulator replaces), Release,
#   3. runs the simulator's per-instruction micro tests (run-microtests.sh),
#   4. runs every [gpu] test case that does not need cuBLAS, chosen by tag ("[gpu]~[cublas]"),
#      each in its own simulator process,
#   5. trains small configs with `nntrain train --device both --gpu-path fused` and `resident`
#      (full batch and mini-batch with shuffle, ReLU and tanh, 400 samples) and compares the GPU's loss curve
#      with the CPU reference backend's over the first 20 epochs (<= 1e-4 relative), and
#      checks that nntrain says the device is simulated (info, console, summary.json, bench).
# Steps 3-5 run as parallel jobs (JOBS, default nproc), each simulator process in a folder of
# its own (GPGPU-Sim writes fixed-name scratch files where it runs).
# Prints one line per check, a closing "N passed, M failed" line, and exits 1 on any failure.
# Logs: build-sim/gpusim-logs/. Env: CMAKE_ARGS (extra cmake arguments, e.g. a compiler
# launcher), JOBS.
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
if ! nice cmake --build "$BUILD" --parallel "$JOBS" --target nntrain nntrain_gpu_tests >"$LOGS/build.log" 2>&1; then
  grep -E "error|FAILED" "$LOGS/build.log" | head -20
  bad "build nntrain + nntrain_gpu_tests (log: $LOGS/build.log)"
  finish
fi
ok "build nntrain + nntrain_gpu_tests (compute_75 PTX, shared cudart) [$(elapsed)]"
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

# shellcheck disable=SC2317  # called through job()
train_run() {  # train_run LABEL PATH key=value...: one --device both run of GPU path PATH into ./out
  local path=$2
  shift 2
  "$NN" train --config "$ROOT/configs/small_data.json" --device both --gpu-path "$path" --backend reference \
    --epochs "$EPOCHS" --out out timing.warmup_epochs=2 train.log_every=10 "$@"
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
echo "== simulating: micro tests, ${#CASES[@]} [gpu] cases, ${#TRAIN_ORDER[@]} train runs ($JOBS at a time)"
spawn microtests env WORK="$RUN/microtests/work" "$TOOLS/microtests/run-microtests.sh" "$PREFIX/env.sh" "$PREFIX/simcfg"
for label in "${TRAIN_ORDER[@]}"; do
  # shellcheck disable=SC2086  # the overrides are words
  spawn "train-$label" train_run "$label" ${TRAIN[$label]}
done
for i in "${!CASES[@]}"; do
  # Catch2 test specs: a backslash makes , [ ] * ~ and \ literal.
  spawn "case-$((i + 1))" "$GT" "$(printf '%s' "${CASES[$i]}" | sed -e 's/[][\\,*~]/\\&/g')"
done
job info "$NN" info
job bench "$NN" bench --config "$ROOT/configs/small_data.json" --devices gpu --reps 1 train.epochs=1
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
for i in "${!CASES[@]}"; do
  id=case-$((i + 1))
  log=$LOGS/$id.log
  read -r rc secs < <(result "$id")
  # It must have run on the simulator, and run exactly this one case.
  if [ "$rc" = 0 ] && grep -q '^GPU: GPGPU-Sim' "$log" && grep -q 'All tests passed (.* in 1 test case)' "$log"; then
    ok "[gpu] ${CASES[$i]} (${secs} s)"
  else
    grep -E -A3 'FAILED:|skipped:' "$log" | grep -v '^GPGPU-Sim' | head -16 | sed 's/^/      /'
    bad "[gpu] ${CASES[$i]} (rc $rc, ${secs} s, log: $log)"
  fi
done

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
