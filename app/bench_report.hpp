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
// when both devices are priced) from points and devices; and, where the caller did not
// record them, context.command_line and context.argv (this process's, /proc/self/cmdline)
// and context.spread_limit.
void finish_report(BenchReport& r);

// One argument as a POSIX shell reads it back: bare when it is only [A-Za-z0-9_@%+=:,./-],
// else in single quotes ('it'\''s'), or $'...' with escapes when it holds a control
// character (a newline would end a Markdown line).
std::string shell_quote(const std::string& arg);
// The arguments joined by spaces, each shell_quote'd: a command a reader can paste.
std::string shell_command(const std::vector<std::string>& argv);
// This process's arguments (/proc/self/cmdline; empty where it cannot be read).
std::vector<std::string> process_argv();

nlohmann::json bench_json(const BenchReport& r);
std::string bench_markdown(const BenchReport& r);
void print_bench(std::FILE* out, const BenchReport& r, bool color);

// Why bench must not time this GPU, or "" when it may: a simulated GPU's times are not
// measurements, nor are a stamped kernel's (NNTRAIN_RESIDENT_STAMPS set), and bench's only
// product is times (docs/BENCH.md).
std::string bench_gpu_problem(const GpuInfo& gpu);

}  // namespace nntrain
