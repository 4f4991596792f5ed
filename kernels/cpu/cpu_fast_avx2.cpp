// cpu_fast_avx2.cpp — the fast backend's kernels for AVX2 + FMA (8 lanes). Compiled with
// -mavx2 -mfma (see CMakeLists.txt); called only when the CPU reports avx2 and fma.
#include <immintrin.h>

#include "cpu_fast_kernels.hpp"

namespace nntrain::fast {
namespace isa_avx2 {

constexpr int LANES = 8;
typedef float vf __attribute__((vector_size(32)));
typedef int vi __attribute__((vector_size(32)));
static inline vf vfma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline vf vset1(float x) { return _mm256_set1_ps(x); }
static inline vf vrelu(vf z) { return _mm256_max_ps(z, vf{}); }  // z > 0 ? z : 0 exactly
static inline vf vsqrt(vf x) { return _mm256_sqrt_ps(x); }
static inline float lane_sum(vf v) {  // pairwise: halves, then halves again
  const __m128 s = _mm256_castps256_ps128(v) + _mm256_extractf128_ps(v, 1);
  return (s[0] + s[2]) + (s[1] + s[3]);
}
// One vector of floats from base[idx[0..7]] (idx: a vector of 8 indices < 2^31).
#define NN_HAVE_VGATHER 1
template <typename VU>
static inline vf vgather(const float* base, VU idx) {
  return _mm256_i32gather_ps(base, (__m256i)idx, 4);
}
// Register blocks sized for 16 ymm registers: 6 × 2 accumulators (forward), 2 × 4 (gradients).
constexpr int OB = 6, CB = 2, GOB = 2, IB = 4;
constexpr const char* kIsaName = "avx2";
constexpr bool kFused = true;

#include "cpu_fast_kernels.inc"

}  // namespace isa_avx2

const Kernels& kernels_avx2() { return isa_avx2::table(); }

}  // namespace nntrain::fast
