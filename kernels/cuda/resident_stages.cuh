// resident_stages.cuh — the resident trainer's stages (load, forward, backward, reduce,
// optimizer, loss) and the layout of a block's shared memory, shared by the one-block kernel
// (resident.cu) and the cooperative grid (resident_grid.cu): a grid block runs the same stages
// over one group of samples as the one block does over its batch.
//
// Shared memory of a block (rows `stride` floats apart, sample s in column s):
//   [ header: the loss per warp ]
//   [ W_0 | b_0 | W_1 | b_1 | ... ]  weights, rows padded with zeros to a multiple of 4 floats
//                                    (float4 broadcasts in the forward and backward)
//   [ rows: a_0 ... a_{L-1}, delta_L ]  delta_l (l ≥ 1) overwrites a_l once layer l's gradient
//                                    pass has read a_l; columns past the batch stay zero
//   [ partial sums of one layer's gradient pass ]
// No static __shared__ (GPGPU-Sim lays it over the dynamic array; docs/GPU.md).
#pragma once

#include <algorithm>
#include <vector>

#include "cuda_check.hpp"
#include "resident.hpp"

namespace nntrain::cuda {

namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kSmallSharedLimit = 48 * 1024;
constexpr int kMaxWarps = 512 / 32;

struct alignas(16) ResHeader {
  double loss[kMaxWarps];
};

// The block's shared arrays and its thread.
struct Block {
  float* sw;
  float* rows;
  float* part;
  double* wloss;
  int sp, nt, tid;
};

// The block over its dynamic shared memory (the layout in resident.cu's header); smem_floats
// gets the floats of all of it (load_owned zeroes them).
__device__ __forceinline__ Block make_block(unsigned char* smem, const ResidentNet& n, size_t& smem_floats) {
  Block B;
  B.wloss = reinterpret_cast<ResHeader*>(smem)->loss;
  B.sw = reinterpret_cast<float*>(smem + sizeof(ResHeader));
  B.rows = B.sw + n.sparams;
  B.part = B.rows + size_t(n.rows) * n.stride;
  B.sp = n.stride;
  B.nt = blockDim.x;
  B.tid = threadIdx.x;
  smem_floats = (sizeof(ResHeader) / 4) + n.sparams + size_t(n.rows) * n.stride + n.scratch;
  return B;
}

// One optimiser step: its batch and the loss scalars of its size.
struct Step {
  int count, offset;
  ShuffleKey key;
  float two_over_count;
  double inv_terms;
};

// Parameters owned by this thread: k = tid + r × threads.
struct Owned {
  float w[kResMaxOwn], m[kResMaxOwn], v[kResMaxOwn], g[kResMaxOwn];
  int spos[kResMaxOwn];  // the weight's place in the padded shared copy
};

__device__ __forceinline__ double warp_sum_double(double x) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(kFull, x, off);
  return x;
}

__device__ __forceinline__ int delta_row(const ResidentNet& n, int l) { return l == n.layers ? n.droff : n.aoff[l]; }

__device__ __forceinline__ Step make_step(const ResidentNet& n, const ResidentChunk& c, unsigned long long epoch,
                                          int b) {
  Step st;
  st.count = b == c.batches - 1 ? c.last_count : n.batch;
  st.offset = b * n.batch;
  st.key = c.shuffle ? make_shuffle_key(c.n, c.seed, epoch) : ShuffleKey{};
  const int n_out = n.widths[n.layers];
  st.two_over_count = 2.0f / (float(st.count) * float(n_out));  // as the CPU reference
  st.inv_terms = 1.0 / (double(st.count) * double(n_out));
  return st;
}

__device__ __forceinline__ uint32_t sample_row(const ResidentChunk& c, const Step& st, int s) {
  const uint32_t pos = uint32_t(st.offset + s);
  return c.shuffle ? shuffle_index(st.key, pos) : pos;
}

// Stage "load": sample s's inputs into its column of a_0 (zeros past the batch's count).
__device__ __forceinline__ void load_sample(const Block& B, const ResidentNet& n, const ResidentChunk& c,
                                            const Step& st, const float* __restrict__ x, int s) {
  const int n_in = n.widths[0];
  const bool live = s < st.count;
  const size_t row = live ? sample_row(c, st, s) : 0;
  for (int i = 0; i < n_in; ++i) B.rows[i * B.sp + s] = live ? __ldg(x + row * n_in + i) : 0.0f;
}

// Zero shared memory, then the owners load w (and m, v) and place w in the padded copy.
__device__ inline void load_owned(const Block& B, Owned& own, const ResidentNet& n, const float* w, const float* m,
                           const float* v, int sgd, size_t smem_floats) {
  float* all = reinterpret_cast<float*>(B.wloss);
  for (size_t k = B.tid; k < smem_floats; k += B.nt) all[k] = 0.0f;
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kResMaxOwn; ++r) {
    const int k = B.tid + r * B.nt;
    own.w[r] = own.m[r] = own.v[r] = own.g[r] = 0.0f;
    own.spos[r] = 0;
    if (k >= n.params) continue;
    int l = 0;
    while (l + 1 < n.layers && k >= n.woff[l + 1]) ++l;
    const int in = n.widths[l], out = n.widths[l + 1], j = k - n.woff[l];
    own.spos[r] = j < out * in ? n.swoff[l] + (j / in) * ((in + 3) & ~3) + j % in : n.sboff[l] + j - out * in;
    own.w[r] = w[k];
    if (!sgd) {
      own.m[r] = m[k];
      own.v[r] = v[k];
    }
    B.sw[own.spos[r]] = own.w[r];
  }
}

// Stage "forward" for sample s: a ← f(W a + b) layer by layer (the input vector in registers,
// each output to the sample's column and reloaded), then the loss and the output delta,
// written over the prediction. Returns the sample's squared error (0 past the count).
template <int K>
__device__ __forceinline__ double forward_sample(const Block& B, const ResidentNet& n, const ResidentChunk& c,
                                                 const Step& st, const float* __restrict__ y, int s) {
  const int L = n.layers, n_out = n.widths[L];
  float a[K];
#pragma unroll
  for (int i = 0; i < K; ++i) a[i] = i < n.widths[0] ? B.rows[i * B.sp + s] : 0.0f;
  for (int l = 0; l < L; ++l) {
    const int in = n.widths[l], out = n.widths[l + 1], q = (in + 3) >> 2;
    const Activation act = Activation(n.act[l]);
    const float4* W4 = reinterpret_cast<const float4*>(B.sw + n.swoff[l]);
    const float* b = B.sw + n.sboff[l];
    float* col = B.rows + (l + 1 < L ? n.aoff[l + 1] : n.droff) * B.sp + s;
    for (int o = 0; o < out; ++o) {
      float acc = b[o];
#pragma unroll
      for (int c4 = 0; c4 < K / 4; ++c4) {
        if (c4 >= q) break;
        const float4 wv = W4[o * q + c4];
        acc = fmaf(wv.x, a[4 * c4], acc);
        acc = fmaf(wv.y, a[4 * c4 + 1], acc);
        acc = fmaf(wv.z, a[4 * c4 + 2], acc);
        acc = fmaf(wv.w, a[4 * c4 + 3], acc);
      }
      col[o * B.sp] = act_forward(act, acc);
    }
    // Only a's float4 padding past `out` must be zero (the next layer reads up to it).
    const int out4 = (out + 3) & ~3;
#pragma unroll
    for (int i = 0; i < K; ++i) {
      if (i >= out4) break;
      a[i] = i < out ? col[i * B.sp] : 0.0f;
    }
  }
  const bool live = s < st.count;
  const size_t row = live ? sample_row(c, st, s) : 0;
  const Activation act = Activation(n.act[L - 1]);
  float* dcol = B.rows + n.droff * B.sp + s;
  double loss = 0;
#pragma unroll
  for (int o = 0; o < K; ++o) {
    if (o >= n_out) break;
    float d = 0.0f;
    if (live) {
      const float p = a[o], t = __ldg(y + row * n_out + o);
      loss += double(mse_term(p, t));
      d = __fmul_rn(mse_grad(p, t, st.two_over_count), act_derivative_from_output(act, p));
    }
    dcol[o * B.sp] = d;
  }
  return loss;
}

// Stage "backward" for sample s, layer l ≥ 1: delta_l = (W_lᵀ delta_{l+1}) · f'(a_l), over a_l.
template <int K>
__device__ __forceinline__ void delta_sample(const Block& B, const ResidentNet& n, int l, int s) {
  const int in = n.widths[l], out = n.widths[l + 1], q = (in + 3) >> 2;
  const float* dcol = B.rows + delta_row(n, l + 1) * B.sp + s;
  float* acol = B.rows + n.aoff[l] * B.sp + s;
  const float4* W4 = reinterpret_cast<const float4*>(B.sw + n.swoff[l]);
  float nd[K];
#pragma unroll
  for (int i = 0; i < K; ++i) nd[i] = 0.0f;
  for (int o = 0; o < out; ++o) {
    const float dk = dcol[o * B.sp];
#pragma unroll
    for (int c4 = 0; c4 < K / 4; ++c4) {
      if (c4 >= q) break;
      const float4 wv = W4[o * q + c4];
      nd[4 * c4] = fmaf(wv.x, dk, nd[4 * c4]);
      nd[4 * c4 + 1] = fmaf(wv.y, dk, nd[4 * c4 + 1]);
      nd[4 * c4 + 2] = fmaf(wv.z, dk, nd[4 * c4 + 2]);
      nd[4 * c4 + 3] = fmaf(wv.w, dk, nd[4 * c4 + 3]);
    }
  }
  const Activation act = Activation(n.act[l - 1]);
#pragma unroll
  for (int i = 0; i < K; ++i) {
    if (i >= in) break;
    acol[i * B.sp] = __fmul_rn(nd[i], act_derivative_from_output(act, acol[i * B.sp]));
  }
}

// Stage "reduce", part 1: layer l's gradient as partial sums, one per (parameter, slice of
// samples): delta · a over the slice's columns in order (float4 reads, four accumulators,
// then (0+1)+(2+3)); a bias sums delta alone. Item it = slice × P_l + parameter.
__device__ __forceinline__ void grad_partials(const Block& B, const ResidentNet& n, int l) {
  const int in = n.widths[l], out = n.widths[l + 1], pl = out * in + out;
  const int len = n.slice_len[l], items = pl * n.slices[l];
  for (int it = B.tid; it < items; it += B.nt) {
    const int g = it / pl, k = it - g * pl;
    const bool bias = k >= out * in;
    const int o = bias ? k - out * in : k / in;
    const float4* dp = reinterpret_cast<const float4*>(B.rows + (delta_row(n, l + 1) + o) * B.sp);
    const float4* ap = reinterpret_cast<const float4*>(B.rows + (n.aoff[l] + (bias ? 0 : k - o * in)) * B.sp);
    const int lo = g * len / 4, hi = min(n.batch4, (g + 1) * len) / 4;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 2
    for (int j = lo; j < hi; ++j) {
      const float4 dv = dp[j];
      const float4 av = bias ? make_float4(1.0f, 1.0f, 1.0f, 1.0f) : ap[j];
      acc[0] = fmaf(dv.x, av.x, acc[0]);
      acc[1] = fmaf(dv.y, av.y, acc[1]);
      acc[2] = fmaf(dv.z, av.z, acc[2]);
      acc[3] = fmaf(dv.w, av.w, acc[3]);
    }
    B.part[it] = __fadd_rn(__fadd_rn(acc[0], acc[1]), __fadd_rn(acc[2], acc[3]));
  }
}

// Stage "reduce", part 2: each owner sums its layer-l parameters' partials in slice order.
__device__ __forceinline__ void owner_sums(const Block& B, const ResidentNet& n, int l, Owned& own) {
  const int pl = n.widths[l + 1] * (n.widths[l] + 1), slices = n.slices[l];
#pragma unroll
  for (int r = 0; r < kResMaxOwn; ++r) {
    const int k = B.tid + r * B.nt - n.woff[l];
    if (k < 0 || k >= pl) continue;
    float sum = B.part[k];
    for (int j = 1; j < slices; ++j) sum = __fadd_rn(sum, B.part[j * pl + k]);
    own.g[r] = sum;
  }
}

// Stage "optimizer": Adam (or SGD) on the owned parameters; the new weights to the shared copy.
__device__ __forceinline__ void optimize(const Block& B, const ResidentNet& n, Owned& own, const AdamHyper& h,
                                         const AdamStep& a, int sgd) {
#pragma unroll
  for (int r = 0; r < kResMaxOwn; ++r) {
    if (B.tid + r * B.nt >= n.params) break;
    if (sgd) sgd_update(own.w[r], own.g[r], float(h.lr));
    else adam_update(own.w[r], own.m[r], own.v[r], own.g[r], h, a);
    B.sw[own.spos[r]] = own.w[r];
  }
}

// The block's loss (double): the threads' sums, a fixed warp tree, then the warps in order.
__device__ __forceinline__ void publish_loss(const Block& B, double loss) {
  loss = warp_sum_double(loss);
  if ((B.tid & 31) == 0) B.wloss[B.tid >> 5] = loss;
}
__device__ __forceinline__ double block_loss(const Block& B) {
  double ls = B.wloss[0];
  for (int j = 1; j < (B.nt + 31) / 32; ++j) ls += B.wloss[j];
  return ls;
}

// Stages "load" + "forward" over the block's samples (one-block batch or grid group) and the
// block's loss; returns it on thread 0 (0 elsewhere).
template <int K>
__device__ __forceinline__ double forward_block(const Block& B, const ResidentNet& n, const ResidentChunk& c,
                                                const Step& st, bool reload, const float* __restrict__ x,
                                                const float* __restrict__ y) {
  double loss = 0;
  for (int s = B.tid; s < n.batch; s += B.nt) {
    if (reload) load_sample(B, n, c, st, x, s);
    loss += forward_sample<K>(B, n, c, st, y, s);
  }
  publish_loss(B, loss);
  __syncthreads();
  return B.tid == 0 ? block_loss(B) : 0.0;
}

// Stages "backward" + "reduce" from the top layer down: each owner's gradient in own.g; at
// the input layer `at_input()` runs between the owners' sums and the last barrier (the one
// block's optimizer; nothing for a grid group).
template <int K, class AtInput>
__device__ __forceinline__ void backward_block(const Block& B, const ResidentNet& n, Owned& own, AtInput at_input) {
  for (int l = n.layers - 1; l >= 0; --l) {
    grad_partials(B, n, l);
    __syncthreads();
    owner_sums(B, n, l, own);
    if (l > 0)
      for (int s = B.tid; s < n.batch; s += B.nt) delta_sample<K>(B, n, l, s);
    else at_input();
    __syncthreads();
  }
}

template <class Kernel>
inline int prepare_kernel(Kernel kernel, size_t smem) {
  cudaFuncAttributes attr;
  CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  if (smem > size_t(kSmallSharedLimit) && smem > size_t(attr.maxDynamicSharedSizeBytes))
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  return attr.numRegs;
}

// The generic kernels' register bucket K (the smallest that holds the widest layer) and the
// net's flat parameter count.
inline int resident_bucket(const std::vector<int>& widths) {
  const int wmax = *std::max_element(widths.begin(), widths.end());
  return wmax <= 8 ? 8 : wmax <= 16 ? 16 : wmax <= 32 ? 32 : 64;
}
inline int flat_params(const std::vector<int>& widths) {
  int params = 0;
  for (size_t l = 0; l + 1 < widths.size(); ++l) params += widths[l + 1] * (widths[l] + 1);
  return params;
}

// The layout of plan_resident's net: offsets, rows and the slices of each gradient pass.
inline void lay_out(ResidentNet& n, const std::vector<int>& widths, const std::vector<Activation>& acts, int batch,
             int threads) {
  const int L = int(widths.size()) - 1;
  n.layers = L;
  int off = 0, soff = 0, rows = 0;
  for (int l = 0; l <= L; ++l) n.widths[l] = widths[l];
  for (int l = 0; l < L; ++l) {
    const int in = widths[l], out = widths[l + 1], pl = out * in + out;
    n.act[l] = int(acts[l]);
    n.woff[l] = off;
    off += pl;
    n.swoff[l] = soff;
    soff += out * ((in + 3) & ~3);
    n.sboff[l] = soff;
    soff += (out + 3) & ~3;
    n.aoff[l] = rows;
    rows += in;
  }
  n.droff = rows;
  n.rows = rows + widths[L];
  n.params = off;
  n.sparams = soff;
  n.batch = batch;
  n.batch4 = (batch + 3) & ~3;
  n.stride = (n.batch4 / 4) % 2 == 1 ? n.batch4 : n.batch4 + 4;
  n.scratch = 0;
  for (int l = 0; l < L; ++l) {
    const int pl = widths[l + 1] * (widths[l] + 1);
    const int g = std::max(1, std::min({kResMaxSlices, threads / pl, n.batch4 / 4}));
    const int len = ((n.batch4 + g - 1) / g + 3) & ~3;
    n.slices[l] = g;
    n.slice_len[l] = len;
    n.scratch = std::max(n.scratch, pl * g);
  }
}

}  // namespace

}  // namespace nntrain::cuda
