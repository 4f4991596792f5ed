// test_seeds.cpp — the seed reaches everything it should: the initial weights and the
// mini-batch shuffles, in-process and through the command line (--seed, the config's
// "seed"), and it is recorded in config.resolved.json. The same seed gives the same bits.
#include <catch2/catch.hpp>

#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "backend.hpp"
#include "cli_util.hpp"
#include "cpu_fast.hpp"
#include "cpu_reference.hpp"
#include "dataset.hpp"
#include "mlp.hpp"

using namespace nntrain;
using namespace testutil;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::vector<uint32_t> permutation(uint32_t n, uint64_t seed, uint64_t epoch) {
  const ShuffleKey k = make_shuffle_key(n, seed, epoch);
  std::vector<uint32_t> p(n);
  for (uint32_t i = 0; i < n; ++i) p[i] = shuffle_index(k, i);
  return p;
}

size_t same_positions(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  size_t same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  return same;
}

}  // namespace

TEST_CASE("keyed shuffle: another seed gives another order, the same seed the same", "[seed][shuffle]") {
  for (uint32_t n : {1000u, 40000u}) {
    for (uint64_t epoch : {0u, 7u}) {
      const auto a = permutation(n, 1, epoch), again = permutation(n, 1, epoch);
      CHECK(a == again);
      for (uint64_t other : {2u, 3u, 1000003u}) {
        INFO("n " << n << ", epoch " << epoch << ", seed 1 against " << other);
        // Two independent permutations share ~1 position on average.
        CHECK(same_positions(a, permutation(n, other, epoch)) < 20);
      }
    }
  }
}

TEST_CASE("backends: the seed changes the mini-batches, the same seed repeats them", "[seed]") {
  // Same initial weights, shuffled mini-batches of 40: only the shuffle depends on the seed.
  const Dataset data = make_peaks(20, 10, -3, 3);
  ModelSpec spec;
  spec.widths = {2, 8, 1};
  spec.hidden = Activation::tanh;
  const Params init = init_params(spec, Init::glorot_uniform, 9);
  auto losses = [&](bool fast, uint64_t seed) {
    BackendOptions o;
    o.spec = spec;
    o.optimizer.lr = 0.01;
    o.batch_size = 40;
    o.shuffle = true;
    o.seed = seed;
    o.threads = 1;
    auto b = fast ? make_cpu_fast_backend(data, o) : make_cpu_reference_backend(data, o);
    b->load(init);
    std::vector<float> l(4);
    b->train(4, l.data());
    return l;
  };
  for (bool fast : {false, true}) {
    INFO((fast ? "fast" : "reference") << " backend");
    const auto a = losses(fast, 1), again = losses(fast, 1), other = losses(fast, 2);
    CHECK(std::memcmp(a.data(), again.data(), a.size() * sizeof(float)) == 0);
    // The first epoch's loss is the mean over batches taken along the way: another order of
    // the batches changes it in the last bits at least, and the later epochs by more.
    for (size_t e = 0; e < a.size(); ++e) CHECK(a[e] != other[e]);
  }
}

TEST_CASE("CLI: --seed and the config's seed set the weights and the shuffle, and are recorded",
          "[seed][cli]") {
  const std::string dir = fresh_dir("seeds");
  const std::string common = " --config configs/peaks.json --quiet data.grid=10 model.layers=[2,6,1]";
  auto file = [&](const std::string& run, const char* name) { return slurp(dir + "/" + run + "/" + name); };
  auto run = [&](const std::string& name, const std::string& args) {
    const auto r = run_nntrain(args + common + " --out " + dir + "/" + name);
    INFO(args << "\n" << r.err);
    REQUIRE(r.exit_code == 0);
  };
  // Initial weights: 0 epochs saves them as they were drawn.
  run("w5", "--epochs 0 --seed 5");
  run("w5b", "--epochs 0 --seed 5");
  run("w6", "--epochs 0 --seed 6");
  run("w6_key", "--epochs 0 seed=6");
  CHECK(file("w5", "model.json") == file("w5b", "model.json"));
  CHECK(file("w5", "model.json") != file("w6", "model.json"));
  CHECK(file("w6", "model.json") == file("w6_key", "model.json"));
  CHECK(json::parse(file("w5", "config.resolved.json"))["seed"] == 5);
  CHECK(json::parse(file("w6_key", "config.resolved.json"))["seed"] == 6);

  // Shuffle: the same initial weights (--init-model), mini-batches of 30 with shuffle.
  const std::string init = " --init-model " + dir + "/w5/model.json --epochs 3 --batch-size 30 train.shuffle=true";
  run("s1", "--seed 11" + init);
  run("s1b", "--seed 11" + init);
  run("s2", "--seed 12" + init);
  CHECK(file("s1", "metrics.csv") == file("s1b", "metrics.csv"));
  CHECK(file("s1", "metrics.csv") != file("s2", "metrics.csv"));
  CHECK(file("s1", "model.json") != file("s2", "model.json"));
  CHECK(json::parse(file("s2", "config.resolved.json"))["seed"] == 12);
  fs::remove_all(dir);
}
