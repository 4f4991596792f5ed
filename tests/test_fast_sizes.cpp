// test_fast_sizes.cpp — the fast CPU backend against the reference backend at the sizes it
// runs in practice: the reference experiment's 40,000 peaks samples (chunks of several tiles
// whose last tile is narrow) and 5,003 random samples (narrow last tile and chunk), full
// batch and shuffled mini-batches, Adam and SGD, every activation, every instruction set
// this CPU offers. test_fast_cpu.cpp covers awkward shapes at small sizes.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <vector>

#include "backend.hpp"
#include "cpu_fast.hpp"
#include "cpu_reference.hpp"
#include "dataset.hpp"
#include "mlp.hpp"
#include "rng.hpp"

using namespace nntrain;

namespace {

struct SizeCase {
  const char* name;
  const Dataset* data;
  int batch;    // 0 = full batch
  int pinned;   // epochs pinned tightly to the reference
  int horizon;  // epochs whose loss curve is compared (>= pinned)
};

struct Setting {
  Activation hidden;
  const char* optimizer;
};

Dataset random_samples(int n, uint64_t seed) {
  Rng rng(seed);
  Dataset d;
  d.n = n;
  d.inputs = 2;
  d.outputs = 1;
  d.x.resize(size_t(n) * 2);
  d.y.resize(size_t(n));
  for (auto& v : d.x) v = rng.uniform_symmetric(2.0);
  for (int s = 0; s < n; ++s) d.y[size_t(s)] = float(peaks(d.x[2 * size_t(s)], d.x[2 * size_t(s) + 1]));
  d.description = "random peaks samples";
  return d;
}

BackendOptions options(const ModelSpec& spec, const Setting& st, int batch) {
  BackendOptions o;
  o.spec = spec;
  o.optimizer.type = st.optimizer;
  // Adam: lr 0.01 moves every weight by ~lr per step from the first one. eps 1e-3, not 1e-8:
  // with 1e-8 a gradient component that cancels to ~1e-8 becomes a step of ±lr whatever
  // its rounding (test_fast_cpu.cpp, options()), so two correct summation orders could
  // differ by 2 lr in that weight. SGD: lr 0.02 makes the loss fall by ~1% per epoch on
  // peaks (0.05 diverges with identity hidden units), so a gradient that loses part of
  // its sum (a tile, a chunk) shows in the next epoch's loss.
  o.optimizer.lr = std::string(st.optimizer) == "adam" ? 0.01 : 0.02;
  o.optimizer.eps = 1e-3;
  o.batch_size = batch;
  o.shuffle = true;
  o.seed = 5;
  o.threads = 2;
  return o;
}

// Trains `pinned` epochs, keeps the weights, then trains on to `horizon` epochs.
struct Curve {
  std::vector<float> losses;
  Params pinned_params;
};

Curve curve(std::unique_ptr<Backend> b, const Params& init, int pinned, int horizon) {
  Curve c;
  c.losses.resize(size_t(horizon));
  b->load(init);
  b->train(pinned, c.losses.data());
  c.pinned_params = b->params();
  if (horizon > pinned) b->train(horizon - pinned, c.losses.data() + pinned);
  return c;
}

std::string describe(const SizeCase& c, const Setting& st, const std::string& isa) {
  std::ostringstream s;
  s << c.name << ", batch " << c.batch << ", " << activation_name(st.hidden) << ", " << st.optimizer << ", isa "
    << isa;
  return s.str();
}

}  // namespace

// Tolerances. Observed on 2026-11-24 (avx512, avx2, generic; every case below): loss
// <= 1.6e-7 relative in the pinned epochs and <= 4.2e-6 over the horizon, weights <= 2.7e-6
// after the pinned epochs.
// Pinned epochs: the fast path sums each tile's lanes in fp32 and chunks in double where the
// reference sums every sample in double, and the avx2/avx512 kernels fuse multiply-adds:
// an epoch's loss differs by ~1e-7 relative (a few ulps), the gradients by about as much.
// Adam (eps 1e-3, lr 1e-2) turns a gradient difference dg of a component near 1e-3 into a
// step difference of up to ~lr/eps dg = 10 dg: hence a weight bound of 2e-3 lr, not 1e-7.
constexpr double kPinnedLossRel = 5e-6;
constexpr double kPinnedWeightAbs = 2e-5;
// Horizon: training amplifies the rounding differences (a relu kink crossed one step apart,
// Adam's normalisation of small gradients), and by 30 epochs they reach a few 1e-6. A wrong
// gradient is far larger: a lost tile or chunk moves the first or second epoch's loss by
// 1e-3 to 1e-1 relative.
constexpr double kHorizonLossRel = 1e-4;

TEST_CASE("fast backend follows the reference on 40,000 and 5,003 samples, Adam and SGD, every activation",
          "[fast][sizes]") {
  const Dataset peaks40k = make_peaks(200, 200, -3, 3);  // the reference experiment's data
  const Dataset random5k = random_samples(5003, 17);
  // The 40,000-sample reference backend costs ~0.1 s an epoch: a few epochs suffice there,
  // the loss-curve horizon runs on 5,003 samples.
  const std::vector<SizeCase> cases = {
      {"peaks 40000", &peaks40k, 0, 3, 3},
      {"peaks 40000", &peaks40k, 7000, 1, 1},   // 6 shuffled batches, the last of 5,000
      {"random 5003", &random5k, 0, 3, 30},
      {"random 5003", &random5k, 1100, 2, 12},  // 5 shuffled batches, the last of 603
  };
  const Activation acts[] = {Activation::relu, Activation::tanh, Activation::sigmoid, Activation::identity,
                             Activation::leaky_relu};
  for (const SizeCase& c : cases) {
    for (const char* optimizer : {"adam", "sgd"}) {
      for (Activation act : acts) {
        const Setting st{act, optimizer};
        ModelSpec spec;
        spec.widths = {2, 20, 5, 1};
        spec.hidden = act;
        Params init = init_params(spec, Init::glorot_uniform, 1);
        for (int l = 0; l < spec.layers(); ++l)  // non-zero biases: relu kinks not all at the origin
          for (int o = 0; o < spec.out(l); ++o) init.b(l)[o] = 0.05f * float(o % 5) - 0.1f;
        const Curve ref = curve(make_cpu_reference_backend(*c.data, options(spec, st, c.batch)), init, c.pinned,
                                c.horizon);
        for (const std::string& isa : fast_cpu_isas()) {
          FastCpuTuning tuning;
          tuning.isa = isa;
          const Curve got = curve(make_cpu_fast_backend(*c.data, options(spec, st, c.batch), tuning), init,
                                  c.pinned, c.horizon);
          INFO(describe(c, st, isa));
          for (int e = 0; e < c.horizon; ++e) {
            INFO("epoch " << e + 1);
            const double want = ref.losses[size_t(e)];
            CHECK(got.losses[size_t(e)] == Approx(want).epsilon(e < c.pinned ? kPinnedLossRel : kHorizonLossRel));
          }
          double worst = 0;
          for (size_t k = 0; k < init.values.size(); ++k)
            worst = std::max(worst, std::fabs(double(got.pinned_params.values[k]) - ref.pinned_params.values[k]));
          INFO("largest weight difference after " << c.pinned << " epochs: " << worst);
          CHECK(worst <= kPinnedWeightAbs);
          CHECK(got.pinned_params.values != init.values);
        }
        // The reference itself learnt: a backend that computed nothing would not match it.
        if (c.horizon > 1) CHECK(ref.losses.back() < ref.losses.front());
      }
    }
  }
}
