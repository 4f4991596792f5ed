// test_backends_run.cpp — state that must be reset when a backend is loaded again (issue 46,
// class 1). `run_training` (the path of `nntrain train` and `bench`) trains warm-up epochs,
// re-loads the initial weights, and re-loads them again before every repeat. A backend that
// keeps a counter across load() — the shuffle's epoch, Adam's step and moments — then gives
// a curve other than a fresh backend's: the audit's planted bug shifted the first losses
// from 3.79/2.86/2.58 to 3.47/3.07/2.69 and no test looked.
//
// Every CPU backend (reference; fast on every instruction set this CPU runs, 1 and 2 threads),
// with warm-up, three repeats, shuffled mini-batches whose last batch is short, chunks whose
// last one is short, Adam and SGD, is compared with the independent thing: the same backend
// made fresh and trained once, straight through (bit for bit: the same code on the same
// data), and the reference backend's fresh run (within the fast kernels' fp32 tolerance).
// The last case does the same across processes: `nntrain train` with warm-up and repeats
// against a run without either, each a process of its own.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backend_registry.hpp"
#include "cli_util.hpp"
#include "commands.hpp"
#include "config.hpp"
#include "cpu_fast.hpp"
#include "trainer.hpp"

using namespace nntrain;

namespace {

// The registry's own entries, the fast one made with the instruction set the case asks for
// (NNTRAIN_FAST_ISA is read once per process, so a test cannot switch it).
std::string g_isa = "auto";
std::unique_ptr<Backend> make_fast_isa(const Dataset& data, const BackendOptions& opt) {
  FastCpuTuning t;
  t.isa = g_isa;
  return make_cpu_fast_backend(data, opt, t);
}
BackendRegistry registry_with_isa() {
  BackendRegistry r = backend_registry();
  for (BackendEntry& e : r)
    if (e.device == Device::cpu && std::string(e.name) == "fast") e.make = make_fast_isa;
  return r;
}

// 13 x 11 = 143 samples in batches of 40: 40, 40, 40, 23, shuffled every epoch. 12 epochs
// logged every 5: chunks of 5, 5, 2. Three warm-up epochs (not a multiple of anything above)
// and three repeats.
constexpr int kEpochs = 12;
std::vector<std::string> overrides(const std::string& backend, int threads, const std::string& optimizer) {
  return {"data.grid=[13,11]",     "train.batch_size=40",    "train.shuffle=true", "train.epochs=12",
          "train.log_every=5",     "timing.warmup_epochs=3", "timing.repeats=3",   "cpu.backend=" + backend,
          "cpu.threads=" + std::to_string(threads), "optimizer.type=" + optimizer,
          optimizer == "sgd" ? "optimizer.lr=0.05" : "optimizer.lr=0.02"};
}

struct Curve {
  std::vector<float> losses;
  Params params;
};

// The independent run: a backend made fresh, loaded once, trained once straight through.
Curve fresh_run(const BackendRegistry& reg, const Config& cfg, const Dataset& data, const Params& init) {
  auto b = make_backend(reg, Device::cpu, cfg.cpu.backend, data, backend_options(cfg, Device::cpu));
  b->load(init);
  Curve c;
  c.losses.resize(size_t(cfg.train.epochs));
  b->train(cfg.train.epochs, c.losses.data());
  c.params = b->params();
  return c;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::string curve_text(const std::vector<float>& v) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < 4; ++i) s += (i ? " " : "") + std::to_string(v[i]);
  return s + (v.size() > 4 ? " ..." : "");
}

}  // namespace

TEST_CASE("every CPU backend through run_training (warm-up, repeats, shuffled ragged batches) gives a fresh "
          "backend's curve",
          "[backends_run]") {
  const BackendRegistry reg = registry_with_isa();
  const std::string peaks = NNTRAIN_SOURCE_DIR "/configs/peaks.json";
  for (const std::string optimizer : {"adam", "sgd"}) {
    // The reference backend's fresh run, once per optimiser: the yardstick for the fast one.
    const Config ref_cfg = load_config(peaks, overrides("reference", 1, optimizer));
    const Prepared prep = prepare_run(ref_cfg, "");
    REQUIRE(prep.data.n == 143);
    const Curve ref = fresh_run(reg, ref_cfg, prep.data, prep.init);

    struct Variant {
      std::string backend, isa;
      int threads;
    };
    std::vector<Variant> variants = {{"reference", "-", 1}};
    for (const std::string& isa : fast_cpu_isas())
      for (int threads : {1, 2}) variants.push_back({"fast", isa, threads});
    for (const Variant& v : variants) {
      INFO(optimizer << ", " << v.backend << " backend, isa " << v.isa << ", " << v.threads << " thread(s)");
      g_isa = v.isa == "-" ? "auto" : v.isa;
      const Config cfg = load_config(peaks, overrides(v.backend, v.threads, optimizer));
      const RunResult r = run_training(reg, cfg, prep.data, prep.init, Device::cpu);
      const Curve fresh = fresh_run(reg, cfg, prep.data, prep.init);
      REQUIRE(r.status() == "ok");
      REQUIRE(r.epochs_done == kEpochs);
      CHECK(r.warmup_epochs == 3);
      CHECK(r.train_seconds_per_repeat.size() == 3);
      // The first repeat (after the warm-up and a re-load) is the fresh backend's run, bit for
      // bit, and so are the later ones (after a re-load each; the trainer compares them with
      // the first).
      INFO("run_training " << curve_text(r.losses) << "; fresh backend " << curve_text(fresh.losses));
      CHECK(same_bits(r.losses, fresh.losses));
      CHECK(same_bits(r.final_params.values, fresh.params.values));
      CHECK_FALSE(r.nondeterministic);
      // And the reference backend's curve, within the fp32 tolerance of the fast kernels
      // (test_fast_cpu.cpp: ~1e-6 per step; 48 steps here).
      for (int e = 0; e < kEpochs; ++e) {
        INFO("epoch " << e + 1);
        CHECK(r.losses[size_t(e)] == Approx(ref.losses[size_t(e)]).epsilon(2e-4));
      }
      double worst = 0;
      for (size_t k = 0; k < ref.params.values.size(); ++k)
        worst = std::max(worst, std::fabs(double(r.final_params.values[k]) - double(ref.params.values[k])));
      CHECK(worst <= 1e-4);
      CHECK(r.final_params.values != prep.init.values);  // it trained
    }
  }
  g_isa = "auto";
}

TEST_CASE("nntrain train with warm-up and repeats writes the curve of a process that trains once",
          "[backends_run][cli]") {
  using namespace testutil;
  const std::string dir = fresh_dir("backends_run");
  const std::string common = "--config configs/peaks.json --quiet train.epochs=12 train.log_every=5 "
                              "train.batch_size=40 data.grid=[13,11] optimizer.lr=0.02 ";
  std::vector<std::pair<std::string, std::string>> cases = {{"cpu.backend=reference", ""}};
  for (const std::string& isa : fast_cpu_isas())
    for (const char* threads : {"1", "2"})
      cases.push_back({std::string("cpu.backend=fast cpu.threads=") + threads, "NNTRAIN_FAST_ISA=" + isa});
  for (const auto& [settings, env] : cases) {
    INFO(env << " " << settings);
    const auto once = run_nntrain(common + settings + " timing.warmup_epochs=0 timing.repeats=1 --out " + dir + "/a",
                                  env);
    const auto again = run_nntrain(common + settings + " timing.warmup_epochs=3 timing.repeats=3 --out " + dir + "/b",
                                   env);
    INFO(once.err << again.err);
    REQUIRE(once.exit_code == 0);
    REQUIRE(again.exit_code == 0);
    const std::string a = slurp(dir + "/a/metrics.csv"), b = slurp(dir + "/b/metrics.csv");
    REQUIRE(a.size() > 12 * 8);
    CHECK(a == b);  // {:.9g}: every float's bits
    std::filesystem::remove_all(dir);
  }
}
