// reference_math.hpp — the plain-loop forward and backward pass: the oracle.
//
// Written for clarity, not speed: one sample at a time, every layer's activations kept.
// Templated on the scalar so tests can run it in double (finite differences) while the
// reference backend runs it in float with double accumulators.
#pragma once

#include <cstddef>
#include <vector>

#include "mlp.hpp"
#include "nnmath.hpp"

namespace nntrain {

// Loss (mean squared error over count = samples × outputs terms) of a batch and the
// gradient of that loss with respect to every parameter.
//   params: flat, spec.param_count()       x: samples given by idx, each spec.widths[0]
//   grad:   flat, spec.param_count() (overwritten)   y: targets, spec.widths.back() each
// `idx` lists the sample rows of the batch (nullptr: rows 0..count-1).
// Sums over samples are accumulated in Acc (double for the reference), in sample order.
template <class T, class Acc = double>
Acc reference_loss_and_grad(const ModelSpec& spec, const T* params, const float* x, const float* y,
                            const unsigned* idx, int count, T* grad) {
  const int L = spec.layers();
  const int n_in = spec.widths.front(), n_out = spec.widths.back();
  std::vector<Acc> gacc(spec.param_count(), Acc(0));
  std::vector<std::vector<T>> act(L + 1);  // act[0] = input, act[l+1] = output of layer l
  std::vector<std::vector<T>> delta(L + 1);
  for (int l = 0; l <= L; ++l) {
    act[l].resize(spec.widths[l]);
    delta[l].resize(spec.widths[l]);
  }
  const T two_over_count = T(2) / (T(count) * T(n_out));
  Acc loss = 0;
  for (int s = 0; s < count; ++s) {
    const size_t row = idx ? idx[s] : size_t(s);
    for (int i = 0; i < n_in; ++i) act[0][i] = T(x[row * n_in + i]);
    // forward: act[l+1] = f(W_l act[l] + b_l)
    for (int l = 0; l < L; ++l) {
      const T* W = params + spec.weight_offset(l);
      const T* b = params + spec.bias_offset(l);
      const Activation a = spec.activation(l);
      for (int o = 0; o < spec.out(l); ++o) {
        T z = b[o];
        for (int i = 0; i < spec.in(l); ++i) z += W[size_t(o) * spec.in(l) + i] * act[l][i];
        act[l + 1][o] = act_forward(a, z);
      }
    }
    // loss and its gradient with respect to the output
    for (int o = 0; o < n_out; ++o) {
      const T p = act[L][o], t = T(y[row * n_out + o]);
      loss += Acc(mse_term(p, t));
      delta[L][o] = mse_grad(p, t, two_over_count) * act_derivative_from_output(spec.activation(L - 1), p);
    }
    // backward: delta[l] = (W_l^T delta[l+1]) * f'(act[l]); dW_l += delta[l+1] act[l]^T
    for (int l = L - 1; l >= 0; --l) {
      const T* W = params + spec.weight_offset(l);
      const size_t wo = spec.weight_offset(l), bo = spec.bias_offset(l);
      for (int o = 0; o < spec.out(l); ++o) {
        const T d = delta[l + 1][o];
        gacc[bo + o] += Acc(d);
        for (int i = 0; i < spec.in(l); ++i) gacc[wo + size_t(o) * spec.in(l) + i] += Acc(d * act[l][i]);
      }
      if (l > 0) {
        const Activation a = spec.activation(l - 1);
        for (int i = 0; i < spec.in(l); ++i) {
          T s = 0;
          for (int o = 0; o < spec.out(l); ++o) s += W[size_t(o) * spec.in(l) + i] * delta[l + 1][o];
          delta[l][i] = s * act_derivative_from_output(a, act[l][i]);
        }
      }
    }
  }
  for (size_t k = 0; k < gacc.size(); ++k) grad[k] = T(gacc[k]);
  return loss / (Acc(count) * Acc(n_out));
}

}  // namespace nntrain

namespace nntrain {

// Forward pass only: out (count × outputs) from x (count × inputs), sample by sample.
inline void reference_forward(const Params& p, const float* x, int count, float* out) {
  const ModelSpec& spec = p.spec;
  std::vector<float> a(size_t(spec.max_width())), next(size_t(spec.max_width()));
  for (int s = 0; s < count; ++s) {
    for (int i = 0; i < spec.widths[0]; ++i) a[i] = x[size_t(s) * spec.widths[0] + i];
    for (int l = 0; l < spec.layers(); ++l) {
      const float* W = p.W(l);
      const float* b = p.b(l);
      for (int o = 0; o < spec.out(l); ++o) {
        float z = b[o];
        for (int i = 0; i < spec.in(l); ++i) z += W[size_t(o) * spec.in(l) + i] * a[i];
        next[o] = act_forward(spec.activation(l), z);
      }
      std::swap(a, next);
    }
    for (int o = 0; o < spec.widths.back(); ++o) out[size_t(s) * spec.widths.back() + o] = a[o];
  }
}

}  // namespace nntrain
