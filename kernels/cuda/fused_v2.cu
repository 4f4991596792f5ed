// fused_v2.cu — one kernel per optimiser step for small MLPs (see fused_v2.hpp).
//
// Shared memory of a block (S = kV2Tile samples, rows kV2Stride = S + 4 floats apart):
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

#include "cuda_check.hpp"
#include "fused_v2.hpp"

namespace nntrain::cuda {

namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kMaxWarps = kV2Tile * kV2MaxThreadsPerSample / 32;
constexpr int kSmallSharedLimit = 48 * 1024;

// Programmatic dependent launch (Hopper and later; no-ops where the kernel was launched
// without the attribute, and compiled out below sm_90, e.g. the simulator's sm_75 build).
// launch_dependents lets the next step's grid be scheduled once every block of this one has
// issued it (or exited); wait blocks until the previous step's grid has completed and its
// writes are visible. Before the wait a step may only read what no step writes (x, y) and
// touch its own shared memory.
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ double warp_sum_double(double x) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(kFull, x, off);
  return x;
}

// p[0] + p[stride] + ... + p[(count − 1)·stride], added in index order. The loads of a run of
// kV2Group are issued together (absent ones read as +0, which leaves a sum unchanged), so a
// run costs one memory round trip, not count of them.
// The exact shape with T > 1: flat parameter k, of value `val`, to its place in the padded
// shared-memory weights sw (the inverse of padded_source) and, for a weight of layer l ≥ 1,
// also to the transposed copy st (W_lᵀ, `in` rows of out padded to 4: the backward reads a
// row of it as float4s).
template <class Shape, int l = 0>
__device__ __forceinline__ void place_exact(int k, float val, float* sw, float* st, int soff = 0, int off = 0,
                                            int toff = 0) {
  // One instantiation per layer, so that every division is by a constant.
  constexpr int in = Shape::width(l), out = Shape::width(l + 1), in4 = (in + 3) & ~3, out4 = (out + 3) & ~3;
  if (k < off + out * in) {
    const int r = k - off, o = r / in, i = r - o * in;
    sw[soff + o * in4 + i] = val;
    if constexpr (l >= 1) st[toff + i * out4 + o] = val;
    return;
  }
  if (k < off + out * in + out) {
    sw[soff + out * in4 + (k - off - out * in)] = val;
    return;
  }
  if constexpr (l + 1 < Shape::layers())
    place_exact<Shape, l + 1>(k, val, sw, st, soff + out * in4 + out4, off + out * in + out, l >= 1 ? toff + in * out4 : 0);
}

// The exact shape: the activation row and the delta row whose product, summed over the tile,
// is flat parameter k's gradient (a bias: the row of ones), with constant divisions.
template <class Shape, int l = 0>
__device__ __forceinline__ void param_rows_exact(int k, int& arow, int& drow, int off = 0, int aoff = 0, int doff = 0) {
  constexpr int in = Shape::width(l), out = Shape::width(l + 1);
  if (k < off + out * in) {
    const int r = k - off, o = r / in;
    arow = aoff + (r - o * in);
    drow = doff + o;
    return;
  }
  if (k < off + out * in + out) {
    arow = Shape::rows();
    drow = doff + (k - off - out * in);
    return;
  }
  if constexpr (l + 1 < Shape::layers())
    param_rows_exact<Shape, l + 1>(k, arow, drow, off + out * in + out, aoff + in, doff + out);
}

// Offset of W_lᵀ (l ≥ 1) in the transposed copy.
template <class Shape>
__device__ constexpr int transposed_offset(int l) {
  int t = 0;
  for (int j = 1; j < l; ++j) t += Shape::width(j) * ((Shape::width(j + 1) + 3) & ~3);
  return t;
}

template <typename T>
__device__ __forceinline__ T sum_partials(const T* p, size_t stride, int count) {
  T s = T(0);
  for (int j0 = 0; j0 < count; j0 += kV2Group) {
    T t[kV2Group];
#pragma unroll
    for (int j = 0; j < kV2Group; ++j) t[j] = j0 + j < count ? __ldcg(p + size_t(j0 + j) * stride) : T(0);
#pragma unroll
    for (int j = 0; j < kV2Group; ++j) {
      if (j0 + j >= count) break;
      s = j0 + j == 0 ? t[0] : s + t[j];
    }
  }
  return s;
}

// The tail of a step, in the one block that arrives last: sums `count` partials in order and
// updates every parameter (kTailRound of them per thread at a time, so that their loads are
// in flight together); the last thread folds the loss into the epoch. `a` is this step's
// Adam scalars.
// The block's scalars, at the start of its dynamic shared memory (a multiple of 16 bytes, so
// the weights after it stay aligned for float4).
struct alignas(16) V2Header {
  double loss[kMaxWarps];  // the loss, per warp
  AdamStep adam;        // this step's Adam scalars
  int last;             // this block arrived last (at its level)
};

constexpr int kTailRound = 4;
constexpr int kLoadRound = 4;
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

// The widths of the net, seen by the kernel: run-time values (any net within the limits), or
// one exact shape known at compile time, for which the layer loops unroll and every
// "stop at the layer's width" test folds away.
struct RunShape {
  static constexpr int kUnroll = 1;
  static constexpr bool kExact = false;
  const FusedV2Net& n;
  __device__ explicit RunShape(const FusedV2Net& net) : n(net) {}
  __device__ int layers() const { return n.layers; }
  __device__ int width(int l) const { return n.widths[l]; }
  __device__ Activation act(int l) const { return Activation(n.act[l]); }
  __device__ int sparams() const { return n.sparams; }
  __device__ int params() const { return n.params; }
};
// The exact shape: widths and activations (hidden relu, output identity) are constants.
template <int W0, int W1, int W2, int W3>
struct Shape3 {
  static constexpr int kUnroll = 3;
  static constexpr bool kExact = true;
  __device__ explicit Shape3(const FusedV2Net&) {}
  __device__ static constexpr int layers() { return 3; }
  __device__ static constexpr int width(int l) { return l == 0 ? W0 : l == 1 ? W1 : l == 2 ? W2 : W3; }
  __device__ static constexpr Activation act(int l) { return l < 2 ? Activation::relu : Activation::identity; }
  // floats of padded weights in shared memory (as plan_fused_v2 counts them)
  __device__ static constexpr int sparams() {
    int sp = 0;
    for (int l = 0; l < 3; ++l) sp += width(l + 1) * ((width(l) + 3) & ~3) + ((width(l + 1) + 3) & ~3);
    return sp;
  }
  __device__ static constexpr int params() {
    int p = 0;
    for (int l = 0; l < 3; ++l) p += width(l + 1) * (width(l) + 1);
    return p;
  }
  __device__ static constexpr int rows() { return W0 + W1 + W2 + W3; }  // activation rows (the ones row next)
};

// Where element k of the padded shared-memory weights comes from in the flat parameters, or
// -1 for padding (with Shape3 the offsets and divisors are constants).
template <class Shape>
__device__ __forceinline__ int padded_source(const Shape& sh, int k) {
  int soff = 0, off = 0;
#pragma unroll Shape::kUnroll
  for (int l = 0; l < sh.layers(); ++l) {
    const int in = sh.width(l), out = sh.width(l + 1), in4 = (in + 3) & ~3;
    const int wsize = out * in4, lsize = wsize + ((out + 3) & ~3);
    if (k < soff + lsize) {
      const int r = k - soff;
      if (r >= wsize) return r - wsize < out ? off + out * in + (r - wsize) : -1;
      const int o = r / in4, i = r - o * in4;
      return i < in ? off + o * in + i : -1;
    }
    soff += lsize;
    off += out * in + out;
  }
  return -1;
}

// Blocks per SM the kernel is compiled to fit (__launch_bounds__' second argument, which caps
// the registers per thread at 64K / (blocks × threads)). Without it ptxas takes 255 registers
// for every version (it hoists the gradient pass's loads), which on an H100 leaves room for
// 8 warps per SM: the reference's 625 blocks would run in two waves. Five blocks of the exact
// shape per SM hold all 625 blocks on 132 SMs at once. Turing (sm_75) holds at most 1,024
// threads per SM (ptxas rejects more): 3 blocks of 256 there (4 would leave 64 registers and
// a stack frame, and GPGPU-Sim, which runs the sm_75 build, cannot parse ptxas's report of
// one), 4 of 128; sm_80 and later hold 1,536 or 2,048.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
constexpr int v2_split_min_blocks(int T) { return T == 4 ? 3 : 4; }
#else
constexpr int v2_split_min_blocks(int) { return 5; }
#endif
constexpr int v2_min_blocks(int K, int T) { return T > 1 ? v2_split_min_blocks(T) : K <= 32 ? 8 : 4; }

// The tile sample (= column of the activation/delta rows) of thread tid, T threads per
// sample (adjacent lanes). Rows are 68 floats apart (≡ 4 mod 32 banks), so part p of a sample
// writing row o = p + T·r of its column lands 4p banks from part 0. Each warp therefore takes
// the samples whose columns mod 32 are 4·slot + low (low 0–3) for 32/(4T) slots spaced T
// apart: its T parts then cover all 32 banks in every row write and read of the forward and
// backward. (Consecutive samples per warp would need rows ≡ 32/T mod 32 apart, which puts
// the gradient pass's float4 row reads two or four to a bank.) For T = 1 the identity.
template <int T>
__device__ __forceinline__ int v2_column(int tid) {
  if constexpr (T == 1) {
    return tid;
  } else {
    const int lane = tid & 31, w = tid >> 5, s = lane / T;  // s: the warp's sample, 0 … 32/T − 1
    const int slot = (w % T) + T * (s >> 2);
    return 32 * (w / T) + 4 * slot + (s & 3);
  }
}

// T threads per sample (1, 2 or 4; a sample's threads are adjacent lanes of one warp).
template <int K, int T, class Shape>
__global__ void __launch_bounds__(kV2Tile * T, v2_min_blocks(K, T)) fused_v2_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                                           float* w, float* m, float* v, float* grad,
                                                           TrainState* state, StepDesc d, AdamHyper h, int sgd,
                                                           FusedV2Net net, float two_over_count, double inv_terms,
                                                           FusedV2Scratch sc, float* losses) {
  static_assert(T == 1 || T == 2 || T == 4, "threads per sample: 1, 2 or 4");
  constexpr int S = kV2Tile, SP = kV2Stride, NT = S * T;
  // No static __shared__ variables: GPGPU-Sim lays static shared memory over the start of
  // the dynamic array; the block's scalars are a header of the dynamic array instead.
  extern __shared__ __align__(16) unsigned char smem[];
  V2Header& hdr = *reinterpret_cast<V2Header*>(smem);
  AdamStep& s_adam = hdr.adam;
  int& s_last = hdr.last;
  double* sloss = hdr.loss;
  const Shape sh(net);
  const int P = sh.params(), L = sh.layers();
  float* sw = reinterpret_cast<float*>(smem + sizeof(V2Header));
  float* sa = sw + sh.sparams();
  float* sd = sa + (net.rows + 1) * SP;
  float* st = sd + net.drows * SP;  // the exact shape's transposed weights (T > 1)
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int part = tid % T, smp = v2_column<T>(tid);  // this thread's part of its sample, and the sample
  const int n_in = sh.width(0), n_out = sh.width(L);

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
  // Register arrays: zeroed once; every loop below stops at the layer's width (an unrolled
  // loop with a uniform break), so a narrow layer in a wide bucket costs its own width. Past
  // a width, only the float4 padding of a (up to a multiple of 4) must be zero.
  float a[K], al[K], dl[K];
#pragma unroll
  for (int i = 0; i < K; ++i) a[i] = al[i] = dl[i] = 0.0f;
#pragma unroll
  for (int i = 0; i < K; ++i) {
    if (i >= n_in) break;
    a[i] = live ? x[row * n_in + i] : 0.0f;
    if (i % T == part) sa[i * SP + smp] = a[i];
  }
  // Everything below reads what the previous step wrote (weights, Adam state, tickets) or
  // writes what it reads (the partials).
  pdl_wait();
  // Weights into shared memory, rows padded with zeros: kLoadRound loads per thread in
  // flight at a time (a loop of one load each would wait for every one in turn).
  // The exact shape with T > 1 never reads the padding (its forward skips the padded inputs,
  // its backward reads single floats), so there each thread moves flat parameters tid, tid + NT,
  // ... to their padded places; otherwise the padded array is filled, zeros included.
  constexpr int LR = NT >= 256 ? 1 : kLoadRound;
  const int sparams = sh.sparams();
  if constexpr (Shape::kExact && T > 1) {
#pragma unroll
    for (int r = 0; r < (Shape::params() + NT - 1) / NT; ++r)
      if (tid + r * NT < P) place_exact<Shape>(tid + r * NT, w[tid + r * NT], sw, st);
  } else {
    for (int k0 = tid; k0 < sparams; k0 += LR * NT) {
      float t[LR];
#pragma unroll
      for (int r = 0; r < LR; ++r) {
        const int k = k0 + r * NT, src = k < sparams ? padded_source(sh, k) : -1;
        t[r] = src >= 0 ? w[src] : 0.0f;
      }
#pragma unroll
      for (int r = 0; r < LR; ++r)
        if (k0 + r * NT < sparams) sw[k0 + r * NT] = t[r];
    }
  }
  // The next Adam scalars (double math, slow) now, off the serial tail; only the last block
  // uses them (state->adam changes only at the very end of the step).
  if (tid == 0) s_adam = adam_next_step(state->adam, h);
  __syncthreads();

  // Forward: a ← f(W a + b), layer by layer. The input vector is in registers; each output
  // (a run-time loop, so the code does not grow with K²; this thread's outputs are part,
  // part + T, ...) goes to the sample's column of a_{l+1}, from which (after the sample's
  // threads have all written theirs) the next layer reloads its registers.
#pragma unroll Shape::kUnroll
  for (int l = 0; l < L; ++l) {
    const int in = sh.width(l), out = sh.width(l + 1), q = (in + 3) >> 2;
    const Activation act = sh.act(l);
    const float4* W4 = reinterpret_cast<const float4*>(sw + net.swoff[l]);
    const float* b = sw + net.sboff[l];
    float* col = sa + net.aoff[l + 1] * SP + smp;
    // With the exact shape the input's float4 padding is known and skipped (a multiply by
    // zero adds nothing), and the loop over this thread's outputs unrolls.
    const auto output = [&](int o) {
      float acc = b[o];
#pragma unroll
      for (int c = 0; c < K / 4; ++c) {
        if (c >= q) break;
        const float4 wv = W4[o * q + c];
        acc = fmaf(wv.x, a[4 * c], acc);
        if (!Shape::kExact || 4 * c + 1 < in) acc = fmaf(wv.y, a[4 * c + 1], acc);
        if (!Shape::kExact || 4 * c + 2 < in) acc = fmaf(wv.z, a[4 * c + 2], acc);
        if (!Shape::kExact || 4 * c + 3 < in) acc = fmaf(wv.w, a[4 * c + 3], acc);
      }
      col[o * SP] = act_forward(act, acc);
    };
    if constexpr (Shape::kExact) {
#pragma unroll
      for (int r = 0; r < (K + T - 1) / T; ++r) {
        if (r * T >= out) break;
        if (part + r * T < out) output(part + r * T);
      }
    } else {
      for (int o = part; o < out; o += T) output(o);
    }
    if (T > 1) __syncwarp();
    const int out4 = (out + 3) & ~3;
#pragma unroll
    for (int i = 0; i < K; ++i) {
      if (i >= out4) break;
      a[i] = i < out ? col[i * SP] : 0.0f;
    }
  }

  // Loss and output delta (padding samples: delta 0, loss 0). Every thread of the sample
  // has the whole output delta; the loss is counted once, by the sample's first thread.
  double loss = 0;
  if (live) {
    const Activation act = sh.act(L - 1);
#pragma unroll
    for (int o = 0; o < K; ++o) {
      if (o >= n_out) break;
      const float p = a[o], t = o == 0 ? y0 : y[row * n_out + o];
      if (part == 0) loss += double(mse_term(p, t));
      dl[o] = __fmul_rn(mse_grad(p, t, two_over_count), act_derivative_from_output(act, p));
    }
  }

  // Backward: delta_l = (W_lᵀ delta_{l+1}) · f'(a_l). delta_{l+1} is in registers (dl) and in
  // the sample's column of the delta rows (all layers kept: the gradient pass reads them).
  if constexpr (T > 1) {
    // This thread computes delta_l[i] for i = part, part + T, ...: the sum over the layer's
    // outputs in order, as with one thread per sample (the same bits), into the sample's
    // column (the exact shape reads row i of W_lᵀ as float4s, any other shape single floats
    // of W_l); then the whole of delta_l is reloaded into registers for the layer below.
    {
      float* dcol = sd + net.doff[L - 1] * SP + smp;
#pragma unroll
      for (int o = 0; o < K; ++o) {
        if (o >= n_out) break;
        if (o % T == part) dcol[o * SP] = dl[o];
      }
    }
#pragma unroll Shape::kUnroll
    for (int l = L - 1; l >= 1; --l) {
      const int in = sh.width(l), out = sh.width(l + 1), in4 = (in + 3) & ~3;
      const float* acol = sa + net.aoff[l] * SP + smp;
      float* ncol = sd + net.doff[l - 1] * SP + smp;
      const Activation act = sh.act(l - 1);
      if constexpr (Shape::kExact) {
        // The exact shape reads row i of W_lᵀ as float4s (the same products, summed in the same
        // order): out/4 loads instead of out.
        const auto delta_t = [&](int i) {
          constexpr int kOut4 = (K + 3) & ~3;
          const float4* Wt = reinterpret_cast<const float4*>(st + transposed_offset<Shape>(l) + i * ((out + 3) & ~3));
          float nd = 0.0f;
#pragma unroll
          for (int c = 0; c < kOut4 / 4; ++c) {
            if (4 * c >= out) break;
            const float4 wv = Wt[c];
            nd = fmaf(wv.x, dl[4 * c], nd);
            if (4 * c + 1 < out) nd = fmaf(wv.y, dl[4 * c + 1], nd);
            if (4 * c + 2 < out) nd = fmaf(wv.z, dl[4 * c + 2], nd);
            if (4 * c + 3 < out) nd = fmaf(wv.w, dl[4 * c + 3], nd);
          }
          ncol[i * SP] = __fmul_rn(nd, act_derivative_from_output(act, acol[i * SP]));
        };
#pragma unroll
        for (int r = 0; r < (K + T - 1) / T; ++r) {
          if (r * T >= in) break;
          if (part + r * T < in) delta_t(part + r * T);
        }
      } else {
        const float* W = sw + net.swoff[l];
        for (int i = part; i < in; i += T) {
          float nd = 0.0f;
#pragma unroll
          for (int o = 0; o < K; ++o) {
            if (o >= out) break;
            nd = fmaf(W[o * in4 + i], dl[o], nd);
          }
          ncol[i * SP] = __fmul_rn(nd, act_derivative_from_output(act, acol[i * SP]));
        }
      }
      if (l == 1) break;
      __syncwarp();
#pragma unroll
      for (int i = 0; i < K; ++i) {
        if (i >= in) break;
        dl[i] = ncol[i * SP];
      }
    }
  } else {
#pragma unroll Shape::kUnroll
  for (int l = L - 1; l >= 0; --l) {
    const int in = sh.width(l), out = sh.width(l + 1), q = (in + 3) >> 2;
    float* dcol = sd + net.doff[l] * SP + smp;
#pragma unroll
    for (int o = 0; o < K; ++o) {
      if (o >= out) break;
      dcol[o * SP] = dl[o];
    }
    if (l == 0) break;
    const float* col = sa + net.aoff[l] * SP + smp;
#pragma unroll
    for (int i = 0; i < K; ++i) {
      if (i >= in) break;
      al[i] = col[i * SP];
    }
    const float4* W4 = reinterpret_cast<const float4*>(sw + net.swoff[l]);
    float nd[K];
#pragma unroll
    for (int i = 0; i < K; ++i) {
      if (i >= 4 * q) break;
      nd[i] = 0.0f;
    }
    for (int o = 0; o < out; ++o) {
      const float dk = dcol[o * SP];
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
    const Activation act = sh.act(l - 1);
#pragma unroll
    for (int i = 0; i < K; ++i) {
      if (i >= in) break;
      dl[i] = __fmul_rn(nd[i], act_derivative_from_output(act, al[i]));
    }
  }
  }

  loss = warp_sum_double(loss);
  if (lane == 0) sloss[warp] = loss;
  __syncthreads();

  // The block's partial gradient, transposed: thread t takes parameters t, t + NT, ... and
  // sums delta · a over the tile's S samples in a fixed order (four interleaved accumulators,
  // then (0+1)+(2+3)). Lanes on one row read one address (a broadcast); lanes on different
  // rows (68 floats apart) spread over the banks.
  const int blocks = gridDim.x, b = blockIdx.x;
  for (int k = tid; k < P; k += NT) {
    int arow = 0, drow = 0;
    if constexpr (Shape::kExact) {
      param_rows_exact<Shape>(k, arow, drow);
    } else {
      int l = 0;
      while (l + 1 < L && k >= net.woff[l + 1]) ++l;
      const int in = net.widths[l];
      if (k < net.boff[l]) {
        const int o = (k - net.woff[l]) / in;
        arow = net.aoff[l] + (k - net.woff[l] - o * in);
        drow = net.doff[l] + o;
      } else {
        arow = net.rows;
        drow = net.doff[l] + (k - net.boff[l]);
      }
    }
    const float* ap = sa + arow * SP;
    const float* dp = sd + drow * SP;
    // float4 reads (rows are 16-byte aligned): four samples per pair of loads, which then
    // wait for one shared-memory latency instead of four.
    const float4* dp4 = reinterpret_cast<const float4*>(dp);
    const float4* ap4 = reinterpret_cast<const float4*>(ap);
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int j = 0; j < S / 4; ++j) {
      const float4 dv = dp4[j], av = ap4[j];
      acc[0] = fmaf(dv.x, av.x, acc[0]);
      acc[1] = fmaf(dv.y, av.y, acc[1]);
      acc[2] = fmaf(dv.z, av.z, acc[2]);
      acc[3] = fmaf(dv.w, av.w, acc[3]);
    }
    sc.block_grad[size_t(b) * P + k] = __fadd_rn(__fadd_rn(acc[0], acc[1]), __fadd_rn(acc[2], acc[3]));
  }
  if (tid == 0) {
    double ls = sloss[0];
    for (int j = 1; j < NT / 32; ++j) ls += sloss[j];
    sc.block_loss[b] = ls;
  }

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

template <int K, int T, class Shape>
void launch_k(const FusedV2Plan& plan, const float* x, const float* y, float* w, float* m, float* v, float* grad,
              TrainState* state, StepDesc d, AdamHyper h, bool sgd, float* losses, const FusedV2Scratch& sc,
              cudaStream_t s) {
  const int n_out = plan.net.widths[plan.net.layers];
  const float two_over_count = 2.0f / (float(d.count) * float(n_out));  // as the CPU reference
  const double inv_terms = 1.0 / (double(d.count) * double(n_out));
  if (!plan.pdl) {
    fused_v2_kernel<K, T, Shape><<<fused_v2_blocks(d.count), kV2Tile * T, plan.smem_bytes, s>>>(
        x, y, w, m, v, grad, state, d, h, sgd ? 1 : 0, plan.net, two_over_count, inv_terms, sc, losses);
  } else {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(unsigned(fused_v2_blocks(d.count)));
    cfg.blockDim = dim3(unsigned(kV2Tile * T));
    cfg.dynamicSmemBytes = plan.smem_bytes;
    cfg.stream = s;
    cudaLaunchAttribute attr[1] = {};
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, fused_v2_kernel<K, T, Shape>, x, y, w, m, v, grad, state, d, h, sgd ? 1 : 0,
                                  plan.net, two_over_count, inv_terms, sc, losses));
  }
  CUDA_CHECK_LAUNCH();
}

template <int K, int T, class Shape>
int prepare_k(size_t smem) {
  cudaFuncAttributes attr;
  CUDA_CHECK(cudaFuncGetAttributes(&attr, fused_v2_kernel<K, T, Shape>));
  // Only ever raise the per-kernel limit (a live backend's graphs may need the larger one).
  if (smem > size_t(kSmallSharedLimit) && smem > size_t(attr.maxDynamicSharedSizeBytes))
    CUDA_CHECK(cudaFuncSetAttribute(fused_v2_kernel<K, T, Shape>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  return attr.numRegs;
}

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
  const int wmax = *std::max_element(widths.begin(), widths.end());
  p.bucket = wmax <= 8 ? 8 : wmax <= 16 ? 16 : wmax <= 32 ? 32 : 64;
  p.exact = widths == kV2ExactShape && acts == kV2ExactActivations;
  p.threads_per_sample = p.exact ? exact_threads : 1;
  // the exact shape with T > 1 also keeps W_lᵀ (l ≥ 1, rows of out padded to 4) for its backward
  size_t transposed = 0;
  if (p.exact && p.threads_per_sample > 1)
    for (int l = 1; l < L; ++l) transposed += size_t(widths[l]) * ((widths[l + 1] + 3) & ~3);
  // weights, the activation rows and a row of ones, the delta rows
  p.smem_bytes = sizeof(V2Header) +
                 4 * (size_t(n.sparams) + size_t(rows + 1 + drows) * kV2Stride + transposed);
  const std::string kib = std::to_string((p.smem_bytes + 1023) / 1024) + " KiB";
  if (p.smem_bytes > smem_optin) {
    p.why = "weights and the activation and delta rows of a " + std::to_string(kV2Tile) + "-sample tile need " + kib +
            " of shared memory; the device allows " + std::to_string(smem_optin / 1024) + " KiB per block";
    return p;
  }
  p.fits = true;
  p.why = std::string("one kernel per step, ") +
          (p.exact ? "exact shape 2-20-5-1" : "register bucket " + std::to_string(p.bucket)) + ", " + std::to_string(L) +
          " layers; tile of " + std::to_string(kV2Tile) + " samples, " + std::to_string(p.threads_per_sample) +
          (p.threads_per_sample == 1 ? " thread" : " threads") + " per sample, " + kib + " of shared memory";
  return p;
}

int prepare_fused_v2(const FusedV2Plan& plan) {
  if (plan.exact)
    return plan.threads_per_sample == 2 ? prepare_k<20, 2, Shape3<2, 20, 5, 1>>(plan.smem_bytes)
                                        : prepare_k<20, 4, Shape3<2, 20, 5, 1>>(plan.smem_bytes);
  switch (plan.bucket) {
    case 8: return prepare_k<8, 1, RunShape>(plan.smem_bytes);
    case 16: return prepare_k<16, 1, RunShape>(plan.smem_bytes);
    case 32: return prepare_k<32, 1, RunShape>(plan.smem_bytes);
    case 64: return prepare_k<64, 1, RunShape>(plan.smem_bytes);
    default: throw CudaError("prepare_fused_v2: no bucket (the plan does not fit)");
  }
}

void launch_fused_v2_step(const FusedV2Plan& plan, const float* x, const float* y, float* w, float* m, float* v,
                          float* grad, TrainState* state, StepDesc d, AdamHyper h, bool sgd, float* losses,
                          const FusedV2Scratch& sc, cudaStream_t s) {
  if (d.count <= 0) throw CudaError("launch_fused_v2_step: empty batch");
  if (plan.exact) {
    if (plan.threads_per_sample == 2)
      return launch_k<20, 2, Shape3<2, 20, 5, 1>>(plan, x, y, w, m, v, grad, state, d, h, sgd, losses, sc, s);
    return launch_k<20, 4, Shape3<2, 20, 5, 1>>(plan, x, y, w, m, v, grad, state, d, h, sgd, losses, sc, s);
  }
  switch (plan.bucket) {
    case 8: launch_k<8, 1, RunShape>(plan, x, y, w, m, v, grad, state, d, h, sgd, losses, sc, s); break;
    case 16: launch_k<16, 1, RunShape>(plan, x, y, w, m, v, grad, state, d, h, sgd, losses, sc, s); break;
    case 32: launch_k<32, 1, RunShape>(plan, x, y, w, m, v, grad, state, d, h, sgd, losses, sc, s); break;
    case 64: launch_k<64, 1, RunShape>(plan, x, y, w, m, v, grad, state, d, h, sgd, losses, sc, s); break;
    default: throw CudaError("launch_fused_v2_step: no bucket (the plan does not fit)");
  }
}

}  // namespace nntrain::cuda
