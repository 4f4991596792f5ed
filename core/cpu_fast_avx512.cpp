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
// Register blocks: 4 rows × 4 vectors = 16 of the 32 zmm registers hold accumulators.
constexpr int OB = 4, CB = 4, IB = 4;
constexpr const char* kIsaName = "avx512";
constexpr bool kFused = true;

#include "cpu_fast_kernels.inc"

}  // namespace isa_avx512

const Kernels& kernels_avx512() { return isa_avx512::table(); }

}  // namespace nntrain::fast
