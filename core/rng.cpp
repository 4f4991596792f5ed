// rng.cpp — xoshiro256** (Blackman & Vigna) with SplitMix64 seeding; see rng.hpp.
#include "rng.hpp"

#include "nnmath.hpp"

namespace nntrain {

namespace {
inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Rng::Rng(uint64_t seed) {
  uint64_t sm = seed;
  for (auto& s : s_) s = splitmix64_next(sm);
}

uint64_t Rng::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform01() { return static_cast<double>(next_u64() >> 40) * 0x1.0p-24; }

float Rng::uniform_symmetric(double limit) {
  return static_cast<float>((2.0 * uniform01() - 1.0) * limit);
}

}  // namespace nntrain
