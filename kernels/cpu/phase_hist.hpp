// phase_hist.hpp — a histogram of durations on a log scale, for the medians that
// NNTRAIN_FAST_PHASES=1 reports next to its means (docs/CONFIG.md). On a shared machine a
// thread descheduled for a millisecond in a few steps of thousands moves a phase's mean by
// more than the phase itself: the median does not move.
//
// 32 buckets an octave: a value v >= 32 falls in the bucket of its top six bits (its octave
// and the five bits after the leading one), so a bucket spans 1/32 to 1/63 of its values, and
// a quantile read back from it (the bucket's middle) is within 1/64 (1.6 %) of the true one.
// Values 0..31 have a bucket each (exact). No allocation and no floating point on the adding
// side: one count per value.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

namespace nntrain::fast {

class PhaseHist {
 public:
  static constexpr int kSubBits = 5, kSub = 1 << kSubBits;  // buckets an octave
  static constexpr int kBuckets = (64 - kSubBits) * kSub;   // every uint64_t value below 2^63

  static int bucket(uint64_t v) {
    if (v < uint64_t(kSub)) return int(v);
    if (v >> 63) v = (uint64_t(1) << 63) - 1;  // (not a duration this backend meets)
    const int e = 63 - __builtin_clzll(v);     // v in [2^e, 2^(e+1)), e >= kSubBits
    return (e - kSubBits + 1) * kSub + int((v >> (e - kSubBits)) & uint64_t(kSub - 1));
  }
  // The values bucket b holds: [low(b), low(b + 1)).
  static double low(int b) {
    if (b < kSub) return double(b);
    const int e = b / kSub + kSubBits - 1, frac = b % kSub;
    return std::ldexp(double(kSub + frac), e - kSubBits);
  }

  void add(uint64_t v) {
    ++n_[size_t(bucket(v))];
    ++count_;
  }
  uint64_t count() const { return count_; }

  // The q-quantile (0 < q < 1) of the values added: the middle of the bucket holding the
  // value of rank ceil(q * count) (exact for values below 32); 0 when none was added.
  double quantile(double q) const {
    if (count_ == 0) return 0.0;
    uint64_t rank = uint64_t(q * double(count_));
    if (double(rank) < q * double(count_)) ++rank;
    if (rank < 1) rank = 1;
    uint64_t seen = 0;
    for (int b = 0; b < kBuckets; ++b) {
      seen += n_[size_t(b)];
      if (seen >= rank) return b < kSub ? double(b) : 0.5 * (low(b) + low(b + 1));
    }
    return low(kBuckets);
  }

 private:
  std::array<uint64_t, kBuckets> n_{};  // (15 KB; only while the diagnostic is on)
  uint64_t count_ = 0;
};

}  // namespace nntrain::fast
