// cpu_fast_generic.cpp — the fast backend's kernels for any CPU: 4-lane GCC vectors
// (SSE2 on x86-64, NEON on arm64, scalar code elsewhere). Multiply-adds are fused, rounded
// once, as on AVX-512 and AVX2, so that every kernel set gives the same bits: where the
// baseline ISA has no FMA instruction (x86-64 without -mfma) it is computed exactly in
// double precision (slow: the price of the same bits on a CPU without AVX2).
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "cpu_fast_kernels.hpp"

namespace nntrain::fast {
namespace isa_generic {

constexpr int LANES = 4;
typedef float vf __attribute__((vector_size(16)));
typedef int vi __attribute__((vector_size(16)));
#if defined(__x86_64__) && !defined(__FMA__)
// fma(a, b, c) per lane, correctly rounded, in SSE2 (two lanes at a time as doubles): a*b is
// exact in double (48 bits); p + c rounded to double leaves an error e (exact, Knuth's
// TwoSum) that decides round-to-odd (s made odd, toward e, when the sum was inexact and s
// even); a value rounded to odd with 53 bits rounds to the 24 of a float as the exact one
// would (53 >= 24 + 2). s is never zero when e is not (the exact sum of a 48-bit product and
// a float is nonzero then); inf and NaN give e = NaN, which neither compare takes, so s
// passes unchanged. Intrinsics: GCC's generic 4-double vectors compared lane by lane in
// scalar code (127 instructions, against ~50 here). glibc's fmaf per lane was the other
// way: a call per lane clobbers every vector register of the register blocks.
__attribute__((always_inline)) static inline __m128d add_round_to_odd(__m128d p, __m128d z) {
  const __m128d s = _mm_add_pd(p, z), bv = _mm_sub_pd(s, p), zero = _mm_setzero_pd();
  const __m128d e = _mm_add_pd(_mm_sub_pd(p, _mm_sub_pd(s, bv)), _mm_sub_pd(z, bv));
  const __m128i one = _mm_set1_epi64x(1), sb = _mm_castpd_si128(s);
  const __m128i inexact = _mm_castpd_si128(_mm_or_pd(_mm_cmplt_pd(e, zero), _mm_cmpgt_pd(e, zero)));
  const __m128i even = _mm_sub_epi64(_mm_and_si128(sb, one), one);  // all ones where the last bit is 0
  // +1 ulp in magnitude where e has s's sign, else -1
  const __m128i step = _mm_or_si128(_mm_castpd_si128(_mm_xor_pd(_mm_cmpgt_pd(s, zero), _mm_cmpgt_pd(e, zero))), one);
  return _mm_castsi128_pd(_mm_add_epi64(sb, _mm_and_si128(_mm_and_si128(inexact, even), step)));
}
__attribute__((always_inline)) static inline vf vfma(vf a, vf b, vf c) {
  const __m128 A = __m128(a), B = __m128(b), C = __m128(c);
  const __m128d lo = add_round_to_odd(_mm_mul_pd(_mm_cvtps_pd(A), _mm_cvtps_pd(B)), _mm_cvtps_pd(C));
  const __m128d hi = add_round_to_odd(_mm_mul_pd(_mm_cvtps_pd(_mm_movehl_ps(A, A)), _mm_cvtps_pd(_mm_movehl_ps(B, B))),
                                      _mm_cvtps_pd(_mm_movehl_ps(C, C)));
  return vf(_mm_movelh_ps(_mm_cvtpd_ps(lo), _mm_cvtpd_ps(hi)));
}
#else
static inline vf vfma(vf a, vf b, vf c) {  // one instruction per lane where the ISA has FMA
  vf r;
  for (int j = 0; j < LANES; ++j) r[j] = __builtin_fmaf(a[j], b[j], c[j]);
  return r;
}
#endif
static inline vf vset1(float x) { return vf{x, x, x, x}; }
static inline vf vrelu(vf z) { return z > vf{} ? z : vf{}; }
static inline vf vsqrt(vf x) {  // correctly rounded, lane by lane
  for (int j = 0; j < LANES; ++j) x[j] = __builtin_sqrtf(x[j]);
  return x;
}
static inline float lane_sum(vf v) { return (v[0] + v[2]) + (v[1] + v[3]); }  // pairwise
constexpr int OB = 6, CB = 2, GOB = 2, IB = 4;
constexpr const char* kIsaName = "generic";
constexpr bool kFused = false;

#include "cpu_fast_kernels.inc"

}  // namespace isa_generic

const Kernels& kernels_generic() { return isa_generic::table(); }

}  // namespace nntrain::fast
