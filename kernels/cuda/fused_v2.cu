// fused_v2.cu — one kernel per optimiser step for small MLPs (see fused_v2.hpp).
//
// Shared memory of a block:
//   [ W_0 | b_0 | W_1 | b_1 | ... ]  weights, rows padded to a multiple of 4 floats with
//                                    zeros, so the forward and backward read them as float4
//                                    broadcasts (every lane the same address)
//   [ per-warp gradient: warps × P ] each warp's shuffle-reduced sums
//   [ activation columns: rows × S ] a_0 ... a_L of each thread's sample (thread t owns
//                                    column t: conflict-free)
//   [ delta columns: dmax × S ]      the delta being propagated, for run-time indexing
//   [ warps doubles ]                the loss, per warp
// The layer's input vector, the deltas and the products being reduced live in registers.
#include <algorithm>

#include "cuda_check.hpp"
#include "fused_v2.hpp"

namespace nntrain::cuda {

namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kWarps = kV2Tile / 32;
constexpr int kSmallSharedLimit = 48 * 1024;

// Sums v[0..N) over the 32 lanes of the warp by recursive halving: at the stage of offset h
// each lane keeps one half of its vector and sends the other to lane ^ h, so the vector
// halves each stage and after log2(N) stages lane l holds element (l mod N) summed over the
// lanes that agree with it in the low bits; xor stages N..16 finish the sum. N−1 + 5−log2(N)
// shuffles for N sums (a plain shuffle tree per element would take 5·N). Every lane adds
// the same two values (a + b == b + a exactly), so the result is one fixed tree.
// The vector is v[j] = scale · src[c0 + j] (the products are formed here, for the N elements
// only, so a narrow layer in a wide bucket pays for its own width).
// One halving stage of offset H, then the next (a template recursion, so every index into
// v is a compile-time constant and v stays in registers).
template <int H, int N>
__device__ __forceinline__ void halve(float (&v)[N], int lane) {
  if constexpr (H >= 1) {
    // Bit masks rather than `upper ? v[j] : v[j + H]`, which nvcc may turn into an address
    // select and so move v to local memory.
    const unsigned up = (lane & H) ? 0xffffffffu : 0u;
#pragma unroll
    for (int j = 0; j < H; ++j) {
      const unsigned lo = __float_as_uint(v[j]), hi = __float_as_uint(v[j + H]);
      const float send = __uint_as_float((lo & up) | (hi & ~up));
      const float keep = __uint_as_float((hi & up) | (lo & ~up));
      v[j] = __fadd_rn(keep, __shfl_xor_sync(kFull, send, H));
    }
    halve<H / 2>(v, lane);
  }
}

template <int N, int K>
__device__ __forceinline__ float reduce_scatter(const float (&src)[K], int c0, float scale, int lane) {
  static_assert(N >= 1 && N <= 32 && N <= K && (N & (N - 1)) == 0, "N: a power of two <= 32");
  float v[N];
#pragma unroll
  for (int j = 0; j < N; ++j) v[j] = __fmul_rn(scale, src[c0 + j]);
  halve<N / 2>(v, lane);
  float r = v[0];
#pragma unroll
  for (int off = N; off < 32; off *= 2) r = __fadd_rn(r, __shfl_xor_sync(kFull, r, off));
  return r;
}

// The same for a run-time length n <= 32: the smallest power-of-two stage count that holds it.
template <int K>
__device__ __forceinline__ float reduce_scatter_n(const float (&src)[K], int c0, float scale, int n, int lane) {
  if (n <= 1) return reduce_scatter<1>(src, c0, scale, lane);
  if (n <= 2) return reduce_scatter<2>(src, c0, scale, lane);
  if (n <= 4) return reduce_scatter<4>(src, c0, scale, lane);
  if constexpr (K >= 8) if (n <= 8) return reduce_scatter<8>(src, c0, scale, lane);
  if constexpr (K >= 16) if (n <= 16) return reduce_scatter<16>(src, c0, scale, lane);
  if constexpr (K >= 32) return reduce_scatter<32>(src, c0, scale, lane);
  return 0.0f;  // unreachable: n <= K
}

// Sum over the warp of scale · src[0..n) (n <= K); lane j writes element j (and j + 32) to dst.
template <int K>
__device__ __forceinline__ void warp_sums_to(const float (&src)[K], float scale, int n, int lane, float* dst) {
#pragma unroll
  for (int c = 0; c < (K + 31) / 32; ++c) {
    if (32 * c >= n) break;
    const int nc = min(n - 32 * c, 32);
    const float r = reduce_scatter_n<K>(src, 32 * c, scale, nc, lane);
    if (lane < nc) dst[32 * c + lane] = r;
  }
}

__device__ __forceinline__ double warp_sum_double(double x) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(kFull, x, off);
  return x;
}

// The tail of a step, in the one block that arrives last: sums `count` partials in order,
// advances the Adam scalars and updates every parameter; folds the loss into the epoch.
__device__ __forceinline__ void final_update(const float* part, const double* lpart, int count, int P, float* w, float* m,
                             float* v, float* grad, TrainState* state, const StepDesc& d, const AdamHyper& h,
                             int sgd, double inv_terms, float* losses, AdamStep* s_adam) {
  const int tid = threadIdx.x;
  if (tid == 0) {
    const AdamStep a = adam_next_step(state->adam, h);
    state->adam = a;
    *s_adam = a;
    double ls = 0;
    for (int j = 0; j < count; ++j) ls += __ldcg(lpart + j);
    double la = state->loss_acc + ls * inv_terms;
    if (d.batch_index == d.batches - 1) {
      const int slot = state->slot;
      losses[slot] = float(la / double(d.batches));
      state->slot = slot + 1;
      state->epoch = state->epoch + 1;
      la = 0;
    }
    state->loss_acc = la;
  }
  __syncthreads();
  const AdamStep a = *s_adam;
  for (int k = tid; k < P; k += kV2Tile) {
    float g = __ldcg(part + k);
    for (int j = 1; j < count; ++j) g = __fadd_rn(g, __ldcg(part + size_t(j) * P + k));
    grad[k] = g;
    if (sgd) {
      float wk = w[k];
      sgd_update(wk, g, float(h.lr));
      w[k] = wk;
    } else {
      float wk = w[k], mk = m[k], vk = v[k];
      adam_update(wk, mk, vk, g, h, a);
      w[k] = wk;
      m[k] = mk;
      v[k] = vk;
    }
  }
}

template <int K>
__global__ void __launch_bounds__(kV2Tile) fused_v2_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                                           float* w, float* m, float* v, float* grad,
                                                           TrainState* state, StepDesc d, AdamHyper h, int sgd,
                                                           FusedV2Net net, float two_over_count, double inv_terms,
                                                           FusedV2Scratch sc, float* losses) {
  constexpr int S = kV2Tile;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ AdamStep s_adam;
  __shared__ int s_last;
  const int P = net.params, L = net.layers;
  float* sw = reinterpret_cast<float*>(smem);
  float* sg = sw + net.sparams;
  float* sa = sg + ((kWarps * P + 1) & ~1);
  float* sd = sa + net.rows * S;
  double* sloss = reinterpret_cast<double*>(sd + net.dmax * S);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int n_in = net.widths[0], n_out = net.widths[L];

  // Weights into shared memory, rows padded with zeros.
  for (int l = 0; l < L; ++l) {
    const int in = net.widths[l], out = net.widths[l + 1], in4 = (in + 3) & ~3, out4 = (out + 3) & ~3;
    for (int k = tid; k < out * in4; k += S) {
      const int o = k / in4, i = k - o * in4;
      sw[net.swoff[l] + k] = i < in ? w[net.woff[l] + o * in + i] : 0.0f;
    }
    for (int k = tid; k < out4; k += S) sw[net.sboff[l] + k] = k < out ? w[net.boff[l] + k] : 0.0f;
  }

  const int base = blockIdx.x * S;
  const bool live = base + tid < d.count;
  size_t row = 0;
  if (live) row = batch_row(d, state->epoch, uint32_t(d.batch_offset + base + tid));
  float a[K];
#pragma unroll
  for (int i = 0; i < K; ++i) {
    a[i] = (live && i < n_in) ? x[row * n_in + i] : 0.0f;
    if (i < n_in) sa[i * S + tid] = a[i];
  }
  __syncthreads();

  // Forward: a ← f(W a + b), layer by layer. The input vector is in registers; each output
  // (a run-time loop, so the code does not grow with K²) goes to this thread's column of
  // a_{l+1}, from which the next layer reloads its registers.
  for (int l = 0; l < L; ++l) {
    const int in = net.widths[l], out = net.widths[l + 1], q = (in + 3) >> 2;
    const Activation act = Activation(net.act[l]);
    const float4* W4 = reinterpret_cast<const float4*>(sw + net.swoff[l]);
    const float* b = sw + net.sboff[l];
    float* col = sa + net.aoff[l + 1] * S + tid;
    for (int o = 0; o < out; ++o) {
      float acc = b[o];
#pragma unroll
      for (int c = 0; c < K / 4; ++c) {
        if (c >= q) break;
        const float4 wv = W4[o * q + c];
        acc = fmaf(wv.x, a[4 * c], acc);
        acc = fmaf(wv.y, a[4 * c + 1], acc);
        acc = fmaf(wv.z, a[4 * c + 2], acc);
        acc = fmaf(wv.w, a[4 * c + 3], acc);
      }
      col[o * S] = act_forward(act, acc);
    }
#pragma unroll
    for (int i = 0; i < K; ++i) a[i] = i < out ? col[i * S] : 0.0f;
  }

  // Loss and output delta (padding samples: delta 0, loss 0).
  double loss = 0;
  float dl[K];
  {
    const Activation act = Activation(net.act[L - 1]);
#pragma unroll
    for (int o = 0; o < K; ++o) {
      dl[o] = 0.0f;
      if (live && o < n_out) {
        const float p = a[o], t = y[row * n_out + o];
        loss += double(mse_term(p, t));
        dl[o] = __fmul_rn(mse_grad(p, t, two_over_count), act_derivative_from_output(act, p));
      }
    }
  }

  // Backward: gradient of layer l from (delta_{l+1}, a_l), then delta_l = (W_lᵀ delta_{l+1}) · f'(a_l).
  // delta_{l+1} is in registers (dl) and, for the run-time loops over outputs, in this
  // thread's delta column.
  float* gw = sg + warp * P;
  float* dcol = sd + tid;
  for (int l = L - 1; l >= 0; --l) {
    const int in = net.widths[l], out = net.widths[l + 1], q = (in + 3) >> 2;
    const float* col = sa + net.aoff[l] * S + tid;
#pragma unroll
    for (int o = 0; o < K; ++o)
      if (o < out) dcol[o * S] = dl[o];
    float al[K];
#pragma unroll
    for (int i = 0; i < K; ++i) al[i] = i < in ? col[i * S] : 0.0f;
    for (int o = 0; o < out; ++o) warp_sums_to(al, dcol[o * S], in, lane, gw + net.woff[l] + o * in);
    warp_sums_to(dl, 1.0f, out, lane, gw + net.boff[l]);  // 1 · d is d exactly
    if (l == 0) break;
    const float4* W4 = reinterpret_cast<const float4*>(sw + net.swoff[l]);
    float nd[K];
#pragma unroll
    for (int i = 0; i < K; ++i) nd[i] = 0.0f;
    for (int o = 0; o < out; ++o) {
      const float dk = dcol[o * S];
#pragma unroll
      for (int c = 0; c < K / 4; ++c) {
        if (c >= q) break;
        const float4 wv = W4[o * q + c];
        nd[4 * c] = fmaf(wv.x, dk, nd[4 * c]);
        nd[4 * c + 1] = fmaf(wv.y, dk, nd[4 * c + 1]);
        nd[4 * c + 2] = fmaf(wv.z, dk, nd[4 * c + 2]);
        nd[4 * c + 3] = fmaf(wv.w, dk, nd[4 * c + 3]);
      }
    }
    const Activation act = Activation(net.act[l - 1]);
#pragma unroll
    for (int i = 0; i < K; ++i) dl[i] = i < in ? __fmul_rn(nd[i], act_derivative_from_output(act, al[i])) : 0.0f;
  }

  // The block's partial: warps in order, then the loss (warp tree, warps in order).
  loss = warp_sum_double(loss);
  if (lane == 0) sloss[warp] = loss;
  __syncthreads();
  const int blocks = gridDim.x, b = blockIdx.x;
  for (int k = tid; k < P; k += S) {
    float g = sg[k];
#pragma unroll
    for (int j = 1; j < kWarps; ++j) g = __fadd_rn(g, sg[j * P + k]);
    sc.block_grad[size_t(b) * P + k] = g;
  }
  if (tid == 0) {
    double ls = sloss[0];
    for (int j = 1; j < kWarps; ++j) ls += sloss[j];
    sc.block_loss[b] = ls;
  }

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
  const float* part = sc.block_grad + size_t(g) * kV2Group * P;
  const double* lpart = sc.block_loss + size_t(g) * kV2Group;
  if (groups == 1) {
    final_update(part, lpart, gsize, P, w, m, v, grad, state, d, h, sgd, inv_terms, losses, &s_adam);
    return;
  }
  for (int k = tid; k < P; k += S) {
    float s = __ldcg(part + k);
    for (int j = 1; j < gsize; ++j) s = __fadd_rn(s, __ldcg(part + size_t(j) * P + k));
    sc.group_grad[size_t(g) * P + k] = s;
  }
  if (tid == 0) {
    double ls = __ldcg(lpart);
    for (int j = 1; j < gsize; ++j) ls += __ldcg(lpart + j);
    sc.group_loss[g] = ls;
  }
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
  final_update(sc.group_grad, sc.group_loss, groups, P, w, m, v, grad, state, d, h, sgd, inv_terms, losses,
               &s_adam);
}

template <int K>
void launch_k(const FusedV2Plan& plan, const float* x, const float* y, float* w, float* m, float* v, float* grad,
              TrainState* state, StepDesc d, AdamHyper h, bool sgd, float* losses, const FusedV2Scratch& sc,
              cudaStream_t s) {
  const int n_out = plan.net.widths[plan.net.layers];
  const float two_over_count = 2.0f / (float(d.count) * float(n_out));  // as the CPU reference
  const double inv_terms = 1.0 / (double(d.count) * double(n_out));
  fused_v2_kernel<K><<<fused_v2_blocks(d.count), kV2Tile, plan.smem_bytes, s>>>(
      x, y, w, m, v, grad, state, d, h, sgd ? 1 : 0, plan.net, two_over_count, inv_terms, sc, losses);
  CUDA_CHECK_LAUNCH();
}

template <int K>
void prepare_k(size_t smem) {
  cudaFuncAttributes attr;
  CUDA_CHECK(cudaFuncGetAttributes(&attr, fused_v2_kernel<K>));
  // Only ever raise the per-kernel limit (a live backend's graphs may need the larger one).
  if (smem > size_t(kSmallSharedLimit) && smem > size_t(attr.maxDynamicSharedSizeBytes))
    CUDA_CHECK(cudaFuncSetAttribute(fused_v2_kernel<K>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
}

}  // namespace

FusedV2Plan plan_fused_v2(const std::vector<int>& widths, const std::vector<Activation>& acts, size_t smem_optin) {
  FusedV2Plan p;
  const int L = int(widths.size()) - 1;
  if (L < 1 || int(acts.size()) != L) {
    p.why = "malformed network";
    return p;
  }
  if (const std::string why = fused_shape_problem(widths); !why.empty()) {
    p.why = why;
    return p;
  }
  FusedV2Net& n = p.net;
  n.layers = L;
  int off = 0, soff = 0, rows = 0;
  for (int l = 0; l <= L; ++l) n.widths[l] = widths[l];
  for (int l = 0; l < L; ++l) {
    const int in = widths[l], out = widths[l + 1];
    n.act[l] = int(acts[l]);
    n.aoff[l] = rows;
    rows += in;
    n.dmax = std::max(n.dmax, out);
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
  n.params = off;
  n.sparams = soff;
  n.rows = rows;
  const int wmax = *std::max_element(widths.begin(), widths.end());
  p.bucket = wmax <= 8 ? 8 : wmax <= 16 ? 16 : wmax <= 32 ? 32 : 64;
  const size_t floats = size_t(n.sparams) + size_t((kWarps * n.params + 1) & ~1) + size_t(rows + n.dmax) * kV2Tile;
  p.smem_bytes = 4 * floats + 8 * kWarps;
  const std::string kib = std::to_string((p.smem_bytes + 1023) / 1024) + " KiB";
  if (p.smem_bytes > smem_optin) {
    p.why = "weights, per-warp gradients and a " + std::to_string(kV2Tile) + "-sample tile need " + kib +
            " of shared memory; the device allows " + std::to_string(smem_optin / 1024) + " KiB per block";
    return p;
  }
  p.fits = true;
  p.why = "one kernel per step, register bucket " + std::to_string(p.bucket) + ", " + std::to_string(L) +
          " layers; tile of " + std::to_string(kV2Tile) + " samples in " + kib + " of shared memory";
  return p;
}

void prepare_fused_v2(const FusedV2Plan& plan) {
  switch (plan.bucket) {
    case 8: prepare_k<8>(plan.smem_bytes); break;
    case 16: prepare_k<16>(plan.smem_bytes); break;
    case 32: prepare_k<32>(plan.smem_bytes); break;
    case 64: prepare_k<64>(plan.smem_bytes); break;
    default: throw CudaError("prepare_fused_v2: no bucket (the plan does not fit)");
  }
}

void launch_fused_v2_step(const FusedV2Plan& plan, const float* x, const float* y, float* w, float* m, float* v,
                          float* grad, TrainState* state, StepDesc d, AdamHyper h, bool sgd, float* losses,
                          const FusedV2Scratch& sc, cudaStream_t s) {
  if (d.count <= 0) throw CudaError("launch_fused_v2_step: empty batch");
  switch (plan.bucket) {
    case 8: launch_k<8>(plan, x, y, w, m, v, grad, state, d, h, sgd, losses, sc, s); break;
    case 16: launch_k<16>(plan, x, y, w, m, v, grad, state, d, h, sgd, losses, sc, s); break;
    case 32: launch_k<32>(plan, x, y, w, m, v, grad, state, d, h, sgd, losses, sc, s); break;
    case 64: launch_k<64>(plan, x, y, w, m, v, grad, state, d, h, sgd, losses, sc, s); break;
    default: throw CudaError("launch_fused_v2_step: no bucket (the plan does not fit)");
  }
}

}  // namespace nntrain::cuda
