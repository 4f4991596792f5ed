// cpu_fast_generic.cpp — the fast backend's kernels for any CPU: 4-lane GCC vectors
// (SSE2 on x86-64, NEON on arm64, scalar code elsewhere), multiply then add, each rounded
// (no FMA: the baseline x86-64 ISA has none).
#include "cpu_fast_kernels.hpp"

namespace nntrain::fast {
namespace isa_generic {

constexpr int LANES = 4;
typedef float vf __attribute__((vector_size(16)));
typedef int vi __attribute__((vector_size(16)));
static inline vf vfma(vf a, vf b, vf c) { return a * b + c; }  // -ffp-contract=off: two roundings
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
