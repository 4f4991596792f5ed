// test_activation_math.cpp — nntrain's own float tanh and sigmoid (nnmath.hpp, math::fx)
// against libm in double over a sweep of the whole float range, their limits and
// symmetries, and every fast kernel set's lane-wise evaluation against the scalar one, bit
// for bit (the same fixed sequence of IEEE operations on every ISA and on the GPU).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cpu_fast.hpp"
#include "cpu_fast_kernels.hpp"
#include "fast_kernels_util.hpp"
#include "nnmath.hpp"

using namespace nntrain;

namespace {

float from_u32(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}
uint32_t to_u32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// |y - ref| in units of the float spacing in ref's binade (ref exact, in double).
double ulp_error(float y, double ref) {
  const double a = std::fabs(ref);
  int e = 0;
  std::frexp(a, &e);
  const double ulp = a < std::ldexp(1.0, -126) ? std::ldexp(1.0, -149) : std::ldexp(1.0, e - 24);
  return std::fabs(double(y) - ref) / ulp;
}

float tanh_f(float x) { return act_forward(Activation::tanh, x); }
float sigmoid_f(float x) { return act_forward(Activation::sigmoid, x); }

// Every 251st float bit pattern (both signs, all exponents: 17 million points) plus a
// thousand floats either side of each place where the sequences switch branch or clamp.
std::vector<float> sweep() {
  std::vector<float> xs;
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 251) {
    const float x = from_u32(uint32_t(b));
    if (!std::isnan(x)) xs.push_back(x);
  }
  for (float edge : {0.625f, 10.0f, 9.01f, 17.33f, 87.33654f, 0.0f, 1e-20f, 0.3465736f}) {
    for (float s : {edge, -edge}) {
      float x = s;
      for (int i = 0; i < 1000; ++i) x = std::nextafter(x, 0.0f);
      for (int i = 0; i < 2000; ++i, x = std::nextafter(x, s >= 0 ? 1e30f : -1e30f)) xs.push_back(x);
    }
  }
  return xs;
}

}  // namespace

// The bounds reached over all 2^32 patterns (docs/journal/2026-11-28-fair-cpu-activations.md):
// tanh 1.509 ulp, sigmoid 1.967 ulp; this sweep's maxima are 1.50 and 1.81. The asserted
// limits are those of the exhaustive run, rounded up (sigmoid: the 2 ulp the design promises).
TEST_CASE("nntrain's tanh and sigmoid against libm in double over the float range", "[math][activation]") {
  const std::vector<float> xs = sweep();
  double worst_t = 0, worst_s = 0;
  float at_t = 0, at_s = 0;
  for (float x : xs) {
    const float t = tanh_f(x);
    const double et = ulp_error(t, std::tanh(double(x)));
    if (et > worst_t) worst_t = et, at_t = x;
    const float s = sigmoid_f(x);
    const double rs = 1.0 / (1.0 + std::exp(-double(x)));
    // Below FLT_MIN (x < -87.34) the result is flushed to 0: an absolute error < FLT_MIN.
    const double es = rs < double(std::numeric_limits<float>::min())
                          ? (std::fabs(double(s) - rs) <= double(std::numeric_limits<float>::min()) ? 0.0 : 1e9)
                          : ulp_error(s, rs);
    if (es > worst_s) worst_s = es, at_s = x;
  }
  INFO("tanh: " << worst_t << " ulp at " << at_t << "; sigmoid: " << worst_s << " ulp at " << at_s << " ("
                << xs.size() << " points)");
  CHECK(worst_t <= 1.6);
  CHECK(worst_s <= 2.0);
}

TEST_CASE("tanh and sigmoid: exact limits, symmetry, no NaN from a number, NaN from NaN", "[math][activation]") {
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {9.1f, 10.0f, 20.0f, 1e10f, 3.4e38f, inf}) {
    CHECK(tanh_f(x) == 1.0f);
    CHECK(tanh_f(-x) == -1.0f);
  }
  for (float x : {17.5f, 88.0f, 1e10f, inf}) CHECK(sigmoid_f(x) == 1.0f);
  for (float x : {-88.0f, -1e10f, -inf}) CHECK(sigmoid_f(x) == 0.0f);
  CHECK(sigmoid_f(0.0f) == 0.5f);
  CHECK(sigmoid_f(-0.0f) == 0.5f);
  CHECK(to_u32(tanh_f(0.0f)) == to_u32(0.0f));
  CHECK(to_u32(tanh_f(-0.0f)) == to_u32(-0.0f));  // odd, down to the sign of zero
  CHECK(tanh_f(1e-30f) == 1e-30f);
  CHECK(std::isnan(tanh_f(std::nanf(""))));
  CHECK(std::isnan(sigmoid_f(std::nanf(""))));
  CHECK(std::isnan(tanh_f(-std::nanf(""))));
  CHECK(std::isnan(sigmoid_f(-std::nanf(""))));
  // Odd symmetry bit for bit, ranges, and no NaN for any number.
  bool odd = true, in_range = true, no_nan = true;
  for (uint32_t b = 0; b < 0x7f800000u; b += 4099) {
    const float x = from_u32(b), t = tanh_f(x), s = sigmoid_f(x), sn = sigmoid_f(-x);
    odd = odd && to_u32(tanh_f(-x)) == (to_u32(t) ^ 0x80000000u);
    in_range = in_range && t >= 0.0f && t <= 1.0f && s >= 0.5f && s <= 1.0f && sn >= 0.0f && sn <= 0.5f;
    no_nan = no_nan && !std::isnan(t) && !std::isnan(s) && !std::isnan(sn);
  }
  CHECK(odd);
  CHECK(in_range);
  CHECK(no_nan);
}

TEST_CASE("every fast kernel set evaluates tanh and sigmoid with the scalar bits, lane by lane",
          "[math][activation][fast]") {
  // kernels.activate on a row of T values, `valid` of them real: the real ones must be the
  // scalar function's bits, the padding left as it was.
  const int T = 4096, valid = T - 23;
  float* z = static_cast<float*>(std::aligned_alloc(64, sizeof(float) * T));
  for (const std::string& isa : fast_cpu_isas()) {
    const fast::Kernels& k = testutil::kernels_for(isa);
    for (int act : {2, 3}) {
      for (int pass = 0; pass < 64; ++pass) {
        // Values across the whole range: small, branch edges, large, inf, NaN.
        std::vector<float> in(T);
        uint32_t s = uint32_t(pass * 7919 + act);
        for (int j = 0; j < T; ++j) {
          s = s * 1664525u + 1013904223u;
          in[j] = pass < 32 ? from_u32(s) : float(int32_t(s) >> 4) * std::ldexp(1.0f, pass - 56);
        }
        std::memcpy(z, in.data(), sizeof(float) * T);
        k.activate(z, 1, T, act, valid);
        int wrong = 0, first = -1;
        for (int j = 0; j < T; ++j) {
          const float want = j < valid ? act_forward(static_cast<Activation>(act), in[j]) : in[j];
          const bool same = to_u32(z[j]) == to_u32(want) || (std::isnan(z[j]) && std::isnan(want));
          if (!same && wrong++ == 0) first = j;
        }
        INFO(isa << ", activation " << act << ", pass " << pass << ", first difference at " << first);
        CHECK(wrong == 0);
      }
    }
  }
  std::free(z);
}
