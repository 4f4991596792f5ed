// fused_v2_device.cuh — what fused_v2_kernel's stages (fused_v2_stages.cuh) are built from:
// the net's shape as the kernel sees it (run-time widths, RunShape, or the one exact shape
// compiled with constant widths, Shape3), where the padded weights' elements come from, the
// exact shape's constant-division placements, the launch bounds, which tile column a thread
// owns, the block's header in shared memory, programmatic dependent launch, and the
// fixed-order sums. Included by fused_v2.cu only (through fused_v2_stages.cuh): everything
// here is internal to that translation unit.
#pragma once

#include "fused_v2.hpp"

namespace nntrain::cuda {

namespace {
constexpr unsigned kFull = 0xffffffffu;
constexpr int kMaxWarps = kV2Tile * kV2MaxThreadsPerSample / 32;

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

// Over a warp, or over the W < 32 threads of a smaller block (the 16-sample tile).
template <int W>
__device__ __forceinline__ double warp_sum_double(double x) {
  constexpr unsigned mask = W >= 32 ? kFull : (1u << W) - 1;
#pragma unroll
  for (int off = W >= 32 ? 16 : W / 2; off > 0; off >>= 1) x += __shfl_xor_sync(mask, x, off);
  return x;
}

// p[0] + p[stride] + ... + p[(count − 1)·stride], added in index order. The loads of a run of
// kV2Group are issued together (absent ones read as +0, which leaves a sum unchanged), so a
// run costs one memory round trip, not count of them.
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

// The block's scalars, at the start of its dynamic shared memory (a multiple of 16 bytes, so
// the weights after it stay aligned for float4).
struct alignas(16) V2Header {
  double loss[kMaxWarps];  // the loss, per warp
  AdamStep adam;        // this step's Adam scalars
  int last;             // this block arrived last (at its level)
};

constexpr int kTailRound = 4;
constexpr int kLoadRound = 4;
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

}  // namespace

}  // namespace nntrain::cuda
