#!/usr/bin/env bash
# mutants-slice.sh — CI's share of the mutation check: a few mutants of scripts/mutants.sh
# per run instead of all of them (the full run, ~30 minutes on 2 cores, stays
# `scripts/mutants.sh`). Chooses, and prints why:
#   1. the rotation: the list dealt into R groups of about equal estimated cost (R =
#      MUTANTS_SLICE_ROUNDS, 12; the costliest first, each to the group with the least so
#      far), and group h run: h = the number of commits up to HEAD mod R, so that R
#      consecutive commits run every group once (from the commit's hash in a shallow
#      clone, where that number is not known);
#   2. then mutants of the files the last commits changed (MUTANTS_SLICE_COMMITS, 3; fewer
#      where a shallow clone lacks them; uncommitted changes count too), starting at a place
#      in that list set by h, while the estimated cost stays under MUTANTS_SLICE_BUDGET
#      lane-seconds (480: with the first builds ~6 minutes on 2 cores) and the count under
#      MUTANTS_SLICE_MAX (16).
# `--gpu` chooses from scripts/gpu-mutants.sh instead (see below; CI's stage after gpusim-check).
# Then runs them (MUTANTS_ONLY=... scripts/mutants.sh), which ends with the same line as
# the full run, `mutants: K of N killed` (N: this slice), and fails below 90 % of N.
# Cost estimates per mutant, from the per-mutant times of the two-lane runs of 2026-11-28
# (docs/journal/ci-timings.md; on an AVX-512 machine, where every kernel unit compiles at
# -O3, a .inc mutant took ~1.5x that journal's figure): a header or .inc recompiles several
# units (~150 s), an AVX2/AVX-512 kernel unit ~60 s, any other .cpp ~15 s. Environment as scripts/mutants.sh, plus the
# three above; MUTANTS_SLICE_DRY=1 prints the choice and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
R=${MUTANTS_SLICE_ROUNDS:-12}
COMMITS=${MUTANTS_SLICE_COMMITS:-3}
BUDGET=${MUTANTS_SLICE_BUDGET:-480}
MAX=${MUTANTS_SLICE_MAX:-16}

cost() {  # cost FILE: estimated lane-seconds of one mutant of FILE
  case $1 in
    *.hpp | *.inc | *.h) echo 150 ;;
    */cpu_fast_avx2.cpp | */cpu_fast_avx512.cpp) echo 60 ;;
    *) echo 15 ;;
  esac
}

mapfile -t rows < <(scripts/mutants.sh --list)
((${#rows[@]})) || { echo "mutants-slice: scripts/mutants.sh --list gave no mutants" >&2; exit 2; }
head=$(git rev-parse HEAD 2>/dev/null || echo 0000000)
if [[ $(git rev-parse --is-shallow-repository 2>/dev/null) == false ]]; then
  n=$(git rev-list --count HEAD)
  h=$((n % R)) how="commit number $n"
else
  h=$((16#${head:0:7} % R)) how="the hash (shallow clone)"
fi

# The base of "the last commits": HEAD~COMMITS, or the oldest ancestor a shallow clone has.
base=$(git rev-list --max-count="$((COMMITS + 1))" HEAD 2>/dev/null | tail -n 1)
depth=$(git rev-list --count "$base..HEAD" 2>/dev/null || echo 0)
declare -A touched=()
if [[ -n $base ]]; then
  while read -r f; do [[ -n $f ]] && touched[$f]=1; done < <(git diff --name-only "$base" -- 2>/dev/null)
fi

# --gpu: CI's share of scripts/gpu-mutants.sh (planted bugs in kernels/cuda, each rebuilt and
# run on GPGPU-Sim; 2026-11-29 at load ~20 on 2 cores: 9 mutants in 14 minutes of wall time
# and 4.25 of CPU, the whole list ~30 minutes: docs/TESTING.md). Where the
# last commits (or uncommitted changes) touched a file with GPU mutants: up to
# MUTANTS_SLICE_GPU_MAX (2) of those files' mutants, from a place set by the commit number;
# otherwise one mutant of the rotation (the commit number mod the list's length: as many
# consecutive commits run every one). Ends with `gpu-mutants: K of N killed`.
if [[ ${1:-} == --gpu ]]; then
  GMAX=${MUTANTS_SLICE_GPU_MAX:-2}
  mapfile -t grows < <(scripts/gpu-mutants.sh --list)
  ng=${#grows[@]}
  ((ng)) || { echo "mutants-slice: scripts/gpu-mutants.sh --list gave no mutants" >&2; exit 2; }
  if [[ $(git rev-parse --is-shallow-repository 2>/dev/null) == false ]]; then
    hg=$(($(git rev-list --count HEAD) % ng))
  else
    hg=$((16#${head:0:7} % ng))
  fi
  gc=()
  for ((k = 0; k < ng; ++k)); do
    read -r id file <<<"${grows[$(((k + hg) % ng))]}"
    [[ -n ${touched[$file]:-} ]] && gc+=("$id")
  done
  if ((${#gc[@]})); then
    chosen=("${gc[@]:0:GMAX}")
    echo "mutants-slice: --gpu: commit ${head:0:12}; kernels/cuda files changed in the last $depth commit(s) or uncommitted have ${#gc[@]} GPU mutant(s): ${chosen[*]}$( ((${#gc[@]} > GMAX)) && echo " (the first $GMAX from place $hg; the rest in later runs)")"
  else
    read -r id file <<<"${grows[$hg]}"
    chosen=("$id")
    echo "mutants-slice: --gpu: commit ${head:0:12}; no file with GPU mutants changed in the last $depth commit(s): rotation place $hg of $ng, $id ($file)"
  fi
  [[ ${MUTANTS_SLICE_DRY:-0} == 1 ]] && exit 0
  MUTANTS_ONLY=$(IFS=,; echo "${chosen[*]}") exec scripts/gpu-mutants.sh
fi

# The groups: costliest first (list order among equals), each to the cheapest group so far.
declare -A group=()
load=()
for ((g = 0; g < R; ++g)); do load[g]=0; done
while read -r c i; do
  best=0
  for ((g = 1; g < R; ++g)); do ((load[g] < load[best])) && best=$g; done
  group[$i]=$best
  load[best]=$((load[best] + c))
done < <(for i in "${!rows[@]}"; do echo "$(cost "${rows[$i]#* }") $i"; done | sort -k1,1nr -k2,2n)
chosen=() why=() total=0
declare -A taken=()
for i in "${!rows[@]}"; do
  read -r id file <<<"${rows[$i]}"
  ((group[$i] == h)) || continue
  chosen+=("$id") taken[$id]=1 why+=("$id  rotation group $h of $R  ($file)")
  total=$((total + $(cost "$file")))
done
# Touched files' mutants, from a place set by h, so that a long list is not always cut at
# the same place.
cands=()
for i in "${!rows[@]}"; do
  read -r id file <<<"${rows[$i]}"
  [[ -n ${touched[$file]:-} && -z ${taken[$id]:-} ]] && cands+=("$id $file")
done
left=()
nc=${#cands[@]}
for ((k = 0; k < nc; ++k)); do
  read -r id file <<<"${cands[$(( (k + h) % nc ))]}"
  c=$(cost "$file")
  if ((${#chosen[@]} < MAX && total + c <= BUDGET)); then
    chosen+=("$id") why+=("$id  $file changed in the last $depth commit(s) or uncommitted")
    total=$((total + c))
  else
    left+=("$id")
  fi
done

echo "mutants-slice: commit ${head:0:12}, rotation group $h of $R from $how; files changed since ${base:0:12} ($depth commit(s)$( ((depth < COMMITS)) && echo ': shallow clone or short history')): ${#touched[@]}"
printf 'mutants-slice:   %s\n' "${why[@]}"
((${#left[@]})) && echo "mutants-slice: over the budget ($BUDGET lane-s, $MAX mutants), left for later runs: ${left[*]}"
echo "mutants-slice: ${#chosen[@]} of ${#rows[@]} mutants, estimated $total lane-seconds"
[[ ${MUTANTS_SLICE_DRY:-0} == 1 ]] && exit 0
MUTANTS_ONLY=$(IFS=,; echo "${chosen[*]}") exec scripts/mutants.sh
