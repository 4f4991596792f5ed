// resident_grid_exact.cuh — the cooperative grid's exact-shape group stage (2-20-5-1, relu,
// relu, identity): included by resident_grid.cu after its exchange, so the grid's step is the
// generic one (group stage, grid.sync(), exchange + optimizer, grid.sync(), weights copied)
// with the group stage done the exact kernel's way (resident_exact.cuh):
//
//   * one thread per sample of the group: exact_forward / exact_backward in registers, its
//     column of every row written (one pass: a group's rows always fit);
//   * one barrier, then every gradient item (171 parameters and the loss) summed over its
//     slice of the group's columns by exact_reduce; with two slices a second barrier and
//     slice 0's thread adds slice 1's sum (so a group's sums have the one-block kernel's order
//     for a batch of the group's size);
//   * slice 0's item k writes gpart[k][group], the loss item gloss[group].
// 2 barriers per group (+1 before a block's next group) against the generic stage's 2 per layer. The group size is a constant
// (kGxGroup), so every order depends on the net and the batch alone, never on the blocks.
#pragma once

#include "resident_exact.cuh"
#include "resident_grid_exchange.cuh"

namespace nntrain::cuda {
namespace {

// Samples per group: 128 (SIMULATION at 2,000 samples: 8,720 cycles per epoch against 10,789
// for groups of 256; docs/journal/2026-11-29-grid-exact.md). More groups give more blocks
// work; each group costs the same two barriers and an exchange column.
constexpr int kGxGroup = 128;
constexpr int kGxMaxThreads = 384;  // 2 slices × 172 items, rounded up: 168 registers per thread

// Stage "load" of the launch: the padded weights and the row of ones; the block's group's
// samples kept in registers where it keeps one group of a full batch (reload false).
__device__ inline ExThread gx_prologue(float* sw, float* rows, const ResidentNet& n, const GridArgs& a, bool reload) {
  ExThread t = exact_items(sw, rows, n);
  t.w = t.m = t.v = 0.0f;  // the owners are the exchange's lanes (Owner), not these threads
  __syncthreads();
  t.spos = t.g == 0 && t.k < kExParams ? exact_spos(t.k) : 0;
  if (t.g == 0 && t.k < kExParams) sw[t.spos] = a.w[t.k];
  const int s = int(blockIdx.x) * n.batch + t.tid;  // the block's group of step 0
  const bool live = !reload && t.tid < n.batch && s < a.batch;
  t.x0 = live ? __ldg(a.x + 2 * size_t(s)) : 0.0f;
  t.x1 = live ? __ldg(a.x + 2 * size_t(s) + 1) : 0.0f;
  t.y = live ? __ldg(a.y + s) : 0.0f;
  __syncthreads();  // every weight placed before any thread's first forward reads it
  return t;
}

// Stages "load" (reload) + "forward" + "backward" of the thread's sample of group `st`, its
// column written. Dead columns (past the group's count) get zero deltas and loss.
__device__ __forceinline__ void gx_sample(const ExThread& t, float* sw, float* rows, const ResidentNet& n,
                                          const ResidentChunk& c, const Step& st, bool reload, const GridArgs& a) {
  const bool live = t.tid < st.count;
  ExVals v;
  v.x[0] = t.x0;
  v.x[1] = t.x1;
  float yy = t.y;
  if (reload) {
    const size_t row = live ? sample_row(c, st, t.tid) : 0;
    v.x[0] = live ? __ldg(a.x + 2 * row) : 0.0f;
    v.x[1] = live ? __ldg(a.x + 2 * row + 1) : 0.0f;
    yy = live ? __ldg(a.y + row) : 0.0f;
  }
  const float p = exact_forward(sw, v);
  exact_write_forward(rows, n.stride, t.tid, v);
  exact_backward(sw, v, p, yy, live, st.two_over_count);
  exact_write_backward(rows, n.stride, t.tid, v);
}

// The group stage: the group's item sums to gpart[k][g] and its loss to gloss[g]. `more`:
// the block has another group this step (its rows are rewritten only after every item read).
__device__ __forceinline__ void gx_group(const ExThread& t, float* sw, float* rows, float* part, const ResidentNet& n,
                                         const ResidentChunk& c, const Step& st, bool reload, const GridArgs& a, int g,
                                         bool more) {
  if (t.tid < n.batch4) gx_sample(t, sw, rows, n, c, st, reload, a);
  ExVals unused;  // one pass: exact_reduce writes no later pass's columns
  float sum = exact_reduce(t, rows, n, unused);
  if (n.slices[0] > 1) {
    if (t.g > 0 && t.g < n.slices[0]) part[(t.g - 1) * kExItems + t.k] = sum;
    __syncthreads();
    if (t.g == 0)
      for (int j = 1; j < n.slices[0]; ++j) sum = __fadd_rn(sum, part[(j - 1) * kExItems + t.k]);
  }
  if (t.g == 0) {
    if (t.k < kExParams) a.gpart[size_t(t.k) * a.groups + g] = sum;
    else a.gloss[g] = double(sum);
  }
  if (more) __syncthreads();
}

// One optimiser step of the grid, the exact group stage: as grid_step. Returns the step's loss
// × inv_terms (the first warp of block 0).
__device__ __forceinline__ double gx_step(const ExThread& t, float* sw, float* rows, float* part, const ResidentNet& n,
                                          const ResidentChunk& c, const GridArgs& a, const AdamHyper& h, int sgd,
                                          Owner& o, unsigned long long epoch, int e, int b, bool reload) {
  const int groups = (step_count(c, a, b) + n.batch - 1) / n.batch;
  for (int g = int(blockIdx.x); g < groups; g += int(gridDim.x))
    gx_group(t, sw, rows, part, n, c, group_step(n, c, a, epoch, b, g), reload, a, g, g + int(gridDim.x) < groups);
  cg::this_grid().sync();
  exchange(o, a, kExParams, groups, h, a.table[e * c.batches + b], sgd);
  double loss = 0;
  if (blockIdx.x == 0 && t.tid < 32) loss = step_loss(a, t.tid, groups) * group_step(n, c, a, epoch, b, 0).inv_terms;
  cg::this_grid().sync();
  if (t.g == 0 && t.k < kExParams) sw[t.spos] = __ldcg(a.w + t.k);
  __syncthreads();
  return loss;
}

// Shared memory: the padded weights, the group's 55 rows, the slices' item sums.
__global__ void __launch_bounds__(kGxMaxThreads, 1)
    resident_grid_exact_kernel(GridArgs a, ResidentChunk c, AdamHyper h, int sgd, ResidentNet n) {
  extern __shared__ __align__(16) unsigned char smem[];
  float* sw = reinterpret_cast<float*>(smem);
  float* rows = sw + kExSWFloats;
  float* part = rows + kExRows * n.stride;
  // A block that keeps one group of a full batch in a fixed order loads its inputs once.
  const bool reload = c.batches > 1 || c.shuffle || int(gridDim.x) < a.groups;
  const ExThread t = gx_prologue(sw, rows, n, a, reload);
  Owner o = load_owner(a, kExParams, sgd);
  const unsigned long long epoch0 = a.state->epoch;
  for (int e = 0; e < c.epochs; ++e) {
    double epoch_loss = 0;
    for (int b = 0; b < c.batches; ++b) epoch_loss += gx_step(t, sw, rows, part, n, c, a, h, sgd, o, epoch0 + e, e, b, reload);
    if (blockIdx.x == 0 && t.tid == 0) a.losses[e] = float(epoch_loss / double(c.batches));
  }
  store_owner(o, a, c, kExParams, sgd, epoch0);
}

// The exact group stage's plan (p.exact, p.grid): groups of kGxGroup samples (fewer: one group
// of the batch), two slices per item from 32 samples (as plan_exact), one pass. False where
// the rows do not fit `smem_optin` (the generic grid then).
inline bool plan_grid_exact(ResidentPlan& p, int batch, size_t smem_optin) {
  ResidentNet& n = p.net;
  const int group = std::min(kGxGroup, batch);
  n.batch = group;
  n.batch4 = (group + 3) & ~3;
  const int cols4 = n.batch4 / 4, S = cols4 >= 8 ? 2 : 1;
  n.slices[0] = S;
  n.slice_len[0] = 4 * ((cols4 + S - 1) / S);
  n.passes = 1;
  n.pass_cols = n.batch4;
  n.stride = cols4 % 2 == 1 ? n.batch4 : n.batch4 + 4;
  p.threads = (std::max(n.batch4, S * kExItems) + 31) / 32 * 32;
  p.per_thread = 1;
  p.smem_bytes = 4 * (size_t(kExSWFloats) + size_t(kExRows) * n.stride + size_t(S - 1) * kExItems);
  p.exact = true;
  p.groups = (batch + group - 1) / group;
  return p.smem_bytes <= smem_optin;
}

}  // namespace
}  // namespace nntrain::cuda
