// test_worth.cpp — "is the GPU worth it?", the arithmetic: time to a target loss (measured on
// the CPU reference, through a backend whose clock is fake so every time is known by hand),
// prices, costs and the verdict wording (hand arithmetic). The report code driven by a fake
// two-device bench, and the command line, are test_worth_report.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "bench_report.hpp"
#include "bench_stats.hpp"
#include "bench_worth.hpp"
#include "cli_util.hpp"
#include "cpu_reference.hpp"
#include "errors.hpp"
#include "run_json.hpp"
#include "trainer.hpp"

using namespace testutil;
using namespace nntrain;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The reference backend with a fake clock: a chunk of n epochs "takes" n ms + 0.5 ms, so the
// time at every chunk boundary is known by hand, and a reading at a boundary (measured) is
// told apart from a linear interpolation inside a chunk (which cannot see the 0.5 ms). It
// records the chunk sizes the trainer asks for.
std::vector<int> g_chunks;
constexpr double kPerEpoch = 1e-3, kPerChunk = 5e-4;

class FakeClockBackend : public Backend {
 public:
  explicit FakeClockBackend(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
  Device device() const override { return inner_->device(); }
  std::string name() const override { return "fake-clock"; }
  std::string details() const override { return "reference backend, fake clock"; }
  void load(const Params& p) override { inner_->load(p); }
  Params params() override { return inner_->params(); }
  SetupReport setup() const override { return inner_->setup(); }
  double train(int epochs, float* losses) override {
    inner_->train(epochs, losses);
    g_chunks.push_back(epochs);
    return epochs * kPerEpoch + kPerChunk;
  }

 private:
  std::unique_ptr<Backend> inner_;
};

std::unique_ptr<Backend> make_fake_clock(const Dataset& data, const BackendOptions& opt) {
  return std::make_unique<FakeClockBackend>(make_cpu_reference_backend(data, opt));
}

Config small_config(int epochs, int log_every, int repeats, double target) {
  Config c;
  c.data.grid_x1 = c.data.grid_x2 = 10;
  c.train.epochs = epochs;
  c.train.log_every = log_every;
  c.timing.warmup_epochs = 0;
  c.timing.repeats = repeats;
  c.cpu.backend = CpuBackendKind::reference;
  if (target > 0) c.train.target_loss = target;
  return c;
}

// The reference curve, straight from the reference backend in one call (no trainer).
std::vector<float> reference_curve(const Config& c, const Dataset& data, const Params& init) {
  auto b = make_cpu_reference_backend(data, backend_options(c, Device::cpu));
  b->load(init);
  std::vector<float> curve(size_t(c.train.epochs));
  b->train(c.train.epochs, curve.data());
  return curve;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("time to target on the CPU reference: the crossing epoch of the reference curve, its time measured or "
          "interpolated as labelled", "[worth][target]") {
  const int epochs = 300, chunk = 100;
  const Config probe = small_config(epochs, chunk, 1, 0);
  const Dataset data = make_peaks(10, 10, -3, 3);
  const Params init = init_params(probe.model_spec(), probe.model.init, probe.seed);
  const std::vector<float> curve = reference_curve(probe, data, init);
  // A target the curve crosses inside a chunk (not on a boundary): the loss at epoch 222,
  // and the first epoch at or below it found by hand from the curve.
  const double target = curve[221];
  int crossing = 0;
  for (int e = 1; e <= epochs && !crossing; ++e)
    if (curve[size_t(e - 1)] <= target) crossing = e;
  REQUIRE(crossing > 0);
  REQUIRE(crossing % chunk != 0);
  const int from = (crossing - 1) / chunk * chunk, to = std::min(from + chunk, epochs);
  const int chunks_before = from / chunk;
  const BackendRegistry registry = {{Device::cpu, "reference", make_fake_clock}};

  SECTION("one repeat: interpolated within the crossing chunk, and said so") {
    g_chunks.clear();
    const RunResult r = run_training(registry, small_config(epochs, chunk, 1, target), data, init, Device::cpu);
    CHECK(g_chunks == std::vector<int>{100, 100, 100});
    CHECK(same_bits(r.losses, curve));
    REQUIRE(r.target);
    const TargetResult& t = *r.target;
    CHECK(t.reached);
    CHECK(t.epoch == crossing);
    CHECK_FALSE(t.measured);
    CHECK(t.readings.empty());
    CHECK(t.bracket_from == from);
    CHECK(t.bracket_to == to);
    const double t_from = from * kPerEpoch + chunks_before * kPerChunk;
    const double t_to = to * kPerEpoch + (chunks_before + 1) * kPerChunk;
    CHECK(t.bracket_from_seconds == Approx(t_from));
    CHECK(t.bracket_to_seconds == Approx(t_to));
    CHECK(t.seconds == Approx(t_from + double(crossing - from) / (to - from) * (t_to - t_from)));
    const json j = run_result_json(r)["target"];
    CHECK(j["seconds_kind"] == "interpolated");
    CHECK(j["epoch"] == crossing);
    CHECK(j["loss"].get<double>() == target);
  }
  SECTION("three repeats: later repeats end a chunk at the crossing epoch, so the time is a clock reading") {
    g_chunks.clear();
    const RunResult r = run_training(registry, small_config(epochs, chunk, 3, target), data, init, Device::cpu);
    std::vector<int> split;
    for (int done = 0; done < epochs;) {
      int n = std::min(chunk, epochs - done);
      if (crossing > done && crossing < done + n) n = crossing - done;
      split.push_back(n);
      done += n;
    }
    std::vector<int> expected{100, 100, 100};
    for (int rep = 1; rep < 3; ++rep) expected.insert(expected.end(), split.begin(), split.end());
    CHECK(g_chunks == expected);
    CHECK(same_bits(r.losses, curve));  // ending a chunk early changes nothing but the clock reads
    CHECK_FALSE(r.nondeterministic);
    REQUIRE(r.target);
    const TargetResult& t = *r.target;
    CHECK(t.epoch == crossing);
    CHECK(t.measured);
    REQUIRE(t.readings.size() == 2);
    const double reading = crossing * kPerEpoch + (chunks_before + 1) * kPerChunk;
    CHECK(t.readings[0] == Approx(reading));
    CHECK(t.seconds == Approx(reading));
    // The whole run's time is still every epoch's: one more chunk in the split repeats.
    CHECK(r.train_seconds_per_repeat[0] == Approx(epochs * kPerEpoch + 3 * kPerChunk));
    CHECK(r.train_seconds_per_repeat[1] == Approx(epochs * kPerEpoch + 4 * kPerChunk));
    CHECK(run_result_json(r)["target"]["seconds_kind"] == "measured");
  }
  SECTION("one repeat whose chunk ends at the crossing epoch anyway: measured") {
    g_chunks.clear();
    const RunResult r = run_training(registry, small_config(epochs, crossing, 1, target), data, init, Device::cpu);
    REQUIRE(r.target);
    CHECK(r.target->measured);
    CHECK(r.target->seconds == Approx(crossing * kPerEpoch + kPerChunk));
  }
}

TEST_CASE("a run that never reaches the target says so and still finishes", "[worth][target]") {
  const Config c = small_config(50, 10, 2, 1e-12);
  const Dataset data = make_peaks(10, 10, -3, 3);
  const Params init = init_params(c.model_spec(), c.model.init, c.seed);
  g_chunks.clear();
  const RunResult r = run_training({{Device::cpu, "reference", make_fake_clock}}, c, data, init, Device::cpu);
  CHECK(r.status() == "ok");
  CHECK(r.epochs_done == 50);
  CHECK(g_chunks.size() == 10);  // no split: there is no crossing epoch
  REQUIRE(r.target);
  CHECK_FALSE(r.target->reached);
  CHECK(r.target->epoch == 0);
  const json j = run_result_json(r)["target"];
  CHECK(j == json{{"loss", 1e-12}, {"reached", false}, {"epoch", nullptr}, {"seconds", nullptr}});
  // No target set: no target object at all.
  const RunResult plain = run_training({{Device::cpu, "reference", make_fake_clock}}, small_config(5, 5, 1, 0), data,
                                       init, Device::cpu);
  CHECK_FALSE(plain.target);
  CHECK_FALSE(run_result_json(plain).contains("target"));
}

TEST_CASE("a run that diverges inside a chunk: its rates divide the time by the epochs the time covers",
          "[worth][faults]") {
  // SGD at lr 1e5 blows up within a few epochs; the backend is asked for chunks of 100
  // epochs, so the diverging chunk's later epochs run too (on NaN) and are inside its time.
  Config c = small_config(300, 100, 1, 0);
  c.optimizer.type = "sgd";
  c.optimizer.lr = 1e5;
  const Dataset data = make_peaks(10, 10, -3, 3);
  const Params init = init_params(c.model_spec(), c.model.init, c.seed);
  g_chunks.clear();
  const RunResult r = run_training({{Device::cpu, "reference", make_fake_clock}}, c, data, init, Device::cpu);
  REQUIRE(r.status() == "diverged");
  CHECK(g_chunks == std::vector<int>{100});
  REQUIRE(r.diverged_epoch > 1);
  REQUIRE(r.diverged_epoch < 100);
  CHECK(r.epochs_done == r.diverged_epoch);
  // The fake clock: one chunk of 100 epochs is 100 ms + 0.5 ms, by hand.
  const double seconds = 100 * kPerEpoch + kPerChunk;
  CHECK(r.train_seconds == Approx(seconds));
  const json j = run_result_json(r);
  CHECK(j["seconds_per_epoch"].get<double>() == Approx(seconds / 100));
  CHECK(j["samples_per_second"].get<double>() == Approx(100.0 * 100 / seconds));
  CHECK(j["epochs"] == r.diverged_epoch);
}
TEST_CASE("first_epoch_at_or_below: first crossing, NaN never counts", "[worth][target]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(first_epoch_at_or_below({3, 2, 1, 0.5f, 2}, 1.0) == 3);
  CHECK(first_epoch_at_or_below({3, 2}, 1.0) == 0);
  CHECK(first_epoch_at_or_below({nan, 0.5f}, 1.0) == 2);
  CHECK(first_epoch_at_or_below({}, 1.0) == 0);
}

TEST_CASE("prices parse, and bad ones are refused naming the value", "[worth][price]") {
  const Prices p = parse_prices("cpu=0.2, gpu=1.1");
  CHECK(p.cpu == 0.2);
  CHECK(p.gpu == 1.1);
  CHECK(parse_prices("gpu=3").cpu < 0);
  CHECK(parse_prices("gpu=3").has(Device::gpu));
  CHECK_FALSE(parse_prices("gpu=3").has(Device::cpu));
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"cpu", "\"cpu\" is not device=price"}, {"cpu=abc", "\"abc\" is not a number"},
      {"cpu=-1", "-1 is not a finite number > 0"}, {"cpu=0", "0 is not a finite number > 0"},
      {"cpu=inf", "inf is not a finite number"}, {"cpu=nan", "nan is not a finite number"},
      {"tpu=1", "unknown device \"tpu\""}, {"cpu=1,cpu=2", "cpu is priced twice"},
      {"cpu=1,", "\"\" is not device=price"}, {"", "expected device=price"},
      {"cpu=1x", "\"1x\" is not a number"}, {"cpu=0x10", "\"0x10\" is not a number"}};
  for (const auto& [arg, msg] : bad) {
    INFO(arg);
    try {
      parse_prices(arg);
      FAIL("accepted");
    } catch (const UsageError& e) {
      CHECK_THAT(e.what(), Catch::StartsWith("--price \"" + arg + "\"") && Catch::Contains(msg));
    }
  }
  CHECK_NOTHROW(check_currency("EUR"));
  CHECK_THROWS_AS(check_currency(""), UsageError);
  CHECK_THROWS_AS(check_currency("a|b"), UsageError);
  CHECK_NOTHROW(check_currency("$ (US)"));
  CHECK_NOTHROW(check_currency("\u20ac"));  // a multi-byte sign
  for (const char* md : {"<!--", "`x`", "*x*", "_x_", "[x]", "a&b", "~x", "a\\b"}) {
    INFO(md);
    CHECK_THROWS_AS(check_currency(md), UsageError);  // Markdown would read it, not show it
  }
  CHECK_THROWS_AS(check_currency(std::string(17, 'x')), UsageError);
}

TEST_CASE("costs are shown per 1,000 runs in engineering notation, by hand", "[worth][price]") {
  // Three significant digits, plain between 0.01 and 1e6, else the exponent a multiple of 3.
  CHECK(engineering_text(7.28e-5) == "72.8e-6");
  CHECK(engineering_text(7.28e-8) == "72.8e-9");
  CHECK(engineering_text(0.00528) == "5.28e-3");
  CHECK(engineering_text(0.0728) == "0.0728");
  CHECK(engineering_text(7.28) == "7.28");
  CHECK(engineering_text(72.84) == "72.8");
  CHECK(engineering_text(728.4) == "728");
  CHECK(engineering_text(7284.2) == "7284");
  CHECK(engineering_text(1.25e9) == "1.25e9");
  CHECK(engineering_text(999.7e-6) == "1.00e-3");  // rounding carries into the next power of 1000
  // Trailing zeros kept (three significant digits), and the form of the rounded value.
  CHECK(engineering_text(0.026) == "0.0260");
  CHECK(engineering_text(0.0011) == "1.10e-3");
  CHECK(engineering_text(0.0099996) == "0.0100");
  CHECK(engineering_text(99.96) == "100");
  CHECK(engineering_text(999999.0) == "999999");
  CHECK(engineering_text(999999.7) == "1.00e6");
  CHECK(engineering_text(1e-3) == "1.00e-3");
  CHECK(engineering_text(1e6) == "1.00e6");
  CHECK(engineering_text(999e-6) == "999e-6");
  CHECK(engineering_text(1.25e11) == "125e9");
  // Factors: two decimals below 1.095, one below 100, none from 100 (as printed).
  CHECK(ratio_text(1.094) == "1.09");
  CHECK(ratio_text(9.96) == "10.0");
  CHECK(ratio_text(99.94) == "99.9");
  CHECK(ratio_text(99.96) == "100");
  CHECK(ratio_text(215.4) == "215");
  CHECK(engineering_text(0) == "0");
  CHECK(engineering_text(-1) == "-");
  CHECK(engineering_text(INFINITY) == "-");
  // The example: a run of 26.2 ms at 1.1 EUR an hour costs 1.1 * 0.0262 / 3600 =
  // 8.0056e-6 EUR, 8.01e-3 EUR per 1,000 runs; at 0.01 an hour, 7.28e-8 a run is 72.8e-6 per 1,000.
  Prices eur = parse_prices("cpu=1.1");
  eur.currency = "EUR";
  CHECK(money_text(cost_of(1.1, 0.0262), eur) == "8.01e-3 EUR per 1,000 runs");
  CHECK(money_text(7.28e-8, parse_prices("cpu=0.01")) == "72.8e-6 price units per 1,000 runs");
  CHECK(money_text(cost_of(3, 36), eur) == "30.0 EUR per 1,000 runs");  // 3 * 36 / 3600 = 0.03 a run
  CHECK(money_text(-1, eur) == "-");
}

TEST_CASE("cost arithmetic and the verdict wording, by hand", "[worth][price]") {
  // 36 s at 1.1 per hour: 1.1 * 36 / 3600 = 0.011.
  CHECK(cost_of(1.1, 36) == Approx(0.011));
  CHECK(cost_of(3, 3600) == Approx(3));
  const Prices p = parse_prices("cpu=1,gpu=3");  // the GPU costs 3x the CPU per hour
  // Faster and cheaper: 14.2x the speed at 3x the price is 14.2 / 3 = 4.73x cheaper.
  CHECK(verdict_text(14.2, 1.0, &p, "per run") == "gpu 14.2\u00d7 faster, 4.7\u00d7 cheaper per run at these prices");
  // Faster but dearer: 1.8x the speed at 3x the price: the CPU is 3 / 1.8 = 1.67x cheaper.
  CHECK(verdict_text(1.8, 1.0, &p, "per run") == "gpu 1.8\u00d7 faster, but cpu 1.7\u00d7 cheaper per run at these prices");
  // Slower (and so dearer): the CPU is 3.1x faster and 3.1 * 3 = 9.3x cheaper.
  CHECK(verdict_text(1.0, 3.1, &p, "per run") == "cpu 3.1\u00d7 faster, 9.3\u00d7 cheaper per run at these prices");
  // The CPU faster but dearer when its hour costs more.
  const Prices dear_cpu = parse_prices("cpu=10,gpu=1");
  CHECK(verdict_text(1.0, 2.0, &dear_cpu, "to loss 0.05") ==
        "cpu 2.0\u00d7 faster, but gpu 5.0\u00d7 cheaper to loss 0.05 at these prices");
  // Ties, a near tie, no prices.
  CHECK(verdict_text(3.0, 1.0, &p, "per run") == "gpu 3.0\u00d7 faster, the same cost per run at these prices");
  CHECK(verdict_text(2.0, 2.0, &p, "per run") == "cpu and gpu equally fast; cpu 3.0\u00d7 cheaper per run at these prices");
  CHECK(verdict_text(1.04, 1.0, nullptr, "per run") == "gpu 1.04\u00d7 faster per run");
  CHECK(verdict_text(250, 1.0, nullptr, "per run") == "gpu 250\u00d7 faster per run");
  const Prices only_gpu = parse_prices("gpu=3");
  CHECK(verdict_text(14.2, 1.0, &only_gpu, "per run") == "gpu 14.2\u00d7 faster per run");
}
