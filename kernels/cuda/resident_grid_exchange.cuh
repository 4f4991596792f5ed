// resident_grid_exchange.cuh — the cooperative grid's launch arguments, groups and exchange
// (resident_grid.hpp describes them), shared by the grid's generic group stage
// (resident_grid.cu) and its exact-shape one (resident_grid_exact.cuh).
//
// gpart is laid out [param][group] (not [group][param]): an exchange lane reads consecutive
// groups of one parameter, so a warp's 32 loads are one coalesced row; the writers' scattered
// stores do not wait. Every read of what another block wrote in this launch is __ldcg (L2):
// grid.sync() orders it, and no stale L1 line can be read even where a fence would not drop it.
#pragma once

#include <cooperative_groups.h>

#include "resident_stages.cuh"

namespace nntrain::cuda {
namespace cg = cooperative_groups;

namespace {

// The launch's arrays and the step's shape.
struct GridArgs {
  const float* x;
  const float* y;
  float* w;  // read at the start; the owners publish each step's new weights here
  float* m;
  float* v;
  TrainState* state;
  const AdamStep* table;
  float* losses;
  float* gpart;   // [param][group]: the groups' gradients
  double* gloss;  // [group]: the groups' losses
  int batch;      // samples of a full step
  int groups;     // groups of a full step (gpart's row length)
  unsigned long long* stamps;  // the stamped kernel's [block][field] rows (resident_stamps.cuh)
};

// The parameters an exchange lane owns, for the whole launch: slot r holds the warp's
// parameter r × 32 + lane, k = warp + (r × 32 + lane) × warps.
struct Owner {
  float w[kResMaxOwn], m[kResMaxOwn], v[kResMaxOwn], g[kResMaxOwn];
  int warp, warps, lane;
};

__device__ __forceinline__ int owner_param(const Owner& o, int r) { return o.warp + (r * 32 + o.lane) * o.warps; }

// A fixed xor tree: every lane ends with the same bits (a + b == b + a in IEEE arithmetic).
__device__ __forceinline__ float warp_sum_float(float x) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x = __fadd_rn(x, __shfl_xor_sync(kFull, x, off));
  return x;
}

__device__ __forceinline__ int step_count(const ResidentChunk& c, const GridArgs& a, int b) {
  return b == c.batches - 1 ? c.last_count : a.batch;
}

// Group g of step b: its columns' place in the step and its live count; the loss scalars are
// the whole step's (as the CPU reference's).
__device__ __forceinline__ Step group_step(const ResidentNet& n, const ResidentChunk& c, const GridArgs& a,
                                           unsigned long long epoch, int b, int g) {
  const int count = step_count(c, a, b);
  Step st;
  st.offset = b * a.batch + g * n.batch;
  st.count = min(n.batch, count - g * n.batch);
  st.key = c.shuffle ? make_shuffle_key(c.n, c.seed, epoch) : ShuffleKey{};
  const int n_out = n.widths[n.layers];
  st.two_over_count = 2.0f / (float(count) * float(n_out));
  st.inv_terms = 1.0 / (double(count) * double(n_out));
  return st;
}

// Stage "exchange": each owned parameter's gradient summed over the step's groups (lane j
// sums groups j, j + 32, ... in order, then the xor tree: an order fixed by the group count),
// then the optimizer; the owner lane publishes the new weight.
__device__ __forceinline__ void exchange(Owner& o, const GridArgs& a, int params, int groups, const AdamHyper& h,
                         const AdamStep& as, int sgd) {
#pragma unroll
  for (int r = 0; r < kResMaxOwn; ++r) {
    for (int j = 0; j < 32; ++j) {
      const int k = o.warp + (r * 32 + j) * o.warps;
      if (k >= params) break;  // the same for the whole warp
      const float* row = a.gpart + size_t(k) * a.groups;
      float s = 0.0f;
      for (int q = o.lane; q < groups; q += 32) s = __fadd_rn(s, __ldcg(row + q));
      s = warp_sum_float(s);
      if (o.lane == j) o.g[r] = s;
    }
  }
#pragma unroll
  for (int r = 0; r < kResMaxOwn; ++r) {
    const int k = owner_param(o, r);
    if (k >= params) break;
    if (sgd) sgd_update(o.w[r], o.g[r], float(h.lr));
    else adam_update(o.w[r], o.m[r], o.v[r], o.g[r], h, as);
    a.w[k] = o.w[r];
  }
}

// The step's loss (one warp, all lanes): the groups' losses in the exchange's order.
__device__ __forceinline__ double step_loss(const GridArgs& a, int lane, int groups) {
  double s = 0;
  for (int q = lane; q < groups; q += 32) s += __ldcg(a.gloss + q);
  return warp_sum_double(s);
}

__device__ __forceinline__ Owner load_owner(const GridArgs& a, int params, int sgd) {
  Owner o;
  o.lane = threadIdx.x & 31;
  o.warps = int(gridDim.x) * int(blockDim.x / 32);
  o.warp = int(blockIdx.x) * int(blockDim.x / 32) + int(threadIdx.x >> 5);
#pragma unroll
  for (int r = 0; r < kResMaxOwn; ++r) {
    const int k = owner_param(o, r);
    o.w[r] = o.m[r] = o.v[r] = o.g[r] = 0.0f;
    if (k >= params) continue;
    o.w[r] = a.w[k];
    if (!sgd) {
      o.m[r] = a.m[k];
      o.v[r] = a.v[k];
    }
  }
  return o;
}

// Stage "store" at the launch's end: the owners' m and v back to global memory, and the state
// the next launch (or the host) continues from, written once by block 0's thread 0.
__device__ __forceinline__ void store_owner(const Owner& o, const GridArgs& a, const ResidentChunk& c, int params,
                                            int sgd, unsigned long long epoch0) {
#pragma unroll
  for (int r = 0; r < kResMaxOwn; ++r) {
    const int k = owner_param(o, r);
    if (k >= params || sgd) break;
    a.m[k] = o.m[r];
    a.v[k] = o.v[r];
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    a.state->epoch = epoch0 + c.epochs;
    if (c.epochs > 0) a.state->adam = a.table[c.epochs * c.batches - 1];
    a.state->loss_acc = 0;
  }
}

}  // namespace
}  // namespace nntrain::cuda
