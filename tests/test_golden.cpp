// test_golden.cpp — end to end against values produced independently (scripts/golden_numpy.py,
// NumPy float64): step-0 loss and gradients, then 10 Adam and 10 SGD full-batch steps through
// the reference backend.
#include <catch2/catch.hpp>

#include <cstring>

#include "backend.hpp"
#include "cpu_reference.hpp"
#include "golden_values.hpp"
#include "reference_math.hpp"

using namespace nntrain;

namespace {

ModelSpec small_spec() {
  ModelSpec s;
  s.widths = {2, 4, 3, 1};
  s.hidden = Activation::tanh;
  s.output = Activation::identity;
  return s;
}

Dataset small_data() {
  Dataset d;
  d.n = 12;
  d.inputs = 2;
  d.outputs = 1;
  d.x.assign(kSmallX, kSmallX + 24);
  d.y.assign(kSmallY, kSmallY + 12);
  return d;
}

Params small_params() {
  Params p{small_spec(), {}};
  p.values.assign(kSmallParams, kSmallParams + p.spec.param_count());
  return p;
}

}  // namespace

TEST_CASE("golden: step-0 loss and every gradient", "[golden]") {
  const Params p = small_params();
  REQUIRE(p.values.size() == sizeof(kSmallParams) / sizeof(float));
  const Dataset d = small_data();
  std::vector<float> g(p.values.size());
  const double loss = reference_loss_and_grad<float, double>(p.spec, p.values.data(), d.x.data(), d.y.data(),
                                                             nullptr, d.n, g.data());
  // fp32 forward/backward against fp64: a few ulps of float per operation, ~1e-6 relative.
  CHECK(loss == Approx(kSmallLoss0).epsilon(1e-5));
  for (size_t k = 0; k < g.size(); ++k) {
    INFO("gradient " << k);
    CHECK(g[k] == Approx(kSmallGrad0[k]).epsilon(1e-4).margin(1e-6));
  }
}

TEST_CASE("golden: 10 full-batch Adam and SGD steps through the reference backend", "[golden]") {
  const Dataset d = small_data();
  for (const char* type : {"adam", "sgd"}) {
    BackendOptions opt;
    opt.spec = small_spec();
    opt.optimizer.type = type;
    opt.optimizer.lr = 0.01;
    auto be = make_cpu_reference_backend(d, opt);
    be->load(small_params());
    float losses[10];
    be->train(10, losses);
    const double* expected = std::strcmp(type, "adam") == 0 ? kSmallAdamLosses : kSmallSgdLosses;
    for (int e = 0; e < 10; ++e) {
      INFO(type << " step " << e);
      // fp32 training vs an fp64 trajectory over 10 steps: drift stays ~1e-6 relative.
      CHECK(losses[e] == Approx(expected[e]).epsilon(2e-5));
    }
    // Training moved the loss: the test would fail if updates were skipped.
    CHECK(losses[9] < losses[0]);
  }
}
