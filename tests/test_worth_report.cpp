// test_worth_report.cpp — "is the GPU worth it?" in the report: the bench report code driven by
// a fake two-device bench (costs, verdicts, the crossovers, against hand arithmetic), and the
// command line (exit 2 before anything runs, the summary's target object, bench's export). The
// time-to-target and price arithmetic is test_worth.cpp.
#include <catch2/catch.hpp>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "bench_report.hpp"
#include "bench_stats.hpp"
#include "bench_worth.hpp"
#include "cli_util.hpp"
#include "errors.hpp"

using namespace testutil;
using namespace nntrain;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

RunResult fake_run(Device d, double median, double target_seconds, bool measured) {
  RunResult r;
  r.device = d;
  r.backend = d == Device::cpu ? "cpu-fake" : "gpu-fake";
  r.samples = 1;
  r.epochs_requested = r.epochs_done = r.epochs_timed = 2000;
  r.losses.assign(2000, 0.1f);
  r.train_seconds_per_repeat = {median * 1.1, median, median * 0.9};
  r.train_seconds = median;
  TargetResult t;
  t.loss = 0.05;
  t.reached = target_seconds > 0;
  t.epoch = t.reached ? 700 : 0;
  t.seconds = target_seconds;
  t.measured = measured;
  r.target = t;
  return r;
}

BenchPoint fake_point(int index, int samples, RunResult cpu, RunResult gpu) {
  BenchPoint p;
  p.index = index;
  p.key = "data.grid";
  p.text = std::to_string(samples);
  p.value = samples;
  p.samples = samples;
  p.epochs = 2000;
  cpu.samples = gpu.samples = samples;
  p.runs = {cpu, gpu};
  return p;
}

// Three points, given out of size order. CPU 1, 10, 100 s; GPU 2, 4, 10 s: speed-ups 0.5,
// 2.5, 10, so the GPU is faster from 1000 samples. At cpu=1, gpu=3 per hour the cost ratios
// are a third of those: 0.167, 0.833, 3.33, so the GPU is cheaper from 10000 samples.
BenchReport fake_report(bool prices, bool target) {
  BenchReport r;
  r.name = "fake";
  r.context = {{"nntrain_version", "0"}, {"repeats", 3}};
  r.devices = {Device::cpu, Device::gpu};
  r.points.push_back(fake_point(0, 1000, fake_run(Device::cpu, 10, 5, true), fake_run(Device::gpu, 4, 2, false)));
  r.points.push_back(fake_point(1, 100, fake_run(Device::cpu, 1, 0.5, true), fake_run(Device::gpu, 2, -1, true)));
  r.points.push_back(fake_point(2, 10000, fake_run(Device::cpu, 100, 50, true), fake_run(Device::gpu, 10, 4, true)));
  if (!target)
    for (auto& p : r.points)
      for (auto& run : p.runs) run.target.reset();
  if (prices) {
    r.prices = parse_prices("cpu=1,gpu=3");
    r.prices->currency = "EUR";
  }
  finish_report(r);
  return r;
}

std::string console_text(const BenchReport& r) {
  std::FILE* f = std::tmpfile();
  print_bench(f, r, false);
  std::rewind(f);
  std::string s;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
  std::fclose(f);
  return s;
}

std::string row_of(const std::string& md, const std::string& start) {
  const size_t at = md.find(start);
  return at == std::string::npos ? std::string() : md.substr(at, md.find('\n', at) - at);
}

}  // namespace

TEST_CASE("a fake two-device bench drives costs, verdicts and the cost crossover", "[worth][report]") {
  const BenchReport r = fake_report(true, true);
  REQUIRE(r.both_devices);
  REQUIRE(r.has_target);
  CHECK(at_size_position(r, r.crossover.faster_from).samples == 1000);
  REQUIRE(r.cost_crossover.faster_from >= 0);
  CHECK(at_size_position(r, r.cost_crossover.faster_from).samples == 10000);
  // Break-even of the cost ratio between (1000, 10/12) and (10000, 100/30), log-log:
  // t = ln(1.2) / ln(4), 1000 * 10^t = 1353.68.
  CHECK(r.cost_crossover.interpolated_samples == Approx(1353.68).epsilon(1e-5));

  const json j = bench_json(r);
  CHECK(j["schema_version"] == 2);
  const json& big = j["points"][2];
  CHECK(big["cost_ratio"].get<double>() == Approx(100.0 / 30.0));
  CHECK(big["target_speedup"].get<double>() == Approx(12.5));
  CHECK(big["target_cost_ratio"].get<double>() == Approx(50.0 / 12.0));
  CHECK(big["verdict"] == "gpu 10.0\u00d7 faster, 3.3\u00d7 cheaper per run at these prices");
  CHECK(big["target_verdict"] == "gpu 12.5\u00d7 faster, 4.2\u00d7 cheaper to loss 0.05 at these prices");
  CHECK(j["points"][0]["verdict"] == "gpu 2.5\u00d7 faster, but cpu 1.2\u00d7 cheaper per run at these prices");
  CHECK(j["points"][0]["target_verdict"] ==
        "gpu 2.5\u00d7 faster, but cpu 1.2\u00d7 cheaper to loss 0.05 at these prices (from an interpolated time to "
        "target)");
  CHECK(j["points"][1]["verdict"] == "cpu 2.0\u00d7 faster, 6.0\u00d7 cheaper per run at these prices");
  CHECK(j["points"][1]["target_verdict"] == "only cpu reached loss 0.05 in 2000 epochs");
  CHECK(j["points"][1]["target_speedup"].is_null());
  // Costs per result: price * median / 3600.
  const json& gpu_big = j["results"][5];
  REQUIRE(gpu_big["device"] == "gpu");
  CHECK(gpu_big["cost"]["per_run"].get<double>() == Approx(3.0 * 10 / 3600));
  CHECK(gpu_big["cost"]["to_target"].get<double>() == Approx(3.0 * 4 / 3600));
  CHECK(gpu_big["cost"]["currency"] == "EUR");
  CHECK(j["results"][3]["cost"]["to_target"].is_null());  // the GPU did not reach it at 100 samples
  CHECK(j["cost_crossover"]["found"] == true);
  CHECK(j["cost_crossover"]["gpu_cheaper_from"]["samples"] == 10000);
  CHECK(j["cost_crossover"]["first_gpu_cheaper"]["samples"] == 10000);

  const std::string md = bench_markdown(r);
  CHECK_THAT(md, Catch::Contains("| time to target | target epoch | cost per 1,000 runs (EUR) | cost to target per 1,000 "
                                 "runs (EUR) |"));
  // 10 s at 3 EUR an hour is 3 * 10 / 3600 = 0.00833 EUR a run, 8.33 per 1,000; to target 4 s: 3.33.
  CHECK_THAT(row_of(md, "| 10000 | 10000 | gpu"), Catch::Contains("| 8.33 | 3.33 |"));
  CHECK_THAT(md, Catch::Contains("| cost per run | verdict | verdict to target | crossover |"));
  CHECK_THAT(row_of(md, "| 10000 | 10000 | 1") , Catch::Contains("**GPU cheaper from here**"));
  CHECK_THAT(row_of(md, "| 1000 | 1000 | 1"), Catch::Contains("**GPU faster from here**"));
  CHECK_THAT(row_of(md, "| 1000 | 1000 | gpu"), Catch::Contains("2.000 s (interpolated)"));
  CHECK_THAT(md, Catch::Contains("**Cost crossover** (at cpu 1, gpu 3 EUR per hour): GPU cheaper per run from "
                                 "data.grid = 10000 (10000 samples) on; break-even near 1354 samples"));
  CHECK_THAT(md, Catch::Contains("arithmetic, not a measurement"));

  const std::string out = console_text(r);
  CHECK_THAT(out, Catch::Contains("verdict: gpu 10.0\u00d7 faster, 3.3\u00d7 cheaper per run at these prices"));
  CHECK_THAT(out, Catch::Contains("to target: only cpu reached loss 0.05"));
  CHECK_THAT(out, Catch::Contains("Cost crossover: GPU cheaper per run from data.grid = 10000"));
  CHECK_THAT(out, Catch::Contains("cost: 8.33 EUR per 1,000 runs, 3.33 EUR per 1,000 runs to target"));
}

TEST_CASE("a sweep of the model (every point the same data size): the crossover sentence keeps the GPU's loss",
          "[worth][report]") {
  // model.layers: a small net where the CPU wins (1 s against 2 s), then a wide one where the
  // GPU does (10 s against 1 s), both on 40,000 samples. Not "faster at every size".
  BenchReport r;
  r.name = "layers";
  r.context = {{"nntrain_version", "0"}, {"repeats", 3}};
  r.devices = {Device::cpu, Device::gpu};
  r.points.push_back(fake_point(0, 40000, fake_run(Device::cpu, 1, 0.5, true), fake_run(Device::gpu, 2, 1, true)));
  r.points.push_back(fake_point(1, 40000, fake_run(Device::cpu, 10, 5, true), fake_run(Device::gpu, 1, 0.5, true)));
  for (size_t k = 0; k < 2; ++k) {
    r.points[k].key = "model.layers";
    r.points[k].text = k == 0 ? "[2,8,1]" : "[2,256,256,1]";
  }
  r.prices = parse_prices("cpu=1,gpu=3");
  finish_report(r);
  const std::string out = console_text(r);
  CHECK_THAT(out, Catch::Contains("GPU faster from model.layers = [2,256,256,1] (40000 samples) on, slower at "
                                  "model.layers = [2,8,1] (40000 samples): no break-even size"));
  CHECK_THAT(out, Catch::Contains("GPU cheaper per run from model.layers = [2,256,256,1] (40000 samples) on, dearer "
                                  "at model.layers = [2,8,1] (40000 samples)"));
  CHECK_THAT(out, !Catch::Contains("every size tried"));
  CHECK(bench_json(r)["crossover"]["interpolated_samples"].is_null());
}

TEST_CASE("without --price or a target the report has no cost or target columns", "[worth][report]") {
  const BenchReport r = fake_report(false, false);
  const std::string md = bench_markdown(r);
  CHECK_THAT(md, Catch::Contains("| data.grid | samples | CPU median | GPU median | speed-up |\n"));
  CHECK_THAT(md, Catch::Contains("| final loss | set-up |\n"));
  // Below the header: its command line quotes argv, here this test's own name.
  const std::string tables = md.substr(md.find("| data.grid"));
  CHECK_THAT(tables, !Catch::Contains("cost") && !Catch::Contains("target") && !Catch::Contains("verdict"));
  const json j = bench_json(r);
  CHECK(j["cost_crossover"].is_null());
  CHECK_FALSE(j["points"][0].contains("verdict"));
  CHECK_FALSE(j["results"][0].contains("cost"));
  CHECK_FALSE(j["results"][0].contains("target"));
  CHECK_THAT(console_text(r), !Catch::Contains("verdict") && !Catch::Contains("Cost crossover"));
  // Prices alone: cost columns, no target columns.
  const std::string priced = bench_markdown(fake_report(true, false));
  CHECK_THAT(priced, Catch::Contains("| cost per 1,000 runs (EUR) |") && !Catch::Contains("time to target"));
}

TEST_CASE("train --target-loss: summary.json and the resolved config carry it, unreached is exit 0",
          "[worth][cli]") {
  const std::string dir = fresh_dir("worth_train");
  auto r = run_nntrain("--config configs/peaks.json --epochs 30 --target-loss 1e-9 --out " + dir +
                       " data.grid=6 timing.warmup_epochs=0");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  json s = json::parse(slurp(dir + "/summary.json"));
  CHECK(s["runs"][0]["target"] == json{{"loss", 1e-9}, {"reached", false}, {"epoch", nullptr}, {"seconds", nullptr}});
  CHECK(json::parse(slurp(dir + "/config.resolved.json"))["train"]["target_loss"] == 1e-9);
  CHECK_THAT(r.out, Catch::Contains("loss 1e-09 not reached in 30 epochs"));

  // Reached at epoch 1 (any loss is below 1e6); two repeats end a chunk there: measured.
  r = run_nntrain("--config configs/peaks.json --epochs 30 --quiet --target-loss 1e6 --out " + dir +
                  " data.grid=6 timing.repeats=2");
  REQUIRE(r.exit_code == 0);
  s = json::parse(slurp(dir + "/summary.json"));
  const json& t = s["runs"][0]["target"];
  CHECK(t["reached"] == true);
  CHECK(t["epoch"] == 1);
  CHECK(t["seconds_kind"] == "measured");
  CHECK(t["seconds"].get<double>() > 0);
  CHECK(t["seconds"].get<double>() <= s["runs"][0]["train_seconds_max"].get<double>());

  // No target: none in the summary, null in the resolved config.
  r = run_nntrain("--config configs/peaks.json --epochs 3 --quiet --out " + dir + " data.grid=6");
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(json::parse(slurp(dir + "/summary.json"))["runs"][0].contains("target"));
  CHECK(json::parse(slurp(dir + "/config.resolved.json"))["train"]["target_loss"].is_null());
  fs::remove_all(dir);
}

TEST_CASE("bad --target-loss, --price or --currency: exit 2 naming the value, before anything runs",
          "[worth][cli][errors]") {
  const std::string dir = fresh_dir("worth_bad");
  fs::create_directories(dir);
  const std::string bench = "bench --config configs/peaks.json --devices cpu --reps 1 --quiet --export-json " + dir +
                            "/b.json --export-markdown " + dir + "/b.md train.epochs=2 ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {bench + "--target-loss 0", "value 0.0 is not a loss to reach"},
      {bench + "--target-loss -0.5", "value -0.5 is not a loss to reach"},
      {bench + "--target-loss nan", "value nan is not a finite number"},
      {bench + "--target-loss inf", "value inf is not a finite number"},
      {bench + "train.target_loss='\"low\"'", "/train/target_loss: expected a number > 0 or null"},
      {bench + "--price cpu=abc", "--price \"cpu=abc\": cpu price \"abc\" is not a number"},
      {bench + "--price cpu=-2", "cpu price -2 is not a finite number > 0"},
      {bench + "--price cpu=inf", "cpu price inf is not a finite number > 0"},
      {bench + "--price tpu=1", "unknown device \"tpu\""},
      {bench + "--price gpu=1", "no price for cpu, which --devices cpu runs"},
      {bench + "--price ''", "--price \"\""},
      {bench + "--currency EUR", "--currency EUR: give --price as well"},
      {bench + "--price cpu=1 --currency ''", "--currency \"\""},
      {"--config configs/peaks.json --target-loss -1 --out " + dir + "/run", "value -1.0 is not a loss to reach"},
      {"--config configs/peaks.json --target-loss nan --out " + dir + "/run", "value nan is not a finite number"},
      // strtod reads hex, CLI11 reads "" as 0: neither is a number the user wrote.
      {"--config configs/peaks.json --lr 0x10 --out " + dir + "/run", "value \"0x10\" is not a decimal number"},
      {"--config configs/peaks.json --lr '' --out " + dir + "/run", "value \"\" is not a decimal number"},
      {bench + "--target-loss 0.5x", "value \"0.5x\" is not a decimal number"},
  };
  for (const auto& [args, msg] : cases) {
    INFO(args);
    const auto r = run_nntrain(args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(msg));
    CHECK(r.out.empty());
  }
  CHECK(fs::is_empty(dir));  // no export, no run folder
  fs::remove_all(dir);
}

TEST_CASE("bench --target-loss --price on the CPU exports the target and the cost", "[worth][cli]") {
  const std::string dir = fresh_dir("worth_bench");
  fs::create_directories(dir);
  const auto r = run_nntrain("bench --config configs/peaks.json --devices cpu --reps 2 --warmup 0 --quiet "
                             "--target-loss 1e6 --price cpu=0.5,gpu=2 --currency EUR --export-json " +
                             dir + "/b.json --export-markdown " + dir + "/b.md train.epochs=7 data.grid=6");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json b = json::parse(slurp(dir + "/b.json"));
  CHECK(b["context"]["prices"] == json{{"cpu", 0.5}, {"gpu", 2.0}, {"currency", "EUR"}, {"per", "hour"}});
  CHECK(b["context"]["target_loss"] == 1e6);
  const json& o = b["results"][0];
  CHECK(o["target"]["epoch"] == 1);
  CHECK(o["target"]["seconds_kind"] == "measured");  // the second repeat ended a chunk at epoch 1
  CHECK(o["target"]["measured_seconds"].size() == 1);
  CHECK(o["cost"]["per_run"].get<double>() == Approx(0.5 * o["median"].get<double>() / 3600));
  CHECK(o["cost"]["to_target"].get<double>() == Approx(0.5 * o["target"]["seconds"].get<double>() / 3600));
  CHECK(b["cost_crossover"].is_null());  // one device
  CHECK_THAT(slurp(dir + "/b.md"), Catch::Contains("| cost per 1,000 runs (EUR) | cost to target per 1,000 runs (EUR) |"));
  CHECK_THAT(r.out, Catch::Contains("to loss 1e+06:") && Catch::Contains("EUR per 1,000 runs"));
  CHECK_THAT(r.out, !Catch::Contains("e-0"));  // no printf exponent on a cost (engineering notation)
  fs::remove_all(dir);
}
