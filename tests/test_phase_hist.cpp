// test_phase_hist.cpp — the log-scale histogram behind NNTRAIN_FAST_PHASES's medians
// (kernels/cpu/phase_hist.hpp), against exact order statistics (std::nth_element on the same
// values) and hand-computed buckets.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "phase_hist.hpp"

using nntrain::fast::PhaseHist;

namespace {

// The value of rank ceil(q n) (1-based) among v: what PhaseHist::quantile reads back.
double exact_quantile(std::vector<uint64_t> v, double q) {
  size_t rank = size_t(std::ceil(q * double(v.size())));
  rank = std::max<size_t>(rank, 1);
  std::nth_element(v.begin(), v.begin() + long(rank - 1), v.end());
  return double(v[rank - 1]);
}

}  // namespace

TEST_CASE("phase histogram: buckets by hand", "[fast][phases]") {
  // 0..31 exact; then 32 buckets an octave: 32 -> 32, 63 -> 63, 64 and 65 share one
  // (64..65), 66 the next; 1000 = 0b1111101000: top six bits 111110, octave 9 ->
  // (9 - 4) * 32 + 30 = 190, holding 992..1007.
  for (uint64_t v = 0; v < 32; ++v) CHECK(PhaseHist::bucket(v) == int(v));
  CHECK(PhaseHist::bucket(32) == 32);
  CHECK(PhaseHist::bucket(63) == 63);
  CHECK(PhaseHist::bucket(64) == 64);
  CHECK(PhaseHist::bucket(65) == 64);
  CHECK(PhaseHist::bucket(66) == 65);
  CHECK(PhaseHist::bucket(1000) == 190);
  CHECK(PhaseHist::low(190) == 992.0);  // 0b111110 << 4
  CHECK(PhaseHist::low(191) == 1008.0);
  CHECK(PhaseHist::low(192) == 1024.0);
  CHECK(PhaseHist::bucket(UINT64_MAX) < PhaseHist::kBuckets);
  PhaseHist h;
  CHECK(h.quantile(0.5) == 0.0);  // none added
  for (uint64_t v : {3, 3, 5}) h.add(v);
  CHECK(h.count() == 3);
  CHECK(h.quantile(0.5) == 3.0);  // rank 2 of {3, 3, 5}
  CHECK(h.quantile(0.9) == 5.0);  // rank 3
  h.add(1000);
  CHECK(h.quantile(0.9) == 1000.0);  // rank 4: bucket 992..1007, read as its middle
}

TEST_CASE("phase histogram: medians and 90th percentiles within 1/64 of the exact ones", "[fast][phases]") {
  // A bucket [low, low + low/k), k = 32..63, is read back as its middle: at most low/64 from
  // any value in it. Distributions like a phase's: a tight peak with rare millisecond
  // outliers (a descheduled thread), log-uniform over six decades, uniform, small integers.
  std::mt19937_64 rng(7);
  for (int dist = 0; dist < 4; ++dist) {
    for (size_t n : {1u, 2u, 101u, 10000u}) {
      std::vector<uint64_t> v(n);
      for (auto& x : v) {
        switch (dist) {
          case 0: x = (rng() % 100 == 0) ? 2000000 + rng() % 1000000 : 500 + rng() % 40; break;
          case 1: x = uint64_t(std::exp(std::uniform_real_distribution<double>(0.0, 14.0)(rng))); break;
          case 2: x = rng() % (uint64_t(1) << 40); break;
          default: x = rng() % 40; break;
        }
      }
      PhaseHist h;
      for (uint64_t x : v) h.add(x);
      for (double q : {0.5, 0.9}) {
        INFO("distribution " << dist << ", n " << n << ", q " << q);
        const double exact = exact_quantile(v, q), got = h.quantile(q);
        CHECK(std::abs(got - exact) <= exact / 64.0);
      }
    }
  }
  // The outliers move the mean, not the median: the case the histogram exists for.
  std::vector<uint64_t> v(1000, 500);
  for (int i = 0; i < 10; ++i) v[size_t(i)] = 5000000;
  PhaseHist h;
  double sum = 0;
  for (uint64_t x : v) {
    h.add(x);
    sum += double(x);
  }
  CHECK(sum / 1000.0 > 100.0 * 500.0);
  CHECK(std::abs(h.quantile(0.5) - 500.0) <= 500.0 / 64.0);
}
