// cpu_fast_avx2.cpp — the fast backend's kernels for AVX2 + FMA (8 lanes). Compiled with
// -mavx2 -mfma (see CMakeLists.txt); called only when the CPU reports avx2 and fma.
#include <immintrin.h>

#include <cstdint>

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
// The first n < LANES floats at p (the other lanes zero) and their store back, as
// vmaskmovps: the scalar loops of the .inc built the vector lane by lane (kernel_bound on Zen
// 3: Adam on one slot's 172 parameters, whose last vector holds 4, 187 ns against 166).
#define NN_HAVE_MASKED_IO 1
static inline __m256i first_lanes(size_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline vf vload_n(const float* p, size_t n) { return _mm256_maskload_ps(p, first_lanes(n)); }
static inline void vstore_n(float* p, vf x, size_t n) { _mm256_maskstore_ps(p, first_lanes(n), x); }
// lane_sum of 8 accumulators (8 floats each, 32 bytes apart) into out[0..7], the same
// tree for each, as one transpose network: 14 shuffles, 7 adds and a final permute for 8
// sums, instead of 8 serial chains of an extract, a vector add, shuffles to scalars and
// three scalar adds (kernel_bound on Zen 3: ~0.18 µs for a 2->20->5->1 chunk's 172 sums,
// 6 % of the chunk). Each add takes, per output lane, the two operands lane_sum adds at
// that level: s_j = v_j + v_j+4, then t_j = s_j + s_j+2 (j < 2), then t_0 + t_1.
#define NN_HAVE_LANE_SUMS 1
__attribute__((always_inline)) static inline void lane_sums(const float* acc, float* out) {
  vf s[4], t[2];
  for (int i = 0; i < 4; ++i) {  // accumulators a = 2i, b = 2i + 1: [s(a) | s(b)]
    const vf a = *reinterpret_cast<const vf*>(acc + (2 * i) * 8), b = *reinterpret_cast<const vf*>(acc + (2 * i + 1) * 8);
    s[i] = __builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10, 11) + __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14, 15);
  }
  for (int k = 0; k < 2; ++k)  // from [s(a) | s(b)] and [s(c) | s(d)]: [t(a) t(c) | t(b) t(d)]
    t[k] = __builtin_shufflevector(s[2 * k], s[2 * k + 1], 0, 1, 8, 9, 4, 5, 12, 13) +
           __builtin_shufflevector(s[2 * k], s[2 * k + 1], 2, 3, 10, 11, 6, 7, 14, 15);
  // t_0 + t_1 of accumulators [0 2 4 6 | 1 3 5 7], then into their order.
  const vf z = __builtin_shufflevector(t[0], t[1], 0, 2, 8, 10, 4, 6, 12, 14) +
               __builtin_shufflevector(t[0], t[1], 1, 3, 9, 11, 5, 7, 13, 15);
  const vf r = __builtin_shufflevector(z, z, 0, 4, 1, 5, 2, 6, 3, 7);
  __builtin_memcpy(out, &r, sizeof(vf));
}
// One vector of floats from base[idx[0..7]] (idx: a vector of 8 indices < 2^31).
#define NN_HAVE_VGATHER 1
template <typename VU>
static inline vf vgather(const float* base, VU idx) {
  return _mm256_i32gather_ps(base, (__m256i)idx, 4);
}
// Appends the first `lim` lanes of x that are >= n, and the matching lanes of pos, to
// pend and where at m (in lane order); returns the new count. Both arrays need 8 spare
// entries past the result (whole vectors are stored). AVX2 has no compress: the lanes'
// mask picks a vpermd pattern from a 256-entry table (8 byte indices each) that moves the
// kept lanes to the front. The scalar loop in the .inc moved one lane at a time through
// general registers, ~5 instructions a lane: on Zen 3 the shuffle was 15 % of a shuffled
// batch-1024 step (perf), as much as the forward kernel.
// (The lane count comes from the table too: -mavx2 does not imply popcnt.)
struct LeftPackTable {
  uint64_t idx[256];
  uint8_t count[256];
  constexpr LeftPackTable() : idx{}, count{} {
    for (int mask = 0; mask < 256; ++mask) {
      uint64_t v = 0;
      int k = 0;
      for (int lane = 0; lane < 8; ++lane)
        if (mask & (1 << lane)) v |= uint64_t(lane) << (8 * k++);
      idx[mask] = v;
      count[mask] = uint8_t(k);
    }
  }
};
static constexpr LeftPackTable kLeftPack{};
#define NN_HAVE_APPEND_GE 1
template <typename VU>
static inline int append_ge(VU x, VU pos, int lim, uint32_t n, uint32_t* pend, uint32_t* where, int m) {
  const __m256i xi = (__m256i)x;
  // x >= n as unsigned: max(x, n) == x.
  const __m256i ge = _mm256_cmpeq_epi32(_mm256_max_epu32(xi, _mm256_set1_epi32(int(n))), xi);
  const unsigned mask = unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(ge))) & ((1u << lim) - 1u);
  const __m256i perm = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(kLeftPack.idx[mask])));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(pend + m), _mm256_permutevar8x32_epi32(xi, perm));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(where + m), _mm256_permutevar8x32_epi32((__m256i)pos, perm));
  return m + kLeftPack.count[mask];
}
// Register blocks sized for 16 ymm registers: 6 × 2 accumulators (forward), 2 × 4 (gradients).
constexpr int OB = 6, CB = 2, GOB = 2, IB = 4;
constexpr const char* kIsaName = "avx2";
constexpr bool kFused = true;

#include "cpu_fast_kernels.inc"

}  // namespace isa_avx2

const Kernels& kernels_avx2() { return isa_avx2::table(); }

}  // namespace nntrain::fast
