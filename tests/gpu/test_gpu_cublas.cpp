// test_gpu_cublas.cpp — the cuBLAS path end to end, tagged [cublas]: it needs NVIDIA's
// closed cuBLAS kernels, which a simulator cannot run (docs/GPU.md), so these cases run on a
// real GPU only (scripts/gpu/gpu-check.sh) and scripts/gpusim-check.sh leaves them out by tag.
// They use the reference experiment (40,000 samples), too big to simulate anyway. The same
// checks run on the fused path, on small data, in test_gpu_training.cpp.
#include <catch2/catch.hpp>

#include "errors.hpp"
#include "gpu_training_util.hpp"

using namespace nntrain;
using namespace nntrain::test;

namespace {
const Dataset& reference_data() { return peaks_data(200); }
}  // namespace

TEST_CASE("cuBLAS path: the reference experiment's first 20 losses match the CPU reference within 1e-4",
          "[gpu][e2e][cublas]") {
  auto gpu = make_gpu_backend(reference_data(), peaks_options(GpuPath::cublas));
  CHECK(gpu->name() == "gpu-cublas");
  check_gpu_follows_cpu(reference_data(), peaks_options(GpuPath::cublas), 20, 1e-4);
}

TEST_CASE("fused and cuBLAS paths agree over the reference experiment's first 20 epochs", "[gpu][fused][cublas]") {
  const Params init = init_params(peaks_options(GpuPath::automatic).spec, Init::glorot_uniform, 1);
  auto f = make_gpu_backend(reference_data(), peaks_options(GpuPath::fused));
  auto c = make_gpu_backend(reference_data(), peaks_options(GpuPath::cublas));
  check_curves_close(train_losses(*f, init, 20), train_losses(*c, init, 20), 1e-4);
}

TEST_CASE("auto picks cuBLAS for a network too wide for the fused kernel", "[gpu][e2e][cublas]") {
  auto wide_opt = peaks_options(GpuPath::automatic);
  wide_opt.spec.widths = {2, 256, 1};
  auto wide = make_gpu_backend(gpu_random_data(300, 2, 1, 5), wide_opt);
  CHECK(wide->name() == "gpu-cublas");
  CHECK_THAT(wide->details(), Catch::Contains("256"));
}

TEST_CASE("cuBLAS path: two runs are bit-identical, losses and weights", "[gpu][determinism][cublas]") {
  check_runs_bit_identical(reference_data(), peaks_options(GpuPath::cublas), 60);
}

TEST_CASE("cuBLAS path: chunks of any size replay the same trajectory as one call", "[gpu][graphs][cublas]") {
  auto o = peaks_options(GpuPath::cublas);
  o.chunk_epochs = 7;
  check_chunks_replay(reference_data(), o, {7, 7, 1, 13, 272});  // one call: graphs of 256 epochs + 44
}

TEST_CASE("cuBLAS path: graph replay and direct launches give the same bits", "[gpu][graphs][cublas]") {
  check_graphs_match_direct_launches(reference_data(), peaks_options(GpuPath::cublas), 30);
}

TEST_CASE("cuBLAS path: one SGD step recovers the gradient of the double reference", "[gpu][e2e][cublas]") {
  check_sgd_step_gradient(GpuPath::cublas, {2, 20, 5, 1}, Activation::tanh, 1);
  check_sgd_step_gradient(GpuPath::cublas, {3, 17, 2}, Activation::tanh, 129);
  check_sgd_step_gradient(GpuPath::cublas, {2, 33, 64, 1}, Activation::tanh, 1000);
  check_sgd_step_gradient(GpuPath::cublas, {2, 256, 1}, Activation::relu, 300);
}

TEST_CASE("cuBLAS path: mini-batches with shuffle follow the CPU reference", "[gpu][e2e][cublas]") {
  for (int batch : {1000, 333}) {  // 333 does not divide 40,000: the last batch is short
    INFO("batch " << batch);
    auto o = peaks_options(GpuPath::cublas);
    o.batch_size = batch;
    o.shuffle = true;
    // Mini-batch steps diverge faster (many steps per epoch): 2 epochs = 80 or 242 steps.
    check_gpu_follows_cpu(reference_data(), o, 2, 1e-3);
  }
}

TEST_CASE("cuBLAS path: set-up reports context, handle, module and transfer times apart", "[gpu][timing][cublas]") {
  check_setup_report(reference_data(), peaks_options(GpuPath::cublas));
}
