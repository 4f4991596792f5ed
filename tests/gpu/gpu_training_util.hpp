// gpu_training_util.hpp — checks shared by the training-level [gpu] tests of both paths:
// test_gpu_training.cpp runs them on the fused path with data small enough for the simulator
// (docs/GPU.md), test_gpu_cublas.cpp ([cublas]) on the cuBLAS path with the reference
// experiment. Each check compares against something independent of the code under test: the
// CPU reference backend, the double reference gradient, or the same backend's own trajectory
// when what is tested is that two ways of running it (chunks, graphs, repeats) change no bit.
//
// Tolerances: docs/DESIGN.md §9 measured two correct fp32 implementations of the reference
// experiment agreeing to ~1e-7 relative over the first 20 epochs; 1e-4 leaves room for
// different summation orders and still fails on any real error.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "backend.hpp"
#include "cpu_reference.hpp"
#include "dataset.hpp"
#include "gpu_backend.hpp"
#include "gpu_test_util.hpp"
#include "reference_math.hpp"

namespace nntrain::test {

// The reference experiment's options (2→20→5→1 ReLU, Adam lr 0.08, full batch, seed 1).
inline BackendOptions peaks_options(GpuPath path) {
  BackendOptions o;
  o.spec.widths = {2, 20, 5, 1};
  o.spec.hidden = Activation::relu;
  o.spec.output = Activation::identity;
  o.optimizer = OptimizerConfig{};  // adam, lr 0.08
  o.batch_size = 0;
  o.seed = 1;
  o.gpu_path = path;
  o.chunk_epochs = 100;
  return o;
}

// The resident path (one block, or the grid where the batch needs it), chunks of 20 epochs.
inline BackendOptions resident_options(const std::vector<int>& widths, Activation hidden, const char* optimizer = "adam") {
  BackendOptions o;
  o.spec.widths = widths;
  o.spec.hidden = hidden;
  o.spec.output = Activation::identity;
  o.optimizer = OptimizerConfig{};  // adam, lr 0.08
  o.optimizer.type = optimizer;
  if (o.optimizer.type == "sgd") o.optimizer.lr = 0.05;
  o.batch_size = 0;
  o.seed = 1;
  o.gpu_path = GpuPath::resident;
  o.chunk_epochs = 20;
  return o;
}

// The peaks data on a grid × grid over [-3, 3]²: 200 is the reference experiment's 40,000
// samples; the simulator's cases use a few hundred.
inline const Dataset& peaks_data(int grid) {
  static std::map<int, Dataset> cache;
  auto it = cache.find(grid);
  if (it == cache.end()) it = cache.emplace(grid, make_peaks(grid, grid, -3.0, 3.0)).first;
  return it->second;
}

inline Dataset gpu_random_data(int n, int n_in, int n_out, uint64_t seed) {
  Dataset d;
  d.n = n;
  d.inputs = n_in;
  d.outputs = n_out;
  d.x = random_floats(size_t(n) * n_in, seed, -2, 2);
  d.y = random_floats(size_t(n) * n_out, seed + 1);
  return d;
}

inline std::vector<float> train_losses(Backend& b, const Params& init, int epochs) {
  b.load(init);
  std::vector<float> l(size_t(epochs), std::numeric_limits<float>::quiet_NaN());
  b.train(epochs, l.data());
  return l;
}

inline void check_curves_close(const std::vector<float>& got, const std::vector<float>& want, double rtol) {
  REQUIRE(got.size() == want.size());
  for (size_t e = 0; e < got.size(); ++e) {
    INFO("epoch " << e + 1 << ": gpu " << got[e] << " cpu " << want[e]);
    REQUIRE(std::isfinite(got[e]));
    CHECK(std::fabs(got[e] - want[e]) <= rtol * std::fabs(want[e]));
  }
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The first `epochs` GPU losses against the CPU reference backend's, from the same weights.
inline void check_gpu_follows_cpu(const Dataset& d, const BackendOptions& o, int epochs, double rtol,
                                  uint64_t init_seed = 1) {
  const Params init = init_params(o.spec, Init::glorot_uniform, init_seed);
  auto cpu = make_cpu_reference_backend(d, o);
  auto gpu = make_gpu_backend(d, o);
  check_curves_close(train_losses(*gpu, init, epochs), train_losses(*cpu, init, epochs), rtol);
}

// Two backends, and one of them again after load(): the same losses and weights, bit for bit.
inline void check_runs_bit_identical(const Dataset& d, const BackendOptions& o, int epochs) {
  const Params init = init_params(o.spec, Init::glorot_uniform, 1);
  auto a = make_gpu_backend(d, o);
  auto b = make_gpu_backend(d, o);
  const auto la = train_losses(*a, init, epochs), lb = train_losses(*b, init, epochs);
  CHECK(same_bits(la, lb));
  CHECK(same_bits(a->params().values, b->params().values));
  const auto lc = train_losses(*a, init, epochs);  // load() really reset the state
  CHECK(same_bits(la, lc));
}

// train() called for `parts` epochs at a time follows, bit for bit, one call for their sum
// (which the backend splits into graphs of at most `max_graph_steps` steps and a remainder).
inline void check_chunks_replay(const Dataset& d, const BackendOptions& o, const std::vector<int>& parts,
                                int max_graph_steps = kMaxGraphSteps) {
  int total = 0;
  for (int n : parts) total += n;
  const Params init = init_params(o.spec, Init::glorot_uniform, 1);
  auto g = make_gpu_backend(d, o, max_graph_steps);
  const auto whole = train_losses(*g, init, total);
  const auto whole_w = g->params().values;
  g->load(init);
  std::vector<float> split(size_t(total), std::numeric_limits<float>::quiet_NaN());
  // A GPU's events time every chunk; GPGPU-Sim's cudaEventElapsedTime counts whole seconds
  // of host time (time_t), so a chunk shorter than a second reads 0 there: not a measurement.
  const bool simulated = query_gpu().simulated;
  int done = 0;
  for (int n : parts) {
    const double secs = g->train(n, split.data() + done);
    CHECK(secs >= 0);
    if (!simulated) CHECK(secs > 0);
    done += n;
  }
  CHECK(same_bits(whole, split));
  CHECK(same_bits(whole_w, g->params().values));
}

// Epochs replayed from CUDA graphs and the same epochs launched step by step: same bits.
inline void check_graphs_match_direct_launches(const Dataset& d, const BackendOptions& o, int epochs) {
  const Params init = init_params(o.spec, Init::glorot_uniform, 1);
  auto graphed = make_gpu_backend(d, o);
  auto direct = make_gpu_backend(d, o, 0);
  CHECK_THAT(graphed->details(), Catch::Contains("replayed from CUDA graphs"));
  CHECK_THAT(direct->details(), Catch::Contains("launched without a graph"));
  CHECK(same_bits(train_losses(*graphed, init, epochs), train_losses(*direct, init, epochs)));
  CHECK(same_bits(graphed->params().values, direct->params().values));
}

// One SGD step with lr = 1 moves each weight by exactly its gradient (up to the rounding of
// w - g, ~1e-7 absolute): the GPU's gradient, recovered, against the reference in double.
// `adjust_init`, when given, changes the starting weights (init_params' biases are zero).
inline void check_sgd_step_gradient(GpuPath path, const std::vector<int>& widths, Activation hidden, int n,
                                    const std::function<void(Params&)>& adjust_init = {}) {
  BackendOptions o = peaks_options(path);
  o.spec.widths = widths;
  o.spec.hidden = hidden;
  o.optimizer.type = "sgd";
  o.optimizer.lr = 1.0;
  const Dataset d = gpu_random_data(n, widths.front(), widths.back(), 77 + uint64_t(n));
  Params init = init_params(o.spec, Init::glorot_uniform, 3);
  if (adjust_init) adjust_init(init);
  auto g = make_gpu_backend(d, o);
  g->load(init);
  float loss = std::numeric_limits<float>::quiet_NaN();
  g->train(1, &loss);  // full batch: one step
  const Params after = g->params();
  std::vector<double> pd(init.values.begin(), init.values.end()), gd(pd.size());
  const double want_loss =
      reference_loss_and_grad<double, double>(o.spec, pd.data(), d.x.data(), d.y.data(), nullptr, n, gd.data());
  std::vector<float> got(pd.size());
  for (size_t k = 0; k < got.size(); ++k) got[k] = init.values[k] - after.values[k];
  double gmax = 0;
  for (double v : gd) gmax = std::max(gmax, std::fabs(v));
  INFO(g->details() << "; n " << n << ", " << widths.size() - 1 << " layers");
  check_close(got, gd, 0.0, 1e-4 * gmax + 1e-6, "recovered gradient");
  check_close({loss}, {want_loss}, 1e-5, 0, "loss");
}

// Set-up is reported in parts: each one measured, none folded into another.
inline void check_setup_report(const Dataset& d, const BackendOptions& o) {
  auto g = make_gpu_backend(d, o);
  const SetupReport r = g->setup();
  CHECK(r.context_seconds > 0);
  CHECK(r.handle_seconds > 0);
  CHECK(r.module_seconds > 0);
  CHECK(r.alloc_seconds > 0);
  CHECK(r.transfer_seconds > 0);
  CHECK(r.total() > r.transfer_seconds);
}

}  // namespace nntrain::test
