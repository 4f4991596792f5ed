// test_gpu_resident_stamps.cpp — NNTRAIN_RESIDENT_STAMPS (kernels/cuda/resident_stamps.*): the
// exact grid's stamped kernel against the plain one's bits and against its own clock over the
// whole step loop, the phases under their right names, and where stamps are refused (before
// anything runs, when the backend is made) or ignored (the trainer's evaluation backends).
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "errors.hpp"
#include "gpu_training_util.hpp"
#include "resident_grid_util.hpp"
#include "trainer.hpp"

using namespace nntrain;
using namespace nntrain::test;

namespace {

// NNTRAIN_RESIDENT_STAMPS for the guard's lifetime (unset however the scope is left).
struct StampsFile {
  explicit StampsFile(const std::string& path) { setenv("NNTRAIN_RESIDENT_STAMPS", path.c_str(), 1); }
  ~StampsFile() { unsetenv("NNTRAIN_RESIDENT_STAMPS"); }
  StampsFile(const StampsFile&) = delete;
  StampsFile& operator=(const StampsFile&) = delete;
};

std::string stamps_path() {
  return (std::filesystem::temp_directory_path() / ("nntrain_stamps_" + std::to_string(::getpid()) + ".csv")).string();
}

// The stamps file's rows (block, the phases' cycles, steps, step-loop cycles and ns) after
// its header, which names the columns in the kernel's order.
std::vector<std::vector<unsigned long long>> read_stamps(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  CHECK(line ==
        "block,group_stage_cycles,grid_sync1_cycles,exchange_cycles,grid_sync2_cycles,weight_copy_cycles,steps,"
        "loop_cycles,loop_ns");
  std::vector<std::vector<unsigned long long>> rows;
  while (std::getline(in, line)) {
    std::vector<unsigned long long> r;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ',');) r.push_back(std::stoull(f));
    REQUIRE(r.size() == 9);
    rows.push_back(r);
  }
  return rows;
}

enum StampColumn { kBlock, kGroups, kSync1, kExchange, kSync2, kCopy, kSteps, kCycles, kNs };

}  // namespace

TEST_CASE("resident grid (exact shape): the stamped kernel keeps the plain kernel's bits and accounts for every cycle",
          "[gpu][resident]") {
  // 600 samples, 5 groups: on 3 wide blocks blocks 0 and 1 run 2 groups, block 2 one; on 2
  // narrow blocks block 0 runs 3, block 1 two. The last block, with fewer groups, must show the
  // shorter group stage and the longer first wait: the phases under their right names.
  const Dataset d = gpu_random_data(600, 2, 1, 56);
  const auto o = resident_options({2, 20, 5, 1}, Activation::relu, "adam");
  const Params init = init_params(o.spec, Init::glorot_uniform, 7);
  const std::string path = stamps_path();
  for (const GridShape shape : {GridShape{3}, GridShape{2, 128}}) {
    INFO(shape.blocks << " blocks of " << shape.threads << " threads (0: the plan's)");
    const Run plain = run_grid(d, o, init, 4, shape);
    CHECK_THAT(plain.details, !Catch::Contains("STAMPED"));
    Run stamped;
    {
      StampsFile on(path);
      stamped = run_grid(d, o, init, 4, shape);
    }
    CHECK(same_bits(stamped.losses, plain.losses));
    CHECK(same_bits(stamped.params, plain.params));
    CHECK_THAT(stamped.details, Catch::Contains("STAMPED"));
    const auto rows = read_stamps(path);
    REQUIRE(rows.size() == size_t(shape.blocks));
    for (size_t b = 0; b < rows.size(); ++b) {
      INFO("block " << b);
      const auto& r = rows[b];
      CHECK(r[kBlock] == b);
      CHECK(r[kSteps] == 4);  // 4 full-batch steps (the backend's set-up step not counted)
      CHECK(r[kNs] > 0);
      unsigned long long phases = 0;
      for (int p = kGroups; p <= kCopy; ++p) {
        CHECK(r[size_t(p)] > 0);
        phases += r[size_t(p)];
      }
      // the phases partition the step loop, read apart by %clock64 over the whole of it
      CHECK(phases <= r[kCycles]);
      CHECK(phases >= r[kCycles] * 9 / 10);
    }
    CHECK(rows.back()[kGroups] < rows.front()[kGroups]);
    CHECK(rows.back()[kSync1] > rows.front()[kSync1]);
  }
  std::filesystem::remove(path);
}

TEST_CASE("resident grid (exact shape): stamps are refused where nothing is stamped, and skip the evaluation backend",
          "[gpu][resident]") {
  const auto o = resident_options({2, 20, 5, 1}, Activation::relu, "adam");
  const std::string path = stamps_path();
  {
    StampsFile on(path);
    // Before anything runs (the preflight): another GPU path, another net, a file no one can write
    CHECK_THAT(gpu_path_problem(o.spec, GpuPath::fused), Catch::Contains("--gpu-path is not resident"));
    CHECK_THAT(gpu_path_problem(resident_options({2, 6, 1}, Activation::tanh).spec, GpuPath::resident),
               Catch::Contains("not 2-20-5-1"));
    CHECK(gpu_path_problem(o.spec, GpuPath::resident).empty());
    // When the backend is made: one block (300 samples), the generic grid
    CHECK_THROWS_AS(make_gpu_backend(gpu_random_data(300, 2, 1, 56), o), UsageError);
    GridBlocks knob(2);
    CHECK_THROWS_AS(make_gpu_backend(gpu_random_data(300, 2, 1, 56), resident_options({2, 6, 1}, Activation::tanh,
                                                                                        "adam")),
                    UsageError);
  }
  {
    StampsFile on("/nonexistent-nntrain-folder/stamps.csv");
    CHECK_THROWS_AS(gpu_path_problem(o.spec, GpuPath::resident), UsageError);
  }
  CHECK_FALSE(std::filesystem::exists(path));
  // A mini-batch run with a held-out part: the trainer's full-batch evaluation backends (auto
  // path, not stamped) must not fail it, and the training backend's file has its rows.
  Config cfg;
  cfg.model.layers = {2, 20, 5, 1};
  cfg.model.activation = Activation::relu;
  cfg.train = {2, 300, /*shuffle=*/true, /*log_every=*/2, {}};
  cfg.gpu = {GpuPath::resident, 0};
  cfg.timing = {0, 1};
  cfg.data.validation_fraction = 0.2;
  const BackendRegistry registry = {{Device::gpu, "cuda", make_gpu_backend}};
  RunResult r;
  {
    StampsFile on(path);
    GridBlocks knob(2);
    TrainHooks hooks;
    hooks.evaluate = true;  // as nntrain train: the model's loss and the validation loss after training
    r = run_training(registry, cfg, gpu_random_data(500, 2, 1, 57), init_params(cfg.model_spec(), Init::glorot_uniform, 3),
                     Device::gpu, hooks);
  }
  REQUIRE(r.status() == "ok");
  INFO(r.model_loss_note);
  CHECK(std::isfinite(r.model_loss));
  CHECK(std::isfinite(r.model_validation_loss));
  const auto rows = read_stamps(path);
  CHECK(rows.size() == 2);
  for (const auto& row : rows) CHECK(row[kSteps] == 4);  // 400 training samples: batches of 300 and 100, 2 epochs
  std::filesystem::remove(path);
}
