#!/usr/bin/env bash
# chunk_per_core.sh — the fast kernels' speed per core with 1, 2, 4, … cores busy (issue 45,
# item 3: where a many-core full batch loses against perfect scaling), in one call:
#
#   scripts/bench/chunk_per_core.sh [--threads 1,2,4,8,16] [--epochs N] [--batches full,4096] BUILD_DIR
#
# 1. Kernels alone: t copies of BUILD_DIR/nntrain_kernel_bound at once, copy k pinned to CPU k
#    (taskset), each timing one 256-sample chunk of the reference net (hot cache, its own
#    data): chunk_ns per copy (min, median, max over the copies) and the median ÷ 1 copy's.
#    What grows here is the core's own speed with t cores busy (clock, shared L3 / memory):
#    no data is shared and nothing waits.
# 2. The backend: the reference experiment (configs/peaks.json, 40,000 samples) on t threads
#    with NNTRAIN_FAST_PHASES=1, per batch: the step's median, and the thread time its chunks
#    took (the sum over threads of each thread's median chunk time a step), per chunk
#    (157 chunks at full batch, 16 at 4096) and ÷ 1 thread's. Against part 1 the difference is
#    what a chunk pays in the backend beyond the kernels: its data's trips through the caches
#    (inputs streamed, stored hidden rows re-read by the backward pass), the claims.
# Prints markdown tables and the load average before and after. A measurement tool: it
# asserts nothing. Threads default to 1, 2, 4, … up to the CPU count.
set -euo pipefail
cd "$(dirname "$0")/../.."

threads="" epochs=300 batches="full,4096"
while (($#)); do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    -*) echo "chunk_per_core.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
(($# == 1)) || { echo "usage: scripts/bench/chunk_per_core.sh [options] BUILD_DIR" >&2; exit 2; }
build=$1
for b in nntrain nntrain_kernel_bound; do
  [[ -x $build/$b ]] || { echo "chunk_per_core.sh: $build/$b is not an executable" >&2; exit 2; }
done
if [[ -z $threads ]]; then
  n=$(nproc) t=1 threads=""
  while ((t < n)); do threads+="$t,"; t=$((t * 2)); done
  threads+="$n"
fi
IFS=, read -r -a T <<<"$threads"
IFS=, read -r -a B <<<"$batches"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "chunk_per_core.sh: $(date -u +%Y-%m-%dT%H:%MZ), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "kernels alone: chunk_ns of nntrain_kernel_bound, t copies at once (one per CPU)"
echo
echo "| copies | min | median | max | median ÷ 1 copy |"
echo "|---:|---:|---:|---:|---:|"
one=""
for t in "${T[@]}"; do
  pids=()
  for ((k = 0; k < t; k++)); do
    taskset -c "$k" "$build/nntrain_kernel_bound" --trips 1000 >"$tmp/kb.$k" 2>/dev/null &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  row=$(cat "$tmp"/kb.* | python3 -c 'import json,sys,statistics
v=sorted(json.loads(l)["chunk_ns"] for l in sys.stdin if l.strip())
print(f"{v[0]:.0f} {statistics.median(v):.0f} {v[-1]:.0f}")')
  rm -f "$tmp"/kb.*
  read -r lo med hi <<<"$row"
  if [[ -z $one ]]; then one=$med; fi
  echo "| $t | $lo | $med | $hi | $(python3 -c "print(f'{$med / $one:.2f}')") |"
done

for b in "${B[@]}"; do
  args=() e=$epochs chunks=157
  if [[ $b == full ]]; then e=$((epochs * 4)); else args=(--batch-size "$b"); chunks=$(((b + 255) / 256)); fi
  echo
  echo "backend, batch $b ($chunks chunks a step, NNTRAIN_FAST_PHASES=1 medians, µs)"
  echo
  echo "| threads | step | thread time in chunks | per chunk | per chunk ÷ 1 thread |"
  echo "|---:|---:|---:|---:|---:|"
  base=""
  for t in "${T[@]}"; do
    NNTRAIN_FAST_PHASES=1 "$build/nntrain" train -c configs/peaks.json --device cpu --backend fast -q --json \
      --out "$tmp/run" --threads "$t" --epochs "$e" "${args[@]}" 2>"$tmp/phases" >/dev/null
    rm -rf "$tmp/run"
    row=$(python3 - "$tmp/phases" "$chunks" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
step = float(re.search(r"step [0-9.]+ / ([0-9.]+)", text).group(1))
chunk = sum(float(m) for m in re.findall(r"chunks [0-9.]+ / ([0-9.]+)", text))
print(f"{step:.1f} {chunk:.1f} {1000 * chunk / int(sys.argv[2]):.0f}")
EOF
)
    read -r step chunk per <<<"$row"
    if [[ -z $base ]]; then base=$per; fi
    echo "| $t | $step | $chunk | ${per} ns | $(python3 -c "print(f'{$per / $base:.2f}')") |"
  done
done
echo
echo "chunk_per_core.sh: done, load average $(cut -d' ' -f1-3 /proc/loadavg)"
