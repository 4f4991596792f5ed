// mlp_kernels.cu — element-wise and reduction kernels of the cuBLAS path (see mlp_kernels.hpp).
// The per-element math (activations, MSE term, Adam) is nnmath.hpp's, shared with the CPU.
#include <algorithm>

#include "cuda_check.hpp"
#include "mlp_kernels.hpp"
#include "reduce.cuh"

namespace nntrain::cuda {

namespace {

int grid_for(size_t elements, int threads) {
  const size_t blocks = (elements + threads - 1) / threads;
  return int(std::max<size_t>(1, std::min<size_t>(blocks, 65535u * 16u)));
}

__global__ void gather_kernel(const float* __restrict__ x, const float* __restrict__ y, int n_in, int n_out,
                              const TrainState* __restrict__ state, StepDesc d, float* __restrict__ xb,
                              float* __restrict__ yb) {
  const unsigned long long epoch = state->epoch;
  for (int s = blockIdx.x * blockDim.x + threadIdx.x; s < d.count; s += gridDim.x * blockDim.x) {
    const size_t row = batch_row(d, epoch, uint32_t(d.batch_offset + s));
    for (int i = 0; i < n_in; ++i) xb[size_t(s) * n_in + i] = x[row * n_in + i];
    for (int o = 0; o < n_out; ++o) yb[size_t(s) * n_out + o] = y[row * n_out + o];
  }
}

__global__ void bias_act_kernel(float* __restrict__ z, const float* __restrict__ b, int out, size_t total,
                                Activation a) {
  for (size_t k = blockIdx.x * size_t(blockDim.x) + threadIdx.x; k < total; k += size_t(gridDim.x) * blockDim.x)
    z[k] = act_forward(a, __fadd_rn(z[k], b[k % out]));
}

__global__ void act_backward_kernel(float* __restrict__ d, const float* __restrict__ y, size_t total, Activation a) {
  for (size_t k = blockIdx.x * size_t(blockDim.x) + threadIdx.x; k < total; k += size_t(gridDim.x) * blockDim.x)
    d[k] = __fmul_rn(d[k], act_derivative_from_output(a, y[k]));
}

// Grid of exactly loss_blocks(total) blocks; element k is always summed by the same
// thread in the same order, so the partials are reproducible.
__global__ void mse_delta_kernel(const float* __restrict__ p, const float* __restrict__ t, size_t total,
                                 float two_over_count, Activation out_act, float* __restrict__ delta,
                                 double* __restrict__ partials) {
  __shared__ double scratch[kReduceThreads];
  double sum = 0;
  for (size_t k = blockIdx.x * size_t(kReduceThreads) + threadIdx.x; k < total; k += size_t(gridDim.x) * kReduceThreads) {
    const float pk = p[k], tk = t[k];
    sum += double(mse_term(pk, tk));
    delta[k] = __fmul_rn(mse_grad(pk, tk, two_over_count), act_derivative_from_output(out_act, pk));
  }
  sum = block_sum_fixed<kReduceThreads>(sum, scratch);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

__global__ void loss_finalize_kernel(const double* __restrict__ partials, int parts, double inv_terms, StepDesc d,
                                     AdamHyper h, TrainState* __restrict__ state, float* __restrict__ losses) {
  __shared__ double scratch[kReduceThreads];
  double sum = 0;
  for (int k = threadIdx.x; k < parts; k += kReduceThreads) sum += partials[k];
  sum = block_sum_fixed<kReduceThreads>(sum, scratch);
  if (threadIdx.x == 0) {
    TrainState st = *state;
    st.loss_acc += sum * inv_terms;
    st.adam = adam_next_step(st.adam, h);
    if (d.batch_index == d.batches - 1) {
      losses[st.slot] = float(st.loss_acc / double(d.batches));
      st.slot += 1;
      st.epoch += 1;
      st.loss_acc = 0;
    }
    *state = st;
  }
}

// Stage 1: block r sums samples [r·chunk, min((r+1)·chunk, count)) for every output.
__global__ void bias_grad_partial_kernel(const float* __restrict__ delta, int out, int count, int chunk,
                                         float* __restrict__ partial) {
  const int r = blockIdx.x;
  const int s0 = r * chunk, s1 = min(count, s0 + chunk);
  for (int o = threadIdx.x; o < out; o += blockDim.x) {
    float acc = 0.0f;
    for (int s = s0; s < s1; ++s) acc = __fadd_rn(acc, delta[size_t(s) * out + o]);
    partial[size_t(r) * out + o] = acc;
  }
}

// Stage 2: db[o] = partial[0][o] + partial[1][o] + ... in chunk order.
__global__ void bias_grad_final_kernel(const float* __restrict__ partial, int out, int chunks, float* __restrict__ db) {
  for (int o = blockIdx.x * blockDim.x + threadIdx.x; o < out; o += gridDim.x * blockDim.x) {
    float acc = 0.0f;
    for (int r = 0; r < chunks; ++r) acc = __fadd_rn(acc, partial[size_t(r) * out + o]);
    db[o] = acc;
  }
}

__global__ void optimizer_kernel(float* __restrict__ w, float* __restrict__ m, float* __restrict__ v,
                                 const float* __restrict__ g, size_t n, const TrainState* __restrict__ state,
                                 AdamHyper h, int sgd) {
  const AdamStep step = state->adam;
  const float lr = float(h.lr);
  for (size_t k = blockIdx.x * size_t(blockDim.x) + threadIdx.x; k < n; k += size_t(gridDim.x) * blockDim.x) {
    if (sgd) {
      sgd_update(w[k], g[k], lr);
    } else {
      float wk = w[k], mk = m[k], vk = v[k];
      adam_update(wk, mk, vk, g[k], h, step);
      w[k] = wk;
      m[k] = mk;
      v[k] = vk;
    }
  }
}

__global__ void reset_state_kernel(TrainState* state) {
  TrainState st;
  st.adam = adam_initial_step();
  st.epoch = 0;
  st.slot = 0;
  st.pad_ = 0;
  st.loss_acc = 0;
  *state = st;
}

}  // namespace

void launch_gather(const float* x, const float* y, int n_in, int n_out, const TrainState* state, StepDesc d,
                   float* xb, float* yb, cudaStream_t s) {
  if (d.count <= 0) return;
  gather_kernel<<<grid_for(size_t(d.count), kElementwiseThreads), kElementwiseThreads, 0, s>>>(x, y, n_in, n_out,
                                                                                              state, d, xb, yb);
  CUDA_CHECK_LAUNCH();
}

void launch_bias_act(float* z, const float* b, int out, int count, Activation a, cudaStream_t s) {
  const size_t total = size_t(out) * size_t(count);
  if (!total) return;
  bias_act_kernel<<<grid_for(total, kElementwiseThreads), kElementwiseThreads, 0, s>>>(z, b, out, total, a);
  CUDA_CHECK_LAUNCH();
}

void launch_act_backward(float* d, const float* y, int width, int count, Activation a, cudaStream_t s) {
  const size_t total = size_t(width) * size_t(count);
  if (!total) return;
  act_backward_kernel<<<grid_for(total, kElementwiseThreads), kElementwiseThreads, 0, s>>>(d, y, total, a);
  CUDA_CHECK_LAUNCH();
}

int loss_blocks(size_t elements) {  // size_t: a batch × outputs past 2^31 (40M × 64) is no 1-block grid
  return int(std::max<size_t>(1, std::min<size_t>(kMaxLossBlocks, (elements + kReduceThreads - 1) / kReduceThreads)));
}

void launch_mse_delta(const float* p, const float* t, int n_out, int count, Activation out_act, float* delta,
                      double* partials, cudaStream_t s) {
  const size_t total = size_t(n_out) * size_t(count);
  // Same float expression as the CPU reference: 2 / (count × n_out), each rounded once.
  const float two_over_count = 2.0f / (float(count) * float(n_out));
  mse_delta_kernel<<<loss_blocks(total), kReduceThreads, 0, s>>>(p, t, total, two_over_count, out_act, delta,
                                                                      partials);
  CUDA_CHECK_LAUNCH();
}

void launch_loss_finalize(const double* partials, int parts, int n_out, StepDesc d, AdamHyper h, TrainState* state,
                          float* losses, cudaStream_t s) {
  const double inv_terms = 1.0 / (double(d.count) * double(n_out));
  loss_finalize_kernel<<<1, kReduceThreads, 0, s>>>(partials, parts, inv_terms, d, h, state, losses);
  CUDA_CHECK_LAUNCH();
}

int bias_chunks(int count) {
  // About 256 samples per chunk, at most kMaxBiasChunks chunks: stage 1 has enough blocks
  // to fill the GPU and stage 2 stays a short loop.
  return std::max(1, std::min(kMaxBiasChunks, (count + 255) / 256));
}

void launch_bias_grad(const float* delta, int out, int count, float* partial, float* db, cudaStream_t s) {
  const int chunks = bias_chunks(count);
  const int chunk = (count + chunks - 1) / chunks;
  const int threads = std::min(kReduceThreads, ((out + 31) / 32) * 32);
  bias_grad_partial_kernel<<<chunks, threads, 0, s>>>(delta, out, count, chunk, partial);
  CUDA_CHECK_LAUNCH();
  bias_grad_final_kernel<<<grid_for(size_t(out), kElementwiseThreads), kElementwiseThreads, 0, s>>>(partial, out,
                                                                                                   chunks, db);
  CUDA_CHECK_LAUNCH();
}

void launch_optimizer(float* w, float* m, float* v, const float* g, size_t n, const TrainState* state, AdamHyper h,
                      bool sgd, cudaStream_t s) {
  if (!n) return;
  optimizer_kernel<<<grid_for(n, kElementwiseThreads), kElementwiseThreads, 0, s>>>(w, m, v, g, n, state, h,
                                                                                   sgd ? 1 : 0);
  CUDA_CHECK_LAUNCH();
}

void load_elementwise_kernels() {
  cudaFuncAttributes attr;
  CUDA_CHECK(cudaFuncGetAttributes(&attr, gather_kernel));
  CUDA_CHECK(cudaFuncGetAttributes(&attr, bias_act_kernel));
  CUDA_CHECK(cudaFuncGetAttributes(&attr, act_backward_kernel));
  CUDA_CHECK(cudaFuncGetAttributes(&attr, mse_delta_kernel));
  CUDA_CHECK(cudaFuncGetAttributes(&attr, loss_finalize_kernel));
  CUDA_CHECK(cudaFuncGetAttributes(&attr, bias_grad_partial_kernel));
  CUDA_CHECK(cudaFuncGetAttributes(&attr, bias_grad_final_kernel));
  CUDA_CHECK(cudaFuncGetAttributes(&attr, optimizer_kernel));
  CUDA_CHECK(cudaFuncGetAttributes(&attr, reset_state_kernel));
}

void launch_reset_state(TrainState* state, cudaStream_t s) {
  reset_state_kernel<<<1, 1, 0, s>>>(state);
  CUDA_CHECK_LAUNCH();
}

void launch_reset_slot(TrainState* state, cudaStream_t s) {
  CUDA_CHECK(cudaMemsetAsync(&state->slot, 0, sizeof(int), s));
}

}  // namespace nntrain::cuda
