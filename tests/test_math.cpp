// test_math.cpp — the shared per-element math and the reference backward pass.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <vector>

#include "backend.hpp"
#include "mlp.hpp"
#include "nnmath.hpp"
#include "reference_math.hpp"
#include "rng.hpp"

using namespace nntrain;

namespace {

// Random data in [-1.5, 1.5): wide enough to cross every activation's curved region.
std::vector<float> random_vec(Rng& rng, size_t n, double scale = 1.5) {
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform_symmetric(scale);
  return v;
}

}  // namespace

TEST_CASE("reference backward pass matches central finite differences in double", "[math][gradcheck]") {
  const Activation acts[] = {Activation::relu, Activation::tanh, Activation::sigmoid, Activation::identity,
                             Activation::leaky_relu};
  const std::vector<std::vector<int>> shapes = {{2, 20, 5, 1}, {3, 7, 2}, {1, 4, 4, 4, 3}};
  const int counts[] = {1, 5, 13};
  for (Activation act : acts) {
    for (size_t si = 0; si < shapes.size(); ++si) {
      const int count = counts[si];
      ModelSpec spec;
      spec.widths = shapes[si];
      spec.hidden = act;
      spec.output = si == 1 ? Activation::sigmoid : Activation::identity;
      Rng rng(100 + si);
      const Params p = init_params(spec, Init::glorot_uniform, 7 + si);
      std::vector<double> w(p.values.begin(), p.values.end());
      // Non-zero biases so relu kinks are not all at the same place.
      for (int l = 0; l < spec.layers(); ++l)
        for (int o = 0; o < spec.out(l); ++o) w[spec.bias_offset(l) + o] = 0.1 * (o % 3) - 0.05;
      const auto x = random_vec(rng, size_t(count) * spec.widths.front());
      const auto y = random_vec(rng, size_t(count) * spec.widths.back());
      std::vector<double> g(w.size());
      reference_loss_and_grad<double, double>(spec, w.data(), x.data(), y.data(), nullptr, count, g.data());
      const double h = 1e-6;
      for (size_t k = 0; k < w.size(); ++k) {
        std::vector<double> wp = w, wm = w, scratch(w.size());
        wp[k] += h;
        wm[k] -= h;
        const double lp =
            reference_loss_and_grad<double, double>(spec, wp.data(), x.data(), y.data(), nullptr, count, scratch.data());
        const double lm =
            reference_loss_and_grad<double, double>(spec, wm.data(), x.data(), y.data(), nullptr, count, scratch.data());
        const double fd = (lp - lm) / (2 * h);
        // Central differences in double: truncation O(h^2) ~ 1e-12, cancellation ~ 1e-16/h ~ 1e-10.
        // A relu kink within h of a pre-activation would break this; with these seeds none is.
        INFO("activation " << activation_name(act) << ", shape " << si << ", parameter " << k);
        CHECK(g[k] == Approx(fd).margin(1e-7).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("activations and their derivatives from the output", "[math]") {
  CHECK(act_forward(Activation::relu, -2.0f) == 0.0f);
  CHECK(act_forward(Activation::relu, 3.0f) == 3.0f);
  CHECK(act_forward(Activation::leaky_relu, -2.0f) == Approx(-0.02f));
  CHECK(act_forward(Activation::sigmoid, 0.0) == 0.5);
  CHECK(act_forward(Activation::tanh, 0.5) == Approx(std::tanh(0.5)));
  CHECK(act_forward(Activation::identity, -7.0) == -7.0);
  // d/dz at z = 0.3 through y = f(0.3)
  const double z = 0.3;
  const double s = 1 / (1 + std::exp(-z));
  CHECK(act_derivative_from_output(Activation::sigmoid, s) == Approx(s * (1 - s)));
  CHECK(act_derivative_from_output(Activation::tanh, std::tanh(z)) == Approx(1 - std::tanh(z) * std::tanh(z)));
  CHECK(act_derivative_from_output(Activation::relu, 0.0) == 0.0);
  CHECK(act_derivative_from_output(Activation::relu, 0.2) == 1.0);
  CHECK(act_derivative_from_output(Activation::leaky_relu, -0.2) == Approx(0.01));
}

TEST_CASE("one Adam step matches hand-computed values", "[math][adam]") {
  const AdamHyper h{0.08, 0.9, 0.999, 1e-8};
  // Step 1: m = 0.1 g, v = 0.001 g^2, m_hat = g, v_hat = g^2 ⇒ w -= lr * g / (|g| + eps) ≈ lr sign(g).
  AdamStep s = adam_next_step(adam_initial_step(), h);
  CHECK(s.beta1_pow == 0.9);
  CHECK(s.step_size == Approx(0.08 / 0.1).epsilon(1e-6));
  CHECK(s.bias2_sqrt == Approx(std::sqrt(0.001)).epsilon(1e-6));
  float w = 1.0f, m = 0.0f, v = 0.0f;
  adam_update(w, m, v, 0.5f, h, s);
  CHECK(m == Approx(0.05f));
  CHECK(v == Approx(0.00025f));
  CHECK(w == Approx(1.0 - 0.08 * 0.5 / (0.5 + 1e-8)).epsilon(1e-6));
  // Step 2 with g = -0.25, computed in double by hand from the formulas:
  s = adam_next_step(s, h);
  adam_update(w, m, v, -0.25f, h, s);
  const double m2 = 0.9 * 0.05 + 0.1 * -0.25, v2 = 0.999 * 0.00025 + 0.001 * 0.0625;
  const double w2 = (1.0 - 0.08 * 0.5 / (0.5 + 1e-8)) -
                    0.08 / (1 - 0.81) * m2 / (std::sqrt(v2) / std::sqrt(1 - 0.999 * 0.999) + 1e-8);
  CHECK(m == Approx(m2).epsilon(1e-6));
  CHECK(v == Approx(v2).epsilon(1e-6));
  CHECK(w == Approx(w2).epsilon(1e-6));
}

TEST_CASE("SGD step", "[math]") {
  float w = 1.0f;
  sgd_update(w, 0.5f, 0.1f);
  CHECK(w == Approx(0.95f));
}

TEST_CASE("keyed shuffle is a permutation, differs by epoch and is reproducible", "[math][shuffle]") {
  for (uint32_t n : {1u, 2u, 3u, 7u, 64u, 1000u, 40000u}) {
    const ShuffleKey k = make_shuffle_key(n, 1, 0);
    std::set<uint32_t> seen;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t j = shuffle_index(k, i);
      REQUIRE(j < n);
      seen.insert(j);
    }
    CHECK(seen.size() == n);
  }
  const ShuffleKey a = make_shuffle_key(1000, 1, 0), b = make_shuffle_key(1000, 1, 1), c = make_shuffle_key(1000, 1, 0);
  int same_ab = 0, same_ac = 0, fixed = 0;
  for (uint32_t i = 0; i < 1000; ++i) {
    same_ab += shuffle_index(a, i) == shuffle_index(b, i);
    same_ac += shuffle_index(a, i) == shuffle_index(c, i);
    fixed += shuffle_index(a, i) == i;
  }
  CHECK(same_ac == 1000);
  CHECK(same_ab < 20);  // two random permutations share ~1 position on average
  CHECK(fixed < 20);
}

TEST_CASE("MSE term and gradient", "[math]") {
  CHECK(mse_term(3.0f, 1.0f) == 4.0f);
  // d/dp of mean over 4 terms of (p - t)^2 = 2 (p - t) / 4
  CHECK(mse_grad(3.0f, 1.0f, 2.0f / 4.0f) == 1.0f);
}

TEST_CASE("batch plan: every sample in exactly one batch, the last one partial", "[math][batch]") {
  struct Want {
    int n, batch_size, batch, batches, last;
  };
  for (const Want& w : {Want{5003, 1100, 1100, 5, 603}, Want{40000, 7000, 7000, 6, 5000}, Want{100, 30, 30, 4, 10},
                        Want{100, 50, 50, 2, 50}, Want{100, 0, 100, 1, 100}, Want{100, 500, 100, 1, 100}}) {
    INFO(w.n << " samples, batch_size " << w.batch_size);
    const BatchPlan p = make_batch_plan(w.n, w.batch_size, true);
    CHECK(p.batch == w.batch);
    REQUIRE(p.batches == w.batches);
    CHECK(p.size(p.batches - 1) == w.last);
    CHECK(p.shuffle == (w.batches > 1));
    // The shuffled positions of all batches together are every sample once.
    const ShuffleKey key = make_shuffle_key(uint32_t(w.n), 3, 0);
    std::set<uint32_t> seen;
    for (int b = 0; b < p.batches; ++b)
      for (int s = 0; s < p.size(b); ++s) seen.insert(shuffle_index(key, uint32_t(b) * uint32_t(p.batch) + uint32_t(s)));
    CHECK(int(seen.size()) == w.n);
  }
}
