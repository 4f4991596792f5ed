#!/usr/bin/env bash
# gpu-mutants.sh — do the [gpu] tests catch real bugs in the CUDA code? The GPU twin of
# scripts/mutants.sh: plants each deliberate bug of the list below, one at a time, in a
# scratch copy of the tree (outside the work tree, which is never touched), rebuilds the
# [gpu] test binary for GPGPU-Sim (only the changed unit and the link: the same configuration
# as scripts/gpusim-check.sh, through ccache, so the unchanged units are cache hits), runs
# the [gpu] cases meant to catch it on the simulator (a Catch2 filter per mutant, stopping at
# the first failure), and reports KILLED (a check failed, the simulator aborted, or the run
# hung past GPU_MUTANT_TIMEOUT) or SURVIVED (every case passed). Ends with the line
#   gpu-mutants: K of N killed
# Exit status: 0 when K >= 90 % of N; 1 below that; 2 when a pattern is not found exactly
# once (the source drifted: fix the list), a mutant does not compile, or a filter's cases
# fail (or do not run on the simulator) without any mutant. Where the simulator's tools are
# absent (../shared/tools/gpgpu-sim, or GPGPUSIM_TOOLS=DIR) it says so and exits 0, having
# run nothing, as scripts/gpusim-check.sh does.
#
# `--check`: only that every pattern is found exactly once (seconds, no build, no simulator);
# `--list`: "ID FILE" per mutant (scripts/mutants-slice.sh --gpu: CI's share).
# Environment: MUTANTS_ONLY (comma-separated ids), GPU_MUTANTS_REV (plant in that commit, not
# in the work tree: `git archive`; the work tree's uncommitted files by default), GPU_MUTANT_TIMEOUT (seconds per test run,
# 900), GPU_MUTANT_LANES (scratch copies working at once: one simulator process or build
# each; 2 with ccache, else 1), JOBS (build parallelism per lane, nproc), MUTANTS_KEEP=1 (keep
# the scratch folder), NNTRAIN_GPGPUSIM_PREFIX (the simulator's build, as gpusim-check.sh).
#
# Cost on 2 cores (docs/TESTING.md has the dated log): a simulator process spends ~10 s of
# CPU (30 s at load 3) loading the binary's PTX before its first case; the filters below are
# the cheapest cases that catch each bug. The first failure ends a run (--abort), so a killed
# mutant usually costs seconds of simulation; a survivor costs its filter in full.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC="$(pwd)"
JOBS="${JOBS:-$(nproc)}"
TIMEOUT="${GPU_MUTANT_TIMEOUT:-900}"
ONLY=",${MUTANTS_ONLY:-},"

ids=() files=() filters=() froms=() tos=() whats=()
# gmutant ID FILE TEST-FILTER FROM TO WHAT — FILTER is a Catch2 test spec for nntrain_gpu_tests
# (a comma separates alternatives: one in a case's name is written \,); each of its
# alternatives must name at least one case, which is checked before anything runs.
gmutant() { ids+=("$1"); files+=("$2"); filters+=("$3"); froms+=("$4"); tos+=("$5"); whats+=("$6"); }

# --- the resident path (kernels/cuda/resident.cu; the host's Adam table in gpu_backend.cpp) ---
gmutant res-slice-skipped kernels/cuda/resident.cu 'resident: one SGD step*' \
  'for (int j = 1; j < slices; ++j) sum = __fadd_rn(sum, B.part[j * pl + k]);' \
  'for (int j = 1; j < slices - 1; ++j) sum = __fadd_rn(sum, B.part[j * pl + k]);' \
  'resident: an owner sums all slices of its partial gradient but the last'
gmutant res-owner-layer kernels/cuda/resident.cu 'resident: one SGD step*' \
  'while (l + 1 < n.layers && k >= n.woff[l + 1]) ++l;' \
  'while (l + 1 < n.layers && k > n.woff[l + 1]) ++l;' \
  'resident: an owner places the first weight of each later layer in the layer before (range off by one)'
gmutant res-ragged-group kernels/cuda/resident.cu 'resident: one SGD step*' \
  'hi = min(n.batch4, (g + 1) * len) / 4;' \
  'hi = min(n.batch, (g + 1) * len) / 4;' \
  'resident: the last (ragged) float4 group of samples left out of the gradient'
gmutant res-adam-table-index kernels/cuda/resident.cu 'resident: shuffled mini-batches*' \
  'const AdamStep a = table[e * c.batches + b];' \
  'const AdamStep a = table[e * c.batches];' \
  "resident: every mini-batch of an epoch takes the epoch's first Adam bias correction"
gmutant res-adam-table-host kernels/cuda/gpu_backend.cpp 'resident: full batch\, Adam\, relu*' \
  'for (AdamStep& a : table_host_) a = adam_ = adam_next_step(adam_, hyper_);' \
  'for (AdamStep& a : table_host_) a = adam_next_step(adam_, hyper_);' \
  "resident: the host's Adam table never advances (every step is step 1)"
gmutant res-shuffle-row kernels/cuda/resident.cu 'resident: shuffled mini-batches*' \
  'const uint32_t pos = uint32_t(st.offset + s);' \
  'const uint32_t pos = uint32_t(s);' \
  "resident: every mini-batch reads the first batch's shuffled rows"
gmutant res-sync-missing kernels/cuda/resident.cu 'resident: one SGD step*' \
  '    grad_partials(B, n, l);
    __syncthreads();' \
  '    grad_partials(B, n, l);' \
  'resident: no barrier between the partial sums and the owners reading them'

# The exact-shape kernel (2-20-5-1 relu: resident_exact.cuh, built into resident.cu).
gmutant rex-slice-skipped kernels/cuda/resident_exact.cuh 'resident: one SGD step*' \
  'for (int g = 1; g < G; ++g) sum = __fadd_rn(sum, part[(g - 1) * kExItems + t.k]);' \
  'for (int g = 1; g < G - 1; ++g) sum = __fadd_rn(sum, part[(g - 1) * kExItems + t.k]);' \
  "resident exact kernel: an owner leaves out its item's last slice"
gmutant rex-owner-spos kernels/cuda/resident_exact.cuh 'resident: one SGD step*' \
  'if (k < 165) return kExSB1 + (k - 160);' \
  'if (k <= 165) return kExSB1 + (k - 160);' \
  "resident exact kernel: the owner of the last layer's first weight places it in the bias row (range off by one)"
gmutant rex-ragged-group kernels/cuda/resident_exact.cuh 'resident: one SGD step*' \
  't.hi4 = min(n.batch4 / 4, t.lo4 + len4);' \
  't.hi4 = min(n.batch / 4, t.lo4 + len4);' \
  'resident exact kernel: the last (ragged) float4 group of samples left out of the gradient'
gmutant rex-last-batch-scale kernels/cuda/resident_exact.cuh 'resident: shuffled mini-batches*' \
  'b == c.batches - 1 ? sc.two_last : sc.two_full);' \
  'sc.two_full);' \
  "resident exact kernel: the short last mini-batch's gradient scaled as a full batch's"
gmutant rex-adam-table-index kernels/cuda/resident_exact.cuh 'resident: shuffled mini-batches*' \
  'const AdamStep a = table[e * c.batches + b];' \
  'const AdamStep a = table[e * c.batches];' \
  "resident exact kernel: every mini-batch of an epoch takes the epoch's first Adam bias correction"
gmutant rex-shuffle-row kernels/cuda/resident_exact.cuh 'resident: shuffled mini-batches*' \
  'const uint32_t pos = uint32_t(b * n.batch + t.tid);' \
  'const uint32_t pos = uint32_t(b * count + t.tid);' \
  "resident exact kernel: the short last mini-batch starts at its own count times b, not the batch size's"
gmutant rex-sync-missing kernels/cuda/resident_exact.cuh 'resident: one SGD step*' \
  '    if (t.g > 0 && t.g < G) part[(t.g - 1) * kExItems + t.k] = sum;
    __syncthreads();' \
  '    if (t.g > 0 && t.g < G) part[(t.g - 1) * kExItems + t.k] = sum;' \
  "resident exact kernel: no barrier between the second slice's sums and the owners reading them"

# --- the fused path (kernels/cuda/fused_v2.cu) ------------------------------------------
gmutant v2-ticket-reset kernels/cuda/fused_v2.cu 'fused v2: one SGD step*,fused v2: shuffled mini-batches*' \
  'if (s_last) sc.tickets[1 + g] = 0;' \
  'if (s_last) (void)0;' \
  "fused v2: the last block does not reset its group's ticket (later steps never update)"
gmutant v2-ragged-live kernels/cuda/fused_v2.cu 'padding samples of a ragged batch*' \
  'const bool live = base + smp < d.count;' \
  'const bool live = base + smp <= d.count;' \
  'fused v2: the first padding sample of the ragged last block counts as a sample'
gmutant v2-adam-state kernels/cuda/fused_v2.cu 'fused v2: shuffled mini-batches*' \
  '    state->adam = a;' \
  '    (void)a;' \
  "fused v2: the step's Adam scalars are not stored (the bias correction stays at step 1)"
gmutant v2-shuffle-row kernels/cuda/fused_v2.cu 'fused v2: shuffled mini-batches*' \
  'batch_row(d, epoch, uint32_t(d.batch_offset + base + smp));' \
  'batch_row(d, epoch, uint32_t(base + smp));' \
  "fused v2: every mini-batch reads the first batch's shuffled rows"

# --- the cuBLAS path's kernels (kernels/cuda/mlp_kernels.cu) and the block reduction -------
gmutant cublas-bias-grad-last kernels/cuda/mlp_kernels.cu 'bias gradient two-stage*' \
  'const int s0 = r * chunk, s1 = min(count, s0 + chunk);' \
  'const int s0 = r * chunk, s1 = min(count - 1, s0 + chunk);' \
  "cuBLAS path: the bias gradient leaves out the last chunk's last sample"
gmutant cublas-act-derivative kernels/cuda/mlp_kernels.cu 'activation backward*' \
  'd[k] = __fmul_rn(d[k], act_derivative_from_output(a, y[k]));' \
  'd[k] = __fmul_rn(d[k], act_derivative_from_output(a, d[k]));' \
  "cuBLAS path: the activation's derivative taken at the delta, not the layer's output"
gmutant cublas-gather-offset kernels/cuda/mlp_kernels.cu 'gather reads*' \
  'const size_t row = batch_row(d, epoch, uint32_t(d.batch_offset + s));' \
  'const size_t row = batch_row(d, epoch, uint32_t(s));' \
  "cuBLAS path: every mini-batch gathers the first batch's rows"
gmutant cublas-adam-per-epoch kernels/cuda/mlp_kernels.cu 'MSE delta*' \
  '    st.adam = adam_next_step(st.adam, h);
    if (d.batch_index == d.batches - 1) {' \
  '    if (d.batch_index == d.batches - 1) {
      st.adam = adam_next_step(st.adam, h);' \
  "cuBLAS path: Adam's bias correction advances once per epoch, not per step"
gmutant reduce-last-level kernels/cuda/reduce.cuh 'MSE delta*' \
  'for (int stride = kThreads / 2; stride > 0; stride /= 2) {' \
  'for (int stride = kThreads / 2; stride > 1; stride /= 2) {' \
  "block reduction: the tree's last level is skipped (thread 1's half of the sum lost)"

# ---------------------------------------------------------------------------------------------
selected() { [[ "$ONLY" == ",," || "$ONLY" == *",$1,"* ]]; }
# The alternatives of a Catch2 filter, one a line (split at the commas not escaped).
alternatives() { printf '%s' "$1" | perl -ne 'print "$_\n" for split /(?<!\\),/'; }
occurrences() { FROM="${froms[$1]}" perl -0777 -ne '$n = () = /\Q$ENV{FROM}\E/g; print $n' "$2" 2>/dev/null || echo 0; }

if [[ "${1:-}" == --list ]]; then
  for i in "${!ids[@]}"; do echo "${ids[$i]} ${files[$i]}"; done
  exit 0
fi
if [[ "${1:-}" == --check ]]; then
  bad=0
  declare -A seen=()
  for i in "${!ids[@]}"; do
    c=$(occurrences "$i" "$SRC/${files[$i]}")
    if [[ "$c" != 1 ]]; then
      echo "gpu-mutants: ERROR: ${ids[$i]}: pattern found $c times in ${files[$i]}"
      bad=1
    fi
    [[ -n "${seen[${ids[$i]}]:-}" ]] && { echo "gpu-mutants: ERROR: ${ids[$i]} listed twice"; bad=1; }
    seen[${ids[$i]}]=1
  done
  echo "gpu-mutants: ${#ids[@]} mutants, $([[ $bad == 0 ]] && echo 'every pattern found once' || echo 'some patterns not found once')"
  exit $((bad * 2))
fi
if [[ "$ONLY" != ",," ]]; then
  for id in ${MUTANTS_ONLY//,/ }; do
    [[ " ${ids[*]} " == *" $id "* ]] || { echo "gpu-mutants: ERROR: MUTANTS_ONLY names $id, which is not in the list"; exit 2; }
  done
fi

# --- the simulator (as scripts/gpusim-check.sh) ----------------------------------------------
TOOLS=${GPGPUSIM_TOOLS:-$SRC/../shared/tools/gpgpu-sim}
if [[ ! -f "$TOOLS/build-gpgpusim.sh" ]]; then
  echo "gpu-mutants: GPGPU-Sim's tools are absent ($TOOLS; set GPGPUSIM_TOOLS=DIR): nothing was run."
  exit 0
fi
PREFIX=${NNTRAIN_GPGPUSIM_PREFIX:-$HOME/.cache/nntrain/gpgpusim}
export PATH="/usr/local/cuda/bin:$PATH"
start=$(date +%s)
mkdir -p "$(dirname "$PREFIX")"
LOCK=()
command -v flock >/dev/null && LOCK=(flock "$PREFIX.lock")
if ! "${LOCK[@]}" "$TOOLS/build-gpgpusim.sh" "$PREFIX" >/tmp/gpu-mutants-simbuild.$$.log 2>&1 || [[ ! -f "$PREFIX/env.sh" ]]; then
  tail -20 /tmp/gpu-mutants-simbuild.$$.log
  echo "gpu-mutants: ERROR: the simulator does not build"
  exit 2
fi
rm -f /tmp/gpu-mutants-simbuild.$$.log

SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/nntrain-gpu-mutants.XXXXXX")"
kill_tree() {  # kill_tree PID: the process and its descendants (a lane's build or simulator)
  local c
  for c in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$c"; done
  kill "$1" 2>/dev/null || true
}
cleanup() {
  local p
  for p in $(jobs -p); do kill_tree "$p"; done
  wait 2>/dev/null || true
  [[ "${MUTANTS_KEEP:-0}" == 1 ]] || rm -rf "$SCRATCH"
}
trap cleanup EXIT
[[ "${MUTANTS_KEEP:-0}" == 1 ]] && echo "gpu-mutants: scratch copy kept in $SCRATCH"

have_ccache=0
command -v ccache >/dev/null 2>&1 && [[ "${NNTRAIN_CCACHE:-1}" != 0 ]] && have_ccache=1
LANES=${GPU_MUTANT_LANES:-$((have_ccache ? 2 : 1))}
((LANES >= 1)) || LANES=1
wanted=0
for id in "${ids[@]}"; do selected "$id" && wanted=$((wanted + 1)); done
((LANES > wanted && wanted > 0)) && LANES=$wanted
launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER= -DCMAKE_CUDA_COMPILER_LAUNCHER=)
if ((have_ccache)); then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  export CCACHE_NOHASHDIR=1
fi
CUDART_SO=$(dirname "$(dirname "$(command -v nvcc)")")/lib64/libcudart.so
lane_dir() { echo "$SCRATCH/lane$1"; }
if [[ -n "${GPU_MUTANTS_REV:-}" ]]; then
  what="commit $(git rev-parse --short=12 "$GPU_MUTANTS_REV^{commit}")"
else
  what="the work tree at $(git rev-parse --short=12 HEAD 2>/dev/null || echo '?')"
  [[ -n "$(git status --porcelain -- kernels/cuda tests/gpu 2>/dev/null)" ]] && what+=" + uncommitted changes in kernels/cuda or tests/gpu"
fi
echo "gpu-mutants: $what, $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "gpu-mutants: copying the tree to $SCRATCH ($LANES lane$( ((LANES > 1)) && echo s))"
mkdir -p "$SCRATCH/lane1" "$SCRATCH/results"
if [[ -n "${GPU_MUTANTS_REV:-}" ]]; then
  # A commit, not the work tree (where other changes may be half done).
  git archive "$GPU_MUTANTS_REV" | tar -xf - -C "$SCRATCH/lane1"
else
  # Tracked and untracked-but-not-ignored files: what a commit of the work tree would hold.
  git ls-files -z --cached --others --exclude-standard |
    tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$SCRATCH/lane1"
fi
for ((k = 2; k <= LANES; ++k)); do cp -a "$SCRATCH/lane1" "$SCRATCH/lane$k"; done
for ((k = 1; k <= LANES; ++k)); do
  mkdir -p "$SCRATCH/run$k" && cp "$PREFIX"/simcfg/* "$SCRATCH/run$k"/
done
# The build folder is named as gpusim-check.sh's (build-sim), its compile lines relative to
# the copy (CCACHE_BASEDIR): the objects that script compiled are hits here.
configure() {
  local d
  d=$(lane_dir "$1")
  CCACHE_BASEDIR="$d" cmake -S "$d" -B "$d/build-sim" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=75-virtual -DCMAKE_CUDA_RUNTIME_LIBRARY=Shared \
    -DCUDA_cudart_static_LIBRARY="$CUDART_SO" "${launcher[@]}" >"$d/configure.log" 2>&1 &&
    grep -q "CUDA backend ON" "$d/configure.log"
}
build() {
  local d
  d=$(lane_dir "$1")
  CCACHE_BASEDIR="$d" nice cmake --build "$d/build-sim" --parallel "$JOBS" --target nntrain_gpu_tests >"$d/build.log" 2>&1
}
echo "gpu-mutants: building the scratch copies for the simulator (compute_75 PTX, shared cudart$( ((have_ccache)) && echo ', through ccache'))"
for ((k = 1; k <= LANES; ++k)); do
  if ! configure "$k" || ! build "$k"; then
    tail -n 30 "$(lane_dir "$k")/configure.log" "$(lane_dir "$k")/build.log" 2>/dev/null
    echo "gpu-mutants: ERROR: the unmutated copy $k does not configure or build (needs nvcc)"
    exit 2
  fi
done
echo "gpu-mutants: built in $(($(date +%s) - start)) s"

# Every alternative of every filter names a case (listing runs no GPU code: the real CUDA
# runtime, not the simulator's): a misspelt one would otherwise run nothing and pass.
gt="$(lane_dir 1)/build-sim/tests/nntrain_gpu_tests"
for i in "${!ids[@]}"; do
  selected "${ids[$i]}" || continue
  while IFS= read -r alt; do
    if [[ -z "$("$gt" --list-test-names-only "$alt" 2>/dev/null | sed -e '/^[[:space:]]*$/d')" ]]; then
      echo "gpu-mutants: ERROR: ${ids[$i]}: its filter's part '$alt' names no [gpu] test case"
      exit 2
    fi
  done < <(alternatives "${filters[$i]}")
done

# run_filter LANE FILTER LOG: the filter's cases on the simulator, in the lane's run folder
# (GPGPU-Sim writes fixed-name scratch files where it runs); the exit status of the tests.
run_filter() {
  (
    set +u
    # shellcheck disable=SC1091
    source "$PREFIX/env.sh"
    cd "$SCRATCH/run$1" && exec timeout "$TIMEOUT" nice "$(lane_dir "$1")/build-sim/tests/nntrain_gpu_tests" --abort "$2"
  ) >"$3" 2>&1
}
# The first test case that failed, from Catch2's console report (or what went wrong).
killed_by() {  # killed_by LOG RC
  local name
  name=$(awk '/^-+$/ && length($0) > 70 { h = !h; if (h) n = ""; else print n; next }
    h { sub(/^ +/, ""); n = n (n == "" ? "" : " ") $0 }' <(awk '/FAILED:|failed: /{ exit } { print }' "$1") | tail -n 1)
  if [[ $2 == 124 ]]; then echo "timed out after ${TIMEOUT} s"
  elif [[ -n $name ]]; then echo "$name"
  elif grep -q 'GPGPU-Sim.*ERROR\|Aborted\|Segmentation' "$1"; then echo "the simulator aborted (rc $2)"
  else echo "rc $2"; fi
}

# Tasks: first the filters without a mutant (they must pass on the simulator, or a "kill"
# means nothing), then the mutants; lanes take them from one queue. The distinct filters are
# dealt into one baseline run per lane (a Catch2 spec "a,b" runs the cases of a or b): the
# simulator's start, not the cases, is most of a short run.
n=0 errors=0
tasks=()
declare -A seen_filter=()
base=()
for i in "${!ids[@]}"; do
  selected "${ids[$i]}" || continue
  while IFS= read -r f; do
    [[ -n "${seen_filter[$f]:-}" ]] && continue
    seen_filter[$f]=1
    g=$((${#seen_filter[@]} % LANES))
    base[g]="${base[g]:+${base[g]},}$f"
  done < <(alternatives "${filters[$i]}")
done
for g in "${!base[@]}"; do tasks+=("base:${base[$g]}"); done
nbase=${#tasks[@]}
for i in "${!ids[@]}"; do
  id="${ids[$i]}"
  selected "$id" || continue
  n=$((n + 1))
  count=$(occurrences "$i" "$SCRATCH/lane1/${files[$i]}")
  if [[ "$count" != 1 ]]; then
    printf 'ERROR     %-24s pattern found %s times in %s (source drifted: update the list)\n' "$id" "$count" "${files[$i]}"
    echo ERROR >"$SCRATCH/results/m$i"
    continue
  fi
  tasks+=("mut:$i")
done

run_base() {  # run_base LANE TASK-INDEX FILTER
  local t0 rc=0 log="$SCRATCH/results/base$2.log"
  t0=$(date +%s)
  run_filter "$1" "$3" "$log" || rc=$?
  if [[ $rc == 0 ]] && grep -q '^GPU: GPGPU-Sim' "$log" && grep -q '^All tests passed' "$log"; then
    echo ok >"$SCRATCH/results/base$2"
    printf 'baseline  passes on the simulator: %s [%d s]\n' "'$3'" $(($(date +%s) - t0))
  else
    echo bad >"$SCRATCH/results/base$2"
    printf 'ERROR     baseline %s fails or does not run on the simulator without any mutant (rc %s)\n%s\n' "'$3'" \
      "$rc" "$(grep -E -A3 'FAILED:|skipped' "$log" | head -8)"
  fi
}
run_mutant() {  # run_mutant LANE INDEX
  local k=$1 i=$2 id="${ids[$2]}" file t0 tb outcome rc=0 log="$SCRATCH/results/m$2.log" by=""
  file="$(lane_dir "$k")/${files[$i]}"
  t0=$(date +%s)
  cp "$file" "$SCRATCH/orig$k"
  FROM="${froms[$i]}" TO="${tos[$i]}" perl -0777 -pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/' "$file"
  if ! build "$k"; then
    outcome=ERROR
    printf 'ERROR     %-24s does not compile (fix the mutant)\n%s\n' "$id" \
      "$(grep -m 3 'error' "$(lane_dir "$k")/build.log" || true)"
  else
    tb=$(($(date +%s) - t0))
    run_filter "$k" "${filters[$i]}" "$log" || rc=$?
    if [[ $rc == 0 ]] && grep -q '^All tests passed' "$log"; then
      outcome=SURVIVED
    elif grep -q '^No tests ran' "$log"; then
      outcome=ERROR
      by="no test case ran"
    elif grep -q 'ERROR while parsing output of ptxas' "$log"; then
      # The mutated kernel needs a stack frame, whose ptxas report GPGPU-Sim cannot parse: it
      # stops before any case runs. Not a kill, and nothing to learn: left out of N.
      outcome=NOTRUN
      by="the simulator cannot load the mutated code (ptxas reports a stack frame)"
    else
      outcome=KILLED
      by="killed by \"$(killed_by "$log" "$rc")\""
    fi
    printf '%-9s %-24s %s  [%s%s; build %d s, all %d s]\n' "$outcome" "$id" "${whats[$i]}" "${filters[$i]}" \
      "${by:+: $by}" "$tb" $(($(date +%s) - t0))
  fi
  cp "$SCRATCH/orig$k" "$file"
  touch "$file"  # newer than the mutant's objects: the next build recompiles it (a ccache hit)
  echo "$outcome" >"$SCRATCH/results/m$i"
}
take() {
  local next
  {
    flock 9
    next=$(cat "$SCRATCH/next")
    echo $((next + 1)) >"$SCRATCH/next"
  } 9>"$SCRATCH/next.lock"
  ((next < ${#tasks[@]})) && echo "$next"
  return 0
}
lane() {
  local k=$1 q t
  while q=$(take) && [[ -n "$q" ]]; do
    t=${tasks[$q]}
    case $t in
      base:*) run_base "$k" "$q" "${t#base:}" ;;
      mut:*) run_mutant "$k" "${t#mut:}" ;;
    esac
  done
}
echo 0 >"$SCRATCH/next"
pids=()
for ((k = 1; k <= LANES; ++k)); do
  lane "$k" &
  pids+=($!)
done
wait "${pids[@]}" || true

killed=0 not_run=0
for ((q = 0; q < nbase; ++q)); do
  [[ "$(cat "$SCRATCH/results/base$q" 2>/dev/null)" == ok ]] || errors=$((errors + 1))
done
for i in "${!ids[@]}"; do
  selected "${ids[$i]}" || continue
  case "$(cat "$SCRATCH/results/m$i" 2>/dev/null || echo LOST)" in
    KILLED) killed=$((killed + 1)) ;;
    SURVIVED) ;;
    NOTRUN) n=$((n - 1)) not_run=$((not_run + 1)) ;;
    ERROR) errors=$((errors + 1)) ;;
    *) printf 'ERROR     %-24s no outcome recorded (its lane stopped)\n' "${ids[$i]}"; errors=$((errors + 1)) ;;
  esac
done
echo "gpu-mutants: $(($(date +%s) - start)) s in all ($LANES lane$( ((LANES > 1)) && echo s)), load average now $(cut -d' ' -f1-3 /proc/loadavg)"
echo "gpu-mutants: $killed of $n killed$( ((not_run)) && echo " ($not_run not run: the simulator cannot load the mutated code)")"
((errors > 0)) && exit 2
((n > 0 && killed * 10 < n * 9)) && exit 1
exit 0
