// bench_worth.hpp — "is the GPU worth it?" for `nntrain bench`: time to a target loss, cost
// per run and to target (--price), the verdict per point and the cost crossover. Rendering
// only: the measurements are the trainer's (core/trainer), the arithmetic (costs, ratios,
// the cost crossover, found by finish_report) core/bench_stats'.
//
// What is measured and what is arithmetic (docs/BENCH.md): times per run and to target are
// device-clock readings (a time to target is labelled "interpolated" when no chunk ended at
// the crossing epoch); every cost is price × such a time, and every ratio divides two of them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "bench_points.hpp"

namespace nntrain {

// The median time to target of `device`'s run at `p`, or -1 when it did not finish (ok) or
// did not reach the target (or no target was set).
double point_target_seconds(const BenchPoint& p, Device device);
// That time as the summary table shows it: "12.3 ms", "12.3 ms*" (interpolated) or "-".
std::string point_target_text(const BenchPoint& p, Device device);

// One line per point, "" unless both devices have the times it needs:
// "gpu 14.2× faster, 4.7× cheaper per run at these prices" (speed only without prices).
std::string point_verdict(const BenchReport& r, const BenchPoint& p);
// The same to the target loss, or who reached it: "only cpu reached loss 0.05", "" without
// a target or when not both devices finished.
std::string point_target_verdict(const BenchReport& r, const BenchPoint& p);

// "GPU cheaper per run from data.grid = 200 (40000 samples) on ...".
std::string cost_crossover_message(const BenchReport& r);

// JSON pieces of schema 2 (docs/BENCH.md): a result's "cost" object (null without prices),
// the extra fields of a "points" entry, and "cost_crossover" (null unless evaluated).
nlohmann::json result_cost_json(const BenchReport& r, const RunResult& run);
void add_point_worth_json(const BenchReport& r, const BenchPoint& p, nlohmann::json& point);
nlohmann::json cost_crossover_json(const BenchReport& r);

// Markdown: the extra columns of the per-run table (header cells, alignment cells, a row's
// cells; each "" when no option asks for them), and of the CPU/GPU table.
std::string worth_run_header(const BenchReport& r);
std::string worth_run_align(const BenchReport& r);
std::string worth_run_cells(const BenchReport& r, const RunResult& run);
std::string worth_point_header(const BenchReport& r);
std::string worth_point_align(const BenchReport& r);
std::string worth_point_cells(const BenchReport& r, int size_position);
// The context lines (target, prices) and the closing sentences (cost crossover) of the page.
std::string worth_markdown_context(const BenchReport& r);
std::string worth_markdown_footer(const BenchReport& r);

// Console: a run's target and cost line(s) under its row, a point's verdict lines, the
// header lines and the closing cost crossover line.
void print_run_worth(std::FILE* out, const BenchReport& r, const RunResult& run);
void print_point_worth(std::FILE* out, const BenchReport& r, const BenchPoint& p);
void print_worth_header(std::FILE* out, const BenchReport& r);
void print_worth_footer(std::FILE* out, const BenchReport& r, const char* bold, const char* end);

// A cost per run as reports show it, per kCostRuns runs: a run of 0.0262 s at 1.1 EUR per
// hour (8.0e-6 EUR) is "8.01e-3 EUR per 1,000 runs"; "-" for a negative amount.
std::string money_text(double per_run, const Prices& prices);
// "1,000": kCostRuns as the reports write it.
std::string runs_text();

}  // namespace nntrain
