// test_bench.cpp — `nntrain bench`: statistics, the --sweep syntax, the crossover finder,
// and the command end to end (export fields, one point per sweep value, exit codes).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>
#include <nlohmann/json.hpp>

#include "sysinfo.hpp"
#include "bench_stats.hpp"
#include "cli_util.hpp"
#include "errors.hpp"
#include "proc_util.hpp"

using namespace testutil;
using namespace nntrain;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("bench statistics of known samples", "[bench]") {
  // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sum of squared deviations 32, sample variance 32/7.
  const SampleStats s = summarize({9, 2, 4, 5, 4, 7, 4, 5});
  CHECK(s.n == 8);
  CHECK(s.median == Approx(4.5));
  CHECK(s.min == 2);
  CHECK(s.max == 9);
  CHECK(s.mean == Approx(5));
  CHECK(s.stddev == Approx(std::sqrt(32.0 / 7.0)));
  const SampleStats odd = summarize({3.0, 1.0, 2.0});
  CHECK(odd.median == 2.0);
  CHECK(odd.stddev == Approx(1.0));
  const SampleStats one = summarize({0.25});
  CHECK(one.median == 0.25);
  CHECK(one.mean == 0.25);
  CHECK(one.stddev == 0.0);
  CHECK_THROWS_AS(summarize({}), std::invalid_argument);
}

TEST_CASE("sweep values split at top-level commas only", "[bench]") {
  const SweepSpec s = parse_sweep("model.layers=[2,20,1],[2,64,64,1], [2,5,1]");
  CHECK(s.key == "model.layers");
  REQUIRE(s.texts.size() == 3);
  CHECK(s.texts[0] == "[2,20,1]");
  CHECK(s.values[1] == json::array({2, 64, 64, 1}));
  CHECK(s.values[2] == json::array({2, 5, 1}));
  CHECK(s.override_for(1) == "model.layers=[2,64,64,1]");

  const SweepSpec g = parse_sweep("data.grid=20,50,[10,40]");
  REQUIRE(g.values.size() == 3);
  CHECK(g.values[0] == 20);
  CHECK(g.values[2] == json::array({10, 40}));

  const SweepSpec w = parse_sweep("model.activation=relu,tanh,\"a,b\"");
  REQUIRE(w.values.size() == 3);
  CHECK(w.values[1] == "tanh");  // a bare word is a string
  CHECK(w.values[2] == "a,b");   // a comma inside a JSON string is not a separator

  CHECK_THROWS_AS(parse_sweep("data.grid"), UsageError);
  CHECK_THROWS_AS(parse_sweep("=1,2"), UsageError);
  CHECK_THROWS_AS(parse_sweep("data.grid=10,,20"), UsageError);
  CHECK_THROWS_AS(parse_sweep("model.layers=[2,20,1"), UsageError);
  CHECK_THROWS_AS(parse_sweep("model.layers=[2,20,1]]"), UsageError);
  CHECK_THROWS_AS(parse_sweep("name=\"open"), UsageError);
}

TEST_CASE("crossover finder on synthetic timings", "[bench]") {
  SECTION("GPU overtakes the CPU between two sizes") {
    // Ratio cpu/gpu: 0.5 at 100, 2 at 10000 -> log ratio crosses 0 halfway in log size: 1000.
    const std::vector<PointTimes> t = {{10, 1e-3, 4e-3}, {100, 1e-2, 2e-2}, {10000, 1.0, 0.5}, {1e6, 100, 1}};
    const Crossover c = find_crossover(t);
    CHECK(c.evaluated);
    CHECK(c.first_faster == 2);
    CHECK(c.faster_from == 2);
    CHECK(c.slower_before == 1);
    CHECK(c.interpolated_samples == Approx(1000).epsilon(1e-9));
  }
  SECTION("GPU never faster") {
    const Crossover c = find_crossover({{10, 1, 2}, {100, 2, 3}, {1000, 3, 3}});  // a tie is not faster
    CHECK(c.evaluated);
    CHECK(c.first_faster == -1);
    CHECK(c.faster_from == -1);
    CHECK(c.interpolated_samples == 0);
  }
  SECTION("GPU faster everywhere: crossover below the range") {
    const Crossover c = find_crossover({{10, 2, 1}, {100, 20, 1}});
    CHECK(c.faster_from == 0);
    CHECK(c.slower_before == -1);
    CHECK(c.interpolated_samples == 0);
  }
  SECTION("points of the same data size (a sweep of the model): the loss before the win is kept, no break-even") {
    const Crossover c = find_crossover({{40000, 1, 2}, {40000, 10, 1}});
    CHECK(c.first_faster == 1);
    CHECK(c.faster_from == 1);
    CHECK(c.slower_before == 0);
    CHECK(c.interpolated_samples == 0);
  }
  SECTION("a noisy win followed by a loss does not count as the crossover") {
    const Crossover c = find_crossover({{10, 2, 1}, {100, 1, 2}, {1000, 5, 1}, {10000, 50, 1}});
    CHECK(c.first_faster == 0);
    CHECK(c.faster_from == 2);
    CHECK(c.interpolated_samples > 100);
    CHECK(c.interpolated_samples < 1000);
  }
  SECTION("points missing a device are skipped") {
    const Crossover c = find_crossover({{10, 1, 2}, {100, -1, 1}, {1000, 4, 1}});
    CHECK(c.faster_from == 2);
    CHECK(c.interpolated_samples > 10);
    CHECK(c.interpolated_samples < 1000);
    CHECK_FALSE(find_crossover({{10, 1, -1}, {100, -1, 1}}).evaluated);
  }
  SECTION("the GPU wins at the first valid point but a smaller one has no GPU time: not below the range") {
    const Crossover c = find_crossover({{10, 1, -1}, {100, 2, 1}, {1000, 4, 1}});
    CHECK(c.faster_from == 1);
    CHECK(c.slower_before == -1);
    CHECK(c.unknown_before);
    CHECK(c.interpolated_samples == 0);
    CHECK_FALSE(find_crossover({{10, 2, 1}, {100, 20, 1}}).unknown_before);
    CHECK_FALSE(find_crossover({{10, 1, 2}, {100, -1, 1}, {1000, 4, 1}}).unknown_before);  // a loss before
  }
}

TEST_CASE("bench sweep over 3 sizes exports 3 points with the documented fields", "[bench][cli]") {
  const std::string dir = fresh_dir("bench_export");
  fs::create_directories(dir);
  const auto r = run_nntrain("bench --config configs/peaks.json --devices cpu --reps 3 --warmup 2 --quiet "
                             "--sweep data.grid=4,[6,3],8 --export-json " + dir + "/b.json --export-markdown " +
                             dir + "/b.md train.epochs=7");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json b = json::parse(slurp(dir + "/b.json"));
  CHECK(b["schema_version"] == 2);
  for (const char* k : {"nntrain_version", "git_revision", "build_type", "precision", "cpu_model",
                        "hardware_threads", "gpu", "repeats", "warmup_epochs", "date_utc"})
    CHECK(b["context"].contains(k));
  CHECK(b["context"]["repeats"] == 3);
  CHECK(b["context"]["warmup_epochs"] == 2);
  CHECK(b["crossover"].is_null());  // only the CPU ran
  REQUIRE(b["results"].size() == 3);
  const std::vector<int> samples = {16, 18, 64};
  for (size_t i = 0; i < 3; ++i) {
    const json& o = b["results"][i];
    INFO("result " << i);
    for (const char* k : {"point", "key", "value", "samples", "device", "backend", "times", "median", "min", "max",
                          "mean", "stddev", "samples_per_second", "final_loss", "setup_seconds", "status"})
      CHECK(o.contains(k));
    CHECK(o["point"] == int(i));
    CHECK(o["key"] == "data.grid");
    CHECK(o["device"] == "cpu");
    CHECK(o["samples"] == samples[i]);
    CHECK(o["epochs"] == 7);
    CHECK(o["status"] == "ok");
    REQUIRE(o["times"].size() == 3);
    std::vector<double> t = o["times"].get<std::vector<double>>();
    const SampleStats s = summarize(t);
    CHECK(o["median"].get<double>() == s.median);
    CHECK(o["min"].get<double>() <= o["median"].get<double>());
    CHECK(o["max"].get<double>() >= o["median"].get<double>());
    CHECK(o["stddev"].get<double>() == Approx(s.stddev));
    CHECK(o["samples_per_second"].get<double>() == Approx(samples[i] * 7 / s.median));
    CHECK(o["final_loss"].get<double>() > 0);
  }
  CHECK(b["results"][1]["value"] == json::array({6, 3}));
  CHECK(b["points"].size() == 3);
  const std::string md = slurp(dir + "/b.md");
  CHECK_THAT(md, Catch::Contains("| data.grid | samples | device |"));
  CHECK_THAT(md, Catch::Contains("| 4 | 16 | cpu |") && Catch::Contains("| \\[6,3\\] | 18 | cpu |") &&
                     Catch::Contains("| 8 | 64 | cpu |"));
  CHECK_THAT(r.out, Catch::Contains("Point 3/3: data.grid = 8") && Catch::Contains("Crossover"));
  fs::remove_all(dir);
}

TEST_CASE("bench with a held-out split: a point's samples are those trained on", "[bench][cli]") {
  const std::string dir = fresh_dir("bench_validation");
  fs::create_directories(dir);
  // A quarter held out, by hand: 16 samples train 12, 64 train 48 (the crossover's x-axis).
  const auto r = run_nntrain("bench --config configs/peaks.json --devices cpu --reps 1 --warmup 0 --quiet "
                             "--sweep data.grid=4,8 --export-json " + dir + "/b.json --export-markdown " + dir +
                             "/b.md train.epochs=3 data.validation_fraction=0.25");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json b = json::parse(slurp(dir + "/b.json"));
  REQUIRE(b["points"].size() == 2);
  CHECK(b["points"][0]["samples"] == 12);
  CHECK(b["points"][1]["samples"] == 48);
  CHECK(b["results"][0]["samples"] == 12);
  CHECK(b["results"][1]["samples"] == 48);
  CHECK_THAT(slurp(dir + "/b.md"), Catch::Contains("| 4 | 12 | cpu |") && Catch::Contains("| 8 | 48 | cpu |"));
  fs::remove_all(dir);
}

TEST_CASE("bench times 5 repeats per point unless --reps or an override says otherwise", "[bench][cli]") {
  const std::string dir = fresh_dir("bench_reps");
  fs::create_directories(dir);
  const std::string common = "bench --config configs/peaks.json --device cpu --warmup 0 --quiet data.grid=4 "
                             "train.epochs=3 --export-json ";
  int k = 0;
  for (const auto& [extra, reps] : std::vector<std::pair<std::string, int>>{
           {"", 5}, {" timing.repeats=2", 2}, {" --reps 3 timing.repeats=2", 3}}) {
    const std::string file = dir + "/b" + std::to_string(k++) + ".json";
    const auto r = run_nntrain(common + file + extra);
    INFO(extra << "\n" << r.err);
    REQUIRE(r.exit_code == 0);
    const json b = json::parse(slurp(file));
    CHECK(b["context"]["repeats"] == reps);
    CHECK(b["results"][0]["times"].size() == size_t(reps));
  }
  // Swept, the setting has no one value: the context says null, each result its own.
  const std::string file = dir + "/swept.json";
  const auto r = run_nntrain(common + file + " --sweep timing.repeats=1,2");
  REQUIRE(r.exit_code == 0);
  const json b = json::parse(slurp(file));
  CHECK(b["context"]["repeats"].is_null());
  CHECK(b["context"]["warmup_epochs"] == 0);
  CHECK(b["results"][0]["repeats"] == 1);
  CHECK(b["results"][1]["repeats"] == 2);
  fs::remove_all(dir);
}

TEST_CASE("bench with a bad sweep value exits 2 naming it and writes no file", "[bench][cli][errors]") {
  const std::string dir = fresh_dir("bench_bad");
  fs::create_directories(dir);
  struct Case {
    const char* sweep;
    const char* expect;
  };
  for (const Case& c : std::vector<Case>{{"data.grid=10,abc,20", "value 2 of 3 (\"abc\")"},
                                         {"data.grid=10,0", "/data/grid"},
                                         {"model.layers=[2,20,1],[3,5,1]", "/model/layers/0"},
                                         {"data.gird=10,20", "did you mean \"grid\""},
                                         {"model.layers=[2,20,1", "missing ']'"},
                                         {"data.grid", "key.path=v1,v2"}}) {
    INFO(c.sweep);
    const auto r = run_nntrain(std::string("bench --config configs/peaks.json --devices cpu --reps 1 --sweep '") +
                               c.sweep + "' --export-json " + dir + "/b.json --export-markdown " + dir +
                               "/b.md train.epochs=2000");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(c.expect));
    CHECK(r.out.empty());  // nothing ran
    CHECK_FALSE(fs::exists(dir + "/b.json"));
    CHECK_FALSE(fs::exists(dir + "/b.md"));
  }
  const auto both = run_nntrain("bench --config configs/peaks.json --devices cpu --reps 2 --sweep timing.repeats=1,3");
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.err, Catch::Contains("also set by a bench option"));
  const auto dev = run_nntrain("bench --config configs/peaks.json --devices cpu --sweep device=cpu,gpu");
  CHECK(dev.exit_code == 2);
  CHECK_THAT(dev.err, Catch::Contains("--devices"));
  // A flag's bad value: the flag named first, within the point; the same value as an override: the key.
  const auto flag = run_nntrain("bench --config configs/peaks.json --devices cpu --sweep seed=1,2 --threads 5000");
  CHECK(flag.exit_code == 2);
  CHECK_THAT(flag.err, Catch::Contains("(\"1\") is invalid: --threads (config /cpu/threads): value 5000"));
  const auto key = run_nntrain("bench --config configs/peaks.json --devices cpu --warmup 1 cpu.threads=5000");
  CHECK(key.exit_code == 2);
  CHECK_THAT(key.err, Catch::Contains("error: config /cpu/threads: value 5000"));
  const auto no_sweep = run_nntrain("bench --config configs/peaks.json --devices cpu --warmup 1 --threads 5000");
  CHECK(no_sweep.exit_code == 2);
  CHECK_THAT(no_sweep.err, Catch::Contains("error: --threads (config /cpu/threads): value 5000"));
  const auto bad_dev = run_nntrain("bench --config configs/peaks.json --devices cpu,tpu");
  CHECK(bad_dev.exit_code == 2);
  CHECK_THAT(bad_dev.err, Catch::Contains("tpu"));
  const auto bad_out =
      run_nntrain("bench --config configs/peaks.json --devices cpu --export-json " + dir + "/no/such/b.json");
  CHECK(bad_out.exit_code == 2);
  CHECK_THAT(bad_out.err, Catch::Contains("--export-json"));
  const auto same = run_nntrain("bench --config configs/peaks.json --devices cpu --export-json " + dir +
                                "/b.out --export-markdown " + dir + "/./b.out");
  CHECK(same.exit_code == 2);
  CHECK_THAT(same.err, Catch::Contains("both name"));
  CHECK_FALSE(fs::exists(dir + "/b.out"));
  fs::remove_all(dir);
}

TEST_CASE("bench on gpu without a usable GPU exits 3 with the reason", "[bench][cli][errors]") {
  // The GPU alone: nothing to run. (`both` runs the CPU half: test_user_flags.cpp.)
  const std::string dir = fresh_dir("bench_nogpu");
  fs::create_directories(dir);
  const auto r = run_nntrain("bench --config configs/peaks.json --device gpu --export-json " + dir + "/b.json",
                             "CUDA_VISIBLE_DEVICES= NNTRAIN_FAKE_NO_GPU=1");
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.err, Catch::Contains("bench --device gpu: ") && Catch::Contains("--device cpu runs the CPU half"));
  CHECK_FALSE(fs::exists(dir + "/b.json"));
  fs::remove_all(dir);
}

TEST_CASE("bench refuses --gpu-path fused for a net too wide before the first point runs", "[bench][cli][errors]") {
  // The same check as train's (require_devices): the net against the fused kernel's limits
  // needs no GPU, so it is exit 2 here too, and it comes before any point trains. The first
  // point (the reference net) would fit: a bench that ran point by point would train it first.
  const std::string dir = fresh_dir("bench_fused_wide");
  fs::create_directories(dir);
  const auto r = run_nntrain("bench --config configs/peaks.json --devices cpu,gpu --gpu-path fused --reps 1 "
                             "--sweep 'model.layers=[2,20,5,1],[2,256,1]' --export-json " + dir + "/b.json "
                             "data.grid=6 train.epochs=3");
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("[2,256,1]"));           // the net
  CHECK_THAT(r.err, Catch::Contains("widths up to 64"));     // the limit
  CHECK_THAT(r.err, Catch::Contains("value 2 of 2"));        // which point
  CHECK(r.out.empty());                                      // no point ran, no table printed
  CHECK_THAT(r.err, !Catch::Contains("[1/2]"));              // no progress line of point 1
  CHECK_FALSE(fs::exists(dir + "/b.json"));
  // Without a sweep, and train alike.
  const auto one = run_nntrain("bench --config configs/peaks.json --devices cpu,gpu --gpu-path fused "
                               "model.layers=[2,20,100,1]");
  CHECK(one.exit_code == 2);
  CHECK_THAT(one.err, Catch::Contains("[2,20,100,1]"));
  CHECK_THAT(one.err, Catch::Contains("widths up to 64"));
  const auto train = run_nntrain("--config configs/peaks.json --device both --gpu-path fused --out " + dir +
                                 "/run model.layers=[2,20,100,1]");
  CHECK(train.exit_code == 2);
  CHECK_THAT(train.err, Catch::Contains("widths up to 64"));
  CHECK_FALSE(fs::exists(dir + "/run"));
  fs::remove_all(dir);
}

TEST_CASE("bench sweeps model layers from the same initial weights per point", "[bench][cli]") {
  const std::string dir = fresh_dir("bench_layers");
  fs::create_directories(dir);
  const auto r = run_nntrain("bench --config configs/peaks.json --devices cpu --reps 2 --quiet "
                             "--sweep 'model.layers=[2,8,1],[2,16,4,1]' --export-json " + dir +
                             "/b.json data.grid=6 train.epochs=5");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json b = json::parse(slurp(dir + "/b.json"));
  REQUIRE(b["results"].size() == 2);
  CHECK(b["results"][0]["value"] == json::array({2, 8, 1}));
  CHECK(b["results"][1]["value"] == json::array({2, 16, 4, 1}));
  // The first-epoch loss of a point equals what `train` gives for the same config (same init).
  const std::string out = dir + "/train";
  const auto t = run_nntrain("--config configs/peaks.json --quiet --json --out " + out +
                             " data.grid=6 train.epochs=5 model.layers=[2,16,4,1]");
  REQUIRE(t.exit_code == 0);
  const json s = json::parse(t.out);
  CHECK(b["results"][1]["initial_loss"].get<double>() == s["runs"][0]["initial_loss"].get<double>());
  CHECK(b["results"][1]["final_loss"].get<double>() == s["runs"][0]["final_loss"].get<double>());
  fs::remove_all(dir);
}

TEST_CASE("bench keeps going past a diverged point, marks it and exits 4 after exporting", "[bench][cli][errors]") {
  const std::string dir = fresh_dir("bench_diverge");
  fs::create_directories(dir);
  const auto r = run_nntrain("bench --config configs/peaks.json --devices cpu --reps 2 --quiet "
                             "--sweep optimizer.lr=1e5,0.01 --export-json " + dir +
                             "/b.json data.grid=10 optimizer.type=sgd train.epochs=200 train.log_every=10");
  CHECK(r.exit_code == 4);
  CHECK_THAT(r.err, Catch::Contains("diverged"));
  const json b = json::parse(slurp(dir + "/b.json"));
  REQUIRE(b["results"].size() == 2);
  CHECK(b["results"][0]["status"] == "diverged");
  CHECK(b["results"][0]["diverged_epoch"].get<int>() >= 1);
  CHECK(b["results"][1]["status"] == "ok");
  CHECK(b["results"][1]["epochs"] == 200);
  CHECK(b["results"][1]["times"].size() == 2);
  fs::remove_all(dir);
}

TEST_CASE("CUDA and cuBLAS version numbers are shown as people write them", "[bench]") {
  CHECK(nntrain::cuda_version_string(13000) == "13.0");
  CHECK(nntrain::cuda_version_string(12040) == "12.4");
  CHECK(nntrain::cuda_version_string(0) == "-");
  CHECK(nntrain::cublas_version_string(130100) == "13.1.0");
  CHECK(nntrain::cublas_version_string(120403) == "12.4.3");
  CHECK(nntrain::cublas_version_string(0) == "-");
}

TEST_CASE("bench exports a header to reproduce the run: date, command line, config, overrides, machine, commit",
          "[bench][cli][report]") {
  const std::string dir = fresh_dir("bench_header");
  fs::create_directories(dir);
  const auto r = run_nntrain("bench --config configs/peaks.json --device cpu --reps 3 --warmup 0 --export-json " +
                             dir + "/b.json --export-markdown " + dir + "/b.md train.epochs=5 data.grid=5 "
                             "'model.layers=[2,6,1]'");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json b = json::parse(slurp(dir + "/b.json"));
  const json& c = b["context"];
  // argv as run: the binary, then every argument as the shell passed it.
  const std::vector<std::string> want = {"bench", "--config", "configs/peaks.json", "--device", "cpu", "--reps", "3",
                                         "--warmup", "0", "--export-json", dir + "/b.json", "--export-markdown",
                                         dir + "/b.md", "train.epochs=5", "data.grid=5", "model.layers=[2,6,1]"};
  REQUIRE(c["argv"].size() == want.size() + 1);
  CHECK(c["argv"][0] == NNTRAIN_BINARY);
  for (size_t i = 0; i < want.size(); ++i) CHECK(c["argv"][i + 1] == want[i]);
  CHECK_THAT(c["command_line"].get<std::string>(),
             Catch::EndsWith(" train.epochs=5 data.grid=5 'model.layers=[2,6,1]'"));
  CHECK(c["config_file"] == "configs/peaks.json");
  CHECK(c["overrides"] == json::array({"train.epochs=5", "data.grid=5", "model.layers=[2,6,1]"}));
  CHECK(c["spread_limit"] == 1.5);
  for (const char* k : {"date_utc", "cpu_model", "hardware_threads", "gpu", "git_revision", "build_type"})
    CHECK(c.contains(k));
  const std::string md = slurp(dir + "/b.md");
  CHECK_THAT(md, Catch::Contains("- date: " + c["date_utc"].get<std::string>() + " (UTC)\n"));
  CHECK_THAT(md, Catch::Contains("- command: `" + c["command_line"].get<std::string>() + "`\n"));
  CHECK_THAT(md, Catch::Contains("- config: `configs/peaks.json`; overrides: `train.epochs=5` `data.grid=5` "
                                 "`'model.layers=[2,6,1]'`\n"));
  CHECK_THAT(md, Catch::Contains("(commit " + c["git_revision"].get<std::string>() + ")"));
  CHECK_THAT(md, Catch::Contains("- CPU: " + c["cpu_model"].get<std::string>()));
  // Each result's spread is max/min of its own times, flagged above the limit (hand check).
  const json& o = b["results"][0];
  const std::vector<double> t = o["times"].get<std::vector<double>>();
  const double spread = *std::max_element(t.begin(), t.end()) / *std::min_element(t.begin(), t.end());
  CHECK(o["spread"].get<double>() == Approx(spread));
  CHECK(o["spread_wide"] == (spread > 1.5));
  CHECK(b["points"][0]["uncertain"] == (spread > 1.5));
  CHECK_THAT(r.out, Catch::Contains("  command  ") && Catch::Contains("'model.layers=[2,6,1]'"));
  fs::remove_all(dir);
}

TEST_CASE("bench flags repeats that disagree: one repeat stopped for 1.5 s is marked in JSON, Markdown and table",
          "[bench][cli][spread]") {
  // The spread is injected from outside, deterministically enough: once the first repeat
  // reports its first chunk (progress on stderr), the process is stopped (SIGSTOP) for 1.5 s.
  // The device clock (steady clock) runs on, so that repeat reads >= 1.5 s where the others
  // read ~0.2 s (40,000 samples, 1,000 epochs). Should the stop miss the repeat (it reached its
  // end first), the run is redone; so is one whose other repeats took so long (a sanitized build
  // under load: ~1 s; 5-8 s with ASan's checks as calls) that 1.5 s more is no wide spread, with
  // a stop of twice their time.
  const std::string dir = fresh_dir("bench_spread");
  fs::create_directories(dir);
  KillOnExit cleanup{dir};
  json b;
  double stop_s = 1.5;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::vector<std::string> argv = {NNTRAIN_BINARY, "bench", "--config", "configs/peaks.json", "--device",
                                           "cpu", "--reps", "3", "--warmup", "0", "--export-json", dir + "/b.json",
                                           "--export-markdown", dir + "/b.md", "train.epochs=1000",
                                           "train.log_every=20", "data.grid=200", "cpu.threads=1"};
    fs::remove(dir + "/err");  // (a redo must not find the last attempt's progress before its own)
    const pid_t pid = spawn(argv, NNTRAIN_SOURCE_DIR, dir + "/out", dir + "/err");
    REQUIRE(pid > 0);
    REQUIRE(wait_until([&] { return slurp(dir + "/err").find(": epoch ") != std::string::npos; }, 60));
    ::kill(pid, SIGSTOP);
    std::this_thread::sleep_for(std::chrono::duration<double>(stop_s));
    ::kill(pid, SIGCONT);
    REQUIRE(wait_exit(pid, 300) == 0);
    b = json::parse(slurp(dir + "/b.json"));
    const std::vector<double> t = b["results"][0]["times"].get<std::vector<double>>();
    REQUIRE(t.size() == 3);
    if (t[0] >= stop_s && t[0] > 1.5 * std::max(t[1], t[2])) break;
    stop_s = std::max(stop_s, 2 * std::max(t[1], t[2]));
  }
  const json& o = b["results"][0];
  INFO(o["times"].dump());
  REQUIRE(o["times"][0].get<double>() >= 1.5);
  const double spread = o["max"].get<double>() / o["min"].get<double>();
  REQUIRE(spread > 1.5);  // the others took less than 1 s each
  CHECK(o["spread"].get<double>() == Approx(spread));
  CHECK(o["spread_wide"] == true);
  CHECK(b["points"][0]["uncertain"] == true);
  CHECK_THAT(b["points"][0]["uncertain_reason"].get<std::string>(), Catch::StartsWith("cpu repeats spread "));
  const std::string md = slurp(dir + "/b.md");
  CHECK_THAT(md, Catch::Contains(" wide** |") && Catch::Contains("**Uncertain**"));
  CHECK_THAT(slurp(dir + "/out"), Catch::Contains("warning: repeats spread ") && Catch::Contains("the median is uncertain"));
  fs::remove_all(dir);
}
