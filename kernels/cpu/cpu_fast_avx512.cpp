// cpu_fast_avx512.cpp — the fast backend's kernels for AVX-512 (16 lanes, FMA). Compiled
// with -mavx512f -mfma (see CMakeLists.txt); called only when the CPU reports avx512f.
#include <immintrin.h>

#include "cpu_fast_kernels.hpp"

namespace nntrain::fast {
namespace isa_avx512 {

constexpr int LANES = 16;
typedef float vf __attribute__((vector_size(64)));
typedef int vi __attribute__((vector_size(64)));
static inline vf vfma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
static inline vf vset1(float x) { return _mm512_set1_ps(x); }
// relu as one max: maxps(z, 0) is z > 0 ? z : 0 exactly (0 for -0 and NaN: the second
// operand), one instruction instead of a compare and a masked move (maskz: gcc 12 warns on
// _mm512_max_ps).
static inline vf vrelu(vf z) { return _mm512_maskz_max_ps(__mmask16(0xFFFF), z, vf{}); }
static inline vf vsqrt(vf x) { return _mm512_maskz_sqrt_ps(__mmask16(0xFFFF), x); }  // (gcc 12 warns on _mm512_sqrt_ps)
static inline float lane_sum(vf v) {  // pairwise: halves, then halves again (as avx2, generic)
  const __m256 s8 = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
                    __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m128 s = _mm256_castps256_ps128(s8) + _mm256_extractf128_ps(s8, 1);
  return (s[0] + s[2]) + (s[1] + s[3]);
}
// lane_sum of 16 accumulators at once (out[p] = lane_sum(acc[p*16 .. p*16+16)), p < 16):
// a transpose network whose four add levels are exactly lane_sum's halving tree (lane j +
// lane j+8, then j + j+4, then j + j+2, then j + j+1), so the same bits in ~46 instructions
// instead of 16 horizontal sums. Each level adds u + t where u is a blend of its two inputs
// (an ALU operation) and only t a permute: the shuffle units, the bottleneck of the first
// version (two permutes per add), do half the work (the blends are intrinsics: gcc turns a
// blend written as a shuffle into a permute). The operands of some adds come in
// swapped order (x + y for y + x: the same bits). Where each parameter ends up, and that each
// output is lane_sum's tree, was derived by a symbolic simulation of the network.
#define NN_HAVE_MASKED_IO 1
static inline vf vload_n(const float* p, size_t n) { return _mm512_maskz_loadu_ps(__mmask16((1u << n) - 1), p); }
static inline void vstore_n(float* p, vf x, size_t n) { _mm512_mask_storeu_ps(p, __mmask16((1u << n) - 1), x); }
// Eight floats as eight doubles: one vcvtps2pd from memory (cpu_fast_kernels.inc, load_widen).
#define NN_HAVE_LOAD_WIDEN 1
static inline __m512d load_widen(const float* p) { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }
#define NN_HAVE_LANE_SUMS 1
__attribute__((always_inline)) static inline void lane_sums(const float* acc, float* out) {
  vf w[8], x[4], y[2];
  for (int i = 0; i < 8; ++i) {  // lanes j, j+8 of two accumulators: [a_j + a_j+8, b_j+8 + b_j]
    const vf a = *reinterpret_cast<const vf*>(acc + (2 * i) * 16), b = *reinterpret_cast<const vf*>(acc + (2 * i + 1) * 16);
    w[i] = _mm512_mask_blend_ps(0xFF00, a, b) +
           __builtin_shufflevector(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23);
  }
  for (int k = 0; k < 4; ++k)  // j, j+4
    x[k] = _mm512_mask_blend_ps(0xF0F0, w[2 * k], w[2 * k + 1]) +
           __builtin_shufflevector(w[2 * k], w[2 * k + 1], 4, 5, 6, 7, 16, 17, 18, 19, 12, 13, 14, 15, 24, 25, 26, 27);
  for (int m = 0; m < 2; ++m)  // j, j+2
    y[m] = _mm512_mask_blend_ps(0xCCCC, x[2 * m], x[2 * m + 1]) +
           __builtin_shufflevector(x[2 * m], x[2 * m + 1], 2, 3, 16, 17, 6, 7, 20, 21, 10, 11, 24, 25, 14, 15, 28, 29);
  // j, j+1
  const vf z = _mm512_mask_blend_ps(0xAAAA, y[0], y[1]) +
               __builtin_shufflevector(y[0], y[1], 1, 16, 3, 18, 5, 20, 7, 22, 9, 24, 11, 26, 13, 28, 15, 30);
  const vf r = __builtin_shufflevector(z, z, 0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15);
  __builtin_memcpy(out, &r, sizeof(vf));
}
// One vector of floats from base[idx[0..15]] (idx: a vector of 16 indices < 2^31).
#define NN_HAVE_VGATHER 1
template <typename VU>
static inline vf vgather(const float* base, VU idx) {
  // (masked: gcc 12 warns that the unmasked form reads an uninitialised source)
  return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), __mmask16(0xFFFF), (__m512i)idx, base, 4);
}
// Appends the first `lim` lanes of x that are >= n, and the matching lanes of pos, to
// pend and where at m (in lane order); returns the new count. Both arrays need 16 spare
// entries past the result (whole vectors are stored; compress in registers, then a plain
// store: the memory form of vpcompressd is slow on some cores).
#define NN_HAVE_APPEND_GE 1
template <typename VU>
static inline int append_ge(VU x, VU pos, int lim, uint32_t n, uint32_t* pend, uint32_t* where, int m) {
  const __mmask16 k = _mm512_mask_cmpge_epu32_mask(__mmask16((1u << lim) - 1u), (__m512i)x, _mm512_set1_epi32(int(n)));
  _mm512_storeu_si512(pend + m, _mm512_maskz_compress_epi32(k, (__m512i)x));
  _mm512_storeu_si512(where + m, _mm512_maskz_compress_epi32(k, (__m512i)pos));
  return m + __builtin_popcount(unsigned(k));
}
// Register blocks (32 zmm): forward 6 rows × 4 vectors = 24 accumulators + 4 inputs + 1
// broadcast; gradients 5 × 4 = 20 accumulators + 9 operands.
constexpr int OB = 6, CB = 4, GOB = 5, IB = 4;
constexpr const char* kIsaName = "avx512";
constexpr bool kFused = true;

// shuffle_rows: the VBMI byte-table version where the CPU and n allow it (about a third of
// the cost per sample at n = 40,000 on Zen 4), else the 32-bit one in the .inc.
static void shuffle_rows_dispatch(const ShuffleArgs& key, uint32_t first, int count, uint32_t* out);
#define NN_SHUFFLE_ROWS shuffle_rows_dispatch

#include "cpu_fast_kernels.inc"

static void shuffle_rows_dispatch(const ShuffleArgs& key, uint32_t first, int count, uint32_t* out) {
  if (shuffle_rows_vbmi_usable(key))
    shuffle_rows_vbmi(key, first, count, out);
  else
    k_shuffle_rows(key, first, count, out);
}

}  // namespace isa_avx512

const Kernels& kernels_avx512() { return isa_avx512::table(); }

}  // namespace nntrain::fast
