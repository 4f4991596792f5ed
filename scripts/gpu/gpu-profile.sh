#!/usr/bin/env bash
# gpu-profile.sh — the second device check, after scripts/gpu/gpu-check.sh has passed: where the
# fused step's time goes, and how the CPU next to the GPU scales. Prebuilt binaries only
# (scripts/gpu/gpu-pack.sh here; carry .devrun):   NNTRAIN_PREBUILT=.devrun scripts/gpu/gpu-profile.sh
#
#   0. the resident grid's barriers and exchange alone, 8-528 blocks (bench/grid_barrier.cu:
#      0a); the resident path (issue 43: one block, one launch per chunk of epochs) against
#      fused v2 and the CPU on all cores, 100 to 900 samples, 2000 epochs, medians of 3, the two
#      GPU paths alternating twice (the model to check: docs/GPU.md, "The resident path");
#      and the resident path's cooperative grid (forced at every size) against v2 from 2,500
#      to 1,000,000 samples (docs/GPU.md, "The resident grid"; first timed 2026-11-30); and
#      v2's 32-sample tile against cuBLAS on the deep nets whose 64 tile does not fit (0d);
#      the generic resident stages (tanh), one block and grid, against v2 (0e); the resident
#      grid's step phase by phase, stamped on the GPU (0f);
#   1. GPU time per epoch against the data size (fused path; bench, 3 repeats per point),
#      with and without programmatic dependent launch, twice each, alternating: the
#      per-epoch fixed cost (launch gap, last-block tail, one block's chain) and the cost
#      per block;
#   2. Nsight Compute on one fused v2 step at 100, 2,500 and 40,000 samples, at the card's own
#      clocks (--clock-control none): kernel duration (so the gap between kernels is the epoch
#      time minus it), occupancy, issue activity, warp stall reasons, the top stall sites; and
#      on a one-epoch launch of the resident path at 100 (one block) and 40,000 samples (grid);
#   3. mini-batch curves against the CPU reference at lr 0.01 (at lr 0.08, 40 steps an epoch
#      amplify rounding into different curves within a few epochs on every backend, the fast
#      CPU one included);
#   4. the fast CPU backend on the machine's cores: threads 1..all on the full batch
#      (40,000 and 250,000 samples) and on shuffled batches of 256, 1024 and 4096, and
#      scripts/bench/bench_cpu.sh --minibatch-only; where a step's time goes on all the cores
#      (NNTRAIN_FAST_PHASES=1: full batch, batches 4096 and 1024); and the one-thread
#      batch-4096 row pinned to one core, 6 runs (its unexplained slow mode,
#      docs/journal/2026-11-issue14-cpu-minibatch.md, "Sixteen cores: one line per worker")
#      (PROFILE_CPU=0: not this part).
# The logs are packed into $OUT/gpu-profile.tgz; the summary is printed last. BUDGET seconds
# (default 300) bound the whole, as in gpu-check.sh.
set -uo pipefail
cd "$(dirname "$0")/../.."
FINAL=${OUT:-$PWD/gpu-profile-out}
mkdir -p "$FINAL"
W=$(mktemp -d /tmp/gpu-profile.XXXXXX)
BUDGET=${BUDGET:-300}
T0=$SECONDS
PRE=$(cd "${NNTRAIN_PREBUILT:?set NNTRAIN_PREBUILT to the folder scripts/gpu/gpu-pack.sh filled}" && pwd)
NN=$PRE/nntrain
LIBS=$PRE/lib
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib; do [ -d "$d" ] && LIBS=$LIBS:$d; done
export LD_LIBRARY_PATH="$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="/usr/local/cuda/bin:$PATH"
declare -a ROWS=()
row() { ROWS+=("$(printf '%-44s %s' "$1" "$2")"); }
step() {  # step NAME LOG CAP CMD...
  local name=$1 log=$2 cap=$3; shift 3
  local l=$((BUDGET - (SECONDS - T0)))
  ((l < 10)) && { row "$name" "NOT RUN (budget)"; return 125; }
  ((cap > l)) && cap=$l
  echo "== $name ($((SECONDS - T0)) s)" >&2
  local t=$SECONDS
  timeout -k 5 "$cap" "$@" >"$W/$log" 2>&1
  local rc=$?
  row "$name" "$([ $rc = 0 ] && echo ok || echo "rc $rc") ($((SECONDS - t)) s, $log)"
  return $rc
}
echo "load $(cat /proc/loadavg)" >"$W/load_start.txt"

# 0. The floor under any one-kernel-per-step design: a graph of 1,000 trivial kernels (one
#    thread adding 1 to one float; PyTorch), replayed 20 times: time per kernel node.
step "gpu: launch gap of a graph node (torch)" launch_gap.log 60 python3 - <<'PY'
import torch
x = torch.zeros(1, device="cuda")
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(3):
        x.add_(1)
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    for _ in range(1000):
        x.add_(1)
for _ in range(3):
    g.replay()
torch.cuda.synchronize()
res = []
for _ in range(5):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(20):
        g.replay()
    b.record()
    torch.cuda.synchronize()
    res.append(a.elapsed_time(b) * 1e3 / 20000)
print("us per kernel node, 5 runs of 20 replays of 1000 nodes:", " ".join(f"{r:.3f}" for r in res))
PY
row "  launch gap" "$(tail -1 "$W/launch_gap.log")"

# 0a. What the resident grid's step costs besides its group stage (bench/grid_barrier.cu):
#     grid.sync() alone, a release/acquire counter barrier, and the grid's own exchange with
#     its two barriers, ns per iteration for 8-528 blocks of 128 threads (the narrow block),
#     8-132 of 352 (the wide one, one per SM), the reference experiment's 313 groups and
#     1,000,000 samples' 7,813 (docs/GPU.md: the cost model's weakest part).
GB=$PRE/nntrain_grid_barrier
step "gpu: grid barriers, narrow blocks" barrier_narrow.log 20 "$GB" --threads 128
step "gpu: grid barriers, wide blocks" barrier_wide.log 20 "$GB" --threads 352 --blocks 8,16,32,66,132
step "gpu: grid exchange, 313 groups" barrier_313.log 20 "$GB" --threads 128 --blocks 132,264,313 --groups 313
step "gpu: grid exchange, 7,813 groups" barrier_7813.log 30 "$GB" --threads 128 --blocks 396,528 --groups 7813 --iters 1000

# 0b. The resident path against fused v2 and the CPU (all cores), sizes one block holds
#     (100, 196, 400, 484: one sample per thread; 900: two), A/B alternating twice.
for round in 1 2; do
  for path in resident fused; do
    step "gpu: $path vs cpu, 100-900 samples (round $round)" "resident_$path-$round.log" 60 "$NN" bench \
      --config configs/peaks.json --device cpu,gpu --gpu-path "$path" --reps 3 --sweep data.grid=10,14,20,22,30 \
      --export-markdown "$W/resident_$path-$round.md" --export-json "$W/resident_$path-$round.json" train.epochs=2000
  done
done

# 0c. The resident grid (NNTRAIN_RESIDENT_GRID_BLOCKS, test-only: the grid at every size, as
#     many blocks as are co-resident) against fused v2, 2,500 to 1,000,000 samples, A/B twice;
#     resident-wide: the exact stage's wide blocks forced (NNTRAIN_RESIDENT_GRID_THREADS=352),
#     which tells whether the narrow blocks' rule (fewer rounds) holds on a GPU.
for round in 1 2; do
  for path in resident resident-wide fused; do
    threads=; [ "$path" = resident-wide ] && threads=352
    [ "$path" = resident-wide ] && [ "$round" = 2 ] && continue  # once: the lease's minutes
    NNTRAIN_RESIDENT_GRID_THREADS=$threads NNTRAIN_RESIDENT_GRID_BLOCKS=1048576 \
      step "gpu: $path (grid) vs v2, 2,500-1,000,000 samples (round $round)" \
      "grid_$path-$round.log" 90 "$NN" bench --config configs/peaks.json --device gpu --gpu-path "${path%-wide}" --reps 3 \
      --sweep data.grid=50,100,200,500,1000 --export-markdown "$W/grid_$path-$round.md" \
      --export-json "$W/grid_$path-$round.json" train.epochs=2000
  done
done

# 0f. Where a step of the resident grid goes (NNTRAIN_RESIDENT_STAMPS: the stamped kernel, not
#     the timed one; docs/GPU.md, "Stamps"): per block the group stage, the two grid.sync
#     waits, the exchange and the weights' copy, in cycles and ns, at 10,000, 40,000 (the
#     rule's block and the wide one) and 1,000,000 samples, 2000 epochs; 0c times them unstamped.
for spec in 100:0 200:0 200:352 1000:0; do
  grid=${spec%:*} threads=${spec#*:}
  [ "$threads" = 0 ] && threads=
  f=stamps_${grid}_${threads:-rule}
  NNTRAIN_RESIDENT_STAMPS=$W/$f.csv NNTRAIN_RESIDENT_GRID_THREADS=$threads \
    step "gpu: resident grid stamped, grid $grid, threads ${threads:-rule}" "$f.log" 60 \
    "$NN" --config configs/peaks.json --device gpu --gpu-path resident --quiet --out "$W/stamps_run" \
    "data.grid=$grid" train.epochs=2000 timing.warmup_epochs=0
  # the file is rewritten after every chunk: a run cut short still leaves its steps so far
  [ -f "$W/$f.csv" ] && python3 scripts/gpu/stamps_summary.py "$W/$f.csv" >"$W/$f.txt" 2>&1
done

# 0d. The deep nets whose 64-sample tile does not fit an H200 (2-64x5-1, 2-64x7-1: v2 takes its
#     32 tile; the two-kernel v1 that took them before was retired on 2026-11-29, its
#     simulated cycles in docs/journal/2026-11-29-retire-v1.md): v2 against cuBLAS, which
#     answers whether `auto` should send such nets to cuBLAS.
for net in '[2,64,64,64,64,64,1]' '[2,64,64,64,64,64,64,64,1]'; do
  for path in fused cublas; do
    step "gpu: $path on $net, 400-40,000 samples" "deep_${path}_$(echo "$net" | tr -cd , | wc -c).log" 40 "$NN" \
      bench --config configs/peaks.json --device gpu --gpu-path "$path" --reps 3 --sweep data.grid=20,63,200 \
      --export-json "$W/deep_${path}_$(echo "$net" | tr -cd , | wc -c).json" "model.layers=$net" train.epochs=200
  done
done

# 0e. The generic resident stages (tanh: not the exact shape) against v2, 100-2,500 samples:
#     the one-block generic kernel, the grid forced, fused v2 (whether the one-block generic
#     kernel still earns its place: docs/journal/2026-11-29-grid-exact.md).
for path in resident resident-grid fused; do
  knob=; [ "$path" = resident-grid ] && knob=1048576
  NNTRAIN_RESIDENT_GRID_BLOCKS=$knob step "gpu: $path, tanh, 100-2,500 samples" "generic_$path.log" 40 "$NN" bench \
    --config configs/peaks.json --device gpu --gpu-path "${path%-grid}" --reps 3 --sweep data.grid=10,20,30,50 \
    --export-markdown "$W/generic_$path.md" --export-json "$W/generic_$path.json" train.epochs=2000 \
    model.activation=tanh
done

# 1. GPU time per epoch against the data size, with programmatic dependent launch (the
#    default on compute capability 9.0+) and without, alternating.
run=0
for pdl in 1 0 1 0; do
  run=$((run + 1))
  NNTRAIN_GPU_PDL=$pdl step "gpu: epoch time vs size (fused, PDL $pdl)" "gpu_sizes_$run-pdl$pdl.log" 60 "$NN" bench \
    --config configs/peaks.json --device gpu --gpu-path fused --reps 3 \
    --sweep data.grid=10,20,30,50,70,100,140,200,300,500,1000 \
    --export-markdown "$W/gpu_sizes_$run-pdl$pdl.md" --export-json "$W/gpu_sizes_$run-pdl$pdl.json" train.epochs=2000
done

# 2. Nsight Compute.
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for grid in 10 50 200; do
  [ -n "$NCU" ] || { row "ncu" "not found"; break; }
  step "ncu: fused v2 step, grid $grid" "ncu_$grid.csv" 90 "$NCU" --clock-control none \
    --kernel-name regex:fused_v2 --launch-skip 30 --launch-count 1 \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
    --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section InstructionStats --section SourceCounters --csv --page details \
    "$NN" --config configs/peaks.json --device gpu --gpu-path fused --epochs 40 --quiet \
    --out "$W/ncu_run_$grid" data.grid=$grid timing.warmup_epochs=0 train.log_every=40
done

# 2b. Nsight Compute on one epoch of the resident path (a launch of one epoch: gpu.chunk_epochs=1):
#     the one-block kernel at 100 samples, the grid at 40,000.
for grid in 10 200; do
  [ -n "$NCU" ] || break
  step "ncu: resident, one epoch, grid $grid" "ncu_resident_$grid.csv" 90 "$NCU" --clock-control none \
    --kernel-name regex:resident --launch-skip 10 --launch-count 1 \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
    --section SchedulerStats --section InstructionStats --section SourceCounters --csv --page details \
    "$NN" --config configs/peaks.json --device gpu --gpu-path resident --epochs 20 --quiet \
    --out "$W/ncu_resident_run_$grid" data.grid=$grid timing.warmup_epochs=0 gpu.chunk_epochs=1
done

# 3. Mini-batch curves at a learning rate where 800 steps stay comparable.
for path in fused cublas; do
  step "curve vs cpu reference: $path, batch 1000, lr 0.01" "curve_mb_$path.log" 30 "$NN" --config configs/peaks.json \
    --device both --backend reference --gpu-path $path --epochs 20 --batch-size 1000 --quiet \
    --out "$W/curve_mb_$path" train.log_every=1 optimizer.lr=0.01
  awk -F, 'NR > 1 { if ($1 == "cpu") c[$2] = $3; else g[$2] = $3 }
    END { m = 0; for (e in c) if (e in g) { d = (c[e] - g[e]) / c[e]; if (d < 0) d = -d; if (d > m) { m = d; at = e } }
          printf "max rel diff %.3g at epoch %s\n", m, at }' "$W/curve_mb_$path/metrics.csv" >"$W/curve_mb_$path.diff" 2>&1
  row "  $path mini-batch curve, 20 epochs" "$(cat "$W/curve_mb_$path.diff")"
done

# 4. The CPU next to the GPU (PROFILE_CPU=0 skips it).
if [ "${PROFILE_CPU:-1}" != 0 ]; then
  N=$(nproc)
  TH=1; t=2; while ((t < N)); do TH=$TH,$t; t=$((t * 2)); done; ((N > 1)) && TH=$TH,$N  # (a value twice is refused)
  for grid in 200 500; do
    step "cpu: threads $TH, grid $grid" "cpu_threads_$grid.log" 90 "$NN" bench --config configs/peaks.json \
      --device cpu --reps 3 --sweep cpu.threads=$TH --export-markdown "$W/cpu_threads_$grid.md" \
      data.grid=$grid train.epochs=2000
  done
  # Mini-batches (shuffled) on 1..all threads: which thread count each batch size wants here.
  for batch in 256 1024 4096; do
    step "cpu: threads $TH, batch $batch" "cpu_threads_b$batch.log" 60 "$NN" bench --config configs/peaks.json \
      --device cpu --reps 3 --sweep cpu.threads=$TH --export-markdown "$W/cpu_threads_b$batch.md" \
      train.batch_size=$batch train.epochs=300
  done
  if command -v cc >/dev/null; then
    NNTRAIN=$NN step "cpu: bench_cpu.sh --minibatch-only" bench_cpu_mb.log 120 scripts/bench/bench_cpu.sh --minibatch-only \
      --epochs-mb 300 --reps 3
  else row "cpu: bench_cpu.sh --minibatch-only" "NOT RUN (no C compiler for the FMA loop)"; fi
  # Each thread's part of a step on all the cores (docs/CONFIG.md, NNTRAIN_FAST_PHASES).
  for b in 0 4096 1024; do
    e=$([ $b = 0 ] && echo 2000 || echo 300)
    NNTRAIN_FAST_PHASES=1 step "cpu: phases, $N threads, batch $b" "cpu_phases_b$b.log" 30 "$NN" \
      --config configs/peaks.json --device cpu --threads "$N" --quiet --out "$W/phases_run" \
      train.batch_size=$b train.shuffle=false train.epochs=$e
  done
  # One thread, batch 4096, pinned to CPU 1: µs per step of 6 runs (min of 3 repeats each).
  step "cpu: 1 thread pinned, batch 4096, 6 runs" cpu_pinned_4096.log 60 bash -c '
    for i in 1 2 3 4 5 6; do
      taskset -c 1 "$1" --config configs/peaks.json --device cpu --threads 1 --quiet --json --out "$2" \
        train.batch_size=4096 train.shuffle=false train.epochs=300 timing.repeats=3 timing.warmup_epochs=300 |
        python3 -c "import json, sys; j = json.load(sys.stdin); r = j[\"runs\"][0] if \"runs\" in j else j
print(\"%.2f us per step\" % (1e6 * min(r[\"train_seconds_repeats\"]) / (r[\"epochs\"] * 10)))" || exit 1
    done' _ "$NN" "$W/pinned_run"
fi

echo "load $(cat /proc/loadavg)" >"$W/load_end.txt"
printf '%s\n' "${ROWS[@]}" >"$W/rows.txt"
tar -C "$W" -czf "$FINAL/gpu-profile.tgz" .
echo
echo "nntrain gpu-profile $(git rev-parse --short HEAD 2>/dev/null), $(date -u '+%Y-%m-%d %H:%M UTC'), $((SECONDS - T0)) s; $(cat "$W/load_start.txt") at the start"
cat "$W/rows.txt"
for f in resident_resident-1.md resident_fused-1.md resident_resident-2.md resident_fused-2.md \
         grid_resident-1.md grid_fused-1.md grid_resident-2.md grid_fused-2.md \
         generic_resident.md generic_resident-grid.md generic_fused.md \
         gpu_sizes_1-pdl1.md gpu_sizes_2-pdl0.md gpu_sizes_3-pdl1.md gpu_sizes_4-pdl0.md cpu_threads_200.md \
         cpu_threads_500.md cpu_threads_b256.md cpu_threads_b1024.md cpu_threads_b4096.md; do
  [ -f "$W/$f" ] && { echo; grep -E "^\|" "$W/$f" | head -14; }
done
for f in barrier_narrow barrier_wide barrier_313 barrier_7813; do
  [ -f "$W/$f.log" ] && { echo; echo "$f:"; head -16 "$W/$f.log"; }
done
for f in stamps_100_rule stamps_200_rule stamps_200_352 stamps_1000_rule; do
  [ -f "$W/$f.txt" ] && { echo; cat "$W/$f.txt"; }
done
for grid in 10 50 200 resident_10 resident_200; do
  [ -f "$W/ncu_$grid.csv" ] || continue
  echo; echo "ncu grid $grid:"
  grep -E '"(Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Issue Slots Busy|Issued Warp Per Scheduler|No Eligible|Warp Cycles Per Issued Instruction|Compute \(SM\) Throughput|Memory Throughput|Executed Ipc Active|Block Limit Registers|Block Limit Shared Mem|Waves Per SM|SM Frequency|Elapsed Cycles)"' \
    "$W/ncu_$grid.csv" | awk -F'","' '{printf "  %-40s %s %s\n", $(NF-2), $NF, $(NF-1)}' | tr -d '"' | head -20
done
echo; grep -E "^(\||FMA|###|A 256)" "$W/bench_cpu_mb.log" 2>/dev/null | head -40
for b in 0 4096 1024; do
  [ -f "$W/cpu_phases_b$b.log" ] && { echo; echo "phases, batch $b:"; grep -E "fast backend phases|^  thread " "$W/cpu_phases_b$b.log" | head -18; }
done
[ -f "$W/cpu_pinned_4096.log" ] && { echo; echo "1 thread pinned, batch 4096:"; cat "$W/cpu_pinned_4096.log"; }
exit 0
