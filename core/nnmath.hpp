// nnmath.hpp — the per-element math of nntrain, written once and used by every backend.
//
// Everything here is header-only and compiles both as plain C++ and under nvcc
// (NN_HD expands to __host__ __device__ there). Activations, their derivatives, one MSE
// term, one Adam update and the keyed shuffle permutation live here so the CPU reference,
// the fast CPU path and the CUDA kernels cannot drift apart.
#pragma once

#include <cstdint>
#include <math.h>

#if defined(__CUDACC__)
#define NN_HD __host__ __device__ __forceinline__
#define NN_HDI __host__ __device__ __forceinline__
#else
#define NN_HD inline
// Always inlined, even at -O0: the fast CPU's per-ISA units evaluate tanh/sigmoid on their
// own vector types, and an out-of-line copy compiled with -mavx512f must not exist
// (scripts/check_isa_isolation.sh).
#define NN_HDI inline __attribute__((always_inline))
#endif

namespace nntrain {

enum class Activation : int { identity = 0, relu = 1, tanh = 2, sigmoid = 3, leaky_relu = 4 };

// Slope of leaky_relu for negative inputs (PyTorch's default).
constexpr float kLeakySlope = 0.01f;

namespace math {

// ---------------------------------------------------------------------------------------
// tanh and sigmoid in float: nntrain's own, a fixed sequence of IEEE operations (each
// separately rounded: no FMA anywhere, host code is built with -ffp-contract=off and the
// device uses the _rn intrinsics), written once over a value type V and its integer type I
// so that the scalar code (V = float), the fast CPU kernels (V = a GCC vector of floats,
// evaluated lane by lane by the same operations) and the CUDA kernels give the same bits
// per element. No FMA because the generic ISA has none: a sequence with FMA would need a
// software fma there. libm's tanhf/expf differ between libraries and are scalar calls.
// Accuracy against double (all 2^32 inputs; tests/test_activation_math.cpp): tanh <= 1.51 ulp,
// sigmoid <= 1.97 ulp (0 below -87.34, where the true value is under FLT_MIN); exact limits.
namespace fx {

template <class V>
NN_HDI V add(V a, V b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
template <class V>
NN_HDI V sub(V a, V b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
template <class V>
NN_HDI V mul(V a, V b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
template <class V>
NN_HDI V div(V a, V b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
// A constant as V: for vectors {0...} + c is the splat (folded at compile time).
template <class V>
NN_HDI V cst(float c) {
  V v{};
  return v + c;
}
template <class I, class V>
NN_HDI I bits(V v) {
#if defined(__CUDA_ARCH__)
  return __float_as_int(v);
#else
  I i;
  __builtin_memcpy(&i, &v, sizeof(I));
  return i;
#endif
}
template <class V, class I>
NN_HDI V from_bits(I i) {
#if defined(__CUDA_ARCH__)
  return __int_as_float(i);
#else
  V v;
  __builtin_memcpy(&v, &i, sizeof(V));
  return v;
#endif
}

// Largest t for which e^-t is still a normal float (ln 2^-126 = -87.3365...).
constexpr float kExpNegMax = 87.33654f;

// e^-t for 0 <= t <= kExpNegMax (Cephes expf's reduction and polynomial): k = round(-t/ln 2)
// by the 1.5*2^23 trick (pure adds, no rounding-mode instruction), r = -t - k ln 2 in two
// parts (k*kC1 is exact: kC1 has 9 significant bits, |k| <= 126), e^r by a polynomial,
// times 2^k built in the exponent bits. NaN in gives NaN out.
template <class V, class I>
NN_HDI V exp_neg(V t) {
  const V magic = cst<V>(12582912.0f);
  const V u = sub(cst<V>(0.0f), t);
  const V s = add(mul(u, cst<V>(1.44269504088896341f)), magic);
  const V k = sub(s, magic);
  const V r = sub(sub(u, mul(k, cst<V>(0.693359375f))), mul(k, cst<V>(-2.12194440e-4f)));
  V p = cst<V>(1.9875691500e-4f);
  p = add(mul(p, r), cst<V>(1.3981999507e-3f));
  p = add(mul(p, r), cst<V>(8.3334519073e-3f));
  p = add(mul(p, r), cst<V>(4.1665795894e-2f));
  p = add(mul(p, r), cst<V>(1.6666665459e-1f));
  p = add(mul(p, r), cst<V>(5.0000001201e-1f));
  p = add(add(mul(p, mul(r, r)), r), cst<V>(1.0f));
  const I ki = bits<I>(s) - bits<I>(magic);
  // The mask changes nothing for 0 <= t <= kExpNegMax (ki + 127 is 1..127); for a NaN t it
  // keeps the shift defined (p is NaN then, and so is the product).
  return mul(p, from_bits<V>(((ki + 127) & 0xff) << 23));
}

// tanh: odd by construction (computed on |x|, the sign put back). |x| < 0.625: the odd
// Cephes polynomial x + x^3 P(x^2); above: (1 - e)/(1 + e) with e = e^-2|x|, |x| clamped
// to 10 (tanh rounds to exactly 1 from 9.01 on, and (1 - e)/(1 + e) gives 1 there).
template <class V, class I>
NN_HDI V tanh_fixed(V x) {
  const I xi = bits<I>(x);
  const I sign = xi & int32_t(INT32_MIN);
  const V ax = from_bits<V>(xi & int32_t(0x7fffffff));
  const V z = mul(ax, ax);
  V p = cst<V>(-5.70498872745e-3f);
  p = add(mul(p, z), cst<V>(2.06390887954e-2f));
  p = add(mul(p, z), cst<V>(-5.37397155531e-2f));
  p = add(mul(p, z), cst<V>(1.33314422036e-1f));
  p = add(mul(p, z), cst<V>(-3.33332819422e-1f));
  const V small = add(mul(mul(p, z), ax), ax);
  const V t = ax > cst<V>(10.0f) ? cst<V>(10.0f) : ax;  // NaN stays NaN
  const V e = exp_neg<V, I>(add(t, t));
  const V large = div(sub(cst<V>(1.0f), e), add(cst<V>(1.0f), e));
  const V y = ax < cst<V>(0.625f) ? small : large;
  return from_bits<V>(bits<I>(y) | sign);
}

// sigmoid: with e = e^-|x| (never overflows), 1/(1 + e) for x >= 0 and e/(1 + e) for x < 0;
// exactly 0 below -kExpNegMax (the true value is below FLT_MIN there), 1 from 17.4 on.
template <class V, class I>
NN_HDI V sigmoid_fixed(V x) {
  const V ax = from_bits<V>(bits<I>(x) & int32_t(0x7fffffff));
  const V lim = cst<V>(kExpNegMax);
  const V t = ax > lim ? lim : ax;  // NaN stays NaN
  const V e = exp_neg<V, I>(t);
  const V d = add(cst<V>(1.0f), e);
  const V err = sub(e, sub(d, cst<V>(1.0f)));  // 1 + e = d + err exactly (Fast2Sum: 1 >= e)
  const V inv = div(cst<V>(1.0f), d);
  const V c = mul(err, inv);                    // 1/(1 + e) = (1/d)(1 - c) to first order
  const V pos = sub(inv, mul(inv, c));
  const V q = div(e, d);
  const V neg = x < sub(cst<V>(0.0f), lim) ? cst<V>(0.0f) : sub(q, mul(q, c));
  return x < cst<V>(0.0f) ? neg : pos;
}

}  // namespace fx

template <class T>
NN_HD T exp_(T x);
template <>
NN_HD float exp_<float>(float x) { return ::expf(x); }
template <>
NN_HD double exp_<double>(double x) { return ::exp(x); }
template <class T>
NN_HD T tanh_(T x);
template <>
NN_HD float tanh_<float>(float x) { return fx::tanh_fixed<float, int32_t>(x); }
template <>
NN_HD double tanh_<double>(double x) { return ::tanh(x); }
// Double (the gradient checks) keeps libm and the textbook formula.
template <class T>
NN_HD T sigmoid_(T x) { return T(1) / (T(1) + exp_(-x)); }
template <>
NN_HD float sigmoid_<float>(float x) { return fx::sigmoid_fixed<float, int32_t>(x); }

}  // namespace math

// y = act(z)
template <class T>
NN_HD T act_forward(Activation a, T z) {
  switch (a) {
    case Activation::relu: return z > T(0) ? z : T(0);
    case Activation::tanh: return math::tanh_(z);
    case Activation::sigmoid: return math::sigmoid_(z);
    case Activation::leaky_relu: return z > T(0) ? z : T(kLeakySlope) * z;
    case Activation::identity:
    default: return z;
  }
}

// dy/dz expressed through the output y = act(z), so the backward pass needs only the
// stored activations (no pre-activation buffer). For relu/leaky_relu, y > 0 iff z > 0.
template <class T>
NN_HD T act_derivative_from_output(Activation a, T y) {
  switch (a) {
    case Activation::relu: return y > T(0) ? T(1) : T(0);
    case Activation::tanh: return T(1) - y * y;
    case Activation::sigmoid: return y * (T(1) - y);
    case Activation::leaky_relu: return y > T(0) ? T(1) : T(kLeakySlope);
    case Activation::identity:
    default: return T(1);
  }
}

// One MSE term: the squared error, and d(loss)/d(prediction) for a loss that is the mean
// over `count` terms (count = samples × outputs): 2 (p - t) / count, with inv_count = 1/count.
template <class T>
NN_HD T mse_term(T pred, T target) {
  const T d = pred - target;
  return d * d;
}
template <class T>
NN_HD T mse_grad(T pred, T target, T two_over_count) {
  return two_over_count * (pred - target);
}

// Adam, as PyTorch's torch.optim.Adam (no weight decay, no amsgrad):
//   m = b1 m + (1-b1) g ;  v = b2 v + (1-b2) g^2
//   w -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
// Hyperparameters are kept in double and rounded to float once, as PyTorch does with its
// Python-float scalars: 1 - 0.999f in float would be off by 1.3e-5 relative. The step
// scalars track b1^t and b2^t by repeated double multiplication (no pow): IEEE-exact, so
// identical on host and device.
struct AdamHyper {
  double lr, beta1, beta2, eps;
};

struct AdamStep {
  double beta1_pow;  // b1^t
  double beta2_pow;  // b2^t
  float step_size;   // lr / (1 - b1^t)
  float bias2_sqrt;  // sqrt(1 - b2^t)
};

// State before the first step: t = 0.
NN_HD AdamStep adam_initial_step() { return AdamStep{1.0, 1.0, 0.0f, 0.0f}; }

// Advance to step t+1 and compute its scalars (each a lone IEEE operation: no contraction).
NN_HD AdamStep adam_next_step(AdamStep s, const AdamHyper& h) {
  AdamStep n;
#if defined(__CUDA_ARCH__)
  // nvcc contracts a*b followed by 1-x into one FMA unless told otherwise: the _rn
  // intrinsics keep every operation separately rounded, as on the host.
  n.beta1_pow = __dmul_rn(s.beta1_pow, h.beta1);
  n.beta2_pow = __dmul_rn(s.beta2_pow, h.beta2);
  const double c1 = __dsub_rn(1.0, n.beta1_pow);
  const double c2 = __dsub_rn(1.0, n.beta2_pow);
  n.step_size = static_cast<float>(__ddiv_rn(h.lr, c1));
  n.bias2_sqrt = static_cast<float>(__dsqrt_rn(c2));
#else
  n.beta1_pow = s.beta1_pow * h.beta1;
  n.beta2_pow = s.beta2_pow * h.beta2;
  const double c1 = 1.0 - n.beta1_pow;
  const double c2 = 1.0 - n.beta2_pow;
  n.step_size = static_cast<float>(h.lr / c1);
  n.bias2_sqrt = static_cast<float>(::sqrt(c2));
#endif
  return n;
}

// One parameter's Adam update. Every operation is rounded separately (the _rn intrinsics
// on the device forbid fused multiply-add; host code is built with -ffp-contract=off), so
// the same inputs give bit-identical outputs on the CPU and the GPU.
NN_HD void adam_update(float& w, float& m, float& v, float g, const AdamHyper& h, const AdamStep& s) {
  const float b1 = static_cast<float>(h.beta1), c1 = static_cast<float>(1.0 - h.beta1);
  const float b2 = static_cast<float>(h.beta2), c2 = static_cast<float>(1.0 - h.beta2);
  const float eps = static_cast<float>(h.eps);
#if defined(__CUDA_ARCH__)
  m = __fadd_rn(__fmul_rn(b1, m), __fmul_rn(c1, g));
  v = __fadd_rn(__fmul_rn(b2, v), __fmul_rn(c2, __fmul_rn(g, g)));
  const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(v), s.bias2_sqrt), eps);
  w = __fsub_rn(w, __fmul_rn(s.step_size, __fdiv_rn(m, denom)));
#else
  m = b1 * m + c1 * g;
  v = b2 * v + c2 * (g * g);
  const float denom = __builtin_sqrtf(v) / s.bias2_sqrt + eps;
  w = w - s.step_size * (m / denom);
#endif
}

// Plain SGD: w -= lr g.
NN_HD void sgd_update(float& w, float g, float lr) {  // lr: float(AdamHyper::lr)
#if defined(__CUDA_ARCH__)
  w = __fsub_rn(w, __fmul_rn(lr, g));
#else
  w = w - lr * g;
#endif
}

// ---------------------------------------------------------------------------------------
// Keyed shuffle: perm(i) for i in [0, n) is a bijection of [0, n) chosen by `key`.
// A 4-round Feistel network over the smallest even-bit power-of-two domain >= n, with
// cycle walking back into [0, n). Each index is computed independently, so the GPU can
// shuffle a batch without a host-made permutation, and every backend draws the same
// mini-batches for the same (seed, epoch).
NN_HD uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

struct ShuffleKey {
  uint32_t n;
  uint32_t half_bits;  // each Feistel half has this many bits
  uint32_t k[4];
};

NN_HD uint64_t splitmix64_next(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

NN_HD ShuffleKey make_shuffle_key(uint32_t n, uint64_t seed, uint64_t epoch) {
  ShuffleKey key;
  key.n = n;
  uint32_t bits = 0;
  while (bits < 32 && (uint64_t(1) << bits) < n) ++bits;
  if (bits < 2) bits = 2;
  key.half_bits = (bits + 1) / 2;
  uint64_t s = seed * 0x9E3779B97F4A7C15ULL ^ (epoch + 0x632BE59BD9B4E019ULL);
  for (int r = 0; r < 4; ++r) key.k[r] = static_cast<uint32_t>(splitmix64_next(s) >> 32);
  return key;
}

NN_HD uint32_t feistel(const ShuffleKey& key, uint32_t x) {
  const uint32_t mask = (1u << key.half_bits) - 1u;
  uint32_t left = (x >> key.half_bits) & mask;
  uint32_t right = x & mask;
  for (int r = 0; r < 4; ++r) {
    const uint32_t f = mix32(right ^ key.k[r]) & mask;
    const uint32_t t = left ^ f;
    left = right;
    right = t;
  }
  return (left << key.half_bits) | right;
}

// The i-th index of the shuffled order.
NN_HD uint32_t shuffle_index(const ShuffleKey& key, uint32_t i) {
  uint32_t x = feistel(key, i);
  while (x >= key.n) x = feistel(key, x);
  return x;
}

}  // namespace nntrain
