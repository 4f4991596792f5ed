// bench_report.hpp — what `nntrain bench` reports: the console tables, the JSON export
// (schema in docs/BENCH.md) and the Markdown table. Rendering only; cmd_bench.cpp runs.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_stats.hpp"
#include "gpu_info.hpp"
#include "trainer.hpp"

namespace nntrain {

// One sweep point: its value and one RunResult per device (in --devices order).
struct BenchPoint {
  int index = 0;             // position in the sweep as given, 0-based
  std::string key;           // sweep key; "" without --sweep
  std::string text;          // the value as written; "" without --sweep
  nlohmann::json value;      // the value as parsed; null without --sweep
  int samples = 0;
  int epochs = 0;
  std::vector<RunResult> runs;
};

struct BenchReport {
  std::string name;              // experiment name
  nlohmann::json context;        // machine, build, GPU, settings
  std::vector<Device> devices;
  std::vector<BenchPoint> points;  // sweep order
  std::vector<int> size_order;     // point indices by ascending samples (stable)
  bool both_devices = false;
  Crossover crossover;             // over size_order positions
};

// Fills size_order and crossover from points and devices.
void finish_report(BenchReport& r);

// The run's median time on `device` at `p`, or -1 if it did not run or did not finish.
double point_median(const BenchPoint& p, Device device);

nlohmann::json bench_json(const BenchReport& r);
std::string bench_markdown(const BenchReport& r);
void print_bench(std::FILE* out, const BenchReport& r, bool color);

// Why bench must not time this GPU, or "" when it may: a simulated GPU's times are not
// measurements, and bench's only product is times (docs/BENCH.md).
std::string bench_gpu_problem(const GpuInfo& gpu);

// "12.3 ms" style.
std::string seconds_text(double s);

}  // namespace nntrain
