// resident_grid_exact.cuh — the cooperative grid's exact-shape group stage (2-20-5-1, relu,
// relu, identity): included by resident_grid.cu after its exchange, so the grid's step is the
// generic one (group stage, grid.sync(), exchange + optimizer, grid.sync(), weights copied)
// with the group stage done the exact kernel's way (resident_exact.cuh):
//
//   * one thread per sample of the group: exact_forward / exact_backward in registers, its
//     column of every row written (one pass: a group's rows always fit);
//   * one barrier, then every gradient item (171 parameters and the loss) summed over its
//     slice of the group's columns (exact_grad_pass); with two slices a second barrier and
//     item k's slices added in order (so a group's sums have the one-block kernel's order for
//     a batch of the group's size);
//   * item k's sum to gpart[k][group], the loss item's to gloss[group].
// 2 barriers per group against the generic stage's 2 per layer. The group size is a constant
// (kGxGroup), so every order depends on the net and the batch alone, never on the blocks or
// their size.
//
// Two block sizes (prepare_resident_grid picks by rounds of groups, resident_grid.cu): WIDE,
// a thread per item of both slices (352), one block per SM by registers; NARROW, a thread per
// sample of the group (128), 2-3 items per thread, four blocks per SM on an H200 by registers
// (two in the simulator's 64 KiB of shared memory): where groups outnumber the SMs, the groups
// of an SM run side by side instead of one after another.
#pragma once

#include "resident_exact.cuh"
#include "resident_grid_exchange.cuh"
#include "resident_stamps.cuh"

namespace nntrain::cuda {
namespace {

// Samples per group: 128 (SIMULATION at 2,000 samples: 8,720 cycles per epoch against 10,789
// for groups of 256; docs/journal/2026-11-29-grid-exact.md). More groups give more blocks
// work; each group costs the same two barriers and an exchange column.
constexpr int kGxGroup = 128;
constexpr int kGxMaxThreads = 384;  // 2 slices × 172 items, rounded up: 168 registers per thread

// The narrow block: a thread per sample of a full group (≥ a third of the 2 × 172 items).
constexpr int kGxNarrow = kGxGroup;

// The wide block: a thread per gradient item of every slice (and at least one per sample).
inline int gx_wide_threads(const ResidentNet& n) {
  return (std::max(n.batch4, n.slices[0] * kExItems) + 31) / 32 * 32;
}

// The padded weights from w (the launch's or the step's published ones): parameter k by
// thread k mod T, so any block size places all 171.
__device__ __forceinline__ void gx_copy_weights(float* sw, const float* w) {
  for (int k = threadIdx.x; k < kExParams; k += blockDim.x) sw[exact_spos(k)] = __ldcg(w + k);
}

// Stage "load" of the launch: the padded weights and the row of ones; the block's group's
// samples kept in registers where it keeps one group of a full batch (reload false).
__device__ inline ExThread gx_prologue(float* sw, float* rows, const ResidentNet& n, const GridArgs& a, bool reload) {
  // Of exact_items' thread we keep tid and the zeroed weights and ones row: the item fields are
  // the one-block kernel's (gx_group maps items to threads itself), and the owners are the
  // exchange's lanes (Owner), so w, m, v and spos stay unused.
  ExThread t = exact_items(sw, rows, n);
  t.w = t.m = t.v = 0.0f;
  t.spos = 0;
  __syncthreads();
  gx_copy_weights(sw, a.w);
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

// Item k's sum of the group (slices added in order) to gpart[k][g], the loss item's to gloss[g].
__device__ __forceinline__ void gx_write(const GridArgs& a, int k, int g, float sum) {
  if (k < kExParams) a.gpart[size_t(k) * a.groups + g] = sum;
  else a.gloss[g] = double(sum);
}

// The group stage: the group's item sums to gpart[k][g] and its loss to gloss[g]. Item
// i = slice × kExItems + k is summed by thread i mod T (one item each in the wide block, up to
// three, one after another, in the narrow one): a sum's order is its item's, whatever thread
// runs it, so the block size changes no bits. (Interleaving a thread's items for overlap was
// slower in the simulator: 11,445 against 11,043 cycles per epoch, 2026-11-29.) `more`: the
// block has another group this step (its rows and `part` are rewritten only after every read:
// two slices' combine barrier already orders that; one slice means one group, 28 samples at most).
__device__ __forceinline__ void gx_group(const ExThread& t, float* sw, float* rows, float* part, const ResidentNet& n,
                                         const ResidentChunk& c, const Step& st, bool reload, const GridArgs& a, int g,
                                         bool more) {
  if (t.tid < n.batch4) gx_sample(t, sw, rows, n, c, st, reload, a);
  const int S = n.slices[0], len4 = n.slice_len[0] / 4, cols4 = n.batch4 / 4;
  __syncthreads();  // every column written
  for (int i = t.tid; i < S * kExItems; i += blockDim.x) {
    const int s = i / kExItems, k = i - s * kExItems;
    int drow, arow;
    exact_item_rows(k, drow, arow);
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    exact_grad_pass(reinterpret_cast<const float4*>(rows + drow * n.stride),
                    reinterpret_cast<const float4*>(rows + arow * n.stride), s * len4, min(cols4, (s + 1) * len4), 0,
                    acc);
    const float sum = __fadd_rn(__fadd_rn(acc[0], acc[1]), __fadd_rn(acc[2], acc[3]));
    if (S == 1) gx_write(a, k, g, sum);
    else part[i] = sum;
  }
  if (S > 1) {
    __syncthreads();
    for (int k = t.tid; k < kExItems; k += blockDim.x) {
      float sum = part[k];
      for (int s = 1; s < S; ++s) sum = __fadd_rn(sum, part[s * kExItems + k]);
      gx_write(a, k, g, sum);
    }
  }
  if (more && S == 1) __syncthreads();  // with two slices the combine's barrier came after every read
}

// The warp that sums the step's loss: the grid's last where it owns no parameter, so that its
// double loads and tree run beside the owners' sums instead of after block 0's first warp's
// (SIMULATION: the exchange was a quarter of an epoch); else block 0's first warp.
__device__ __forceinline__ bool gx_loss_warp(const Owner& o) {
  return o.warp == (o.warps > kExParams ? o.warps - 1 : 0);
}

// One optimiser step of the grid, the exact group stage: as grid_step. Returns the step's loss
// × inv_terms (in the loss warp). sp: the phases' stamps (nothing in the timed kernel).
template <bool kStamps>
__device__ __forceinline__ double gx_step(const ExThread& t, float* sw, float* rows, float* part, const ResidentNet& n,
                                          const ResidentChunk& c, const GridArgs& a, const AdamHyper& h, int sgd,
                                          Owner& o, unsigned long long epoch, int e, int b, bool reload,
                                          Stamps<kStamps>& sp) {
  const int groups = (step_count(c, a, b) + n.batch - 1) / n.batch;
  for (int g = int(blockIdx.x); g < groups; g += int(gridDim.x))
    gx_group(t, sw, rows, part, n, c, group_step(n, c, a, epoch, b, g), reload, a, g, g + int(gridDim.x) < groups);
  sp.mark(kStGroups);
  cg::this_grid().sync();
  sp.mark(kStSync1);
  exchange(o, a, kExParams, groups, h, a.table[e * c.batches + b], sgd);
  double loss = 0;
  if (gx_loss_warp(o)) loss = step_loss(a, o.lane, groups) * group_step(n, c, a, epoch, b, 0).inv_terms;
  sp.mark(kStExchange);
  cg::this_grid().sync();
  sp.mark(kStSync2);
  gx_copy_weights(sw, a.w);
  __syncthreads();
  sp.mark(kStCopy);
  return loss;
}

// Shared memory: the padded weights, the group's 55 rows, the slices' item sums. Two
// instantiations, one per block size: the wide block's registers are capped at 168 (one block
// per SM: 150 / 153 used, ptxas sm_75 / sm_90, since the loss warp), the narrow block's at 128
// (four per SM on an H200: 126 / 125 used, no spills), so a fourth group of an SM runs beside
// the other three.
// kStamps: the diagnostic instantiation that stamps each step's phases (resident_stamps.cuh).
template <int kMaxThreads, int kMinBlocks, bool kStamps>
__global__ void __launch_bounds__(kMaxThreads, kMinBlocks)
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
  Stamps<kStamps> sp;
  sp.begin();
  for (int e = 0; e < c.epochs; ++e) {
    double epoch_loss = 0;
    for (int b = 0; b < c.batches; ++b) {
      epoch_loss += gx_step(t, sw, rows, part, n, c, a, h, sgd, o, epoch0 + e, e, b, reload, sp);
      sp.flush();
    }
    if (gx_loss_warp(o) && o.lane == 0) a.losses[e] = float(epoch_loss / double(c.batches));
  }
  sp.end(a.stamps);
  store_owner(o, a, c, kExParams, sgd, epoch0);
}

using GxKernel = void (*)(GridArgs, ResidentChunk, AdamHyper, int, ResidentNet);

// The kernel for blocks of `threads`: the narrow block's, else the wide one's (the knob's
// sizes); `stamps`: its stamped instantiation.
inline GxKernel gx_kernel(int threads, bool stamps) {
  if (threads <= kGxNarrow)
    return stamps ? resident_grid_exact_kernel<kGxNarrow, 4, true> : resident_grid_exact_kernel<kGxNarrow, 4, false>;
  return stamps ? resident_grid_exact_kernel<kGxMaxThreads, 1, true> : resident_grid_exact_kernel<kGxMaxThreads, 1, false>;
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
  p.threads = gx_wide_threads(n);  // prepare_resident_grid may take the narrow block
  p.per_thread = 1;
  p.smem_bytes = 4 * (size_t(kExSWFloats) + size_t(kExRows) * n.stride + size_t(S > 1 ? S : 0) * kExItems);
  p.exact = true;
  p.groups = (batch + group - 1) / group;
  return p.smem_bytes <= smem_optin;
}

}  // namespace
}  // namespace nntrain::cuda
