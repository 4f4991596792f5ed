// test_reports.cpp — what train's reports say, driven by hand-made results (the measurement
// code itself is tested through the binary elsewhere): the speed-up arithmetic (none from a
// simulated GPU or an unfinished run), train's summary and console (repeats and their
// spread, status, the loss table, measured or interpolated time to target, MFLOP, the
// context taken before the runs). Bench's page: test_bench_report.cpp. Several cases exist
// because a planted bug survived without them (scripts/lib/mutants-rows-reports.sh).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "cli_util.hpp"
#include "config.hpp"
#include "report.hpp"

using namespace nntrain;
using nlohmann::json;
using testutil::printed_by;

namespace {

RunResult fake_run(Device d, double seconds, bool simulated) {
  RunResult r;
  r.device = d;
  r.backend = d == Device::cpu ? "cpu-fast" : "gpu-fused";
  r.samples = 100;
  r.epochs_requested = r.epochs_done = r.epochs_timed = 4;
  r.losses = {4.0f, 3.0f, 2.0f, 1.0f};
  r.train_seconds_per_repeat = {seconds};
  r.train_seconds = seconds;
  r.simulated = simulated;
  return r;
}

std::string printed(const Config& cfg, const std::vector<RunResult>& runs) {
  return printed_by([&](std::FILE* f) { print_results(f, cfg, runs, false); });
}

}  // namespace

TEST_CASE("simulated GPU is recognised by the name GPGPU-Sim reports", "[report][gpusim]") {
  CHECK(is_simulator_name("GPGPU-Sim_v4.2.0"));
  // What GPGPU-Sim 4.2 (the one in ../shared/tools/gpgpu-sim) reports, trailing space trimmed.
  CHECK(is_simulator_name("GPGPU-Sim_vGPGPU-Sim Simulator Version 4.2.0"));
  CHECK_FALSE(is_simulator_name("NVIDIA H100 80GB HBM3"));
  CHECK_FALSE(is_simulator_name(""));
}

TEST_CASE("summary and console: speed-up is cpu/gpu, and none on a simulated GPU", "[report][gpusim]") {
  Config cfg;
  cfg.device = DeviceChoice::both;
  cfg.train.epochs = 4;
  // Real GPU: 0.8 s / 0.2 s = 4x, by hand.
  const std::vector<RunResult> real = {fake_run(Device::cpu, 0.8, false), fake_run(Device::gpu, 0.2, false)};
  const auto j = summary_json(cfg, real);
  CHECK(j["speedup"].get<double>() == Approx(4.0));
  CHECK(j["runs"][1]["simulated"] == false);
  CHECK_THAT(printed(cfg, real), Catch::Contains("GPU is 4.00× faster"));
  // Simulated: no number, the reason instead, and the run marked.
  const std::vector<RunResult> sim = {fake_run(Device::cpu, 0.8, false), fake_run(Device::gpu, 90.0, true)};
  const auto s = summary_json(cfg, sim);
  CHECK(s["speedup"].is_null());
  CHECK_THAT(s["speedup_note"].get<std::string>(), Catch::Contains("not measurements"));
  CHECK(s["runs"][1]["simulated"] == true);
  const std::string out = printed(cfg, sim);
  CHECK_THAT(out, Catch::Contains("speed-up: none"));
  CHECK_THAT(out, !Catch::Contains("slower than CPU"));
  CHECK_THAT(out, Catch::Contains("SIMULATED: the GPU is a simulator"));  // its timing row too
  CHECK_THAT(printed(cfg, real), !Catch::Contains("SIMULATED"));
}

TEST_CASE("summary and console: no speed-up from a run that did not finish", "[report]") {
  Config cfg;
  cfg.device = DeviceChoice::both;
  cfg.train.epochs = 4;
  // The GPU stopped after 1 of 4 epochs: its 0.05 s is not comparable with the CPU's 0.8 s
  // (16x would be claimed).
  for (const bool diverged : {false, true}) {
    RunResult gpu = fake_run(Device::gpu, 0.05, false);
    gpu.epochs_done = gpu.epochs_timed = 1;
    gpu.losses.resize(1);
    if (diverged)
      gpu.diverged_epoch = 1;
    else
      gpu.interrupted = true;
    const std::vector<RunResult> runs = {fake_run(Device::cpu, 0.8, false), gpu};
    const json j = summary_json(cfg, runs);
    CHECK(j["speedup"].is_null());
    CHECK_THAT(j["speedup_note"].get<std::string>(),
               Catch::Contains(diverged ? "the gpu run diverged" : "the gpu run was interrupted"));
    const std::string out = printed(cfg, runs);
    CHECK_THAT(out, Catch::Contains("speed-up: none: the gpu run"));
    CHECK_THAT(out, !Catch::Contains("faster than CPU"));
  }
  // Stopped in timing repeat 2 of 2: repeat 1 covers all 4 epochs (the cut one is left out),
  // so 0.8 s / 0.2 s = 4x stands.
  RunResult later = fake_run(Device::gpu, 0.2, false);
  later.interrupted = true;
  later.interrupted_repeat = 2;
  const std::vector<RunResult> runs = {fake_run(Device::cpu, 0.8, false), later};
  CHECK(summary_json(cfg, runs)["speedup"].get<double>() == Approx(4.0));
  CHECK_THAT(printed(cfg, runs), Catch::Contains("GPU is 4.00× faster"));
}

TEST_CASE("console and summary.json: repeats that spread more than 1.5x are said to", "[report]") {
  Config cfg;
  RunResult cpu = fake_run(Device::cpu, 0.8, false);
  cpu.train_seconds_per_repeat = {0.5, 0.8, 0.9};  // 0.9 / 0.5 = 1.8 > 1.5
  CHECK(summary_json(cfg, {cpu})["runs"][0]["spread_wide"] == true);
  CHECK_THAT(printed(cfg, {cpu}), Catch::Contains("spread 1.80\u00d7 (max/min > 1.5)"));
  cpu.train_seconds_per_repeat = {0.7, 0.8, 0.9};  // 0.9 / 0.7 = 1.29
  CHECK(summary_json(cfg, {cpu})["runs"][0]["spread_wide"] == false);
  CHECK_THAT(printed(cfg, {cpu}), !Catch::Contains("spread"));
}

TEST_CASE("summary.json: the repeats' min and max, and the first run that did not finish sets the status",
          "[report]") {
  Config cfg;
  cfg.device = DeviceChoice::both;
  cfg.train.epochs = 4;
  RunResult cpu = fake_run(Device::cpu, 0.8, false);
  cpu.train_seconds_per_repeat = {0.9, 0.7, 0.8};  // median 0.8, min 0.7, max 0.9
  json j = summary_json(cfg, {cpu});
  CHECK(j["status"] == "ok");
  CHECK(j["runs"][0]["train_seconds_min"] == 0.7);
  CHECK(j["runs"][0]["train_seconds_max"] == 0.9);
  CHECK(j["runs"][0]["train_seconds_repeats"] == json::array({0.9, 0.7, 0.8}));
  RunResult gpu = fake_run(Device::gpu, 0.2, false);
  gpu.diverged_epoch = 3;
  j = summary_json(cfg, {cpu, gpu});
  CHECK(j["status"] == "diverged");
  CHECK(j["runs"][0]["status"] == "ok");
  gpu.diverged_epoch = 0;
  gpu.interrupted = true;
  CHECK(summary_json(cfg, {cpu, gpu})["status"] == "interrupted");
  cpu.interrupted = true;  // both did not finish: the first run's status
  gpu.interrupted = false;
  gpu.diverged_epoch = 3;
  CHECK(summary_json(cfg, {cpu, gpu})["status"] == "interrupted");
}

TEST_CASE("console: the loss table ends at the last epoch, and a time to target says how it was obtained", "[report]") {
  Config cfg;
  cfg.train.epochs = 7;
  cfg.train.log_every = 3;
  RunResult r = fake_run(Device::cpu, 0.7, false);
  r.epochs_done = r.epochs_timed = 7;
  r.losses = {7, 6, 5, 4, 3, 2, 1};
  TargetResult t;
  t.loss = 2.5;
  t.reached = true;
  t.epoch = 6;
  t.seconds = 0.6;
  t.bracket_from = 3;  // the chunk of epochs 4..7, measured at its ends: 0.3 + 3/4 * 0.4 s
  t.bracket_to = 7;
  t.bracket_from_seconds = 0.3;
  t.bracket_to_seconds = 0.7;
  r.target = t;
  std::string out = printed(cfg, {r});
  // Rows at epochs 1, 3, 6 (log_every) and 7, the last, though 7 is no multiple of 3.
  const std::pair<int, const char*> rows[] = {{1, "7"}, {3, "5"}, {6, "2"}, {7, "1"}};
  for (const auto& [epoch, loss] : rows)
    CHECK_THAT(out, Catch::Contains(fmt::format("  {:>8} {:>14}\n", epoch, loss)));
  CHECK_THAT(out, Catch::Contains("loss 2.5 reached at epoch 6 after ~600.00 ms (interpolated between the measured "
                                  "300.00 ms at epoch 3 and 700.00 ms at epoch 7"));
  r.target->measured = true;
  r.target->readings = {0.6, 0.62};  // two repeats read the clock at epoch 6: median 0.61
  r.target->seconds = 0.61;
  out = printed(cfg, {r});
  CHECK_THAT(out, Catch::Contains("loss 2.5 reached at epoch 6 after 610.00 ms (measured: clock read at that epoch, "
                                  "median of 2 repeats)"));
  CHECK_THAT(out, !Catch::Contains("interpolated"));
  // log_every 1: each epoch once (epoch 1 was shown twice).
  cfg.train.log_every = 1;
  out = printed(cfg, {r});
  for (int epoch = 1; epoch <= 7; ++epoch) {
    const std::string row = fmt::format("\n  {:>8} {:>14}\n", epoch, 8 - epoch);
    INFO(epoch);
    CHECK(out.find(row) != std::string::npos);
    CHECK(out.find(row) == out.rfind(row));
  }
}

TEST_CASE("console header: the model's MFLOP per epoch, by hand", "[report]") {
  // 2-20-5-1: 2*20 + 20*5 + 5*1 = 145 multiply-adds per sample; a training step does 3 per
  // weight (forward, the weight gradient, the delta below) of 2 FLOP each: 6 * 145 * 40,000
  // samples = 34.8 MFLOP per epoch.
  Config cfg;
  Dataset data;
  data.n = 40000;
  data.inputs = 2;
  data.outputs = 1;
  data.description = "hand";
  const json context = {{"cpu_model", "Test CPU 9000"}, {"hardware_threads", 2}, {"load_average_1min", 0.5},
                        {"date_utc", "2026-11-30T01:02:03Z"}};
  const std::string out = printed_by([&](std::FILE* f) { print_header(f, cfg, data, nullptr, context, false); });
  CHECK_THAT(out, Catch::Contains("171 parameters, 34.8 MFLOP/epoch"));
  // The machine, its load and the date as the context took them (before the runs).
  CHECK_THAT(out, Catch::Contains("CPU Test CPU 9000 (2 hardware threads, load average 0.50) · 2026-11-30T01:02:03Z"));
}

TEST_CASE("summary.json: the context given is the one written, and one taken now has a date", "[report]") {
  Config cfg;
  const json given = {{"cpu_model", "Test CPU 9000"}, {"load_average_1min", 0.25}, {"date_utc", "2026-11-30T01:02:03Z"}};
  CHECK(summary_json(cfg, {fake_run(Device::cpu, 0.8, false)}, given)["context"] == given);
  const std::string date = summary_json(cfg, {fake_run(Device::cpu, 0.8, false)})["context"]["date_utc"];
  REQUIRE(date.size() == 20);  // 2026-11-30T01:02:03Z
  CHECK(date[4] == '-');
  CHECK(date[10] == 'T');
  CHECK(date[19] == 'Z');
}
