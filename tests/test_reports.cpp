// test_reports.cpp — what the reports say, driven by hand-made results (the measurement code
// itself is tested through the binary elsewhere): the speed-up arithmetic, and a simulated
// GPU never presented as a measurement.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "bench_report.hpp"
#include "config.hpp"
#include "report.hpp"

using namespace nntrain;

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
  std::FILE* f = std::tmpfile();
  print_results(f, cfg, runs, false);
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += char(c);
  std::fclose(f);
  return s;
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
}

TEST_CASE("bench refuses to time a simulated GPU, and only a simulated one", "[bench][gpusim]") {
  GpuInfo real;
  real.available = true;
  real.name = "NVIDIA H100 80GB HBM3";
  CHECK(bench_gpu_problem(real).empty());
  GpuInfo sim = real;
  sim.name = "GPGPU-Sim_v4.2.0";
  sim.simulated = true;
  const std::string why = bench_gpu_problem(sim);
  CHECK_THAT(why, Catch::Contains("GPGPU-Sim_v4.2.0"));
  CHECK_THAT(why, Catch::Contains("not measurements"));
}
