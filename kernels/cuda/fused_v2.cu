// fused_v2.cu — one kernel per optimiser step for small MLPs (see fused_v2.hpp).
//
// Shared memory of a block (S = the plan's tile of samples, rows S + 4 floats apart):
//   [ W_0 | b_0 | W_1 | b_1 | ... ]  weights, rows padded to a multiple of 4 floats with
//                                    zeros, so the forward and backward read them as float4
//                                    broadcasts (every lane the same address)
//   [ activation rows: rows + 1 ]    a_0 ... a_L of every sample of the tile, then a row of
//                                    ones (sample s owns column s: conflict-free)
//   [ delta rows: drows ]            delta_1 ... delta_L of every sample
// A thread's layer input vector and deltas live in registers during the forward/backward;
// the weight gradient is then a transposed pass over the rows: one thread per parameter,
// summing delta · a over the tile's samples in a fixed order.
#include <algorithm>
#include <cstdlib>

#include "cuda_check.hpp"
#include "errors.hpp"
#include "fused_v2_stages.cuh"

namespace nntrain::cuda {

namespace {

constexpr int kSmallSharedLimit = 48 * 1024;

// The tail of a step, in the one block that arrives last: sums `count` partials in order and
// updates every parameter (kTailRound of them per thread at a time, so that their loads are
// in flight together); the last thread folds the loss into the epoch. `a` is this step's
// Adam scalars.
template <int NT>
__device__ __forceinline__ void final_update(const float* part, const double* lpart, int count, int P, float* w, float* m,
                             float* v, float* grad, TrainState* state, const StepDesc& d, const AdamHyper& h,
                             int sgd, double inv_terms, float* losses, const AdamStep& a) {
  const int tid = threadIdx.x;
  // With NT ≥ 256 threads one round covers the nets that use them (and needs 1/4 of the registers).
  constexpr int R = NT >= 256 ? 1 : kTailRound;
  for (int k0 = tid; k0 < P; k0 += R * NT) {
    float wk[R], mk[R], vk[R], g[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int k = k0 + r * NT;
      wk[r] = mk[r] = vk[r] = g[r] = 0.0f;
      if (k < P) {
        wk[r] = w[k];
        if (!sgd) {
          mk[r] = m[k];
          vk[r] = v[k];
        }
        g[r] = sum_partials(part + k, size_t(P), count);
      }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int k = k0 + r * NT;
      if (k >= P) break;
      grad[k] = g[r];
      if (sgd) {
        sgd_update(wk[r], g[r], float(h.lr));
      } else {
        adam_update(wk[r], mk[r], vk[r], g[r], h, a);
        m[k] = mk[r];
        v[k] = vk[r];
      }
      w[k] = wk[r];
    }
  }
  if (tid == NT - 1) {
    state->adam = a;
    double la = state->loss_acc + sum_partials(lpart, 1, count) * inv_terms;
    if (d.batch_index == d.batches - 1) {
      const int slot = state->slot;
      losses[slot] = float(la / double(d.batches));
      state->slot = slot + 1;
      state->epoch = state->epoch + 1;
      la = 0;
    }
    state->loss_acc = la;
  }
}

// The row of ones, this thread's sample's row of the batch, and its inputs.
template <int K, int T, class Shape, int S>
__device__ __forceinline__ V2Sample V2Block<K, T, Shape, S>::load_samples(const float* __restrict__ x,
                                                                       const float* __restrict__ y,
                                                                       const TrainState* state, const StepDesc& d,
                                                                       float (&a)[K], float (&al)[K],
                                                                       float (&dl)[K]) const {
  if (tid < S) sa[net.rows * SP + tid] = 1.0f;  // the row of ones: a bias gradient is delta · 1

  const int base = blockIdx.x * S;
  const bool live = base + smp < d.count;
  // A shuffled batch's rows depend on the epoch, which the previous step's tail advances.
  unsigned long long epoch = 0;
  if (d.shuffle) {
    pdl_wait();
    epoch = state->epoch;
  }
  size_t row = 0;
  if (live) row = batch_row(d, epoch, uint32_t(d.batch_offset + base + smp));
  const float y0 = live ? y[row * n_out] : 0.0f;  // the first target, loaded early
#pragma unroll
  for (int i = 0; i < K; ++i) a[i] = al[i] = dl[i] = 0.0f;
#pragma unroll
  for (int i = 0; i < K; ++i) {
    if (i >= n_in) break;
    a[i] = live ? x[row * n_in + i] : 0.0f;
    if (i % T == part) sa[i * SP + smp] = a[i];
  }
  return {live, row, y0};
}

// The tickets, and in the last block of the step the sums and the update.
template <int K, int T, class Shape, int S>
__device__ __forceinline__ void V2Block<K, T, Shape, S>::ticket_tail(float* w, float* m, float* v, float* grad,
                                                                  TrainState* state, const StepDesc& d,
                                                                  const AdamHyper& h, int sgd, double inv_terms,
                                                                  const FusedV2Scratch& sc, float* losses) const {
  const int blocks = gridDim.x, b = blockIdx.x;
  // The next step's blocks may be scheduled once every block of this one is here, i.e. during
  // the serial tail below; they wait (pdl_wait) for this step to finish before they touch
  // anything it writes. (Issued at the kernel's start instead, it let several steps' blocks
  // wait on the SMs at once: 2026-11-27 on an H200, 15-17 % slower per epoch at 4,900-10,000
  // samples, faster at 100-2,500 and 40,000-1M.)
  pdl_launch_dependents();

  // Last block of the group (and then of the step) by ticket: fence, count, and only the
  // block that takes the last number goes on. It resets the ticket for the next step.
  const int groups = (blocks + kV2Group - 1) / kV2Group, g = b / kV2Group;
  const int gsize = min(kV2Group, blocks - g * kV2Group);
  __threadfence();
  __syncthreads();
  if (tid == 0) {
    const unsigned t = atomicAdd(&sc.tickets[1 + g], 1u);
    s_last = t == unsigned(gsize - 1);
    if (s_last) sc.tickets[1 + g] = 0;
  }
  __syncthreads();
  if (!s_last) return;
  __threadfence();
  const float* bpart = sc.block_grad + size_t(g) * kV2Group * P;
  const double* lpart = sc.block_loss + size_t(g) * kV2Group;
  if (groups == 1) {
    final_update<NT>(bpart, lpart, gsize, P, w, m, v, grad, state, d, h, sgd, inv_terms, losses, s_adam);
    return;
  }
  for (int k = tid; k < P; k += NT) sc.group_grad[size_t(g) * P + k] = sum_partials(bpart + k, size_t(P), gsize);
  if (tid == 0) sc.group_loss[g] = sum_partials(lpart, 1, gsize);
  __threadfence();
  __syncthreads();
  if (tid == 0) {
    const unsigned t = atomicAdd(&sc.tickets[0], 1u);
    s_last = t == unsigned(groups - 1);
    if (s_last) sc.tickets[0] = 0;
  }
  __syncthreads();
  if (!s_last) return;
  __threadfence();
  final_update<NT>(sc.group_grad, sc.group_loss, groups, P, w, m, v, grad, state, d, h, sgd, inv_terms, losses, s_adam);
}

// T threads per sample (1, 2 or 4; a sample's threads are adjacent lanes of one warp), tiles of S.
template <int K, int T, class Shape, int S>
__global__ void __launch_bounds__(S * T, v2_min_blocks(K, T)) fused_v2_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                                           float* w, float* m, float* v, float* grad,
                                                           TrainState* state, StepDesc d, AdamHyper h, int sgd,
                                                           FusedV2Net net, float two_over_count, double inv_terms,
                                                           FusedV2Scratch sc, float* losses) {
  extern __shared__ __align__(16) unsigned char smem[];
  const V2Block<K, T, Shape, S> blk(net, smem);
  // Register arrays: zeroed once; every loop below stops at the layer's width (an unrolled
  // loop with a uniform break), so a narrow layer in a wide bucket costs its own width. Past
  // a width, only the float4 padding of a (up to a multiple of 4) must be zero.
  float a[K], al[K], dl[K];
  const V2Sample s = blk.load_samples(x, y, state, d, a, al, dl);
  blk.load_weights(w, state, h);
  blk.forward(a);
  const double loss = blk.loss_delta(y, s.live, s.row, s.y0, two_over_count, a, dl);
  if constexpr (T > 1)
    blk.backward_split(dl);
  else
    blk.backward_one(al, dl);
  blk.block_partials(loss, sc);
  blk.ticket_tail(w, m, v, grad, state, d, h, sgd, inv_terms, sc, losses);
}

template <int K, int T, class Shape, int S>
void launch_k(const FusedV2Plan& plan, const float* x, const float* y, float* w, float* m, float* v, float* grad,
              TrainState* state, StepDesc d, AdamHyper h, bool sgd, float* losses, const FusedV2Scratch& sc,
              cudaStream_t s) {
  const int n_out = plan.net.widths[plan.net.layers];
  const float two_over_count = 2.0f / (float(d.count) * float(n_out));  // as the CPU reference
  const double inv_terms = 1.0 / (double(d.count) * double(n_out));
  if (!plan.pdl) {
    fused_v2_kernel<K, T, Shape, S><<<fused_v2_blocks(d.count, S), S * T, plan.smem_bytes, s>>>(
        x, y, w, m, v, grad, state, d, h, sgd ? 1 : 0, plan.net, two_over_count, inv_terms, sc, losses);
  } else {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(unsigned(fused_v2_blocks(d.count, S)));
    cfg.blockDim = dim3(unsigned(S * T));
    cfg.dynamicSmemBytes = plan.smem_bytes;
    cfg.stream = s;
    cudaLaunchAttribute attr[1] = {};
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, fused_v2_kernel<K, T, Shape, S>, x, y, w, m, v, grad, state, d, h, sgd ? 1 : 0,
                                  plan.net, two_over_count, inv_terms, sc, losses));
  }
  CUDA_CHECK_LAUNCH();
}

template <int K, int T, class Shape, int S>
int prepare_k(size_t smem) {
  cudaFuncAttributes attr;
  CUDA_CHECK(cudaFuncGetAttributes(&attr, fused_v2_kernel<K, T, Shape, S>));
  // Only ever raise the per-kernel limit (a live backend's graphs may need the larger one).
  if (smem > size_t(kSmallSharedLimit) && smem > size_t(attr.maxDynamicSharedSizeBytes))
    CUDA_CHECK(cudaFuncSetAttribute(fused_v2_kernel<K, T, Shape, S>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  return attr.numRegs;
}

// One compiled kernel, as a type: with_v2_kernel hands the plan's to a generic lambda.
template <int K, int T, class Shape, int S>
struct V2Kernel {
  static constexpr int kK = K, kT = T, kS = S;
  using Sh = Shape;
};

template <class F>
int with_v2_kernel(const FusedV2Plan& p, const char* who, F&& f) {
  if (p.exact && p.tile == kV2Tile)
    return p.threads_per_sample == 2 ? f(V2Kernel<20, 2, Shape3<2, 20, 5, 1>, 64>{})
                                     : f(V2Kernel<20, 4, Shape3<2, 20, 5, 1>, 64>{});
  if (!p.exact && p.tile == 64) {
    switch (p.bucket) {
      case 8: return f(V2Kernel<8, 1, RunShape, 64>{});
      case 16: return f(V2Kernel<16, 1, RunShape, 64>{});
      case 32: return f(V2Kernel<32, 1, RunShape, 64>{});
      case 64: return f(V2Kernel<64, 1, RunShape, 64>{});
    }
  }
  if (!p.exact && p.bucket == kV2SmallTileBucket && p.tile == 32) return f(V2Kernel<64, 1, RunShape, 32>{});
  if (!p.exact && p.bucket == kV2SmallTileBucket && p.tile == 16) return f(V2Kernel<64, 1, RunShape, 16>{});
  throw CudaError(std::string(who) + ": no kernel for this plan (it does not fit)");
}

// The net's offsets: flat parameters, padded shared-memory weights, activation and delta rows.
void layout_v2_net(const std::vector<int>& widths, const std::vector<Activation>& acts, FusedV2Net& n) {
  const int L = int(widths.size()) - 1;
  n.layers = L;
  int off = 0, soff = 0, rows = 0;
  for (int l = 0; l <= L; ++l) n.widths[l] = widths[l];
  for (int l = 0; l < L; ++l) {
    const int in = widths[l], out = widths[l + 1];
    n.act[l] = int(acts[l]);
    n.aoff[l] = rows;
    rows += in;
    n.woff[l] = off;
    off += in * out;
    n.boff[l] = off;
    off += out;
    n.swoff[l] = soff;
    soff += out * ((in + 3) & ~3);
    n.sboff[l] = soff;
    soff += (out + 3) & ~3;
  }
  n.aoff[L] = rows;
  rows += widths[L];
  int drows = 0;
  for (int l = 0; l < L; ++l) {
    n.doff[l] = drows;
    drows += widths[l + 1];
  }
  n.params = off;
  n.sparams = soff;
  n.rows = rows;
  n.drows = drows;
}

std::string kib(size_t bytes) { return std::to_string((bytes + 1023) / 1024) + " KiB"; }

}  // namespace

FusedV2Plan plan_fused_v2(const std::vector<int>& widths, const std::vector<Activation>& acts, size_t smem_optin,
                          int exact_threads) {
  FusedV2Plan p;
  if (exact_threads != 2 && exact_threads != 4) {
    p.why = "threads per sample of the exact shape: 2 or 4";
    return p;
  }
  if (const std::string why = fused_plan_problem(widths, acts.size()); !why.empty()) {
    p.why = why;
    return p;
  }
  const int L = int(widths.size()) - 1;
  FusedV2Net& n = p.net;
  layout_v2_net(widths, acts, n);
  const int wmax = *std::max_element(widths.begin(), widths.end());
  p.bucket = wmax <= 8 ? 8 : wmax <= 16 ? 16 : wmax <= 32 ? 32 : 64;
  p.exact = widths == kV2ExactShape && acts == kV2ExactActivations;
  p.threads_per_sample = p.exact ? exact_threads : 1;
  // the exact shape with T > 1 also keeps W_lᵀ (l ≥ 1, rows of out padded to 4) for its backward
  size_t transposed = 0;
  if (p.exact && p.threads_per_sample > 1)
    for (int l = 1; l < L; ++l) transposed += size_t(widths[l]) * ((widths[l + 1] + 3) & ~3);
  // weights, the activation rows and a row of ones, the delta rows: the largest tile that fits
  // (a smaller one in the bucket-64 kernel; the exact shape always fits 64)
  for (const int tile : {kV2Tile, kV2SmallTiles[0], kV2SmallTiles[1]}) {
    if (tile != kV2Tile && p.exact) break;
    if (tile != kV2Tile) p.bucket = kV2SmallTileBucket;
    p.tile = tile;
    p.smem_bytes = sizeof(V2Header) +
                   4 * (size_t(n.sparams) + size_t(n.rows + 1 + n.drows) * v2_stride(tile) + transposed);
    if (p.smem_bytes <= smem_optin) break;
  }
  if (p.smem_bytes > smem_optin) {
    p.why = "weights and the activation and delta rows of a " + std::to_string(p.tile) + "-sample tile need " +
            kib(p.smem_bytes) + " of shared memory; the device allows " + std::to_string(smem_optin / 1024) +
            " KiB per block";
    return p;
  }
  p.fits = true;
  p.why = std::string("one kernel per step, ") +
          (p.exact ? "exact shape 2-20-5-1" : "register bucket " + std::to_string(p.bucket)) + ", " + std::to_string(L) +
          " layers; tile of " + std::to_string(p.tile) + " samples, " + std::to_string(p.threads_per_sample) +
          (p.threads_per_sample == 1 ? " thread" : " threads") + " per sample, " + kib(p.smem_bytes) +
          " of shared memory";
  return p;
}

size_t fused_v2_smem_limit(size_t optin) {
  const char* e = std::getenv("NNTRAIN_FUSED_V2_SMEM_KIB");
  if (e == nullptr || *e == '\0') return optin;
  char* end = nullptr;
  const long k = std::strtol(e, &end, 10);
  if (*end != '\0' || k <= 0) throw UsageError(std::string("NNTRAIN_FUSED_V2_SMEM_KIB: expected whole KiB, got '") + e + "'");
  if (size_t(k) > optin / 1024) return optin;  // above the device's limit (and no overflow of k × 1024)
  return size_t(k) * 1024;
}

int prepare_fused_v2(const FusedV2Plan& plan) {
  return with_v2_kernel(plan, "prepare_fused_v2", [&](auto k) {
    using Kk = decltype(k);
    return prepare_k<Kk::kK, Kk::kT, typename Kk::Sh, Kk::kS>(plan.smem_bytes);
  });
}

void launch_fused_v2_step(const FusedV2Plan& plan, const float* x, const float* y, float* w, float* m, float* v,
                          float* grad, TrainState* state, StepDesc d, AdamHyper h, bool sgd, float* losses,
                          const FusedV2Scratch& sc, cudaStream_t s) {
  if (d.count <= 0) throw CudaError("launch_fused_v2_step: empty batch");
  with_v2_kernel(plan, "launch_fused_v2_step", [&](auto k) {
    using Kk = decltype(k);
    launch_k<Kk::kK, Kk::kT, typename Kk::Sh, Kk::kS>(plan, x, y, w, m, v, grad, state, d, h, sgd, losses, sc, s);
    return 0;
  });
}

}  // namespace nntrain::cuda
