// cpu_fast_shuffle_vbmi.cpp — the shuffled order (nnmath.hpp's feistel / shuffle_index) on
// AVX-512 VBMI, 64 samples per vector. Compiled with -mavx512f -mavx512bw -mavx512vl
// -mavx512vbmi (see CMakeLists.txt); the AVX-512 table calls it only where
// shuffle_rows_vbmi_usable says so.
//
// Why bytes: with n <= 65536 a Feistel half has at most 8 bits, so each round function
// mix32(right ^ k[r]) & mask takes at most 256 values. Tabulated once per key, a round is
// a byte-table lookup (vpermi2b) and an xor on 64 samples at once, instead of two 32-bit
// multiplies on 16: the same values, as the tables hold mix32's own results.
#include <immintrin.h>

#include "cpu_fast_kernels.hpp"

namespace nntrain::fast {
namespace isa_avx512_vbmi {

// The four round functions of one key as byte tables: lo[r][v] = f_r(v) for v < 128, and
// hi[r][v] = f_r(v) ^ f_r(v + 128), so that f_r(v) for any byte v is lo[v & 127] xor (bit 7
// of v ? hi[v & 127] : 0): two lookups and a three-way xor with the left half, no blend.
struct Tables {
  ShuffleArgs key;
  bool built;
  alignas(64) uint8_t lo[4][128];
  alignas(64) uint8_t hi[4][128];
};

// One per thread, rebuilt when the key changes (once an epoch): a tile's call is 256
// samples or fewer, and building takes about two thirds as long as shuffling 256 (~130 ns
// against ~190 ns on Zen 4).
static thread_local Tables g_tables;

static inline bool same_key(const ShuffleArgs& a, const ShuffleArgs& b) {
  return a.n == b.n && a.half_bits == b.half_bits && a.k[0] == b.k[0] && a.k[1] == b.k[1] && a.k[2] == b.k[2] &&
         a.k[3] == b.k[3];
}

typedef uint32_t v16u __attribute__((vector_size(64)));
typedef uint16_t v32u __attribute__((vector_size(64)));

// nnmath.hpp's mix32 on 16 lanes (the same wrapping 32-bit operations). Vector operators
// rather than intrinsics here and below: gcc 12 warns on the unmasked shift, narrowing and
// extract intrinsics (their "undefined" source operand).
static inline v16u mix32_vec(v16u x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

static void build_tables(Tables& t, const ShuffleArgs& key) {
  const uint32_t mask = (1u << key.half_bits) - 1u;
  const v16u iota = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  for (int r = 0; r < 4; ++r) {
    alignas(64) uint8_t f[256];
    // All 256 entries whatever half_bits is: the rounds only look up indexes < 2^half_bits,
    // and the rest are harmless.
    for (uint32_t v = 0; v < 256; v += 16) {
      const v16u x = mix32_vec((iota + v) ^ key.k[r]) & mask;
      _mm_store_si128(reinterpret_cast<__m128i*>(f + v), _mm512_maskz_cvtepi32_epi8(__mmask16(0xFFFF), __m512i(x)));
    }
    for (int v = 0; v < 128; v += 64) {
      const __m512i a = _mm512_load_si512(f + v), b = _mm512_load_si512(f + 128 + v);
      _mm512_store_si512(t.lo[r] + v, a);
      _mm512_store_si512(t.hi[r] + v, _mm512_xor_si512(a, b));
    }
  }
  t.key = key;
  t.built = true;
}

struct Rounds {
  __m512i lo0[4], lo1[4], hi0[4], hi1[4];  // each table's entries 0-63 and 64-127
};

// left ^ f_r(right) on 64 bytes. kFull: half_bits == 8, indexes up to 255; otherwise they
// are below 128 and one lookup does.
template <bool kFull>
static inline __attribute__((always_inline)) __m512i round_xor(const Rounds& t, int r, __m512i left, __m512i right) {
  const __m512i f = _mm512_permutex2var_epi8(t.lo0[r], right, t.lo1[r]);
  if (!kFull) return _mm512_xor_si512(left, f);
  const __m512i g = _mm512_maskz_permutex2var_epi8(_mm512_movepi8_mask(right), t.hi0[r], right, t.hi1[r]);
  return _mm512_ternarylogic_epi32(left, f, g, 0x96);  // left ^ f ^ g
}

// x >= n for x = (left << half_bits) | right, on bytes: left > n's left, or equal to it and
// right >= n's right (both rights are below 2^half_bits).
static inline __attribute__((always_inline)) __mmask64 at_or_past_n(__m512i left, __m512i right, __m512i nl,
                                                                    __m512i nr) {
  return _mm512_cmpgt_epu8_mask(left, nl) | _mm512_mask_cmpge_epu8_mask(_mm512_cmpeq_epi8_mask(left, nl), right, nr);
}

// For the q-th 16 indices of a vector: byte 4i takes right byte 16q + i (the first
// source) and byte 4i + 1 left byte 16q + i (the second).
struct OutSel {
  alignas(64) uint8_t b[4][64];
};
static constexpr OutSel out_sel() {
  OutSel s{};
  for (int q = 0; q < 4; ++q)
    for (int i = 0; i < 16; ++i) {
      s.b[q][4 * i] = uint8_t(16 * q + i);
      s.b[q][4 * i + 1] = uint8_t(64 + 16 * q + i);
    }
  return s;
}
static constexpr OutSel kOutSel = out_sel();

// Up to NB * 64 positions from `first` (count of them real) into out. The NB vectors go
// through each round side by side: a round is a chain of dependent lookups, and one vector
// alone would wait on it.
template <bool kFull, int NB>
static inline __attribute__((always_inline)) void piece(const Rounds& t, const ShuffleArgs& key, uint32_t first,
                                                        int count, uint32_t* out) {
  const unsigned hb = key.half_bits;
  const uint16_t mask = uint16_t((1u << hb) - 1u);
  const v32u iota = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                     16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
  // Byte 2i of the two source vectors: the low bytes of 64 16-bit words.
  const __m512i even = _mm512_set_epi8(126, 124, 122, 120, 118, 116, 114, 112, 110, 108, 106, 104, 102, 100, 98, 96,
                                       94, 92, 90, 88, 86, 84, 82, 80, 78, 76, 74, 72, 70, 68, 66, 64, 62, 60, 58, 56,
                                       54, 52, 50, 48, 46, 44, 42, 40, 38, 36, 34, 32, 30, 28, 26, 24, 22, 20, 18, 16,
                                       14, 12, 10, 8, 6, 4, 2, 0);
  __m512i L[NB], R[NB];
  __mmask64 valid[NB];
  // Each position's halves, in 16-bit words (positions are below 2^16), narrowed to bytes.
  // Lanes past count get any halves: they are neither walked nor written.
  for (int b = 0; b < NB; ++b) {
    const v32u w0 = iota + uint16_t(first + uint32_t(64 * b)), w1 = w0 + uint16_t(32);
    L[b] = _mm512_permutex2var_epi8(__m512i(w0 >> hb), even, __m512i(w1 >> hb));
    R[b] = _mm512_permutex2var_epi8(__m512i(w0 & mask), even, __m512i(w1 & mask));
    const int rem = count - 64 * b;
    valid[b] = rem >= 64 ? ~__mmask64(0) : (__mmask64(1) << rem) - 1u;
  }
  for (int r = 0; r < 4; ++r)
    for (int b = 0; b < NB; ++b) {
      const __m512i x = round_xor<kFull>(t, r, L[b], R[b]);
      L[b] = R[b];
      R[b] = x;
    }
  // Cycle walking: x = (left << half_bits) | right splits back into the same two halves, so
  // a lane still >= n just takes the four rounds again on its bytes. Whole vectors, merged
  // under the mask of the lanes still walking, until none is (n = 2^(2 half_bits): none
  // ever is, and n's left half would not fit in a byte).
  if (key.n < (1u << (2 * hb))) {
    const __m512i nl = _mm512_set1_epi8(char(key.n >> hb)), nr = _mm512_set1_epi8(char(key.n & ((1u << hb) - 1u)));
    __mmask64 pend[NB];
    for (int b = 0; b < NB; ++b) pend[b] = valid[b] & at_or_past_n(L[b], R[b], nl, nr);
    for (;;) {
      __mmask64 any = 0;
      for (int b = 0; b < NB; ++b) any |= pend[b];
      if (any == 0) break;
      __m512i l[NB], rr[NB];
      for (int b = 0; b < NB; ++b) l[b] = L[b], rr[b] = R[b];
      for (int r = 0; r < 4; ++r)
        for (int b = 0; b < NB; ++b) {
          const __m512i x = round_xor<kFull>(t, r, l[b], rr[b]);
          l[b] = rr[b];
          rr[b] = x;
        }
      for (int b = 0; b < NB; ++b) {
        L[b] = _mm512_mask_mov_epi8(L[b], pend[b], l[b]);
        R[b] = _mm512_mask_mov_epi8(R[b], pend[b], rr[b]);
        pend[b] &= at_or_past_n(L[b], R[b], nl, nr);
      }
    }
  }
  // The 32-bit indices, 16 at a time: right in byte 0 and left in byte 1 of each (one byte
  // permute, the other bytes zeroed), which is x when half_bits is 8 and else becomes
  // (left << half_bits) | right.
  for (int q = 0; q < 4; ++q) {
    const __m512i idx = _mm512_load_si512(kOutSel.b[q]);
    for (int b = 0; b < NB; ++b) {
      v16u x = v16u(_mm512_maskz_permutex2var_epi8(__mmask64(0x3333333333333333ULL), R[b], idx, L[b]));
      if (!kFull) x = (x & 0xFFu) | ((x >> 8) << hb);
      uint32_t* dst = out + 64 * b + 16 * q;
      const int rem = count - 64 * b - 16 * q;
      if (rem >= 16)
        _mm512_storeu_si512(dst, __m512i(x));
      else if (rem > 0)  // never past out[count - 1]
        _mm512_mask_storeu_epi32(dst, __mmask16((1u << rem) - 1u), __m512i(x));
    }
  }
}

template <bool kFull>
static void run(const Rounds& t, const ShuffleArgs& key, uint32_t first, int count, uint32_t* out) {
  for (int p0 = 0; p0 < count; p0 += 256) {
    const int c = count - p0 < 256 ? count - p0 : 256;
    const uint32_t f = first + uint32_t(p0);
    switch ((c + 63) / 64) {
      case 1: piece<kFull, 1>(t, key, f, c, out + p0); break;
      case 2: piece<kFull, 2>(t, key, f, c, out + p0); break;
      case 3: piece<kFull, 3>(t, key, f, c, out + p0); break;
      default: piece<kFull, 4>(t, key, f, c, out + p0); break;
    }
  }
}

static __attribute__((noinline)) void shuffle_rows(const ShuffleArgs& key, uint32_t first, int count, uint32_t* out) {
  Tables& tab = g_tables;
  if (!tab.built || !same_key(tab.key, key)) build_tables(tab, key);
  Rounds t;
  for (int r = 0; r < 4; ++r) {
    t.lo0[r] = _mm512_load_si512(tab.lo[r]);
    t.lo1[r] = _mm512_load_si512(tab.lo[r] + 64);
    t.hi0[r] = _mm512_load_si512(tab.hi[r]);
    t.hi1[r] = _mm512_load_si512(tab.hi[r] + 64);
  }
  if (key.half_bits == 8)
    run<true>(t, key, first, count, out);
  else
    run<false>(t, key, first, count, out);
}

}  // namespace isa_avx512_vbmi

// Only scalar code out here: this runs on CPUs without VBMI too (the AVX-512 table asks it
// first), and scripts/check_isa_isolation.sh checks that no vector register is used outside
// the isa_ namespaces. The cpu check once: it is asked before every tile.
bool shuffle_rows_vbmi_usable(const ShuffleArgs& key) {
  static const bool cpu = [] {
    __builtin_cpu_init();  // (in case this runs before libgcc's own constructor)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vbmi");
  }();
  return cpu && key.half_bits <= 8;
}

void shuffle_rows_vbmi(const ShuffleArgs& key, uint32_t first, int count, uint32_t* out) {
  isa_avx512_vbmi::shuffle_rows(key, first, count, out);
}

}  // namespace nntrain::fast
