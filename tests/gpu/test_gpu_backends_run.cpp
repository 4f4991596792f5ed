// test_gpu_backends_run.cpp — state that must be reset when a GPU backend is loaded again
// (issue 46, class 1; tests/test_backends_run.cpp does the CPU backends). `run_training` trains
// warm-up epochs, re-loads the initial weights, and re-loads them again before every repeat.
// A GPU backend that keeps anything across load() — the shuffle's epoch counter or Adam's step
// in the device's TrainState, the resident path's Adam table staged on the host, the epoch's
// loss accumulator, the loss slot of a replayed graph — then gives a curve other than a fresh
// backend's.
//
// Every GPU path: fused v2, the resident path's exact 2-20-5-1 relu kernel and its
// generic kernel (another width, tanh) under GPGPU-Sim too; cuBLAS on a real GPU only
// ([cublas]: closed library code the simulator cannot run). Each through run_training with
// two warm-up epochs, two repeats and chunks of unequal size (3 and 1 epochs), on shuffled
// mini-batches whose last one is short, Adam and SGD, against the independent things: the same
// path made fresh, loaded once and trained once straight through (bit for bit: the same code
// on the same data), and the CPU reference backend's fresh run (within gpu_training_util.hpp's
// 1e-4 relative).
//
// Small for the simulator: 50 samples, 4 epochs, 3 steps an epoch (times in docs/TESTING.md).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpu_training_util.hpp"
#include "trainer.hpp"

using namespace nntrain;
using namespace nntrain::test;

namespace {

constexpr int kSamples = 50, kEpochs = 4, kWarmup = 2, kRepeats = 2;

// 50 samples in batches of 20, 20 and 10, shuffled every epoch. No full batch: it keeps no
// state a mini-batch run does not (the same TrainState and Adam table, no shuffle).
constexpr int kBatch = 20;
const std::vector<std::string> kAdamAndSgd = {"adam", "sgd"};

// The run's settings. The seed is not the default 1: a path that dropped it would shuffle
// in another order than the CPU reference.
Config run_config(GpuPath path, const std::vector<int>& widths, Activation hidden, const std::string& optimizer) {
  Config c;
  c.seed = 7;
  c.model.layers = widths;
  c.model.activation = hidden;
  c.optimizer.type = optimizer;
  c.optimizer.lr = c.optimizer.type == "sgd" ? 0.05 : 0.02;
  c.train = {kEpochs, kBatch, /*shuffle=*/true, /*log_every=*/kEpochs, {}};
  c.gpu = {path, /*chunk_epochs=*/3};  // chunks of 3 and 1 epochs
  c.timing = {kWarmup, kRepeats};
  c.cpu.backend = CpuBackendKind::reference;
  return c;
}

std::string ends_text(const std::vector<float>& v) {
  char s[64];
  std::snprintf(s, sizeof s, "%.9g ... %.9g", v.empty() ? 0.0 : v.front(), v.empty() ? 0.0 : v.back());
  return s;
}

// The time is the host's clock to the losses on the host (as the CPU's); the CUDA events'
// span inside it is the device's busy share: at most all of it on a GPU (the simulator's
// events count whole seconds of host time, so there only the wording is checked).
void check_busy_share(const RunResult& r) {
  const std::string key = "timed from launch to losses on the host, the device busy ";
  const size_t at = r.details.find(key);
  REQUIRE(at != std::string::npos);
  if (r.simulated) return;
  const long share = std::strtol(r.details.c_str() + at + key.size(), nullptr, 10);
  CHECK(share > 0);
  CHECK(share <= 100);
}

// Each optimiser on one GPU path; `name` is the backend's name, `shape` a part of its details()
// that says which kernel ran.
void check_runs_on(GpuPath path, const std::vector<int>& widths, Activation hidden, const char* name,
                   const char* shape, const std::vector<std::string>& optimizers = kAdamAndSgd) {
  const BackendRegistry registry = {{Device::cpu, "reference", make_cpu_reference_backend},
                                    {Device::gpu, "cuda", make_gpu_backend}};
  const Dataset d = gpu_random_data(kSamples, widths.front(), widths.back(), 46);
  for (const std::string& optimizer : optimizers) {
    const Config cfg = run_config(path, widths, hidden, optimizer);
    INFO(optimizer);
    const Params init = init_params(cfg.model_spec(), Init::glorot_uniform, cfg.seed);
    const RunResult r = run_training(registry, cfg, d, init, Device::gpu);
    REQUIRE(r.status() == "ok");
    CHECK(r.backend == name);
    CHECK_THAT(r.details, Catch::Contains(shape));
    check_busy_share(r);
    REQUIRE(r.epochs_done == kEpochs);
    CHECK(r.warmup_epochs == kWarmup);
    CHECK(r.train_seconds_per_repeat.size() == size_t(kRepeats));
    // (a) The first repeat (after the warm-up and a re-load) is a fresh backend's run, bit for
    // bit; the later ones (a re-load each) are the first's, or the trainer marks the run.
    auto fresh = make_gpu_backend(d, backend_options(cfg, Device::gpu));
    const std::vector<float> once = train_losses(*fresh, init, kEpochs);
    INFO("run_training " << ends_text(r.losses) << "; fresh backend " << ends_text(once));
    CHECK(same_bits(r.losses, once));
    CHECK(same_bits(r.final_params.values, fresh->params().values));
    CHECK_FALSE(r.nondeterministic);
    // (b) The CPU reference backend's fresh run over the same epochs: same seed, same shuffle.
    auto cpu = make_cpu_reference_backend(d, backend_options(cfg, Device::cpu));
    check_curves_close(r.losses, train_losses(*cpu, init, kEpochs), 1e-4);
    CHECK(r.final_params.values != init.values);  // it trained
  }
}

const std::vector<int> kRef = {2, 20, 5, 1};

}  // namespace

TEST_CASE("GPU run_training on fused v2: warm-up, repeats and shuffled ragged batches give a fresh backend's curve",
          "[gpu][backends_run][fused]") {
  check_runs_on(GpuPath::fused, kRef, Activation::relu, "gpu-fused", "path fused: ");
}

TEST_CASE("GPU run_training on the resident exact kernel: warm-up, repeats and shuffled ragged batches give a fresh "
          "backend's curve",
          "[gpu][backends_run][resident]") {
  check_runs_on(GpuPath::resident, kRef, Activation::relu, "gpu-resident", "exact shape 2-20-5-1");
}

TEST_CASE("GPU run_training on the resident generic kernel: warm-up, repeats and shuffled ragged batches give a "
          "fresh backend's curve",
          "[gpu][backends_run][resident]") {
  check_runs_on(GpuPath::resident, {3, 8, 5, 2}, Activation::tanh, "gpu-resident", "register bucket");
}

// cuBLAS: a real GPU only (GPGPU-Sim cannot run cuBLAS's closed kernels).
TEST_CASE("GPU run_training on cuBLAS: warm-up, repeats and shuffled ragged batches give a fresh backend's curve",
          "[gpu][backends_run][cublas]") {
  check_runs_on(GpuPath::cublas, kRef, Activation::relu, "gpu-cublas", "path cublas");
}
