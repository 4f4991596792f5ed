// test_gpu_fused_v2.cpp — the one-kernel-per-step fused path (kernels/cuda/fused_v2.cu)
// against the CPU reference backend and the double-precision reference gradient: every
// register bucket (8, 16, 32, 64: run-time widths) and the exact 2-20-5-1 instantiation,
// full batch and shuffled mini-batches, the two-level ticket (more than kV2Group blocks),
// determinism, one kernel launch per step, and the 32- and 16-sample tiles (their plans for
// the nets only the retired two-kernel v1 fitted; their kernels on small nets under a lowered
// limit).
//
// No cuBLAS anywhere (the fused path creates no handle), so these run under GPGPU-Sim.
// Sizes are small on purpose (the simulator takes ~0.1–0.5 s per epoch of a few hundred
// samples) and never multiples of the 64-sample tile, so every case has a partial block.
// Tolerance 1e-4 relative over the first 20 epochs: see test_gpu_training.cpp (two correct
// fp32 implementations agree to ~1e-7 there; different summation orders only).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "cuda_check.hpp"
#include "errors.hpp"
#include "fused_v2.hpp"
#include "gpu_training_util.hpp"

using namespace nntrain;
using namespace nntrain::test;

namespace {

struct NetCase {
  std::vector<int> widths;
  Activation hidden;
  int n;       // samples
  int bucket;  // the register bucket the plan must pick
  bool exact;  // the exact-shape instantiation (2-20-5-1), not the bucket's run-time widths
};

// One case per compile-time instantiation: the four register buckets (run-time widths: the
// generic path, 64 being the fallback for any width up to the limit) and the exact shape
// (4 threads per sample), and the exact widths with other activations (a bucket).
const NetCase kBucketCases[] = {
    {{3, 8, 5, 2}, Activation::tanh, 140, 8, false},
    {{2, 16, 9, 1}, Activation::leaky_relu, 150, 16, false},
    {{2, 24, 5, 1}, Activation::relu, 170, 32, false},
    {{3, 40, 7, 2}, Activation::sigmoid, 135, 64, false},
    {{2, 20, 5, 1}, Activation::relu, 170, 32, true},
    {{2, 20, 5, 1}, Activation::tanh, 130, 32, false},
};

BackendOptions options(const std::vector<int>& widths, Activation hidden, const char* path) {
  BackendOptions o;
  o.spec.widths = widths;
  o.spec.hidden = hidden;
  o.spec.output = Activation::identity;
  o.optimizer = OptimizerConfig{};  // adam, lr 0.08
  o.batch_size = 0;
  o.seed = 1;
  o.gpu_path = *parse_name(kGpuPathNames, path);
  o.chunk_epochs = 20;  // one graph per train() call here
  return o;
}

// GPU (v2) vs CPU reference over `epochs`; then a second GPU backend, bit for bit, over the
// first `repeat` epochs (all of them: its weights too). Repeats are short to keep the
// simulator's time down: a loss of epoch k depends on every bit of the k−1 updates before it.
// Returns the first backend's details().
std::string check_against_reference_and_repeat(const BackendOptions& o, const Dataset& d, int epochs, int repeat,
                                               double rtol) {
  const Params init = init_params(o.spec, Init::glorot_uniform, 7);
  auto cpu = make_cpu_reference_backend(d, o);
  const auto want = train_losses(*cpu, init, epochs);
  auto a = make_gpu_backend(d, o);
  CHECK(a->name() == "gpu-fused");
  const auto la = train_losses(*a, init, epochs);
  check_curves_close(la, want, rtol);
  auto b = make_gpu_backend(d, o);
  const auto lb = train_losses(*b, init, repeat);
  CHECK(same_bits(std::vector<float>(la.begin(), la.begin() + repeat), lb));
  if (repeat == epochs) CHECK(same_bits(a->params().values, b->params().values));
  // One kernel launch per optimiser step in the replayed graph.
  CHECK_THAT(a->details(), Catch::Contains("; 1 kernel per step (graph of"));
  return a->details();
}

// The smaller tiles (32 and 16 samples), for nets whose 64-sample tile does not fit.
std::vector<int> two_w_h_one(int w, int h) {
  std::vector<int> widths{2};
  widths.insert(widths.end(), size_t(h), w);
  widths.push_back(1);
  return widths;
}
std::vector<Activation> tanh_acts(const std::vector<int>& widths) {
  std::vector<Activation> acts(widths.size() - 1, Activation::tanh);
  acts.back() = Activation::identity;
  return acts;
}

// The retired two-kernel v1's fit rule, frozen as of 181a868 (plan_fused in the deleted
// kernels/cuda/fused_mlp.cu): the shared shape limits, then weights (padded to 4 floats), the
// activation and delta rows of its smallest tile (32 samples, rows of 33 floats) and a
// double per sample in the device's shared memory. Kept so that the property below still
// guarantees that no net lost the fused path when v1 was retired (2026-11-29).
bool retired_v1_fits(const std::vector<int>& widths, size_t smem_optin) {
  if (!cuda::fused_plan_problem(widths, widths.size() - 1).empty()) return false;
  size_t params = 0, rows = 0;
  for (size_t l = 0; l < widths.size(); ++l) rows += size_t(widths[l]);
  for (size_t l = 0; l + 1 < widths.size(); ++l) params += size_t(widths[l] + 1) * size_t(widths[l + 1]);
  return 4 * (((params + 3) & ~size_t(3)) + 2 * rows * 33) + 8 * 32 <= smem_optin;
}

// docs/journal/2026-11-29-cuda-structure.md's table: the 2-w×h-1 nets only v1 fitted (v2's
// 64-sample tile does not), per opt-in limit. Each now fits v2's 32 tile (2-32×4-1 at
// 48 KiB: the 16 tile); v1's frozen rule (its own arithmetic) fits them too.
void check_small_tile_plans() {
  struct Row {
    int kib, w, h_lo, h_hi;
  };
  const Row table[] = {{227, 64, 5, 7}, {227, 48, 7, 7}, {64, 64, 2, 2}, {64, 48, 3, 3}, {64, 32, 4, 5},
                       {64, 24, 5, 7},  {64, 16, 7, 7},  {48, 48, 2, 2}, {48, 32, 3, 4}, {48, 24, 4, 5},
                       {48, 16, 5, 7}};
  for (const Row& r : table)
    for (int h = r.h_lo; h <= r.h_hi; ++h) {
      const auto widths = two_w_h_one(r.w, h);
      const size_t limit = size_t(r.kib) * 1024;
      INFO("2-" << r.w << "x" << h << "-1 at " << r.kib << " KiB");
      const auto p = cuda::plan_fused_v2(widths, tanh_acts(widths), limit);
      CHECK(p.fits);
      CHECK(p.tile == (r.kib == 48 && r.w == 32 && h == 4 ? 16 : 32));
      CHECK_THAT(p.why, Catch::Contains("tile of " + std::to_string(p.tile) + " samples"));
      CHECK(retired_v1_fits(widths, limit));
    }
  // 2-64×5-1 by hand: padded weights 2→64 (rows of 4), 4 × 64→64, 64→1 (bias padded to 4);
  // 2+5·64+1 activation rows, a row of ones, 5·64+1 delta rows, each 32 + 4 floats; a header
  // of at most 112 bytes. The 64-sample tile (rows of 68 floats) needs ~243 KiB: over 227.
  const auto p5 = cuda::plan_fused_v2(two_w_h_one(64, 5), tanh_acts(two_w_h_one(64, 5)), 227 * 1024);
  const size_t body = 4 * (size_t(64 * 4 + 64 + 4 * (64 * 64 + 64) + 64 + 4) + size_t(323 + 1 + 321) * 36);
  CHECK(p5.smem_bytes > body);
  CHECK(p5.smem_bytes <= body + 112);
  CHECK(body + 4 * size_t(323 + 1 + 321) * 32 > 227 * 1024);
  // A small tile runs the bucket-64 kernel, whatever the widths.
  const auto narrow = cuda::plan_fused_v2({2, 8, 8, 1}, tanh_acts({2, 8, 8, 1}), 4 * 1024);
  CHECK(narrow.tile == 16);
  CHECK(narrow.bucket == 64);
  // Any net v1 fits, v2 fits (4,000 random nets of 1–8 layers, widths 1–64, per device limit).
  uint64_t state = 12345;
  const auto next = [&state](int lo, int hi) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + int((state >> 33) % uint64_t(hi - lo + 1));
  };
  for (const int kib : {64, 99, 163, 227}) {
    int v1_fits = 0;
    for (int i = 0; i < 4000; ++i) {
      std::vector<int> widths(size_t(next(2, 9)));
      for (int& w : widths) w = next(1, 64);
      const auto acts = tanh_acts(widths);
      if (!retired_v1_fits(widths, size_t(kib) * 1024)) continue;
      ++v1_fits;
      INFO(kib << " KiB, net " << i);
      CHECK(cuda::plan_fused_v2(widths, acts, size_t(kib) * 1024).fits);
    }
    CHECK(v1_fits > 1000);
  }
  // On this device's own limit, the first 2-64×h-1 net whose 64 tile does not fit (2-64×2-1 on
  // the simulator's 64 KiB, 2-64×5-1 on an H100/H200) fits the 32 tile: `auto` takes v2 for it.
  int optin = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  int h = 1;
  while (h < 7 && cuda::plan_fused_v2(two_w_h_one(64, h), tanh_acts(two_w_h_one(64, h)), size_t(optin)).tile == 64) ++h;
  INFO("2-64x" << h << "-1 at " << optin << " bytes");
  CHECK(cuda::plan_fused_v2(two_w_h_one(64, h), tanh_acts(two_w_h_one(64, h)), size_t(optin)).tile == 32);
}
}  // namespace

TEST_CASE("fused v2 plan: buckets, limits and shared memory", "[gpu][fused]") {
  using cuda::plan_fused_v2;
  const std::vector<Activation> r3 = {Activation::relu, Activation::relu, Activation::identity};
  for (const NetCase& c : kBucketCases) {
    std::vector<Activation> acts(c.widths.size() - 1, c.hidden);
    acts.back() = Activation::identity;  // as options() builds the net
    const auto p = plan_fused_v2(c.widths, acts, 64 * 1024);
    INFO("widths " << c.widths[1]);
    CHECK(p.fits);
    CHECK(p.bucket == c.bucket);
    CHECK(p.exact == c.exact);
    CHECK(p.threads_per_sample == (c.exact ? 4 : 1));
    CHECK(p.tile == 64);  // every net that fits the 64-sample tile keeps it
  }
  const auto ref = plan_fused_v2({2, 20, 5, 1}, r3, 48 * 1024);
  CHECK(ref.net.params == 2 * 20 + 20 + 20 * 5 + 5 + 5 + 1);
  CHECK(ref.net.sparams == 20 * 4 + 20 + 5 * 20 + 8 + 1 * 8 + 4);  // rows padded to 4
  // activation rows a_0..a_3 and a row of ones, delta rows of the 3 layers, each 64 + 4
  // floats; the transposed W_1 and W_2 (20 rows of 5 → 8 floats, 5 rows of 1 → 4); plus a
  // header of the block's scalars (at most 112 bytes: 8 warps' losses)
  CHECK(ref.exact);
  CHECK(ref.threads_per_sample == 4);
  const size_t body = 4 * (220 + size_t(2 + 20 + 5 + 1 + 1 + 20 + 5 + 1) * (64 + 4) + 20 * 8 + 5 * 4);
  CHECK(ref.smem_bytes > body);
  CHECK(ref.smem_bytes <= body + 112);
  const auto ref2 = plan_fused_v2({2, 20, 5, 1}, r3, 48 * 1024, 2);  // the same layout, 2 threads per sample
  CHECK(ref2.exact);
  CHECK(ref2.threads_per_sample == 2);
  CHECK(ref2.smem_bytes == ref.smem_bytes);
  CHECK_FALSE(plan_fused_v2({2, 20, 5, 1}, r3, 48 * 1024, 3).fits);
  // the same widths with tanh: a one-thread bucket, no transposed weights
  const auto r32 = plan_fused_v2({2, 20, 5, 1}, {Activation::tanh, Activation::tanh, Activation::identity}, 48 * 1024);
  CHECK_FALSE(r32.exact);
  const size_t body32 = 4 * (220 + size_t(2 + 20 + 5 + 1 + 1 + 20 + 5 + 1) * (64 + 4));
  CHECK(r32.smem_bytes > body32);
  CHECK(r32.smem_bytes <= body32 + 112);
  const auto wide = plan_fused_v2({2, 256, 1}, {Activation::relu, Activation::identity}, 227 * 1024);
  CHECK_FALSE(wide.fits);
  CHECK_THAT(wide.why, Catch::Contains("256"));
  const auto tight = plan_fused_v2({2, 64, 64, 64, 1}, {Activation::relu, Activation::relu, Activation::relu,
                                                       Activation::identity}, 48 * 1024);
  CHECK_FALSE(tight.fits);
  CHECK_THAT(tight.why, Catch::Contains("shared memory"));
  check_small_tile_plans();
}

TEST_CASE("fused v2: every register bucket follows the CPU reference for 20 epochs, bit-identical twice",
          "[gpu][fused]") {
  for (const NetCase& c : kBucketCases) {
    INFO("bucket " << c.bucket << ", " << c.n << " samples");
    const auto o = options(c.widths, c.hidden, "fused");
    const Dataset d = gpu_random_data(c.n, c.widths.front(), c.widths.back(), 40 + c.bucket);
    const std::string details = check_against_reference_and_repeat(o, d, 20, 4, 1e-4);
    CHECK_THAT(details, Catch::Contains(c.exact ? std::string("exact shape 2-20-5-1")
                                                : "register bucket " + std::to_string(c.bucket)));
  }
}

TEST_CASE("fused v2: shuffled mini-batches (short last batch) follow the CPU reference", "[gpu][fused]") {
  for (const NetCase& c : {kBucketCases[0], kBucketCases[4]}) {  // a bucket and the exact shape
    INFO("bucket " << c.bucket);
    auto o = options(c.widths, c.hidden, "fused");
    o.batch_size = 160;  // 300 samples: batches of 160 (3 blocks, the last one partial) and 140
    o.shuffle = true;
    o.seed = 7;  // not the default 1: a GPU backend that dropped the seed would shuffle another order
    const Dataset d = gpu_random_data(300, c.widths.front(), c.widths.back(), 3);
    const std::string details = check_against_reference_and_repeat(o, d, 4, 2, 1e-4);  // 8 steps
    CHECK_THAT(details, Catch::Contains("(graph of 8 steps: 8 kernel nodes"));
  }
}

TEST_CASE("fused v2: more than one group of blocks (two-level ticket)", "[gpu][fused]") {
  // 17 blocks of 64: a group of 16 and a group of 1, then the final sum of the two groups.
  const int n = cuda::kV2Group * cuda::kV2Tile + 50;
  const Dataset d = gpu_random_data(n, 2, 1, 11);
  check_against_reference_and_repeat(options({2, 6, 1}, Activation::tanh, "fused"), d, 3, 3, 1e-4);
  // the exact shape: 256 threads per block in the group and final sums
  const std::string details = check_against_reference_and_repeat(options({2, 20, 5, 1}, Activation::relu, "fused"), d, 2, 2, 1e-4);
  CHECK_THAT(details, Catch::Contains("exact shape 2-20-5-1"));
}

// One SGD step with lr = 1 moves each weight by its gradient (up to the rounding of w - g):
// the gradient recovered from the GPU against the reference's, computed in double.
TEST_CASE("fused v2: one SGD step recovers the gradient of the double reference", "[gpu][fused]") {
  // 1 to 257 samples, 1 to 5 layers, the exact shape (relu) and buckets 8, 32 and 64.
  check_sgd_step_gradient(GpuPath::fused, {2, 20, 5, 1}, Activation::relu, 65);
  check_sgd_step_gradient(GpuPath::fused, {2, 20, 5, 1}, Activation::tanh, 1);
  check_sgd_step_gradient(GpuPath::fused, {4, 6, 3}, Activation::tanh, 257);
  check_sgd_step_gradient(GpuPath::fused, {3, 17, 2}, Activation::tanh, 129);
  check_sgd_step_gradient(GpuPath::fused, {2, 33, 16, 1}, Activation::tanh, 140);
  check_sgd_step_gradient(GpuPath::fused, {5, 12, 12, 12, 12, 2}, Activation::tanh, 64);
  // the smallest net and a 5-layer one of mixed widths (the retired v1's kernel test had them)
  check_sgd_step_gradient(GpuPath::fused, {1, 1}, Activation::identity, 1);
  check_sgd_step_gradient(GpuPath::fused, {4, 33, 64, 17, 9, 3}, Activation::leaky_relu, 129);
}

// An environment variable set for the life of the object (the backend reads NNTRAIN_FUSED_V2_THREADS
// and NNTRAIN_GPU_PDL when it plans).
struct ScopedEnv {
  const char* name;
  ScopedEnv(const char* n, const char* v) : name(n) { setenv(n, v, 1); }
  ~ScopedEnv() { unsetenv(name); }
};
struct ThreadsEnv : ScopedEnv {
  explicit ThreadsEnv(const char* v) : ScopedEnv("NNTRAIN_FUSED_V2_THREADS", v) {}
};

TEST_CASE("fused v2: the exact shape with 2 threads per sample follows the CPU reference, bad values are refused",
          "[gpu][fused]") {
  const Dataset d = gpu_random_data(150, 2, 1, 17);
  {
    const ThreadsEnv env("2");
    const std::string details =
        check_against_reference_and_repeat(options({2, 20, 5, 1}, Activation::relu, "fused"), d, 20, 4, 1e-4);
    CHECK_THAT(details, Catch::Contains("exact shape 2-20-5-1") && Catch::Contains("2 threads per sample"));
    auto o = options({2, 20, 5, 1}, Activation::relu, "fused");  // mini-batches: 2 steps per epoch
    o.batch_size = 100;
    o.shuffle = true;
    check_against_reference_and_repeat(o, d, 3, 2, 1e-4);
  }
  {
    const ThreadsEnv env("3");
    CHECK_THROWS_AS(make_gpu_backend(d, options({2, 20, 5, 1}, Activation::relu, "fused")), UsageError);
  }
  CHECK_THAT(make_gpu_backend(d, options({2, 20, 5, 1}, Activation::relu, "fused"))->details(),
             Catch::Contains("4 threads per sample"));
}

// Programmatic dependent launch (compute capability 9.0 and later): a step's blocks start
// while the previous step's tail runs, and wait for it before they read the weights. A read
// moved before that wait would race with the previous step's update: the curve would differ
// from the plain launches' (or from run to run), so both are compared bit for bit on the
// reference experiment's 40,000 samples (625 blocks, the two-level ticket) and on shuffled
// mini-batches, whose rows depend on the epoch the previous step advanced. Where the device
// has no such launch (the simulator's SM75) only the refusal of a bad value is checked.
TEST_CASE("fused v2: programmatic dependent launch gives the plain launches' bits", "[gpu][fused]") {
  int cc = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, 0));
  const Dataset small = gpu_random_data(70, 2, 1, 3);
  const BackendOptions small_options = options({2, 20, 5, 1}, Activation::relu, "fused");
  {
    const ScopedEnv env("NNTRAIN_GPU_PDL", "2");
    CHECK_THROWS_AS(make_gpu_backend(small, small_options), UsageError);
  }
  if (cc < 9) {
    CHECK_THAT(make_gpu_backend(small, small_options)->details(), !Catch::Contains("programmatic"));
    return;
  }
  const auto compare = [](const Dataset& d, BackendOptions o, int epochs) {
    const Params init = init_params(o.spec, Init::glorot_uniform, 11);
    auto on = make_gpu_backend(d, o);
    CHECK_THAT(on->details(), Catch::Contains("programmatic dependent launch"));
    const auto l_on = train_losses(*on, init, epochs);
    std::vector<float> l_off, w_off;
    {
      const ScopedEnv env("NNTRAIN_GPU_PDL", "0");
      auto off = make_gpu_backend(d, o);
      CHECK_THAT(off->details(), !Catch::Contains("programmatic"));
      l_off = train_losses(*off, init, epochs);
      w_off = off->params().values;
    }
    CHECK(same_bits(l_on, l_off));
    CHECK(same_bits(on->params().values, w_off));
  };
  auto o = options({2, 20, 5, 1}, Activation::relu, "fused");
  o.chunk_epochs = 100;
  compare(peaks_data(200), o, 300);  // full batch: 625 blocks
  o.batch_size = 1000;
  o.shuffle = true;
  compare(peaks_data(200), o, 5);  // 40 shuffled steps per epoch
  auto b = options({3, 40, 7, 2}, Activation::sigmoid, "fused");  // a register bucket
  b.chunk_epochs = 50;
  compare(gpu_random_data(5000, 3, 2, 9), b, 100);
}

TEST_CASE("fused is v2; auto is v2 between the sizes where the resident path measured faster", "[gpu][fused]") {
  const Dataset d = gpu_random_data(400, 2, 1, 5);
  auto v2 = make_gpu_backend(gpu_random_data(130, 2, 1, 5), options({2, 20, 5, 1}, Activation::relu, "fused"));
  CHECK(v2->name() == "gpu-fused");
  auto au = make_gpu_backend(d, options({2, 20, 5, 1}, Activation::relu, "auto"));
  CHECK(au->name() == "gpu-fused");
  CHECK_THAT(au->details(), Catch::Contains("auto") && Catch::Contains("one kernel per step"));
}

// --- the smaller tiles (32 and 16 samples) on the device ---

namespace {
struct SmemEnv : ScopedEnv {
  explicit SmemEnv(const char* kib) : ScopedEnv("NNTRAIN_FUSED_V2_SMEM_KIB", kib) {}
};
// Small nets made to take a small tile by a lower shared-memory limit (the 64 tile needs
// 12 KiB for 2-12-6-1 and 13 KiB for 2-17-5-1): cheap enough for the simulator.
struct TileCase {
  std::vector<int> widths;
  const char* kib;
  int tile;
};
const TileCase kTileCases[] = {{{2, 12, 6, 1}, "8", 32}, {{2, 17, 5, 1}, "5", 16}};
}  // namespace

TEST_CASE("fused v2: the 32- and 16-sample tiles follow the CPU reference (Adam, SGD, ragged mini-batches)",
          "[gpu][fused]") {
  for (const TileCase& c : kTileCases) {
    INFO("tile " << c.tile);
    const SmemEnv env(c.kib);
    const std::string tile = "register bucket 64, " +
                             std::to_string(c.widths.size() - 1) + " layers; tile of " + std::to_string(c.tile) +
                             " samples";
    // full batch, Adam: 3 blocks, the last one partial (12 epochs: the simulator's time)
    const Dataset d = gpu_random_data(2 * c.tile + 7, 2, 1, 90 + uint64_t(c.tile));
    CHECK_THAT(check_against_reference_and_repeat(options(c.widths, Activation::tanh, "fused"), d, 12, 3, 1e-4),
               Catch::Contains(tile));
    // shuffled mini-batches of 1.5 tiles (the last one shorter), SGD
    auto o = options(c.widths, Activation::tanh, "fused");
    o.optimizer.type = "sgd";
    o.optimizer.lr = 0.05;
    o.batch_size = c.tile + c.tile / 2;
    o.shuffle = true;
    o.seed = 5;
    check_against_reference_and_repeat(o, gpu_random_data(4 * c.tile + 3, 2, 1, 91), 2, 1, 1e-4);  // 6 steps
    // one SGD step: the gradient of the double reference
    check_sgd_step_gradient(GpuPath::fused, c.widths, Activation::tanh, c.tile + 5);
  }
  {  // the 16 tile with more than kV2Group blocks (the two-level ticket)
    const SmemEnv env("5");
    const Dataset d = gpu_random_data(cuda::kV2Group * 16 + 9, 2, 1, 92);
    check_against_reference_and_repeat(options({2, 17, 5, 1}, Activation::tanh, "fused"), d, 2, 2, 1e-4);
  }
  {
    const SmemEnv env("4");  // the 16 tile needs 5 KiB: no tile fits, and `fused` says so
    CHECK_THROWS_WITH(make_gpu_backend(gpu_random_data(40, 2, 1, 1), options({2, 17, 5, 1}, Activation::tanh, "fused")),
                      Catch::Contains("16-sample tile"));
  }
  {
    const SmemEnv env("12x");
    CHECK_THROWS_AS(make_gpu_backend(gpu_random_data(40, 2, 1, 1), options({2, 12, 6, 1}, Activation::tanh, "fused")),
                    UsageError);
  }
}

// cuBLAS, so not on the simulator (it has no cuBLAS): the [gpu] run on a real GPU checks it.
TEST_CASE("auto takes cuBLAS where v2 would run a small tile (on an H200, 4.8-22x faster there)",
          "[gpu][fused][cublas]") {
  const SmemEnv env("8");  // 300 samples: past the batches the resident path takes
  auto au = make_gpu_backend(gpu_random_data(300, 2, 1, 1), options({2, 12, 6, 1}, Activation::tanh, "auto"));
  CHECK(au->name() == "gpu-cublas");
  CHECK_THAT(au->details(), Catch::Contains("auto, the fused kernel's small tile is slower than cuBLAS") &&
                                Catch::Contains("tile of 32 samples"));
}

// A test-only knob is read where the path it changes is planned: a bad value fails that path
// (UsageError: exit 2 from the CLI) and no other.
TEST_CASE("fused v2 and resident: a bad test knob of one path does not fail the other", "[gpu][fused][resident]") {
  const Dataset d = gpu_random_data(40, 2, 1, 1);
  {
    const ScopedEnv env("NNTRAIN_RESIDENT_GRID_BLOCKS", "abc");
    CHECK(make_gpu_backend(d, options({2, 20, 5, 1}, Activation::relu, "fused"))->name() == "gpu-fused");
    // auto plans the resident path without the knobs (40 samples: it takes it)
    CHECK(make_gpu_backend(d, options({2, 20, 5, 1}, Activation::relu, "auto"))->name() == "gpu-resident");
    CHECK_THROWS_AS(make_gpu_backend(d, options({2, 20, 5, 1}, Activation::relu, "resident")), UsageError);
  }
  {
    const SmemEnv env("12x");
    CHECK(make_gpu_backend(d, options({2, 20, 5, 1}, Activation::relu, "resident"))->name() == "gpu-resident");
    CHECK_THROWS_AS(make_gpu_backend(d, options({2, 20, 5, 1}, Activation::relu, "fused")), UsageError);
  }
}
