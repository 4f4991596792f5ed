// test_gpu_training.cpp — the fused GPU path (v2) end to end against the CPU reference
// backend and the double reference gradient: losses epoch by epoch, mini-batches with
// shuffle, determinism, chunking, graphs against direct launches, path choice, set-up
// reporting and the trainer's whole sequence. None of these touches cuBLAS, so all
// of them also run on GPGPU-Sim (scripts/gpusim-check.sh), which is why the data is small
// and the epochs few: the simulator runs ~1-3 million instructions per second. The cuBLAS
// path's cases, on the reference experiment, are in test_gpu_cublas.cpp ([cublas]).
#include <catch2/catch.hpp>

#include "errors.hpp"
#include "gpu_training_util.hpp"
#include "trainer.hpp"

using namespace nntrain;
using namespace nntrain::test;

namespace {

// 12 × 12 = 144 samples: three blocks of 64, the third one short. The simulator costs about
// a million instructions per step here (~0.3 s); every case below keeps to a few dozen steps.
const Dataset& small_peaks() { return peaks_data(12); }

BackendOptions fused_options() { return peaks_options(GpuPath::fused); }

}  // namespace

TEST_CASE("fused path: the first 20 losses match the CPU reference within 1e-4", "[gpu][e2e][fused]") {
  SECTION("reference net, ReLU, full batch") { check_gpu_follows_cpu(small_peaks(), fused_options(), 20, 1e-4); }
  SECTION("tanh hidden layers, sigmoid output, 3 outputs") {
    auto o = fused_options();
    o.spec.widths = {3, 17, 9, 3};
    o.spec.hidden = Activation::tanh;
    o.spec.output = Activation::sigmoid;
    o.optimizer.lr = 0.02;
    check_gpu_follows_cpu(gpu_random_data(100, 3, 3, 21), o, 20, 1e-4);
  }
}

TEST_CASE("fused path: mini-batches with shuffle follow the CPU reference", "[gpu][e2e][fused]") {
  for (int batch : {64, 100}) {  // neither divides 144: the last batch is short
    INFO("batch " << batch);
    auto o = fused_options();
    o.batch_size = batch;
    o.shuffle = true;
    o.seed = batch == 100 ? 7 : 1;  // 7: a GPU backend that dropped the seed would shuffle another order
    check_gpu_follows_cpu(small_peaks(), o, 4, 1e-4);
  }
}

TEST_CASE("fused path: epochs of more steps than a graph holds are launched directly, with the same bits",
          "[gpu][e2e][graphs][fused]") {
  // The graph limit (kMaxGraphSteps = 256 steps) is lowered to 2 so that 3 steps per epoch
  // exceed it: the path a real epoch of 257+ steps takes, at a cost the simulator can bear.
  auto o = fused_options();
  o.batch_size = 64;  // 144 samples: 64, 64, 16
  o.shuffle = true;
  const Params init = init_params(o.spec, Init::glorot_uniform, 1);
  auto direct = make_gpu_backend(small_peaks(), o, 2);
  CHECK_THAT(direct->details(), Catch::Contains("3 steps per epoch, launched without a graph"));
  auto cpu = make_cpu_reference_backend(small_peaks(), o);
  const auto want = train_losses(*cpu, init, 3);
  const auto got = train_losses(*direct, init, 3);
  check_curves_close(got, want, 1e-4);
  auto graphed = make_gpu_backend(small_peaks(), o);
  CHECK_THAT(graphed->details(), Catch::Contains("replayed from CUDA graphs"));
  CHECK(same_bits(got, train_losses(*graphed, init, 3)));
  CHECK(same_bits(direct->params().values, graphed->params().values));
}

TEST_CASE("fused path: graph replay and direct launches give the same bits", "[gpu][graphs][fused]") {
  check_graphs_match_direct_launches(small_peaks(), fused_options(), 6);
}

TEST_CASE("fused path: auto picks it for the reference net, and refuses a wide net when asked for it",
          "[gpu][e2e][fused]") {
  // 400 samples: between the sizes where the resident path measured faster (resident_preferred).
  auto small = make_gpu_backend(peaks_data(20), peaks_options(GpuPath::automatic));
  CHECK(small->name() == "gpu-fused");
  CHECK_THAT(small->details(), Catch::Contains("auto"));
  CHECK_THAT(small->details(), Catch::Contains("one kernel per step"));
  CHECK_THAT(small->details(), Catch::Contains("tile of 64 samples"));
  auto wide = fused_options();
  wide.spec.widths = {2, 256, 1};
  CHECK_THROWS_AS(make_gpu_backend(gpu_random_data(300, 2, 1, 5), wide), UsageError);
  // The CLI's check before it writes anything says the same.
  CHECK_THAT(gpu_path_problem(wide.spec, GpuPath::fused), Catch::Contains("256"));
  CHECK(gpu_path_problem(wide.spec, GpuPath::cublas).empty());
  CHECK(gpu_path_problem(fused_options().spec, GpuPath::fused).empty());
}

TEST_CASE("fused path: two runs are bit-identical, losses and weights", "[gpu][determinism][fused]") {
  check_runs_bit_identical(small_peaks(), fused_options(), 8);
  auto mb = fused_options();
  mb.batch_size = 64;
  check_runs_bit_identical(small_peaks(), mb, 2);
}

TEST_CASE("fused path: chunks of any size replay the same trajectory as one call", "[gpu][graphs][fused]") {
  // Graphs of at most 4 steps (the real limit is 256) so that few epochs span several graphs.
  SECTION("full batch: one call of 11 epochs is graphs of 4, 4 and 3 epochs") {
    auto o = fused_options();
    o.chunk_epochs = 5;
    check_chunks_replay(gpu_random_data(40, 2, 1, 7), o, {3, 1, 5, 2}, 4);
  }
  SECTION("mini-batch, 3 steps per epoch: graphs of 2 epochs") {
    auto o = fused_options();
    o.batch_size = 16;
    o.chunk_epochs = 3;
    check_chunks_replay(gpu_random_data(40, 2, 1, 8), o, {1, 2, 3}, 6);
  }
}

TEST_CASE("fused path: one SGD step recovers the gradient of the double reference", "[gpu][e2e][fused]") {
  check_sgd_step_gradient(GpuPath::fused, {2, 20, 5, 1}, Activation::tanh, 1);
  check_sgd_step_gradient(GpuPath::fused, {3, 17, 2}, Activation::tanh, 129);
  check_sgd_step_gradient(GpuPath::fused, {2, 33, 64, 1}, Activation::tanh, 100);
}

TEST_CASE("fused path: set-up reports context, handle, module and transfer times apart", "[gpu][timing][fused]") {
  check_setup_report(small_peaks(), fused_options());
}

TEST_CASE("fused path: the trainer's warm-up, load, chunks and repeats change no bit of the curve",
          "[gpu][e2e][fused]") {
  const BackendRegistry registry = {{Device::cpu, "reference", make_cpu_reference_backend},
                                    {Device::gpu, "cuda", make_gpu_backend}};
  Config cfg;
  cfg.model.layers = {2, 20, 5, 1};
  cfg.train.epochs = 12;
  cfg.train.log_every = 12;
  cfg.gpu.path = GpuPath::fused;
  cfg.gpu.chunk_epochs = 5;  // chunks of 5, 5, 2
  cfg.timing.warmup_epochs = 2;
  cfg.timing.repeats = 2;
  cfg.cpu.backend = CpuBackendKind::reference;
  const Dataset& d = small_peaks();
  const Params init = init_params(cfg.model_spec(), Init::glorot_uniform, cfg.seed);
  const RunResult gpu = run_training(registry, cfg, d, init, Device::gpu);
  const RunResult cpu = run_training(registry, cfg, d, init, Device::cpu);
  REQUIRE(gpu.status() == "ok");
  CHECK(gpu.backend == "gpu-fused");
  CHECK(gpu.epochs_done == 12);
  CHECK_FALSE(gpu.nondeterministic);
  CHECK(gpu.train_seconds_per_repeat.size() == 2);
  CHECK(gpu.simulated == query_gpu().simulated);
  check_curves_close(gpu.losses, cpu.losses, 1e-4);
  // The same 12 epochs in one call from a fresh backend: warm-up and reloads left no trace.
  auto plain = make_gpu_backend(d, backend_options(cfg, Device::gpu));
  CHECK(same_bits(gpu.losses, train_losses(*plain, init, 12)));
  CHECK(same_bits(gpu.final_params.values, plain->params().values));
}
