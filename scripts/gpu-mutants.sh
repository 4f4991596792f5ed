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
# `--apply`: every row planted in a scratch copy and restored, each checked to change its
# file (no build, no simulator); `--list`: "ID FILE" per mutant (scripts/mutants-slice.sh
# --gpu: CI's share). The lanes, planting and report are scripts/lib/mutant-lanes.sh's,
# shared with scripts/mutants.sh; this file holds the rows and the simulator's build and runs.
# Environment: MUTANTS_ONLY (comma-separated ids), GPU_MUTANTS_REV (plant in that commit, not
# in the work tree: `git archive`; the work tree's uncommitted files by default), GPU_MUTANT_TIMEOUT (seconds per test run,
# 900), GPU_MUTANT_LANES (scratch copies working at once: one simulator process or build
# each; 2 with ccache, else 1), JOBS (build parallelism per lane, nproc), MUTANTS_KEEP=1 (keep
# the scratch folder), NNTRAIN_CCACHE=0 (no ccache), NNTRAIN_GPGPUSIM_PREFIX (the simulator's
# build, as gpusim-check.sh).
#
# Cost on 2 cores (docs/TESTING.md has the dated log): a simulator process spends ~10 s of
# CPU (30 s at load 3) loading the binary's PTX before its first case; the filters below are
# the cheapest cases that catch each bug. The first failure ends a run (--abort), so a killed
# mutant usually costs seconds of simulation; a survivor costs its filter in full.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/mutant-lanes.sh
source scripts/lib/mutant-lanes.sh  # the lanes, planting, bookkeeping and report: one copy for both
ML_NAME=gpu-mutants
TIMEOUT="${GPU_MUTANT_TIMEOUT:-900}"

# gmutant ID FILE TEST-FILTER FROM TO WHAT — FILTER is a Catch2 test spec for nntrain_gpu_tests
# (a comma separates alternatives: one in a case's name is written \,); each of its
# alternatives must name at least one case, which is checked before anything runs.
gmutant() { mutant "$@"; }

# --- the resident path (kernels/cuda/resident.cu; the host's Adam table in gpu_backend.cpp) ---
gmutant res-slice-skipped kernels/cuda/resident_stages.cuh 'resident: one SGD step*' \
  'for (int j = 1; j < slices; ++j) sum = __fadd_rn(sum, B.part[j * pl + k]);' \
  'for (int j = 1; j < slices - 1; ++j) sum = __fadd_rn(sum, B.part[j * pl + k]);' \
  'resident: an owner sums all slices of its partial gradient but the last'
gmutant res-owner-layer kernels/cuda/resident_stages.cuh 'resident: one SGD step*' \
  'while (l + 1 < n.layers && k >= n.woff[l + 1]) ++l;' \
  'while (l + 1 < n.layers && k > n.woff[l + 1]) ++l;' \
  'resident: an owner places the first weight of each later layer in the layer before (range off by one)'
gmutant res-ragged-group kernels/cuda/resident_stages.cuh 'resident: one SGD step*' \
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
gmutant res-shuffle-row kernels/cuda/resident_stages.cuh 'resident: shuffled mini-batches*' \
  'const uint32_t pos = uint32_t(st.offset + s);' \
  'const uint32_t pos = uint32_t(s);' \
  "resident: every mini-batch reads the first batch's shuffled rows"
gmutant res-sync-missing kernels/cuda/resident_stages.cuh 'resident: one SGD step*' \
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

# The cooperative grid (kernels/cuda/resident_grid.cu): NNTRAIN_RESIDENT_GRID_BLOCKS forces it.
gmutant grid-exchange-order kernels/cuda/resident_grid_exchange.cuh 'resident grid: the exchange sums*' \
  'for (int q = o.lane; q < groups; q += 32) s = __fadd_rn(s, __ldcg(row + q));' \
  'for (int q = groups - 1 - o.lane; q >= 0; q -= 32) s = __fadd_rn(s, __ldcg(row + q));' \
  'resident grid: the exchange sums every group once but in another order (the same at every block count)'
gmutant grid-ragged-group kernels/cuda/resident_grid_exchange.cuh 'resident grid: full batch follows*' \
  'st.count = min(n.batch, count - g * n.batch);' \
  'st.count = n.batch;' \
  "resident grid: the last (ragged) group's padding columns count as samples"
gmutant grid-owner-range kernels/cuda/resident_grid_exchange.cuh 'resident grid: the exchange sums*' \
  'if (k >= params) break;  // the same for the whole warp' \
  'if (k >= params - 1) break;  // the same for the whole warp' \
  "resident grid: the exchange leaves out each warp's parameter past params - 1 (an owner's range off by one)"
gmutant grid-sync-missing kernels/cuda/resident_grid.cu 'resident grid: the exchange sums*' \
  '    group_gradient<K>(B, n, c, group_step(n, c, a, epoch, b, g), reload, a, own, g);
  cg::this_grid().sync();' \
  '    group_gradient<K>(B, n, c, group_step(n, c, a, epoch, b, g), reload, a, own, g);' \
  "resident grid: no grid barrier between the groups' gradients and the exchange that reads them"
# The grid's exact-shape group stage (kernels/cuda/resident_grid_exact.cuh, 2-20-5-1 relu).
gmutant gx-slice-skipped kernels/cuda/resident_grid_exact.cuh 'resident grid (exact shape): one SGD*' \
  'for (int s = 1; s < S; ++s) sum = __fadd_rn(sum, part[s * kExItems + k]);' \
  'for (int s = 1; s < S - 1; ++s) sum = __fadd_rn(sum, part[s * kExItems + k]);' \
  "resident grid, exact stage: a group's gradient items leave out their second slice of samples"
gmutant gx-ragged-group kernels/cuda/resident_grid_exact.cuh 'resident grid (exact shape): one SGD*' \
  'const bool live = t.tid < st.count;' \
  'const bool live = t.tid < n.batch;' \
  "resident grid, exact stage: the last (ragged) group's padding columns count as samples"
gmutant gx-narrow-items kernels/cuda/resident_grid_exact.cuh 'resident grid (exact shape): one SGD*' \
  'for (int i = t.tid; i < S * kExItems; i += blockDim.x) {' \
  'for (int i = t.tid; i < min(S * kExItems, int(blockDim.x)); i += blockDim.x) {' \
  "resident grid, exact stage: a thread sums one gradient item only (a narrow block leaves items out)"
gmutant gx-combine-barrier kernels/cuda/resident_grid_exact.cuh 'resident grid (exact shape): one SGD*' \
  'if (S > 1) {' \
  'if (S > 1) { if (false)' \
  "resident grid, exact stage: no barrier between the slices' sums and the combine that reads them"
gmutant gx-narrow-regs kernels/cuda/resident_grid_exact.cuh 'resident grid (exact shape): full batch*' \
  ': resident_grid_exact_kernel<kGxNarrow, 4, false>;' \
  ': resident_grid_exact_kernel<kGxMaxThreads, 1, false>;' \
  "resident grid, exact stage: the narrow block runs the wide block's kernel (150/153 registers: three per SM, not four)"
gmutant stamps-lost-phase kernels/cuda/resident_grid_exact.cuh 'resident grid (exact shape): the stamped kernel*' \
  'sp.mark(kStSync2);' \
  '' \
  "resident grid stamps: the second grid.sync's wait is not stamped (it lands in the weights' copy)"
gmutant stamps-not-run kernels/cuda/resident_grid_exact.cuh 'resident grid (exact shape): the stamped kernel*' \
  'return stamps ? resident_grid_exact_kernel<kGxMaxThreads, 1, true>' \
  'return false ? resident_grid_exact_kernel<kGxMaxThreads, 1, true>' \
  "resident grid stamps: the wide block runs the plain kernel where stamps are asked for (an empty file)"
gmutant gx-loss-writer kernels/cuda/resident_grid_exact.cuh 'resident grid (exact shape): the loss summed*' \
  'if (gx_loss_warp(o) && o.lane == 0) a.losses[e] =' \
  'if (blockIdx.x == 0 && t.tid == 0) a.losses[e] =' \
  "resident grid, exact stage: block 0 records the epoch's loss where another warp summed it"
gmutant gx-narrow-weights kernels/cuda/resident_grid_exact.cuh 'resident grid (exact shape): one SGD*' \
  'for (int k = threadIdx.x; k < kExParams; k += blockDim.x) sw[exact_spos(k)] = __ldcg(w + k);' \
  'for (int k = threadIdx.x; k < kExParams; k += 352) sw[exact_spos(k)] = __ldcg(w + k);' \
  "resident grid, exact stage: the weights' copy strides by the wide block (a narrow block misses some)"

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

# --- state that must be reset when the backend is loaded again (issue 46, class 1) --------
gmutant load-keeps-epoch kernels/cuda/mlp_kernels.cu 'GPU run_training on fused v2*' \
  '  st.epoch = 0;' \
  '  st.epoch = state->epoch;' \
  "every GPU path: load() keeps the shuffle's epoch counter (a warm-up shifts every shuffle after it)"
gmutant res-load-keeps-adam kernels/cuda/gpu_backend.cpp 'GPU run_training on the resident exact*' \
  '    adam_ = adam_initial_step();
    stream_->synchronize();' \
  '    stream_->synchronize();' \
  "resident: load() keeps the host's staged Adam step (a re-loaded run's bias correction starts late)"

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

# --- the fused path's compute stages (kernels/cuda/fused_v2_stages.cuh; added 2026-11-29:
# `auto`'s path had no planted bug in its forward, loss, backward or partial gradient) ------
gmutant v2s-fwd-exact-input kernels/cuda/fused_v2_stages.cuh 'fused v2: every register bucket*' \
  'if (!Shape::kExact || 4 * c + 3 < in) acc = fmaf(wv.w, a[4 * c + 3], acc);' \
  'if (!Shape::kExact || 4 * c + 3 < in - 1) acc = fmaf(wv.w, a[4 * c + 3], acc);' \
  "fused v2, exact shape: the forward leaves out a layer's input 19 (the last of its float4s)"
gmutant v2s-fwd-last-output kernels/cuda/fused_v2_stages.cuh 'fused v2: every register bucket*' \
  'for (int o = part; o < out; o += T) output(o);' \
  'for (int o = part; o < out - 1; o += T) output(o);' \
  "fused v2, register buckets: the forward never writes a layer's last output"
gmutant v2s-loss-every-part kernels/cuda/fused_v2_stages.cuh 'fused v2: every register bucket*' \
  'if (part == 0) loss += double(mse_term(p, t));' \
  'loss += double(mse_term(p, t));' \
  "fused v2, exact shape: every thread of a sample adds its loss (4 threads: the loss 4x)"
gmutant v2s-loss-first-target kernels/cuda/fused_v2_stages.cuh 'fused v2: one SGD step*' \
  't = o == 0 ? y0 : y[row * n_out + o];' \
  't = y0;' \
  "fused v2: every output is compared with the first target (nets of several outputs)"
gmutant v2s-backsplit-outputs kernels/cuda/fused_v2_stages.cuh 'fused v2: every register bucket*' \
  'if (4 * c >= out) break;' \
  'if (4 * c >= out - 1) break;' \
  "fused v2, exact shape: the backward leaves out the 5th output's delta"
gmutant v2s-backone-derivative kernels/cuda/fused_v2_stages.cuh 'fused v2: every register bucket*' \
  'dl[i] = __fmul_rn(nd[i], act_derivative_from_output(act, al[i]));' \
  'dl[i] = __fmul_rn(nd[i], act_derivative_from_output(act, dl[i]));' \
  "fused v2, register buckets: the activation's derivative taken at the delta, not the layer's output"
gmutant v2s-partials-tile-end kernels/cuda/fused_v2_stages.cuh 'fused v2: one SGD step*' \
  'for (int j = 0; j < S / 4; ++j) {' \
  'for (int j = 0; j < S / 4 - 1; ++j) {' \
  "fused v2: a block's partial gradient leaves out the tile's last 4 samples"
gmutant v2s-partials-layer kernels/cuda/fused_v2_stages.cuh 'fused v2: one SGD step*' \
  'while (l + 1 < L && k >= net.woff[l + 1]) ++l;' \
  'while (l + 1 < L && k > net.woff[l + 1]) ++l;' \
  "fused v2, register buckets: a layer's first weight gets its gradient from the layer below's rows"
gmutant v2s-bias-row kernels/cuda/fused_v2_stages.cuh 'fused v2: one SGD step*' \
  '          arow = net.rows;' \
  '          arow = net.rows - 1;' \
  "fused v2, register buckets: the bias gradient multiplies by an activation row, not the row of ones"
gmutant v2s-block-loss-warps kernels/cuda/fused_v2_stages.cuh 'fused v2: every register bucket*' \
  'for (int j = 1; j < NT / 32; ++j) ls += sloss[j];' \
  'for (int j = 1; j < NT / 32 - 1; ++j) ls += sloss[j];' \
  "fused v2: a block's loss leaves out its last warp's samples"
gmutant v2s-exact-last-param kernels/cuda/fused_v2_stages.cuh 'fused v2: every register bucket*' \
  'if (tid + r * NT < P) place_exact<Shape>(tid + r * NT, w[tid + r * NT], sw, st);' \
  'if (tid + r * NT < P - 1) place_exact<Shape>(tid + r * NT, w[tid + r * NT], sw, st);' \
  "fused v2, exact shape: the output bias is never loaded into shared memory"

# ---------------------------------------------------------------------------------------------
# What differs from mutants.sh: the [gpu] test binary built for GPGPU-Sim, its filters checked
# to name cases, their baselines run as tasks of the queue, each run in a simulator process.
LANES=${GPU_MUTANT_LANES:-$((have_ccache ? 2 : 1))}
ML_REV=${GPU_MUTANTS_REV:-}
ML_WATCH=(kernels/cuda tests/gpu)
ML_BUILD_WHAT="for the simulator: compute_75 PTX, shared cudart"
ML_NOT_RUN_WHY="the simulator cannot load the mutated code"
# The alternatives of a Catch2 filter, one a line (split at the commas not escaped).
alternatives() { printf '%s' "$1" | perl -ne 'print "$_\n" for split /(?<!\\),/'; }

ml_prepare() {  # the simulator, as scripts/gpusim-check.sh builds it (or nothing to run)
  TOOLS=${GPGPUSIM_TOOLS:-$SRC/../shared/tools/gpgpu-sim}
  if [[ ! -f "$TOOLS/build-gpgpusim.sh" ]]; then
    echo "gpu-mutants: GPGPU-Sim's tools are absent ($TOOLS; set GPGPUSIM_TOOLS=DIR): nothing was run."
    exit 0
  fi
  PREFIX=${NNTRAIN_GPGPUSIM_PREFIX:-$HOME/.cache/nntrain/gpgpusim}
  export PATH="/usr/local/cuda/bin:$PATH"
  mkdir -p "$(dirname "$PREFIX")"
  local lock=()
  command -v flock >/dev/null && lock=(flock "$PREFIX.lock")
  if ! "${lock[@]}" "$TOOLS/build-gpgpusim.sh" "$PREFIX" >/tmp/gpu-mutants-simbuild.$$.log 2>&1 || [[ ! -f "$PREFIX/env.sh" ]]; then
    tail -20 /tmp/gpu-mutants-simbuild.$$.log
    echo "gpu-mutants: ERROR: the simulator does not build"
    exit 2
  fi
  rm -f /tmp/gpu-mutants-simbuild.$$.log
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER= -DCMAKE_CUDA_COMPILER_LAUNCHER=)
  ((have_ccache)) && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  CUDART_SO=$(dirname "$(dirname "$(command -v nvcc)")")/lib64/libcudart.so
}
ml_run_dir() { cp "$PREFIX"/simcfg/* "$SCRATCH/run$1"/; }
# The build folder is named as gpusim-check.sh's (build-sim), its compile lines relative to
# the copy (CCACHE_BASEDIR): the objects that script compiled are hits here.
ml_configure() {
  local d
  d=$(lane_dir "$1")
  CCACHE_BASEDIR="$d" cmake -S "$d" -B "$d/build-sim" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=75-virtual -DCMAKE_CUDA_RUNTIME_LIBRARY=Shared \
    -DCUDA_cudart_static_LIBRARY="$CUDART_SO" "${launcher[@]}" >"$d/configure.log" 2>&1 &&
    grep -q "CUDA backend ON" "$d/configure.log"
}
ml_build() {
  local d
  d=$(lane_dir "$1")
  CCACHE_BASEDIR="$d" nice cmake --build "$d/build-sim" --parallel "$JOBS" --target nntrain_gpu_tests >"$d/build.log" 2>&1
}

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

# Every alternative of every filter names a case (listing runs no GPU code: the real CUDA
# runtime, not the simulator's): a misspelt one would otherwise run nothing and pass. Then
# the filters without a mutant (they must pass on the simulator, or a "kill" means nothing),
# as the queue's first tasks: the distinct filters dealt into one baseline run per lane (a
# Catch2 spec "a,b" runs the cases of a or b): the simulator's start, not the cases, is most
# of a short run.
ml_before_queue() {
  local i alt f g gt base=()
  declare -A seen_filter=()
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
}
ml_other_task() {  # ml_other_task LANE TASK-INDEX base:FILTER
  local t0 rc=0 log="$SCRATCH/results/base$2.log" f=${3#base:}
  t0=$(date +%s)
  run_filter "$1" "$f" "$log" || rc=$?
  if [[ $rc == 0 ]] && grep -q '^GPU: GPGPU-Sim' "$log" && grep -q '^All tests passed' "$log"; then
    echo ok >"$SCRATCH/results/base$2"
    printf 'baseline  passes on the simulator: %s [%d s]\n' "'$f'" $(($(date +%s) - t0))
  else
    echo bad >"$SCRATCH/results/base$2"
    printf 'ERROR     baseline %s fails or does not run on the simulator without any mutant (rc %s)\n%s\n' "'$f'" \
      "$rc" "$(grep -E -A3 'FAILED:|skipped' "$log" | head -8)"
  fi
}
ml_after_queue() {
  local q
  for ((q = 0; q < nbase; ++q)); do
    [[ "$(cat "$SCRATCH/results/base$q" 2>/dev/null)" == ok ]] || errors=$((errors + 1))
  done
}
ml_test_mutant() {  # ml_test_mutant LANE INDEX T0
  local k=$1 i=$2 tb rc=0 log="$SCRATCH/results/m$2.log" by=""
  tb=$(($(date +%s) - $3))
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
  elif [[ $rc == 77 ]] || ! grep -q '^GPU: GPGPU-Sim' "$log"; then
    # Skipped (no device) or never reached the simulator: nothing was tested, so no kill.
    outcome=ERROR
    by="the run did not reach the simulated GPU (rc $rc)"
  else
    outcome=KILLED
    by="killed by \"$(killed_by "$log" "$rc")\""
  fi
  printf '%-9s %-24s %s  [%s%s; build %d s, all %d s]\n' "$outcome" "${ids[$i]}" "${whats[$i]}" "${filters[$i]}" \
    "${by:+: $by}" "$tb" $(($(date +%s) - $3))
}
ml_main "$@"
