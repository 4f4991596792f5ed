// test_gpu_mutant_guards.cpp — [gpu] checks that a planted bug of scripts/gpu-mutants.sh showed
// the other cases to miss, each against the double-precision reference gradient.
//
// The padding samples of a ragged last block (fused v2) or float4 group (resident): a kernel
// that counted one of them as a sample survived every full-batch case, because the sample it
// invents reads past the end of x and y, which the simulator's fresh allocations hold as zeros,
// and a zero input through a net with zero biases (init_params' biases) predicts exactly zero:
// a zero target, a zero loss term and a zero gradient. Here the biases are not zero, so an
// invented sample adds a loss term and a gradient of its own. No cuBLAS: runs under GPGPU-Sim.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gpu_training_util.hpp"

using namespace nntrain;
using namespace nntrain::test;

namespace {

// One full-batch SGD step with lr = 1 from weights with non-zero biases: the gradient recovered
// from the GPU (w before − w after) and the loss against the reference, computed in double.
void check_step_with_biases(GpuPath path, const std::vector<int>& widths, Activation hidden, int n) {
  BackendOptions o = peaks_options(path);
  o.spec.widths = widths;
  o.spec.hidden = hidden;
  o.optimizer.type = "sgd";
  o.optimizer.lr = 1.0;
  const Dataset d = gpu_random_data(n, widths.front(), widths.back(), 91 + uint64_t(n));
  Params init = init_params(o.spec, Init::glorot_uniform, 5);
  const auto biases = random_floats(init.values.size(), 17, 0.2f, 0.6f);
  for (size_t l = 0; l + 1 < widths.size(); ++l)
    for (int j = 0; j < widths[l + 1]; ++j) init.b(int(l))[j] = biases[init.spec.bias_offset(int(l)) + size_t(j)];
  auto g = make_gpu_backend(d, o);
  g->load(init);
  float loss = std::numeric_limits<float>::quiet_NaN();
  g->train(1, &loss);
  const Params after = g->params();
  std::vector<double> pd(init.values.begin(), init.values.end()), gd(pd.size());
  const double want_loss =
      reference_loss_and_grad<double, double>(o.spec, pd.data(), d.x.data(), d.y.data(), nullptr, n, gd.data());
  std::vector<float> got(pd.size());
  for (size_t k = 0; k < got.size(); ++k) got[k] = init.values[k] - after.values[k];
  double gmax = 0;
  for (double v : gd) gmax = std::max(gmax, std::fabs(v));
  INFO(g->details() << "; n " << n);
  check_close(got, gd, 0.0, 1e-4 * gmax + 1e-6, "recovered gradient");
  check_close({loss}, {want_loss}, 1e-5, 0, "loss");
}

}  // namespace

TEST_CASE("padding samples of a ragged batch add nothing, with non-zero biases (fused v2 and resident)",
          "[gpu][guard]") {
  // 65 samples: fused v2's second block holds one (63 padding columns), the resident kernels'
  // last float4 group one (3 padding columns); the exact shapes and a bucket of each path.
  for (const GpuPath path : {GpuPath::fused, GpuPath::resident}) {
    check_step_with_biases(path, {2, 20, 5, 1}, Activation::relu, 65);
    check_step_with_biases(path, {3, 8, 5, 2}, Activation::tanh, 65);
  }
}
