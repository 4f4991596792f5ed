#!/usr/bin/env bash
# gpu-check.sh — run on a lent GPU machine (docs/GPU.md, "Running it on a GPU machine"): every
# [gpu] test, the reference experiment on each GPU path and on the CPU, the GPU loss curves
# against the CPU reference on the 40,000 samples, compute-sanitizer on short runs, the
# PyTorch peers (reference net and wide net), the wide net in nntrain, the chunk size's effect
# on the timing, and the CPU-vs-GPU crossover bench with time to target; a short table last.
#
# Two ways to get the binaries:
#   prebuilt (the device time is short): here, scripts/gpu/gpu-pack.sh builds for sm_90 and puts
#     nntrain, nntrain_gpu_tests and the one library the device lacks into .devrun/;
#     there, with the device tool carrying .devrun:  NNTRAIN_PREBUILT=.devrun scripts/gpu/gpu-check.sh
#   built there: scripts/gpu/fetch-gpu-deps.sh here (.debs into .deps/debs), carry .deps, and
#     scripts/gpu/gpu-check.sh builds for sm_$ARCH and also runs the whole ctest suite.
#
# Everything runs under a time budget (BUDGET seconds, default 420): a step never starts with
# under 15 s left, and none runs past the budget (each is also capped by STEP_MAX, 150 s), so
# the logs come back even when the device tool's limit is near. The logs go to a scratch folder
# and are packed into $OUT/gpu-check.tgz (the device tool brings back at most 8 files), with
# table.txt and the bench exports beside it; without $OUT, into ./gpu-check-out.
# Env: ARCH (90), EPOCHS (2000), JOBS (nproc), BUDGET, STEP_MAX, NNTRAIN_PREBUILT.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
FINAL=${OUT:-$ROOT/gpu-check-out}
mkdir -p "$FINAL"
OUTDIR=$(mktemp -d /tmp/gpu-check.XXXXXX)
ARCH=${ARCH:-90}
EPOCHS=${EPOCHS:-2000}
JOBS=${JOBS:-$(nproc)}
BUDGET=${BUDGET:-420}
STEP_MAX=${STEP_MAX:-150}
T0=$SECONDS
declare -a ROWS=()
FAILED=0
row() { ROWS+=("$(printf '%-46s %s' "$1" "$2")"); }
left() { echo $((BUDGET - (SECONDS - T0))); }
step() {  # step NAME LOGFILE CMD... : runs CMD under the budget, logs it, records ok/FAILED(rc)
  local name=$1 log=$2; shift 2
  local l; l=$(left)
  if ((l < 15)); then row "$name" "NOT RUN (time budget of ${BUDGET} s spent)"; FAILED=1; return 125; fi
  local cap=$((l < STEP_MAX ? l : STEP_MAX))
  echo "== $name ($((SECONDS - T0)) s)" >&2
  local t=$SECONDS
  timeout -k 5 "$cap" "$@" >"$OUTDIR/$log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ]; then row "$name" "ok ($((SECONDS - t)) s)"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then row "$name" "TIMED OUT after ${cap} s (see $log)"; FAILED=1
  else row "$name" "FAILED (rc $rc, see $log)"; FAILED=1; fi
  return $rc
}
finish() {
  printf '%s\n' "${ROWS[@]}" >"$OUTDIR/rows.txt"
  cp "$OUTDIR"/table.txt "$OUTDIR"/crossover.md "$OUTDIR"/crossover.json "$FINAL"/ 2>/dev/null
  tar -C "$OUTDIR" -czf "$FINAL/gpu-check.tgz" . 2>/dev/null
  echo
  echo "nntrain gpu-check $(git rev-parse --short HEAD 2>/dev/null || echo "?"), $(date -u '+%Y-%m-%d %H:%M UTC'), $((SECONDS - T0)) s"
  grep -E "^(gpu|driver|runtime|cublas|archs|cpu) " "$OUTDIR/info.txt" 2>/dev/null
  cat "$OUTDIR/rows.txt"
  echo
  cat "$OUTDIR/table.txt" 2>/dev/null
  exit $FAILED
}
export PATH="/usr/local/cuda/bin:$PATH"

{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv || true
  nvcc --version || true; lscpu || true; echo "nproc $(nproc)"; echo "load $(cat /proc/loadavg)"
} >"$OUTDIR/machine.txt" 2>&1

# --- binaries ----------------------------------------------------------------------------
if [ -n "${NNTRAIN_PREBUILT:-}" ]; then
  PRE=$(cd "$NNTRAIN_PREBUILT" && pwd)
  NN=$PRE/nntrain
  GT=$PRE/nntrain_gpu_tests
  # cuBLAS from the machine's toolkit, else from the PyTorch wheels' copy.
  LIBS=$PRE/lib
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib \
           "$(python3 -c 'import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__) + "/lib")' 2>/dev/null)"; do
    [ -n "$d" ] && [ -d "$d" ] && LIBS=$LIBS:$d
  done
  export LD_LIBRARY_PATH="$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  ldd "$NN" "$GT" >"$OUTDIR/ldd.txt" 2>&1
  if grep -q "not found" "$OUTDIR/ldd.txt"; then row "prebuilt binaries ($NNTRAIN_PREBUILT)" "MISSING LIBRARIES (ldd.txt)"; FAILED=1
  else row "prebuilt binaries ($NNTRAIN_PREBUILT)" "$(cat "$PRE/BUILT" 2>/dev/null || echo ok)"; fi
else
  BUILD=$ROOT/build-gpu
  PREFIX=$ROOT/build-gpu-deps  # outside the carried .deps (docs/GPU.md)
  if compgen -G ".deps/debs/*.deb" >/dev/null; then
    mkdir -p "$PREFIX"
    for f in .deps/debs/*.deb; do dpkg -x "$f" "$PREFIX"; done
    # dpkg -x runs no maintainer scripts: make the update-alternatives links to OpenBLAS.
    MA=$PREFIX/usr/lib/x86_64-linux-gnu
    for so in libopenblas.so libopenblas.so.0; do
      [ -e "$MA/openblas-pthread/$so" ] && ln -sfn "openblas-pthread/$so" "$MA/$so"
    done
    export CMAKE_PREFIX_PATH="$PREFIX/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    export LD_LIBRARY_PATH="$PREFIX/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    row "deps (.deps/debs)" "unpacked $(ls .deps/debs/*.deb | wc -l) packages"
  fi
  GEN=()
  command -v ninja >/dev/null && GEN=(-G Ninja)
  step "configure (sm_$ARCH)" configure.log cmake -S . -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES="$ARCH" || finish
  step "build" build.log cmake --build "$BUILD" -j "$JOBS" || finish
  NN=$BUILD/nntrain
  GT=$BUILD/tests/nntrain_gpu_tests
  # Built here: the whole suite too. Only the [gpu] tests' own skip lines count (ctest prints
  # each skip twice; other tests, e.g. the plot test without matplotlib, may skip legitimately).
  step "ctest (all, incl. [gpu])" ctest.log ctest --test-dir "$BUILD" --output-on-failure
  SKIPPED=$(grep -c "Test *#[0-9]*: gpu:.*Skipped" "$OUTDIR/ctest.log" || true)
  [ "$SKIPPED" != "0" ] && { row "  [gpu] tests skipped" "$SKIPPED (a GPU machine must skip none)"; FAILED=1; }
fi
"$NN" info >"$OUTDIR/info.txt" 2>&1 || { row "nntrain info" "FAILED (info.txt)"; FAILED=1; }

# --- correctness -------------------------------------------------------------------------
step "[gpu] tests (all, cuBLAS too)" gpu_tests.log "$GT" --durations yes
grep -E "^(GPU:|test cases|All tests passed)" "$OUTDIR/gpu_tests.log" | tail -2 | while read -r l; do echo "   $l"; done >&2

# compare_curves METRICS_CSV N TOL: the first N gpu losses against the cpu's, relative.
compare_curves() { awk -F, -v n="$2" -v tol="$3" -f "$ROOT/scripts/compare_curves.awk" "$1"; }
# The 40,000-sample reference experiment, every loss logged: GPU vs CPU reference over the
# first N epochs. Full batch: 20 epochs (20 steps). Mini-batches of 1000: 2 epochs (80
# steps): at lr 0.08, rounding differences grow about tenfold per epoch of 40 steps, so the
# curves part after a few epochs on any two backends (the fast CPU backend against the
# reference too: 0.9 relative at epoch 6, 2026-11-27); 2 epochs stay near 1e-5.
curve() {  # curve LABEL EPOCHS ARGS...
  local label=$1 n=$2; shift 2
  local out=$OUTDIR/curve_$label
  step "curve vs cpu reference: $label" "curve_$label.log" "$NN" --config configs/peaks.json --device both \
    --backend reference --epochs "$n" --quiet --out "$out" train.log_every=1 "$@" || return
  local d
  if d=$(compare_curves "$out/metrics.csv" "$n" 1e-4); then row "  first $n losses within 1e-4" "$d"
  else row "  first $n losses within 1e-4" "NO: $d"; FAILED=1; fi
}
curve fused 20 --gpu-path fused
curve cublas 20 --gpu-path cublas
curve fused_minibatch 2 --gpu-path fused --batch-size 1000
curve cublas_minibatch 2 --gpu-path cublas --batch-size 1000
# The resident path holds one batch in one block: 400 samples (40,000 do not fit).
curve resident_400 20 --gpu-path resident data.grid=20
curve resident_minibatch_400 20 --gpu-path resident --batch-size 128 data.grid=20 train.shuffle=true
# 40,000 samples: the resident path's cooperative grid (one block does not hold them); its
# shuffled mini-batches of 1000 fit one block, so the test-only knob forces the grid there.
curve resident_grid 20 --gpu-path resident
NNTRAIN_RESIDENT_GRID_BLOCKS=1048576 curve resident_grid_minibatch 2 --gpu-path resident --batch-size 1000 \
  train.shuffle=true
# 2-20-5-1 relu takes the grid's exact group stage (at 40,000 samples its narrow blocks, 3 per
# SM; the wide ones forced by the test-only knob); tanh takes its generic stages.
NNTRAIN_RESIDENT_GRID_THREADS=352 curve resident_grid_wide 20 --gpu-path resident
for b in "resident_grid:of 128 threads" "resident_grid_wide:of 352 threads"; do  # the block each took
  grep -q "${b#*:}" "$OUTDIR/curve_${b%%:*}/summary.json" 2>/dev/null ||
    { row "  ${b%%:*}: blocks ${b#*:}" "NO (summary.json)"; FAILED=1; }
done
curve resident_grid_generic 20 --gpu-path resident model.activation=tanh

# --- the reference experiment, timed ---------------------------------------------------------
run_ref() {  # run_ref LABEL ARGS...
  local label=$1; shift
  step "reference: $label" "ref_$label.log" "$NN" --config configs/peaks.json --epochs "$EPOCHS" --json \
    --quiet --out "$OUTDIR/run_$label" "$@"
  cp "$OUTDIR/run_$label/summary.json" "$OUTDIR/summary_$label.json" 2>/dev/null || true
}
run_ref gpu_fused --device gpu --gpu-path fused
run_ref gpu_fused_again --device gpu --gpu-path fused
NNTRAIN_GPU_PDL=0 run_ref gpu_fused_nopdl --device gpu --gpu-path fused
NNTRAIN_FUSED_V2_THREADS=2 run_ref gpu_fused_t2 --device gpu --gpu-path fused
run_ref gpu_cublas --device gpu --gpu-path cublas
run_ref gpu_resident_grid --device gpu --gpu-path resident
run_ref gpu_resident_grid_again --device gpu --gpu-path resident
run_ref cpu --device cpu
run_ref both --device both
run_ref gpu_minibatch --device gpu --batch-size 1000
# The host's graph launches sit inside the timed region (docs/GPU.md): one epoch per chunk
# against one chunk of all the epochs.
run_ref gpu_chunk1 --device gpu --gpu-path fused gpu.chunk_epochs=1
run_ref gpu_chunk_all --device gpu --gpu-path fused gpu.chunk_epochs="$EPOCHS" train.log_every="$EPOCHS"
if cmp -s <(grep '^gpu' "$OUTDIR/run_gpu_resident_grid/metrics.csv") \
     <(grep '^gpu' "$OUTDIR/run_gpu_resident_grid_again/metrics.csv") \
   && cmp -s "$OUTDIR/run_gpu_resident_grid/model.json" "$OUTDIR/run_gpu_resident_grid_again/model.json"; then
  row "  resident grid = its rerun, bit for bit" "yes (curve and model.json)"
else row "  resident grid = its rerun, bit for bit" "NO"; FAILED=1; fi
for other in again nopdl; do
  if cmp -s <(grep '^gpu' "$OUTDIR/run_gpu_fused/metrics.csv") <(grep '^gpu' "$OUTDIR/run_gpu_fused_$other/metrics.csv") \
     && cmp -s "$OUTDIR/run_gpu_fused/model.json" "$OUTDIR/run_gpu_fused_$other/model.json"; then
    row "  fused = fused $other, bit for bit" "yes (curve and model.json)"
  else row "  fused = fused $other, bit for bit" "NO"; FAILED=1; fi
done

# --- compute-sanitizer -------------------------------------------------------------------
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
san() {  # san TOOL LABEL ARGS...
  local tool=$1 label=$2; shift 2
  step "sanitizer $tool ($label)" "san_${tool}_$label.log" "$SAN" --tool "$tool" --error-exitcode 9 \
    "$NN" --config configs/peaks.json --device gpu --quiet --out "$OUTDIR/san_${tool}_$label" \
    timing.warmup_epochs=1 data.grid=40 train.log_every=5 "$@"
}
san memcheck fused --gpu-path fused --epochs 10
san racecheck fused --gpu-path fused --epochs 3
san synccheck fused --gpu-path fused --epochs 3
san racecheck fused_bucket --gpu-path fused --epochs 3 'model.layers=[2,32,24,1]' model.activation=tanh
san racecheck fused_minibatch --gpu-path fused --epochs 2 --batch-size 333
san memcheck fused_minibatch --gpu-path fused --epochs 2 --batch-size 333
san memcheck cublas --gpu-path cublas --epochs 5
# One block (the exact kernel: 400 samples; 1,600 take the grid's exact stage).
san memcheck resident --gpu-path resident --epochs 10 data.grid=20
san racecheck resident --gpu-path resident --epochs 3 data.grid=20
san synccheck resident --gpu-path resident --epochs 3 data.grid=20
san racecheck resident_minibatch --gpu-path resident --epochs 2 --batch-size 333
# The grid: what the simulator cannot check, since it runs memory in one coherent order
# (docs/GPU.md, "The resident grid"). 1,600 samples are 13 groups of the exact stage: a block
# per group, and 2 blocks taking several groups each (the barrier between a block's groups).
NNTRAIN_RESIDENT_GRID_BLOCKS=1048576 san memcheck resident_grid --gpu-path resident --epochs 5
NNTRAIN_RESIDENT_GRID_BLOCKS=1048576 san racecheck resident_grid --gpu-path resident --epochs 3
NNTRAIN_RESIDENT_GRID_BLOCKS=2 san racecheck resident_grid_2blocks --gpu-path resident --epochs 3
NNTRAIN_RESIDENT_GRID_BLOCKS=2 san synccheck resident_grid_2blocks --gpu-path resident --epochs 3
NNTRAIN_RESIDENT_GRID_BLOCKS=1048576 san racecheck resident_grid_minibatch --gpu-path resident --epochs 2 \
  --batch-size 333 train.shuffle=true
# The exact stage's narrow block (128 threads, up to 3 gradient items each), a block per group
# and 2 blocks taking several groups each.
NNTRAIN_RESIDENT_GRID_BLOCKS=1048576 NNTRAIN_RESIDENT_GRID_THREADS=128 san racecheck resident_grid_narrow \
  --gpu-path resident --epochs 3
NNTRAIN_RESIDENT_GRID_BLOCKS=2 NNTRAIN_RESIDENT_GRID_THREADS=128 san synccheck resident_grid_narrow_2blocks \
  --gpu-path resident --epochs 3
# The same on the grid's generic stages (tanh: not the exact shape).
NNTRAIN_RESIDENT_GRID_BLOCKS=1048576 san racecheck resident_grid_generic --gpu-path resident --epochs 3 \
  model.activation=tanh
NNTRAIN_RESIDENT_GRID_BLOCKS=1048576 san synccheck resident_grid_generic --gpu-path resident --epochs 3 \
  model.activation=tanh
san memcheck cublas_minibatch --gpu-path cublas --epochs 2 --batch-size 333

# --- peers and the wide net --------------------------------------------------------------
step "torch peer: reference net (eager, graphed)" torch_peer.log python3 scripts/bench/torch_peer.py --device gpu \
  --epochs "$EPOCHS" --json "$OUTDIR/torch_peer.json"
step "nntrain: wide net on the gpu (5 epochs)" wide.log "$NN" --config configs/wide.json --device gpu --epochs 5 \
  --json --quiet --out "$OUTDIR/run_wide"
cp "$OUTDIR/run_wide/summary.json" "$OUTDIR/summary_wide.json" 2>/dev/null || true
step "torch peer: wide net (eager, 5 epochs)" torch_wide.log python3 scripts/bench/torch_peer.py --device gpu --wide \
  --epochs 5 --warmup 1 --reps 2 --json "$OUTDIR/torch_wide.json"

# --- is the GPU worth it: crossover and time to target ------------------------------------
# Prices are illustrative (a GPU hour at 3x a CPU hour, the articles' ratio), not quotes.
step "bench: crossover, target 0.05 (cpu,gpu)" bench.log "$NN" bench --config configs/peaks.json \
  --device cpu,gpu --reps 3 --sweep data.grid=10,20,50,100,200,500,1000 --target-loss 0.05 \
  --price cpu=1,gpu=3 --currency "price units" --export-json "$OUTDIR/crossover.json" \
  --export-markdown "$OUTDIR/crossover.md" train.epochs="$EPOCHS"

# --- table -------------------------------------------------------------------------------
python3 - "$OUTDIR" "$EPOCHS" >"$OUTDIR/table.txt" 2>&1 <<'PY'
import json, os, sys
out, epochs = sys.argv[1], int(sys.argv[2])
def run(label, device):
    try:
        s = json.load(open(os.path.join(out, f"summary_{label}.json")))
        return next(r for r in s["runs"] if r["device"] == device)
    except Exception:
        return None
rows = [("cpu", "cpu", "cpu"), ("gpu fused (v2)", "gpu_fused", "gpu"), ("gpu fused again", "gpu_fused_again", "gpu"),
        ("gpu fused, no PDL", "gpu_fused_nopdl", "gpu"),
        ("gpu fused, 2 thr/smp", "gpu_fused_t2", "gpu"),
        ("gpu cublas", "gpu_cublas", "gpu"), ("both: cpu", "both", "cpu"), ("both: gpu", "both", "gpu"),
        ("gpu mini-batch 1000", "gpu_minibatch", "gpu"), ("gpu fused, chunk 1", "gpu_chunk1", "gpu"),
        ("gpu fused, chunk all", "gpu_chunk_all", "gpu"), ("wide net gpu", "wide", "gpu")]
print(f"{'run':<24}{'train s':>11}{'us/epoch':>11}{'setup s':>10}{'final loss':>13}")
t = {}
for name, label, dev in rows:
    r = run(label, dev)
    if not r:
        print(f"{name:<24}{'-':>11}"); continue
    t[name] = r["train_seconds"]
    print(f"{name:<24}{r['train_seconds']:>11.5f}{1e6 * r['train_seconds'] / max(1, r['epochs']):>11.2f}"
          f"{r.get('setup_seconds', 0):>10.3f}{r['final_loss']:>13.6g}")
for f, label in (("torch_peer.json", "reference"), ("torch_wide.json", "wide")):
    try:
        p = json.load(open(os.path.join(out, f)))
        for k in ("eager", "graphed"):
            if f"{k}_seconds" in p:
                print(f"{'torch ' + label + ' ' + k:<24}{p[k + '_seconds']:>11.5f}"
                      f"{1e6 * p[k + '_seconds'] / p['epochs']:>11.2f}{'':>10}{p[k + '_final_loss']:>13.6g}")
    except Exception as e:
        print(f"(no torch {label}: {e})")
try:
    p = json.load(open(os.path.join(out, "torch_peer.json")))
    best = min(t[k] for k in ("gpu fused (v2)", "gpu fused, 2 thr/smp", "gpu cublas") if t.get(k))
    print(f"\nbest nntrain GPU {best * 1e3:.2f} ms for {epochs} epochs (target <= 10 ms on an H100)")
    print(f"vs torch eager:  {p['eager_seconds'] / best:.1f}x (target >= 20x)")
    print(f"vs torch graphs: {p['graphed_seconds'] / best:.1f}x (target >= 3x)")
except Exception as e:
    print(f"(no torch comparison: {e})")
for label in ("gpu_fused", "gpu_fused_t2", "gpu_cublas", "wide"):
    r = run(label, "gpu")
    if r:
        print(f"{label}: {r.get('details', '')}")
b_cpu, b_gpu = run("both", "cpu"), run("both", "gpu")
if b_cpu and b_gpu and b_gpu["train_seconds"] > 0:
    print(f"--device both: gpu {b_cpu['train_seconds'] / b_gpu['train_seconds']:.1f}x faster than cpu"
          f" ({b_cpu['epochs']} epochs; cpu: {b_cpu.get('details', '')})")
PY
[ -f "$OUTDIR/crossover.md" ] && { echo; sed -n '1,40p' "$OUTDIR/crossover.md"; } >>"$OUTDIR/table.txt"
finish
