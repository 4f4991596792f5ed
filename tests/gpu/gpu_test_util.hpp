// gpu_test_util.hpp — helpers for the [gpu] tests: seeded random inputs, device round trips,
// a NaN poison to prove every output element is written, and a tolerance check that says
// which element failed.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "cuda_raii.hpp"
#include "rng.hpp"

namespace nntrain::test {

inline std::vector<float> random_floats(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  Rng r(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = lo + (hi - lo) * float(r.uniform01());
  return v;
}

template <class T>
cuda::DeviceBuffer<T> to_device(const std::vector<T>& h, cudaStream_t s) {
  cuda::DeviceBuffer<T> d(h.size());
  d.upload(h, s);
  return d;
}

template <class T>
std::vector<T> to_host(const cuda::DeviceBuffer<T>& d, cudaStream_t s) {
  std::vector<T> h(d.size());
  d.download(h.data(), h.size(), s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  return h;
}

// 0xFF in every byte: a float NaN, so an element no kernel wrote fails any comparison.
constexpr int kPoisonByte = 0xFF;

inline bool bits_equal(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// |got - want| <= atol + rtol |want| for every element (NaN never passes).
inline void check_close(const std::vector<float>& got, const std::vector<double>& want, double rtol, double atol,
                        const char* what) {
  REQUIRE(got.size() == want.size());
  size_t bad = 0, first = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    const double g = got[k], w = want[k];
    if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w))) {
      if (!bad) first = k;
      ++bad;
    }
  }
  INFO(what << ": " << bad << " of " << got.size() << " elements out of tolerance; first at " << first << ": got "
            << (bad ? got[first] : 0.0f) << ", want " << (bad ? want[first] : 0.0));
  CHECK(bad == 0);
}

}  // namespace nntrain::test
