// fused_mlp.cu — the fused small-MLP kernels (see fused_mlp.hpp).
//
// Stage 1, one block per tile of S samples, one thread per sample:
//   shared memory = [weights (all params) | activations rows × (S+1) | deltas rows × (S+1)
//                    | S doubles for the loss reduction]
//   Each thread runs its sample's forward and backward down its own column of the tile (no
//   barrier needed between layers). Then, after one barrier, thread k of the block sums
//   parameter k's gradient over the tile's samples in sample order (a fixed order) and
//   writes it to grad_partial[k × blocks + block]. Rows are padded to S+1 floats so that
//   threads reading the same sample of different rows hit different banks.
// Stage 2, one warp per parameter: lanes take the blocks in a fixed stride, then a fixed
// shuffle tree; lane 0 applies Adam. Both stages are deterministic: no atomics anywhere.
#include <algorithm>

#include "cuda_check.hpp"
#include "fused_mlp.hpp"
#include "reduce.cuh"

namespace nntrain::cuda {

namespace {

constexpr int kSmallSharedLimit = 48 * 1024;  // usable without opting in

// One thread's sample, down its own column of the tile (no barrier between layers): forward,
// loss and output delta, backward deltas. Returns the sample's loss (0 for a padding sample,
// whose deltas are 0).
template <int S>
__device__ __forceinline__ double v1_sample_pass(const FusedNet& net, const float* sw, float* sa, float* sd,
                                                 const float* __restrict__ y, bool live, size_t row,
                                                 float two_over_count, int tid) {
  constexpr int SP = S + 1;
  const int L = net.layers;
  const int n_out = net.widths[L];
  // Forward, down this thread's column.
  for (int l = 0; l < L; ++l) {
    const int in = net.widths[l], out = net.widths[l + 1];
    const float* W = sw + net.woff[l];
    const float* b = sw + net.boff[l];
    const float* ain = sa + net.aoff[l] * SP + tid;
    float* aout = sa + net.aoff[l + 1] * SP + tid;
    const Activation a = Activation(net.act[l]);
    for (int o = 0; o < out; ++o) {
      const float* Wo = W + o * in;
      float z = b[o];
      for (int i = 0; i < in; ++i) z = fmaf(Wo[i], ain[i * SP], z);
      aout[o * SP] = act_forward(a, z);
    }
  }

  // Loss and output delta; padding samples get delta 0 and add nothing.
  double loss = 0;
  {
    const float* p = sa + net.aoff[L] * SP + tid;
    float* dl = sd + net.aoff[L] * SP + tid;
    const Activation a = Activation(net.act[L - 1]);
    for (int o = 0; o < n_out; ++o) {
      if (live) {
        const float pk = p[o * SP], tk = y[row * n_out + o];
        loss += double(mse_term(pk, tk));
        dl[o * SP] = __fmul_rn(mse_grad(pk, tk, two_over_count), act_derivative_from_output(a, pk));
      } else {
        dl[o * SP] = 0.0f;
      }
    }
  }

  // Backward deltas, down this thread's column: delta_l = (W_l^T delta_{l+1}) · f'(a_l).
  for (int l = L - 1; l >= 1; --l) {
    const int in = net.widths[l], out = net.widths[l + 1];
    const float* W = sw + net.woff[l];
    const float* dout = sd + net.aoff[l + 1] * SP + tid;
    float* din = sd + net.aoff[l] * SP + tid;
    const float* al = sa + net.aoff[l] * SP + tid;
    const Activation a = Activation(net.act[l - 1]);
    for (int i = 0; i < in; ++i) {
      float s = 0.0f;
      for (int o = 0; o < out; ++o) s = fmaf(W[o * in + i], dout[o * SP], s);
      din[i * SP] = __fmul_rn(s, act_derivative_from_output(a, al[i * SP]));
    }
  }
  return loss;
}

// Per-block gradient, after the barrier that ends the sample passes: parameter k of layer l
// (W row-major, then b) summed over the tile's samples in order.
template <int S>
__device__ __forceinline__ void v1_block_gradient(const FusedNet& net, const float* sa, const float* sd, int valid,
                                                  int tid, float* __restrict__ grad_partial) {
  constexpr int SP = S + 1;
  const int L = net.layers;
  const int blocks = gridDim.x;
  for (int l = 0; l < L; ++l) {
    const int in = net.widths[l], out = net.widths[l + 1];
    const float* al = sa + net.aoff[l] * SP;
    const float* dn = sd + net.aoff[l + 1] * SP;
    for (int k = tid; k < out * in + out; k += S) {
      float acc = 0.0f;
      if (k < out * in) {
        const int o = k / in, i = k - o * in;
        const float* dr = dn + o * SP;
        const float* ar = al + i * SP;
        for (int s = 0; s < valid; ++s) acc = fmaf(dr[s], ar[s], acc);
      } else {
        const float* dr = dn + (k - out * in) * SP;
        for (int s = 0; s < valid; ++s) acc = __fadd_rn(acc, dr[s]);
      }
      // boff[l] == woff[l] + out·in, so W and b of a layer are one contiguous range.
      grad_partial[size_t(net.woff[l] + k) * blocks + blockIdx.x] = acc;
    }
  }
}

template <int S>
__global__ void __launch_bounds__(S) fused_forward_backward_kernel(const float* __restrict__ params,
                                                                   const float* __restrict__ x,
                                                                   const float* __restrict__ y, TrainState* state,
                                                                   StepDesc d, AdamHyper h, FusedNet net,
                                                                   float two_over_count,
                                                                   float* __restrict__ grad_partial,
                                                                   double* __restrict__ loss_partial) {
  constexpr int SP = S + 1;
  extern __shared__ __align__(16) unsigned char smem[];
  const int P = net.params;
  float* sw = reinterpret_cast<float*>(smem);
  float* sa = sw + ((P + 3) & ~3);
  float* sd = sa + net.rows * SP;
  double* sred = reinterpret_cast<double*>(sd + net.rows * SP);  // 8-aligned: 4·(even count) bytes before it

  const int tid = threadIdx.x;
  const int n_in = net.widths[0];

  // Only stage 2 reads the Adam scalars, after this kernel has finished.
  if (blockIdx.x == 0 && tid == 0) state->adam = adam_next_step(state->adam, h);

  for (int k = tid; k < P; k += S) sw[k] = params[k];
  const int base = blockIdx.x * S;
  const int valid = min(S, d.count - base);
  const bool live = tid < valid;
  size_t row = 0;
  if (live) row = batch_row(d, state->epoch, uint32_t(d.batch_offset + base + tid));
  for (int i = 0; i < n_in; ++i) sa[i * SP + tid] = live ? x[row * n_in + i] : 0.0f;
  __syncthreads();

  double loss = v1_sample_pass<S>(net, sw, sa, sd, y, live, row, two_over_count, tid);
  __syncthreads();
  v1_block_gradient<S>(net, sa, sd, valid, tid, grad_partial);

  loss = block_sum_fixed<S>(loss, sred);
  if (tid == 0) loss_partial[blockIdx.x] = loss;
}

__global__ void fused_reduce_update_kernel(const float* __restrict__ grad_partial,
                                           const double* __restrict__ loss_partial, int blocks, int P,
                                           float* __restrict__ grad, float* __restrict__ w, float* __restrict__ m,
                                           float* __restrict__ v, TrainState* state, StepDesc d, AdamHyper h,
                                           int sgd, double inv_terms, float* __restrict__ losses) {
  const int lane = threadIdx.x & 31;
  const int j = blockIdx.x * kFusedReduceWarps + (threadIdx.x >> 5);  // warp-uniform
  if (j < P) {
    const float* row = grad_partial + size_t(j) * blocks;
    float acc = 0.0f;
    for (int b = lane; b < blocks; b += 32) acc = __fadd_rn(acc, row[b]);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc = __fadd_rn(acc, __shfl_down_sync(0xffffffffu, acc, off));
    if (lane == 0) {
      grad[j] = acc;
      if (sgd) {
        sgd_update(w[j], acc, float(h.lr));
      } else {
        float wj = w[j], mj = m[j], vj = v[j];
        adam_update(wj, mj, vj, acc, h, state->adam);
        w[j] = wj;
        m[j] = mj;
        v[j] = vj;
      }
    }
  } else if (j == P) {
    double acc = 0;
    for (int b = lane; b < blocks; b += 32) acc += loss_partial[b];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (lane == 0) {
      // Only this thread touches loss_acc, slot and epoch in this kernel (other warps read
      // state->adam only), and stage 1 of the next step reads epoch after it.
      double la = state->loss_acc + acc * inv_terms;
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
}

template <int S>
void launch_fb(const FusedPlan& plan, const float* params, const float* x, const float* y, TrainState* state,
               StepDesc d, AdamHyper h, float two_over_count, float* grad_partial, double* loss_partial,
               cudaStream_t s) {
  const int blocks = fused_blocks(d.count, S);
  fused_forward_backward_kernel<S><<<blocks, S, plan.smem_bytes, s>>>(params, x, y, state, d, h, plan.net,
                                                                      two_over_count, grad_partial, loss_partial);
  CUDA_CHECK_LAUNCH();
}

template <int S>
void prepare_fb(size_t smem) {
  cudaFuncAttributes attr;
  CUDA_CHECK(cudaFuncGetAttributes(&attr, fused_forward_backward_kernel<S>));
  // The limit is per kernel, not per plan: only ever raise it, so a second backend with a
  // smaller (but > 48 KiB) plan cannot lower it under a live backend's captured graphs.
  if (smem > size_t(kSmallSharedLimit) && smem > size_t(attr.maxDynamicSharedSizeBytes))
    CUDA_CHECK(cudaFuncSetAttribute(fused_forward_backward_kernel<S>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    int(smem)));
}

}  // namespace

size_t fused_smem_bytes(const FusedNet& net, int tile) {
  const size_t wpad = size_t((net.params + 3) & ~3);
  return 4 * (wpad + 2 * size_t(net.rows) * size_t(tile + 1)) + 8 * size_t(tile);
}

FusedPlan plan_fused(const std::vector<int>& widths, const std::vector<Activation>& acts, size_t smem_optin) {
  FusedPlan p;
  if (const std::string why = fused_plan_problem(widths, acts.size()); !why.empty()) {
    p.why = why;
    return p;
  }
  const int L = int(widths.size()) - 1;
  FusedNet& n = p.net;
  n.layers = L;
  int off = 0, rows = 0;
  for (int l = 0; l <= L; ++l) {
    n.widths[l] = widths[l];
    n.aoff[l] = rows;
    rows += widths[l];
  }
  for (int l = 0; l < L; ++l) {
    n.act[l] = int(acts[l]);
    n.woff[l] = off;
    off += widths[l] * widths[l + 1];
    n.boff[l] = off;
    off += widths[l + 1];
  }
  n.params = off;
  n.rows = rows;
  for (int tile : {128, 64, 32}) {
    const size_t bytes = fused_smem_bytes(n, tile);
    if (bytes <= smem_optin) {
      p.fits = true;
      p.tile = tile;
      p.smem_bytes = bytes;
      p.why = "all widths <= " + std::to_string(kFusedMaxWidth) + ", " + std::to_string(L) + " layers; tile of " +
              std::to_string(tile) + " samples in " + std::to_string((bytes + 1023) / 1024) + " KiB of shared memory";
      return p;
    }
  }
  p.why = "weights and a 32-sample tile need " + std::to_string((fused_smem_bytes(n, 32) + 1023) / 1024) +
          " KiB of shared memory; the device allows " + std::to_string(smem_optin / 1024) + " KiB per block";
  return p;
}

void prepare_fused_kernels(const FusedPlan& plan) {
  switch (plan.tile) {
    case 128: prepare_fb<128>(plan.smem_bytes); break;
    case 64: prepare_fb<64>(plan.smem_bytes); break;
    case 32: prepare_fb<32>(plan.smem_bytes); break;
    default: throw CudaError("prepare_fused_kernels: no tile (the plan does not fit)");
  }
  cudaFuncAttributes attr;
  CUDA_CHECK(cudaFuncGetAttributes(&attr, fused_reduce_update_kernel));
}

void launch_fused_forward_backward(const FusedPlan& plan, const float* params, const float* x, const float* y,
                                   TrainState* state, StepDesc d, AdamHyper h, float* grad_partial,
                                   double* loss_partial, cudaStream_t s) {
  if (d.count <= 0) throw CudaError("launch_fused_forward_backward: empty batch");
  const int n_out = plan.net.widths[plan.net.layers];
  const float two_over_count = 2.0f / (float(d.count) * float(n_out));  // as the CPU reference
  switch (plan.tile) {
    case 128: launch_fb<128>(plan, params, x, y, state, d, h, two_over_count, grad_partial, loss_partial, s); break;
    case 64: launch_fb<64>(plan, params, x, y, state, d, h, two_over_count, grad_partial, loss_partial, s); break;
    case 32: launch_fb<32>(plan, params, x, y, state, d, h, two_over_count, grad_partial, loss_partial, s); break;
    default: throw CudaError("launch_fused_forward_backward: no tile (the plan does not fit)");
  }
}

void launch_fused_reduce_update(const FusedPlan& plan, int count, const float* grad_partial,
                                const double* loss_partial, float* grad, float* params, float* m, float* v,
                                TrainState* state, StepDesc d, AdamHyper h, bool sgd, float* losses,
                                cudaStream_t s) {
  const int P = plan.net.params;
  const int blocks = fused_blocks(count, plan.tile);
  const int grid = (P + 1 + kFusedReduceWarps - 1) / kFusedReduceWarps;  // P gradient warps + 1 loss warp
  const double inv_terms = 1.0 / (double(count) * double(plan.net.widths[plan.net.layers]));
  fused_reduce_update_kernel<<<grid, kFusedReduceWarps * 32, 0, s>>>(grad_partial, loss_partial, blocks, P, grad,
                                                                     params, m, v, state, d, h, sgd ? 1 : 0,
                                                                     inv_terms, losses);
  CUDA_CHECK_LAUNCH();
}

}  // namespace nntrain::cuda
