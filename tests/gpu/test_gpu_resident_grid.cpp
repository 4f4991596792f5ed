// test_gpu_resident_grid.cpp — the resident path's cooperative grid (kernels/cuda/resident_grid.cu)
// against the CPU reference backend (losses over 20 epochs, 1e-4 relative) at 1, 2, 8 and a
// many-block grid (NNTRAIN_RESIDENT_GRID_BLOCKS, the test-only knob, forces the grid and its
// block count where one block would fit), full batch and shuffled mini-batches with a ragged
// last batch and group, Adam and SGD; the same bits run to run and whatever the block count (a
// grid of fewer blocks runs the same groups in the same sums); and the exchange's summation
// order against a host emulation of it (a changed order changes the bits).
//
// Small nets and a few hundred samples: the simulator runs every block of the grid.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "errors.hpp"
#include "gpu_training_util.hpp"
#include "nnmath.hpp"
#include "resident.hpp"
#include "resident_grid_util.hpp"

using namespace nntrain;
using namespace nntrain::test;

namespace {

// The "N registers per thread" that details() reports (-1 where it names none).
int registers_of(const std::string& details) {
  const size_t at = details.find(" registers per thread");
  size_t from = at;
  while (from != std::string::npos && from > 0 && std::isdigit(static_cast<unsigned char>(details[from - 1]))) --from;
  return at == std::string::npos || from == at ? -1 : std::stoi(details.substr(from, at - from));
}

// The grid at each of `blocks` against the CPU reference, and every run's bits equal to the
// first's (losses and weights); `repeat`: the first block count once more.
void check_grid(const Dataset& d, const BackendOptions& o, const std::vector<GridShape>& blocks, int groups,
                int epochs = 20) {
  INFO(d.n << " samples, batch " << o.batch_size << ", " << o.optimizer.type << ", " << groups << " groups");
  const Params init = init_params(o.spec, Init::glorot_uniform, 7);
  auto cpu = make_cpu_reference_backend(d, o);
  const auto want = train_losses(*cpu, init, epochs);
  const Run first = run_grid(d, o, init, epochs, blocks.front());
  check_curves_close(first.losses, want, 1e-4);
  std::vector<GridShape> again = blocks;
  again.push_back(blocks.front());  // two runs at one block count
  for (size_t i = 1; i < again.size(); ++i) {
    INFO(again[i].blocks << " blocks of " << again[i].threads << " threads against " << blocks.front().blocks);
    const Run r = run_grid(d, o, init, epochs, again[i]);
    const int launched = std::min(again[i].blocks, groups);
    const std::string of = again[i].threads > 0 ? " of " + std::to_string(again[i].threads) + " threads (" : " of ";
    CHECK_THAT(r.details, Catch::Contains(std::to_string(launched) + (launched == 1 ? " block" : " blocks") + of));
    if (again[i].threads == 128) {  // the narrow kernel: at most 128 registers, four blocks per SM on an H200
      CHECK(registers_of(r.details) > 0);
      CHECK(registers_of(r.details) <= 128);
    }
    CHECK(same_bits(r.losses, first.losses));
    CHECK(same_bits(r.params, first.params));
  }
  CHECK_THAT(first.details, Catch::Contains(std::to_string(groups) + " groups"));
}

// The exchange's order as resident_grid.hpp specifies it: lane j sums groups j, j + 32, ...
// from 0.0f, then the xor tree (each lane adds lane i ^ 16, 8, 4, 2, 1), lane 0's result.
float lane_order_sum(const std::vector<float>& v) {
  float lane[32];
  for (int j = 0; j < 32; ++j) {
    lane[j] = 0.0f;
    for (size_t q = size_t(j); q < v.size(); q += 32) lane[j] = lane[j] + v[q];
  }
  for (int off = 16; off > 0; off >>= 1) {
    float next[32];
    for (int j = 0; j < 32; ++j) next[j] = lane[j] + lane[j ^ off];
    for (int j = 0; j < 32; ++j) lane[j] = next[j];
  }
  return lane[0];
}

}  // namespace

TEST_CASE("resident grid plan: groups fixed by the net and the batch, the knob, and why", "[gpu][resident]") {
  using cuda::plan_resident;
  const std::vector<Activation> t2 = {Activation::tanh, Activation::identity};
  // 2-6-1: 25 parameters; blocks of 64 threads, one sample each: groups of 64
  const auto g600 = plan_resident({2, 6, 1}, t2, 600, 48 * 1024, 3);
  REQUIRE(g600.fits);
  CHECK(g600.grid);
  CHECK(g600.net.batch == 64);
  CHECK(g600.groups == 10);  // 9 × 64 + 24
  CHECK_THAT(g600.why, Catch::Contains("10 groups of 64 samples (the last 24)"));
  CHECK_THAT(g600.why, Catch::Contains("NNTRAIN_RESIDENT_GRID_BLOCKS=3"));
  // The same groups whatever the knob, and without it one block takes 600 samples
  const auto g600b = plan_resident({2, 6, 1}, t2, 600, 48 * 1024, 200);
  CHECK(g600b.net.batch == 64);
  CHECK(g600b.groups == 10);
  CHECK_FALSE(plan_resident({2, 6, 1}, t2, 600, 48 * 1024).grid);
  // Past one block's 4,096 samples the grid is taken by itself, and says why
  const auto big = plan_resident({2, 20, 5, 4}, {Activation::relu, Activation::relu, Activation::identity}, 40000,
                                 227 * 1024);
  REQUIRE(big.fits);
  CHECK(big.grid);
  CHECK_FALSE(big.exact);
  CHECK(big.threads == 64);  // 189 parameters: 48 threads' sums, at least 64
  CHECK(big.groups == 625);
  CHECK_THAT(big.why, Catch::Contains("one block does not fit (batches of 40000 samples"));
  // A batch smaller than a group: one group of the batch
  const auto small = plan_resident({2, 6, 1}, t2, 40, 48 * 1024, 4);
  CHECK(small.groups == 1);
  CHECK(small.net.batch == 40);
}

TEST_CASE("resident grid: full batch follows the CPU reference at 1, 2, 8 and 64 blocks with the same bits",
          "[gpu][resident]") {
  // 600 samples: 10 groups of 64, the last 24 (64 blocks launch 10; 8 take two groups each in two blocks)
  const Dataset d = gpu_random_data(600, 2, 1, 41);
  check_grid(d, resident_options({2, 6, 1}, Activation::tanh, "adam"), {8, 1, 2, 64}, 10);
}

TEST_CASE("resident grid: full batch SGD and a deeper tanh net, the same bits at every block count",
          "[gpu][resident]") {
  check_grid(gpu_random_data(300, 2, 1, 42), resident_options({2, 6, 1}, Activation::tanh, "sgd"), {5, 2}, 5);
  // 2-20-5-1 tanh (relu would take the exact group stage: the cases below): the generic stages
  check_grid(gpu_random_data(200, 2, 1, 43), resident_options({2, 20, 5, 1}, Activation::tanh, "adam"), {4, 1}, 4);
}

TEST_CASE("resident grid: shuffled mini-batches (ragged last batch and group) follow the CPU reference",
          "[gpu][resident]") {
  for (const char* opt : {"adam", "sgd"}) {
    auto o = resident_options({2, 6, 1}, Activation::tanh, opt);
    o.batch_size = 150;  // 350 samples: batches of 150, 150 and 50; groups of 64, 64 and 22
    o.shuffle = true;
    o.seed = 7;  // not the default: a dropped seed would shuffle another order
    // Adam at three block counts; SGD at one (its bits across block counts: the full-batch case)
    const auto blocks = std::string(opt) == "adam" ? std::vector<GridShape>{3, 1, 2} : std::vector<GridShape>{2};
    check_grid(gpu_random_data(350, 2, 1, 44), o, blocks, 3);
  }
}

TEST_CASE("resident grid: chunks of a run give the one launch's bits (shuffled mini-batches, Adam)",
          "[gpu][resident]") {
  // Across launches: the owners' m and v back to global memory, the host's Adam table and the
  // shuffle's epoch carried over (as the trainer's chunks of epochs use them).
  auto o = resident_options({2, 6, 1}, Activation::tanh, "adam");
  o.batch_size = 150;
  o.shuffle = true;
  GridBlocks knob(2);
  check_chunks_replay(gpu_random_data(350, 2, 1, 46), o, {2, 1});
}

TEST_CASE("resident grid: the exchange sums the groups in its fixed order", "[gpu][resident]") {
  // A linear 1-2-1 net from zero weights, inputs 0: a step's output-bias gradient is the sum
  // over groups of each group's one non-zero delta, exactly (the other columns add zeros), and
  // every other gradient is zero. One SGD step of lr 1 leaves b = -sum, so the weights show the
  // order the exchange summed 101 groups in (up to 4 per lane). The data tells apart the lane
  // order from group order, contiguous chunks per lane, each lane's groups reversed and the
  // lanes reversed. At 2 blocks the output bias's owner is in block 1, which has 50 groups to
  // block 0's 51: without the barrier it would read the last group before block 0 wrote it
  // (in step 1 that reads the warm-up step's equal value: hence the two-step runs below).
  const int groups = 101, group = 64;
  Dataset d;
  d.n = groups * group;
  d.inputs = d.outputs = 1;
  d.x.assign(size_t(d.n), 0.0f);
  d.y.assign(size_t(d.n), 0.0f);
  std::vector<float> delta(static_cast<size_t>(groups));
  const float two_over_count = 2.0f / float(d.n);
  for (int q = 0; q < groups; ++q) {
    const float t = std::ldexp(float(1 + q % 7), (q * 7) % 29) * (q % 2 ? 1.0f : -1.0f);
    d.y[size_t(q * group + q % group)] = t;
    delta[size_t(q)] = mse_grad(0.0f, t, two_over_count);
  }
  const float want = lane_order_sum(delta);
  float in_order = 0.0f;
  for (float v : delta) in_order += v;
  REQUIRE(in_order != want);  // the data tells the orders apart
  auto o = resident_options({1, 2, 1}, Activation::identity, "sgd");
  o.optimizer.lr = 1.0;
  Params init = init_params(o.spec, Init::glorot_uniform, 1);
  std::fill(init.values.begin(), init.values.end(), 0.0f);
  for (int blocks : {2, 101}) {
    INFO(blocks << " blocks");
    const Run r = run_grid(d, o, init, 1, blocks);
    CHECK_THAT(r.details, Catch::Contains(std::to_string(blocks) + " blocks of "));  // the knob is capped silently
    REQUIRE(r.params.size() == 7);  // W0 (2), b0 (2), W1 (2), b1
    for (size_t k = 0; k < 6; ++k) CHECK(r.params[k] == 0.0f);
    CHECK(r.params[6] == -want);
  }
  // Two steps against one block (whose owners read only what their own warp wrote): the
  // second step's gradients differ from the first's, and from those of the backend's warm-up
  // step, which also starts from zero weights, so a group read before it is written shows.
  const Run one = run_grid(d, o, init, 2, 1);
  for (int blocks : {2, 101}) {
    INFO(blocks << " blocks, two steps");
    const Run r = run_grid(d, o, init, 2, blocks);
    CHECK_THAT(r.details, Catch::Contains(std::to_string(blocks) + " blocks of "));
    CHECK(same_bits(r.losses, one.losses));
    CHECK(same_bits(r.params, one.params));
  }
}

// --- the exact-shape group stage (kernels/cuda/resident_grid_exact.cuh): 2-20-5-1 relu ---------

namespace {
const std::vector<Activation> kRelu2 = {Activation::relu, Activation::relu, Activation::identity};
}  // namespace

TEST_CASE("resident grid (exact shape): groups of 128 whatever the knob, the generic stages where rows do not fit",
          "[gpu][resident]") {
  using cuda::plan_resident;
  const auto g600 = plan_resident({2, 20, 5, 1}, kRelu2, 600, 227 * 1024, 2);
  REQUIRE(g600.fits);
  CHECK(g600.grid);
  CHECK(g600.exact);
  CHECK(g600.net.batch == 128);
  CHECK(g600.groups == 5);  // 4 × 128 + 88
  CHECK(g600.threads == 352);  // 2 slices × 172 gradient items
  CHECK_THAT(g600.why, Catch::Contains("5 groups of 128 samples (the last 88)"));
  CHECK_THAT(g600.why, Catch::Contains("exact shape 2-20-5-1 group stage"));
  CHECK(plan_resident({2, 20, 5, 1}, kRelu2, 600, 227 * 1024, 64).groups == 5);
  // Without the knob too: past 480 samples the exact shape takes it (resident_plan's order)
  const auto g2000 = plan_resident({2, 20, 5, 1}, kRelu2, 2000, 64 * 1024);
  CHECK(g2000.exact);
  CHECK(g2000.groups == 16);
  // A batch under a group: one group of the batch; rows over the limit: the generic stages
  CHECK(plan_resident({2, 20, 5, 1}, kRelu2, 100, 64 * 1024, 3).net.batch == 100);
  const auto small_smem = plan_resident({2, 20, 5, 1}, kRelu2, 600, 16 * 1024, 2);
  REQUIRE(small_smem.fits);
  CHECK_FALSE(small_smem.exact);
  CHECK(small_smem.groups == 10);  // the generic groups of 64
}

TEST_CASE("resident grid (exact shape): full batch follows the CPU reference at 5, 1 and 2 blocks with the same bits",
          "[gpu][resident]") {
  // 600 samples: 4 groups of 128 and one of 88; at 5 blocks each keeps its group's inputs in
  // registers, at 1 and 2 they reload them (block 0 of 2 takes groups 0, 2 and 4). Blocks of
  // 128 threads (the narrow block: three gradient items per thread) give the same bits.
  const Dataset d = gpu_random_data(600, 2, 1, 51);
  const auto o = resident_options({2, 20, 5, 1}, Activation::relu, "adam");
  check_grid(d, o, {5, 1, 2, {5, 128}, {2, 128}, {2, 224}}, 5);
  CHECK_THAT(run_grid(d, o, init_params(o.spec, Init::glorot_uniform, 7), 1, 5).details,
             Catch::Contains("exact shape 2-20-5-1 group stage"));
}

TEST_CASE("resident grid (exact shape): the loss summed by a warp that owns no parameter", "[gpu][resident]") {
  // 2,100 samples: 17 groups (the last of 52). 17 wide blocks have 187 warps, more than the 171
  // parameters, so the grid's last warp sums the loss beside the owners; at 2 blocks (22 warps)
  // block 0's first warp does, after its own parameters. The same losses and bits either way.
  const Dataset d = gpu_random_data(2100, 2, 1, 55);
  check_grid(d, resident_options({2, 20, 5, 1}, Activation::relu, "adam"), {{17, 352}, {2, 352}}, 17, 6);
}

TEST_CASE("resident grid (exact shape): shuffled mini-batches and chunks follow the CPU reference", "[gpu][resident]") {
  for (const char* opt : {"adam", "sgd"}) {
    auto o = resident_options({2, 20, 5, 1}, Activation::relu, opt);
    o.batch_size = 300;  // 350 samples: batches of 300 (groups of 128, 128 and 44) and 50 (one group)
    o.shuffle = true;
    o.seed = 9;
    // SGD at one block count and 8 epochs (simulator time; its bits across counts: Adam's)
    const bool adam = std::string(opt) == "adam";
    const std::vector<GridShape> shapes = adam ? std::vector<GridShape>{2, 1, {2, 128}} : std::vector<GridShape>{2};
    check_grid(gpu_random_data(350, 2, 1, 52), o, shapes, 3, adam ? 20 : 8);
  }
  auto o = resident_options({2, 20, 5, 1}, Activation::relu, "adam");
  o.batch_size = 300;
  o.shuffle = true;
  GridBlocks knob(2);
  check_chunks_replay(gpu_random_data(350, 2, 1, 53), o, {2, 1});
}

TEST_CASE("resident grid (exact shape): one SGD step's gradient against the double reference", "[gpu][resident]") {
  // 399 samples: 3 groups of 128 and one of 15, at 4 blocks (one group each) and at 1 (rows
  // reused), each with the wide block (a thread per gradient item) and the narrow one (128)
  for (int threads : {0, 128}) {
    for (int blocks : {4, 1}) {
      INFO(blocks << " blocks of " << threads << " threads (0: the plan's)");
      GridBlocks knob(blocks, threads);
      check_sgd_step_gradient(GpuPath::resident, {2, 20, 5, 1}, Activation::relu, 399);
    }
  }
}

TEST_CASE("resident grid (exact shape): the narrow block where it takes fewer rounds of groups", "[gpu][resident]") {
  using cuda::exact_grid_threads;
  // An H200: 132 SMs, one wide block (352) per SM by registers; three narrow ones (128) at 153
  // registers, four at 128 (the narrow kernel's cap since 2026-11-29)
  CHECK(exact_grid_threads(7813, 0, 352, 132, 128, 528) == 128);  // 1,000,000: 15 rounds, not 60
  CHECK(exact_grid_threads(313, 0, 352, 132, 128, 396) == 128);   // 40,000 samples: 1 round, not 3
  CHECK(exact_grid_threads(7813, 0, 352, 132, 128, 396) == 128);  // 1,000,000: 20 rounds, not 60
  CHECK(exact_grid_threads(133, 0, 352, 132, 128, 396) == 128);   // 1 round, not 2
  CHECK(exact_grid_threads(132, 0, 352, 132, 128, 396) == 352);   // 1 round either way: the wide one
  CHECK(exact_grid_threads(16, 0, 352, 132, 128, 396) == 352);
  CHECK(exact_grid_threads(1, 0, 352, 132, 128, 396) == 352);
  // The simulated card: 30 SMs, two narrow blocks of 31 KiB in 64 KiB; 79 groups: 2 rounds, not 3
  CHECK(exact_grid_threads(79, 0, 352, 30, 128, 60) == 128);
  CHECK(exact_grid_threads(120, 0, 352, 30, 128, 60) == 128);     // 2 rounds, not 4
  // The test knob caps both counts: 13 groups on at most 5 blocks are 3 rounds either way
  CHECK(exact_grid_threads(13, 5, 352, 30, 128, 60) == 352);
  CHECK(exact_grid_threads(13, 40, 352, 10, 128, 20) == 128);     // 1 round on 20, 2 on 10
}

TEST_CASE("resident grid (exact shape): the block-size knob takes 128 to 384 threads, only where it applies",
          "[gpu][resident]") {
  const Dataset d = gpu_random_data(300, 2, 1, 54);
  for (const char* bad : {"96", "200", "416", "abc"}) {  // under a group, not a warp multiple, over the kernel's
    INFO("NNTRAIN_RESIDENT_GRID_THREADS=" << bad);
    setenv("NNTRAIN_RESIDENT_GRID_THREADS", bad, 1);
    GridBlocks knob(2);
    CHECK_THROWS_AS(make_gpu_backend(d, resident_options({2, 20, 5, 1}, Activation::relu, "adam")), UsageError);
  }
  // The generic grid has no block-size choice: the knob is not read
  setenv("NNTRAIN_RESIDENT_GRID_THREADS", "abc", 1);
  GridBlocks knob(2);
  CHECK_NOTHROW(make_gpu_backend(d, resident_options({2, 6, 1}, Activation::tanh, "adam")));
}
