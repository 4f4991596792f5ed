// act_cost.cpp — what nntrain's tanh and sigmoid (core/nnmath.hpp, math::fx) cost alone, per
// 16-lane vector, next to relu: the floor under the fast backend's tanh/sigmoid step, whatever
// the kernels around them do. Each loop applies one activation in place to a row of floats
// (in L1: 1,024; and the 250,000 a 2->20->5->1 step over 10,000 samples evaluates, 1 MB,
// in L2), GCC vectors of 16 floats as the AVX-512 unit, min over repeats, in TSC ticks.
//
//   g++ -O2 -std=c++17 -mavx512f -mavx512dq -ffp-contract=off -I. -o /tmp/act_cost bench/act_cost.cpp
//   /tmp/act_cost        (docs/journal/2026-11-29-fused-curved-acts.md)
#include <x86intrin.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "core/nnmath.hpp"

typedef float vf __attribute__((vector_size(64)));
typedef int vi __attribute__((vector_size(64)));

template <int ACT>
__attribute__((noinline)) static void apply(float* p, long n) {
  for (long k = 0; k < n; k += 16) {
    vf v = *reinterpret_cast<vf*>(p + k);
    if constexpr (ACT == 1) v = v > vf{} ? v : vf{};
    if constexpr (ACT == 2) v = nntrain::math::fx::tanh_fixed<vf, vi>(v);
    if constexpr (ACT == 3) v = nntrain::math::fx::sigmoid_fixed<vf, vi>(v);
    *reinterpret_cast<vf*>(p + k) = v;
  }
}

template <int ACT>
static double ticks_per_vector(long n, int reps) {
  std::vector<float, std::allocator<float>> buf(size_t(n) + 16);
  float* p = buf.data() + (16 - (reinterpret_cast<uintptr_t>(buf.data()) / 4) % 16) % 16;
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    for (long k = 0; k < n; ++k) p[k] = float(k % 977) * 0.01f - 4.0f;  // -4..5.77: both tanh branches
    const unsigned long long t0 = __rdtsc();
    apply<ACT>(p, n);
    const double t = double(__rdtsc() - t0) / double(n / 16);
    if (t < best) best = t;
  }
  return best;
}

int main() {
  for (long n : {1024L, 250000L}) {
    const int reps = n < 10000 ? 20000 : 200;
    const double relu = ticks_per_vector<1>(n, reps), th = ticks_per_vector<2>(n, reps),
                 sg = ticks_per_vector<3>(n, reps);
    std::printf("%ld floats: TSC ticks per 16-lane vector: relu %.2f, tanh %.2f, sigmoid %.2f; "
                "for 15,625 vectors (one 2-20-5-1 step, 10,000 samples): relu %.0f, tanh %.0f, sigmoid %.0f ticks\n",
                n, relu, th, sg, relu * 15625, th * 15625, sg * 15625);
  }
  return 0;
}
