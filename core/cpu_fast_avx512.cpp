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
// Register blocks (32 zmm): forward 6 rows × 4 vectors = 24 accumulators + 4 inputs + 1
// broadcast; gradients 5 × 4 = 20 accumulators + 9 operands.
constexpr int OB = 6, CB = 4, GOB = 5, IB = 4;
constexpr const char* kIsaName = "avx512";
constexpr bool kFused = true;

#include "cpu_fast_kernels.inc"

}  // namespace isa_avx512

const Kernels& kernels_avx512() { return isa_avx512::table(); }

}  // namespace nntrain::fast
