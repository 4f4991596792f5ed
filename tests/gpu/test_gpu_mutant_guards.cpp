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

#include <vector>

#include "gpu_training_util.hpp"

using namespace nntrain;
using namespace nntrain::test;

namespace {

// init_params' weights with every bias drawn from [0.2, 0.6].
void nonzero_biases(Params& p) {
  const auto biases = random_floats(p.values.size(), 17, 0.2f, 0.6f);
  for (int l = 0; l < p.spec.layers(); ++l)
    for (int j = 0; j < p.spec.out(l); ++j) p.b(l)[j] = biases[p.spec.bias_offset(l) + size_t(j)];
}

}  // namespace

TEST_CASE("padding samples of a ragged batch add nothing, with non-zero biases (fused v2 and resident)",
          "[gpu][guard]") {
  // 65 samples: fused v2's second block holds one (63 padding columns), the resident kernels'
  // last float4 group one (3 padding columns); the exact shapes and a bucket of each path.
  for (const GpuPath path : {GpuPath::fused, GpuPath::resident}) {
    check_sgd_step_gradient(path, {2, 20, 5, 1}, Activation::relu, 65, nonzero_biases);
    check_sgd_step_gradient(path, {3, 8, 5, 2}, Activation::tanh, 65, nonzero_biases);
  }
}
