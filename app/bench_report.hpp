// bench_report.hpp — what `nntrain bench` reports: the console tables, the JSON export
// (schema in docs/BENCH.md) and the Markdown table. Rendering on top of core/bench_stats'
// arithmetic; cmd_bench.cpp runs. Includes bench_worth (its extra columns), not the reverse.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench_points.hpp"
#include "gpu_info.hpp"

namespace nntrain {

// Fills size_order, both_devices, has_target and the crossovers (by time; by cost per run
// when both devices are priced) from points and devices.
void finish_report(BenchReport& r);

nlohmann::json bench_json(const BenchReport& r);
std::string bench_markdown(const BenchReport& r);
void print_bench(std::FILE* out, const BenchReport& r, bool color);

// Why bench must not time this GPU, or "" when it may: a simulated GPU's times are not
// measurements, and bench's only product is times (docs/BENCH.md).
std::string bench_gpu_problem(const GpuInfo& gpu);

}  // namespace nntrain
