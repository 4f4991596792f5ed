// rng.hpp — the one portable random generator of nntrain.
//
// Initial weights must be bit-identical on every machine, compiler and device, so nothing
// here uses <random> distributions (their algorithms differ between standard libraries).
// The generator is xoshiro256** seeded by SplitMix64; floats come from the top 24 bits.
#pragma once

#include <cstdint>

namespace nntrain {

class Rng {
 public:
  explicit Rng(uint64_t seed);

  uint64_t next_u64();
  // Uniform in [0, 1): k * 2^-24 for k uniform in [0, 2^24). Exact in float and double.
  double uniform01();
  // Uniform in [-limit, limit), computed in double and rounded once to float.
  float uniform_symmetric(double limit);

 private:
  uint64_t s_[4];
};

}  // namespace nntrain
