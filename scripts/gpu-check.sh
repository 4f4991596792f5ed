#!/usr/bin/env bash
# gpu-check.sh — run on the lent GPU machine (docs/DESIGN.md §10): unpack the carried build
# dependencies, build for sm_90, run every test including [gpu], run the reference
# experiment on cpu and gpu (both paths, and --device both), compute-sanitizer memcheck and
# racecheck on a short run, the PyTorch peer, and print a short table last.
#
# Here (with registries): scripts/fetch-gpu-deps.sh puts the .debs into .deps/debs.
# There: run with the device tool, carrying .deps:   scripts/gpu-check.sh
# Logs and JSON go to $OUT (the device tool brings them back), else to ./gpu-check-out.
# Env: ARCH (default 90), EPOCHS (default 2000), CPU_EPOCHS (the cpu and --device both runs;
# default EPOCHS: lower it if the CPU backend is slow), JOBS (default nproc).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUTDIR=${OUT:-$ROOT/gpu-check-out}
mkdir -p "$OUTDIR"
ARCH=${ARCH:-90}
EPOCHS=${EPOCHS:-2000}
CPU_EPOCHS=${CPU_EPOCHS:-$EPOCHS}
JOBS=${JOBS:-$(nproc)}
BUILD=$ROOT/build-gpu
# Outside .deps, which is carried: the unpacked OpenBLAS alone is ~100 MB, and a .deps/root
# left behind by a run here would push the next carry past the device tool's 64 MiB.
PREFIX=$ROOT/build-gpu-deps
declare -a ROWS=()
FAILED=0
row() { ROWS+=("$(printf '%-34s %s' "$1" "$2")"); }
step() {  # step NAME LOGFILE CMD... : runs CMD, logs it, records ok/FAILED(rc)
  local name=$1 log=$2; shift 2
  echo "== $name" >&2
  "$@" >"$OUTDIR/$log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ]; then row "$name" "ok"; else row "$name" "FAILED (rc $rc, see $log)"; FAILED=1; fi
  return $rc
}

# --- dependencies: dpkg -x into a prefix, never into / ---------------------------------
if compgen -G ".deps/debs/*.deb" >/dev/null; then
  mkdir -p "$PREFIX"
  for f in .deps/debs/*.deb; do dpkg -x "$f" "$PREFIX"; done
  # dpkg -x runs no maintainer scripts, so the update-alternatives links that put OpenBLAS at
  # lib/<arch>/libopenblas.so{,.0} are missing: without them CMake's find_library(openblas)
  # fails and the fast CPU backend silently runs without the carried OpenBLAS. Make them.
  MA=$PREFIX/usr/lib/x86_64-linux-gnu
  for so in libopenblas.so libopenblas.so.0; do
    [ -e "$MA/openblas-pthread/$so" ] && ln -sfn "openblas-pthread/$so" "$MA/$so"
  done
  export CMAKE_PREFIX_PATH="$PREFIX/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export LD_LIBRARY_PATH="$PREFIX/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  row "deps (.deps/debs)" "unpacked $(ls .deps/debs/*.deb | wc -l) packages"
else
  row "deps (.deps/debs)" "none carried: using the machine's own"
fi
export PATH="/usr/local/cuda/bin:$PATH"

{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv || true
  nvcc --version || true; } >"$OUTDIR/machine.txt" 2>&1

# --- build -----------------------------------------------------------------------------
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
step "configure (sm_$ARCH)" configure.log cmake -S . -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="$ARCH" || { printf '%s\n' "${ROWS[@]}"; exit 1; }
step "build" build.log cmake --build "$BUILD" -j "$JOBS" || { tail -40 "$OUTDIR/build.log"; printf '%s\n' "${ROWS[@]}"; exit 1; }
NN=$BUILD/nntrain
"$NN" info >"$OUTDIR/info.txt" 2>&1

# --- tests -----------------------------------------------------------------------------
step "ctest (all, incl. [gpu])" ctest.log ctest --test-dir "$BUILD" --output-on-failure
# Only the [gpu] tests' own lines (ctest prints each skip twice: in the run and in the list
# at the end; other tests, e.g. the plot test without matplotlib, may skip legitimately).
SKIPPED=$(grep -c "Test *#[0-9]*: gpu:.*Skipped" "$OUTDIR/ctest.log" || true)
[ "$SKIPPED" != "0" ] && { row "  [gpu] tests skipped" "$SKIPPED (a GPU machine must skip none)"; FAILED=1; }
step "[gpu] tests, full output" gpu_tests.log "$BUILD/tests/nntrain_gpu_tests" --durations yes

# --- reference experiment --------------------------------------------------------------
run_ref() {  # run_ref LABEL EPOCHS ARGS...
  local label=$1 n=$2; shift 2
  step "reference: $label ($n epochs)" "ref_$label.log" "$NN" --config configs/peaks.json --epochs "$n" --json \
    --quiet --out "$OUTDIR/run_$label" "$@"
  cp "$OUTDIR/run_$label/summary.json" "$OUTDIR/summary_$label.json" 2>/dev/null || true
}
run_ref cpu "$CPU_EPOCHS" --device cpu
run_ref gpu_fused "$EPOCHS" --device gpu --gpu-path fused
run_ref gpu_fused_v1 "$EPOCHS" --device gpu --gpu-path fused-v1
# v2's exact-shape kernel with 2 threads per sample instead of 4 (docs/GPU.md, cost model)
export NNTRAIN_FUSED_V2_THREADS=2
run_ref gpu_fused_t2 "$EPOCHS" --device gpu --gpu-path fused
unset NNTRAIN_FUSED_V2_THREADS
run_ref gpu_cublas "$EPOCHS" --device gpu --gpu-path cublas
run_ref both "$CPU_EPOCHS" --device both
run_ref gpu_minibatch "$EPOCHS" --device gpu --batch-size 1000

# --- compute-sanitizer on short runs ---------------------------------------------------
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for path in fused cublas; do
  for tool in memcheck racecheck synccheck; do
    step "sanitizer $tool ($path)" "san_${tool}_$path.log" "$SAN" --tool "$tool" --error-exitcode 9 \
      "$NN" --config configs/peaks.json --device gpu --gpu-path "$path" --epochs 20 --quiet \
      --out "$OUTDIR/san_${tool}_$path" timing.warmup_epochs=2 data.grid=40 train.log_every=10
  done
done
step "sanitizer memcheck (mini-batch)" san_memcheck_minibatch.log "$SAN" --tool memcheck --error-exitcode 9 \
  "$NN" --config configs/peaks.json --device gpu --epochs 3 --batch-size 333 --quiet \
  --out "$OUTDIR/san_memcheck_minibatch" timing.warmup_epochs=1 data.grid=40

# --- PyTorch peer ----------------------------------------------------------------------
step "torch peer (eager, graphed)" torch_peer.log python3 scripts/torch_peer_gpu.py --epochs "$EPOCHS" \
  --json "$OUTDIR/torch_peer.json"

# --- table -----------------------------------------------------------------------------
python3 - "$OUTDIR" "$EPOCHS" >"$OUTDIR/table.txt" 2>&1 <<'PY'
import json, os, sys
out, epochs = sys.argv[1], int(sys.argv[2])
def run(label, device):
    try:
        s = json.load(open(os.path.join(out, f"summary_{label}.json")))
        return next(r for r in s["runs"] if r["device"] == device)
    except Exception:
        return None
rows = [("cpu", "cpu", "cpu"), ("gpu fused", "gpu_fused", "gpu"), ("gpu fused-v1", "gpu_fused_v1", "gpu"),
        ("gpu fused, 2 thr/smp", "gpu_fused_t2", "gpu"), ("gpu cublas", "gpu_cublas", "gpu"),
        ("both: cpu", "both", "cpu"), ("both: gpu", "both", "gpu"), ("gpu mini-batch 1000", "gpu_minibatch", "gpu")]
print(f"{'run':<22}{'train s':>11}{'us/epoch':>11}{'setup s':>10}{'final loss':>13}")
t = {}
for name, label, dev in rows:
    r = run(label, dev)
    if not r:
        print(f"{name:<22}{'-':>11}"); continue
    t[name] = r["train_seconds"]
    print(f"{name:<22}{r['train_seconds']:>11.5f}{1e6 * r['train_seconds'] / max(1, r['epochs']):>11.2f}"
          f"{r.get('setup_seconds', 0):>10.3f}{r['final_loss']:>13.6g}")
try:
    p = json.load(open(os.path.join(out, "torch_peer.json")))
    print(f"{'torch eager':<22}{p['eager_seconds']:>11.5f}{1e6 * p['eager_seconds'] / epochs:>11.2f}")
    print(f"{'torch cuda graph':<22}{p['graphed_seconds']:>11.5f}{1e6 * p['graphed_seconds'] / epochs:>11.2f}")
    best = min(t[k] for k in ("gpu fused", "gpu fused, 2 thr/smp", "gpu cublas") if t.get(k))
    print(f"\nbest nntrain GPU {best * 1e3:.2f} ms for {epochs} epochs (target <= 10 ms on an H100)")
    print(f"vs torch eager:  {p['eager_seconds'] / best:.1f}x (target >= 20x)")
    print(f"vs torch graphs: {p['graphed_seconds'] / best:.1f}x (target >= 3x)")
except Exception as e:
    print(f"(no torch comparison: {e})")
for label in ("gpu_fused", "gpu_fused_t2"):  # the plan: threads per sample, registers per thread
    r = run(label, "gpu")
    if r:
        print(f"{label}: {r.get('details', '')}")
b_cpu, b_gpu = run("both", "cpu"), run("both", "gpu")
if b_cpu and b_gpu and b_gpu["train_seconds"] > 0:
    print(f"--device both: gpu {b_cpu['train_seconds'] / b_gpu['train_seconds']:.1f}x faster than cpu"
          f" ({b_cpu['epochs']} epochs)")
PY

echo
echo "nntrain gpu-check $(git rev-parse --short HEAD 2>/dev/null || echo "?"), $(date -u +%Y-%m-%d)"
grep -E "^(gpu|driver|runtime|cublas|archs) " "$OUTDIR/info.txt"
printf '%s\n' "${ROWS[@]}"
echo
cat "$OUTDIR/table.txt"
exit $FAILED
