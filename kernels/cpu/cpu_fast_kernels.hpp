// cpu_fast_kernels.hpp — the per-ISA inner kernels of the fast CPU backend (a table of
// plain function pointers, one table per instruction set).
//
// Layout: a tile of T samples is stored feature-major, row r of a layer's activations is
// T contiguous floats (one SIMD lane per sample), rows 64-byte aligned, T a multiple of
// kTileQuantum. Weights are the flat Params layout (W out × in row-major, then b), read
// as broadcast scalars.
//
// Each table is compiled in its own translation unit with its own -m flags, inside its own
// namespace, and uses only intrinsics and its own static functions: no inline function
// shared with the rest of the program is instantiated there, so the linker can never pick
// an AVX-512 copy of a shared inline function for code that runs on a CPU without it.
// The one exception, nnmath.hpp's tanh/sigmoid templates (math::fx), is instantiated on each
// unit's own vector types and always inlined.
#pragma once

#include <cstddef>
#include <cstdint>

#include "nnmath.hpp"

namespace nntrain::fast {

// Tiles are a multiple of this many samples: one gradient accumulator (kAccLanes), so a
// batch of 16 or 100 samples computes 16 or 112, not 64 or 128 (until 2026-11-30 the
// quantum was 64, the widest register block's, and small batches paid for up to 48 padding
// samples a step). Kernels with blocks of several vectors end a tile in blocks of one.
constexpr int kTileQuantum = 16;

// Floats per gradient accumulator, on every ISA: sample s of a tile adds into lane s % 16,
// in tile order, and the 16 lanes are summed in one halving tree (lane j + lane j+8, then
// j + j+4, j + j+2, j + j+1). AVX-512 holds an accumulator in one register, AVX2 in two (a
// kernel's pass over the tile's even vectors, then one over its odd vectors), the 4-lane
// baseline set in four: the same sums in the same order, so the same bits on every ISA
// (with FMA the same everywhere too: the baseline set computes it exactly, see
// cpu_fast_generic.cpp).
constexpr int kAccLanes = 16;

// Accumulators past a lane_reduce run that it may read (and whose sums it drops).
constexpr int kLaneReduceSlack = 15;

// Adam's per-step scalars in float, as nnmath.hpp's adam_update rounds them.
struct AdamScalars {
  float b1, c1, b2, c2, eps, bias2_sqrt, step_size;
};

// Arguments of grad_backprop_first: the second layer (W, D, its input A = the first layer's
// activations, in -> out, act_prev = the first layer's activation, gW/gb, scratch P) and the
// first (nx inputs X0, rows ldx apart, gW0/gb0).
struct FirstBackward {
  const float* W;
  const float* D;
  const float* A;
  int in, out, T, act_prev;
  float *gW, *gb, *P;
  const float* X0;
  size_t ldx;
  int nx;
  float *gW0, *gb0;
  bool fresh;  // the chunk's first tile: accumulators start from zero (see grad_lanes)
};

// Arguments of forward_first: layer 0 (W0/b0, nx inputs X0 rows ldx apart, K outputs H,
// act0), layer 1 (W1/b1, out outputs Z, act1) and optionally layer 2 (W2/b2 non-null,
// out2 outputs Z2, act2); T samples per row, `valid` of them real.
struct FirstForward {
  const float *W0, *b0;
  int nx;
  const float* X0;
  size_t ldx;
  int K, act0;
  float* H;
  const float *W1, *b1;
  int out;
  float* Z;
  int T, act1, valid;
  const float *W2, *b2;
  int out2;
  float* Z2;
  int act2;
  // Vectors of samples per register block: 1, or 2 on the AVX-512 and AVX2 sets (else 1).
  // The same bits either way; which is faster depends on the core (pick_forward_cols in
  // cpu_fast_tuning.cpp).
  int cols;
  // The tail (D non-null, and the third layer is the last, with one output and the
  // identity; only taken when the third layer is fused): output_delta of Z2 against the
  // targets Y (one row) with two_over_count into loss, then grad_backprop of the third
  // layer (its input Z, act1) into gW2/gb2 (fresh as FirstBackward) with the second
  // layer's delta into D (out rows of T) -- the same operations as those kernel calls, so
  // the same bits. Neither Z nor Z2 is stored: the second layer's output passes through D's
  // rows, which end holding the delta.
  const float* Y;
  float two_over_count;
  float *loss, *gW2, *gb2, *D;
  bool fresh;
};

// core/nnmath.hpp's ShuffleKey, as plain values (the ISA units include no shared header).
struct ShuffleArgs {
  uint32_t n, half_bits, k[4];
};

struct Kernels {
  const char* isa;  // "avx512", "avx2", "generic"
  int lanes;        // floats per vector (accumulators are kAccLanes wide on every ISA)
  bool fma;         // whether the hardware fuses multiply-adds (every set computes them fused)

  // Z[o][s] = act(b[o] + sum_i W[o*in+i] A[i][s]) for s < T. A rows are lda apart, Z rows T.
  // i runs in order 0..in-1 (a chain of multiply-adds per lane). Every activation (tanh and
  // sigmoid: nnmath.hpp's, lane-wise) is applied in registers to all T samples; the padding's
  // values are finite and reach no result (their deltas are zero). `valid` is unused.
  void (*forward)(const float* W, const float* b, int in, int out, const float* A, size_t lda, float* Z, int T,
                  int act, int valid);
  // Applies act in place to rows × T values (for the BLAS path's outputs), as forward
  // (tanh and sigmoid to the `valid` samples only: a pass of its own, the padding left raw).
  void (*activate)(float* Z, int rows, int T, int act, int valid);
  // Output layer: D[o][s] = two_over_count (Z - Y) act'(Z) for s < count, 0 for the padding;
  // loss[s % kAccLanes] += (Z - Y)^2 over s < count (Y rows ldy apart).
  void (*output_delta)(const float* Z, const float* Y, size_t ldy, int out, int count, int T, float two_over_count,
                       int act, float* D, float* loss);
  // gW[(o*in+i)*kAccLanes + s % kAccLanes] += D[o][s] A[i][s], gb[o*kAccLanes + s % kAccLanes]
  // += D[o][s]: each of the 16 lanes sums its samples in tile order.
  // fresh: the accumulators are taken as zero instead of read (a chunk's first tile; the
  // same bits as zeroed memory, without zeroing every chunk's accumulators first). Likewise
  // for bias_grad, grad_backprop and FirstBackward.
  void (*grad_lanes)(const float* D, const float* A, size_t lda, int in, int out, int T, float* gW, float* gb,
                     bool fresh);
  // gb[o] += sum of D[o][s] (scalar accumulators, for layers whose gW is a BLAS GEMM).
  void (*bias_grad)(const float* D, int out, int T, float* gb, bool fresh);
  // P[i][s] = (sum_o W[o*in+i] D[o][s]) * act'(Aprev[i][s]), o in order 0..out-1.
  void (*backprop)(const float* W, const float* D, int in, int out, int T, const float* Aprev, int act_prev,
                   float* P);
  // P[i][s] *= act'(Aprev[i][s]) (after a BLAS GEMM computed W^T D).
  void (*scale_by_derivative)(float* P, const float* Aprev, int rows, int T, int act);
  // out[k] = sum of acc[k*kAccLanes .. +kAccLanes) in the halving tree, k < n. acc must
  // be readable, with finite values, up to kLaneReduceSlack accumulators past the last (the
  // AVX-512 kernel sums 16 at a time and drops the extra sums); out is written for k < n only.
  void (*lane_reduce)(const float* acc, size_t n, float* out);
  // grad_lanes (A rows T apart) and backprop (Aprev = A) in one call, the same results: for
  // layers with few outputs (<= 8) a single fused pass over the tile, otherwise the two kernels.
  void (*grad_backprop)(const float* W, const float* D, const float* A, int in, int out, int T, int act_prev,
                        float* gW, float* gb, float* P, bool fresh);
  // For k in [begin, end): g = sum over c < chunks of slots[c*stride + k] (in double, chunk
  // order, from 0.0) rounded to float, then the Adam update of w[k], m[k], v[k] with g
  // (bit-identical to nnmath.hpp's adam_update, except that on x86, where eps >= 1e-12,
  // subnormal inputs read and subnormal results are written as zero, the caller's MXCSR
  // restored: the bits differ only where a subnormal occurs; cpu_fast_kernels.inc says why).
  void (*reduce_adam)(const float* slots, size_t stride, int chunks, size_t begin, size_t end, float* w, float* m,
                      float* v, const AdamScalars& h);
  // grad_backprop for the second layer (P: the first layer's delta) followed by grad_lanes
  // for the first layer (nx inputs X0, rows ldx apart, out = in of the second, gW0/gb0),
  // the same results; with nx <= 2 and out <= 8 one pass that keeps P in registers.
  void (*grad_backprop_first)(const FirstBackward& a);
  // forward for the first layer (nx inputs X0, rows ldx apart, K outputs H, act0), then
  // for the second (K inputs H, out outputs Z, act1) and, if W2 is given, out2 == 1, act2 is
  // the identity and act1 is applied in registers, for a third (out inputs Z, one output
  // row Z2), the same results as forward calls; with nx <= 2, act0 identity/relu/leaky_relu
  // (or tanh/sigmoid with act1 the same) and out <= 8 one pass that uses each H row as soon as it is computed. Returns the
  // number of layers done: 0 (nothing: not this shape), 2 or 3; with FirstForward::D given,
  // 3 means the tail was done too.
  int (*forward_first)(const FirstForward& a);
  // out[j] = shuffle_index(key, first + j) for j < count: nnmath.hpp's Feistel permutation
  // with cycle walking, LANES indices at a time (integer operations: the same values).
  void (*shuffle_rows)(const ShuffleArgs& key, uint32_t first, int count, uint32_t* out);
  // dst[f*T + j] = src[rows[j]*stride + f] for f < nf, j < count, and 0 for count <= j < T:
  // a shuffled tile's rows gathered from the per-sample records (vector gathers where the
  // ISA has them; rows[j]*stride + nf must be < 2^31).
  void (*gather_rows)(const float* src, uint32_t stride, int nf, const uint32_t* rows, int count, int T, float* dst);
};

const Kernels& kernels_generic();
#if defined(__x86_64__)
const Kernels& kernels_avx2();
const Kernels& kernels_avx512();

// shuffle_rows on AVX-512 VBMI, 64 samples a vector as bytes (cpu_fast_shuffle_vbmi.cpp),
// the same values. Usable when the CPU has avx512f, avx512bw and avx512vbmi and the key's
// halves fit in a byte (half_bits <= 8: n <= 65536); call it only then. The AVX-512 table's
// shuffle_rows takes it where usable.
bool shuffle_rows_vbmi_usable(const ShuffleArgs& key);
void shuffle_rows_vbmi(const ShuffleArgs& key, uint32_t first, int count, uint32_t* out);
#endif

}  // namespace nntrain::fast
