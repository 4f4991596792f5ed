#!/usr/bin/env bash
# check_fma_peak.sh — bench/fma_peak.c measures the FMA peak only if every chain stays in
# a register: one spill to the stack makes the loop wait on stores and loads, and the
# "peak" comes out low (half the true one on an AVX2 machine with 16 chains, 2026-11-25),
# so every "% of peak" in scripts/bench/bench_cpu.sh comes out high. This compiles it as the bench
# does (cc -O2) to assembly and fails if, between the first and the last FMA of run256 or
# run512, any instruction touches memory.
#
#   scripts/bench/check_fma_peak.sh        (ctest: fma_peak_no_spills; x86-64 only)
set -euo pipefail
cd "$(dirname "$0")/../.."
src=${1:-bench/fma_peak.c}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -S -o "$tmp/fma_peak.s" "$src"
status=0
for fn in run256 run512; do
  body=$(awk -v fn="$fn" '$0 ~ "^" fn "[.a-z0-9]*:" {on = 1} on && /^\t\.size\t/ {on = 0} on' "$tmp/fma_peak.s")
  fmas=$(grep -c 'vfmadd' <<<"$body" || true)
  if ((fmas == 0)); then
    echo "check_fma_peak: $fn: no FMA instruction found in the assembly of $src" >&2
    status=1
    continue
  fi
  loop=$(awk '/vfmadd/ {n++} n && !done {print} /vfmadd/ && n == total {done = 1}' total="$fmas" <<<"$body")
  mem=$(grep -F '(' <<<"$loop" | head -3 || true)  # a memory operand: disp(base,...)
  if [[ -n $mem ]]; then
    echo "check_fma_peak: $fn keeps its FMA chains in memory, not registers (spills), e.g.:" >&2
    sed 's/^/    /' <<<"$mem" >&2
    status=1
  else
    echo "check_fma_peak: $fn: $fmas FMAs, no memory access between the first and the last"
  fi
done
exit $status
