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
// Four floats as four doubles: one vcvtps2pd from memory (cpu_fast_kernels.inc, load_widen).
#define NN_HAVE_LOAD_WIDEN 1
static inline __m256d load_widen(const float* p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
// The 16-lane sums of 8 accumulators (16 floats each, 64 bytes apart) into out[0..7], the
// halving tree of every ISA: its first level (lane j + lane j+8) is the add of each
// accumulator's two vectors, the rest one transpose network: 14 shuffles, 7 adds and a final
// permute for 8 sums, instead of 8 serial chains of an extract, a vector add, shuffles to
// scalars and three scalar adds (kernel_bound on Zen 3: ~0.18 µs for a 2->20->5->1 chunk's
// 172 sums, 6 % of the chunk). Each add takes, per output lane, the two operands lane_sum
// adds at that level: s_j = v_j + v_j+4, then t_j = s_j + s_j+2 (j < 2), then t_0 + t_1.
#define NN_HAVE_LANE_SUMS 1
__attribute__((always_inline)) static inline void lane_sums(const float* acc, float* out) {
  vf s[4], t[2];
  // Lanes j + j+8 of accumulator k as fma(lo, 1, hi), which rounds lo + hi once, as the add
  // does (the same bits, signed zeros included): the add runs on the FMA units, idle here,
  // instead of joining the network's 7 adds and 15 shuffles on the add and shuffle units
  // (AMD Zen 3 to 5 add and multiply-add on separate pipes). On this project's AMD EPYC VM
  // (family 26, Zen 5): 51.5 -> 49.5 ns for a chunk's 172 sums; 8-lane accumulators took
  // 36 ns (twice the bytes read now: docs/journal/2026-11-29-avx2-ab.md).
  const vf one = vset1(1.0f);
  const auto half_sum = [acc, one](int k) {
    return vfma(*reinterpret_cast<const vf*>(acc + k * 16), one, *reinterpret_cast<const vf*>(acc + k * 16 + 8));
  };
  for (int i = 0; i < 4; ++i) {  // accumulators a = 2i, b = 2i + 1: [s(a) | s(b)]
    const vf a = half_sum(2 * i), b = half_sum(2 * i + 1);
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
// The fused backward's columns 1..in-1 (gbp_first_block<OUT, 1, relu, no bias, X>, one
// hidden unit a pass) for up to 5 outputs and 1 or 2 inputs, in assembly, all columns in one
// call: per lane the same operations in the same order as the .inc's loop, so the same bits
// (p's first term too is w0 d0 + 0, not a multiply: the two differ in a zero's sign, which
// an accumulator that is itself -0 would keep). GCC's allocation of that
// loop kept a pointer per D row and loaded each row twice (13 vector loads and general
// registers spilled and reloaded, per 12 multiply-adds, against 2 vector loads a cycle on
// Zen 3). Here the D rows are addressed from one pointer and the row stride and each is
// loaded once, and the zero (p's first addend, the relu's compare) is read from memory: 10
// loads per 12 multiply-adds in 16 vector registers (5 + 2 + 1 accumulators, 5 weights, a, d
// and p).
// wt: the columns' weights, OUT a column (W transposed). Accumulators are 16 floats
// (kAccLanes): one call is one pass, over the vectors 0, 2, 4, ... of each row from the
// pointers given (the caller offsets them by 8 floats for the odd vectors, whose half of the
// 16 lanes then starts 32 bytes in).
#define NN_HAVE_GBP_RELU_COLS 1
alignas(32) static const float kZeros[8] = {};
// The asm's repeated moves, spelled once: S only for more than K outputs (or inputs).
#define NN_OUT_GT(K, S) ".if %c[out] > " #K "\n\t" S ".endif\n\t"
#define NN_NX_GT(K, S) ".if %c[nx] > " #K "\n\t" S ".endif\n\t"
#define NN_LOAD(MEM, REG) "vmovaps " MEM ", %%" REG "\n\t"
#define NN_STORE(MEM, REG) "vmovaps %%" REG ", " MEM "\n\t"
// The column's accumulators ymm0-7 to or from gW (rows in * 16 floats apart), gW0 and gb0.
#define NN_GBP_ACCS(MOVE)                                                                              \
  MOVE("(%[gq])", "ymm0") NN_OUT_GT(1, MOVE("(%[gq],%[gs])", "ymm1"))                                  \
  NN_OUT_GT(2, MOVE("(%[gq],%[gs],2)", "ymm2")) NN_OUT_GT(3, MOVE("(%[gq],%[gs3])", "ymm3"))           \
  NN_OUT_GT(4, MOVE("(%[gq],%[gs],4)", "ymm4")) MOVE("(%[g0q])", "ymm5")                               \
  NN_NX_GT(1, MOVE("64(%[g0q])", "ymm6")) MOVE("(%[b0q])", "ymm7")
// D row K (at MEM) into ymm14: its accumulator ACC += d a, and p += W d (W: row K's weight).
#define NN_GBP_DROW(K, MEM, ACC, W)                                                                   \
  NN_OUT_GT(K, "vmovaps " MEM ", %%ymm14\n\t"                                                         \
               "vfmadd231ps %%ymm14, %%ymm13, %%" ACC "\n\t"                                          \
               "vfmadd231ps %%ymm14, %%" W ", %%ymm15\n\t")
template <int OUT, int X>
static void gbp_relu_cols(const float* D, size_t T, const float* A, size_t cols, const float* X0, size_t ldx,
                          const float* wt, float* gW, size_t in, float* gW0, float* gb0, bool fresh) {
  static_assert(OUT >= 1 && OUT <= 5 && (X == 1 || X == 2), "the register plan holds 5 outputs, 2 inputs");
  if (T == 0 || cols == 0) return;
  // ymm0-4: the column's gW accumulators (rows o, in * 16 floats apart), ymm5-6: its gW0, ymm7:
  // its gb0, ymm8-12: its OUT weights, ymm13: a (its activations), ymm14: d (a D row), ymm15: p.
  const char *ap = reinterpret_cast<const char*>(A), *dp = reinterpret_cast<const char*>(D),
             *xp = reinterpret_cast<const char*>(X0);
  char *gq = reinterpret_cast<char*>(gW), *g0q = reinterpret_cast<char*>(gW0), *b0q = reinterpret_cast<char*>(gb0);
  const char* wq = reinterpret_cast<const char*>(wt);
  const char* end = ap + T * sizeof(float);
  const char* const aend = ap + cols * T * sizeof(float);
  const size_t tb = T * sizeof(float), tb3 = 3 * tb, xb = ldx * sizeof(float), gs = in * 16 * sizeof(float),
               gs3 = 3 * gs;
  const unsigned char fr = fresh ? 1 : 0;
  asm volatile(
      "2:\n\t"
      "cmpb $0, %[fr]\n\t"
      "je 3f\n\t"
      "vxorps %%xmm0, %%xmm0, %%xmm0\n\t"
      "vxorps %%xmm1, %%xmm1, %%xmm1\n\t"
      "vxorps %%xmm2, %%xmm2, %%xmm2\n\t"
      "vxorps %%xmm3, %%xmm3, %%xmm3\n\t"
      "vxorps %%xmm4, %%xmm4, %%xmm4\n\t"
      "vxorps %%xmm5, %%xmm5, %%xmm5\n\t"
      "vxorps %%xmm6, %%xmm6, %%xmm6\n\t"
      "vxorps %%xmm7, %%xmm7, %%xmm7\n\t"
      "jmp 4f\n\t"
      "3:\n\t" NN_GBP_ACCS(NN_LOAD)
      "4:\n\t"
      "vbroadcastss (%[wq]), %%ymm8\n\t"
      NN_OUT_GT(1, "vbroadcastss 4(%[wq]), %%ymm9\n\t")
      NN_OUT_GT(2, "vbroadcastss 8(%[wq]), %%ymm10\n\t")
      NN_OUT_GT(3, "vbroadcastss 12(%[wq]), %%ymm11\n\t")
      NN_OUT_GT(4, "vbroadcastss 16(%[wq]), %%ymm12\n\t")
      ".p2align 5\n\t"
      "1:\n\t"
      "vmovaps (%[ap]), %%ymm13\n\t"
      "vmovaps (%[dp]), %%ymm14\n\t"
      "vfmadd231ps %%ymm14, %%ymm13, %%ymm0\n\t"  // acc0 += d0 a
      "vmovaps %%ymm8, %%ymm15\n\t"
      "vfmadd213ps %[zero], %%ymm14, %%ymm15\n\t"  // p = w0 d0 + 0, as the .inc
      NN_GBP_DROW(1, "(%[dp],%[tb])", "ymm1", "ymm9")
      NN_GBP_DROW(2, "(%[dp],%[tb],2)", "ymm2", "ymm10")
      NN_GBP_DROW(3, "(%[dp],%[tb3])", "ymm3", "ymm11")
      NN_GBP_DROW(4, "(%[dp],%[tb],4)", "ymm4", "ymm12")
      "vcmpps $0x1e, %[zero], %%ymm13, %%ymm13\n\t"  // a > 0 (GT_OQ): the relu's derivative
      "vandps %%ymm15, %%ymm13, %%ymm15\n\t"
      "vfmadd231ps (%[xp]), %%ymm15, %%ymm5\n\t"  // g0 += p x0
      NN_NX_GT(1, "vfmadd231ps (%[xp],%[xb]), %%ymm15, %%ymm6\n\t")
      "vaddps %%ymm15, %%ymm7, %%ymm7\n\t"  // b0 += p
      "add $64, %[ap]\n\t"  // every other vector: this pass's half of the 16 lanes
      "add $64, %[dp]\n\t"
      "add $64, %[xp]\n\t"
      "cmp %[end], %[ap]\n\t"
      "jne 1b\n\t" NN_GBP_ACCS(NN_STORE)
      // The next column: its A row follows (ap is there), D and X0 from their start.
      "sub %[tb], %[dp]\n\t"
      "sub %[tb], %[xp]\n\t"
      "add %[tb], %[end]\n\t"
      "add $64, %[gq]\n\t"
      "add $%c[wstep], %[wq]\n\t"
      "add $%c[gstep], %[g0q]\n\t"
      "add $64, %[b0q]\n\t"
      "cmp %[aend], %[ap]\n\t"
      "jne 2b"
      : [ap] "+r"(ap), [dp] "+r"(dp), [xp] "+r"(xp), [end] "+r"(end), [gq] "+r"(gq), [g0q] "+r"(g0q),
        [b0q] "+r"(b0q), [wq] "+r"(wq)
      : [tb] "r"(tb), [tb3] "r"(tb3), [xb] "r"(xb), [gs] "r"(gs), [gs3] "r"(gs3), [aend] "m"(aend), [fr] "m"(fr),
        [zero] "m"(*reinterpret_cast<const vf*>(kZeros)), [out] "i"(OUT), [nx] "i"(X), [wstep] "i"(OUT * 4),
        [gstep] "i"(X * 64)
      : "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}
#undef NN_GBP_DROW
#undef NN_GBP_ACCS
#undef NN_STORE
#undef NN_LOAD
#undef NN_NX_GT
#undef NN_OUT_GT
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
