// bench_points.hpp — what `nntrain bench` measured, as plain data (one BenchPoint per
// sweep point, the BenchReport around them), and the look-ups and phrases both of its
// renderers use: bench_report (tables, JSON, Markdown) and bench_worth (target, cost,
// verdict). Both include this; bench_report includes bench_worth, never the other way.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench_stats.hpp"
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
  std::optional<Prices> prices;    // --price (and --currency)
  bool has_target = false;         // some run had train.target_loss set
  Crossover cost_crossover;        // over size_order positions, from costs per run
};

// The run's median time on `device` at `p`, or -1 if it did not run or did not finish.
double point_median(const BenchPoint& p, Device device);
// The run of `device` at `p`, or nullptr.
const RunResult* find_run(const BenchPoint& p, Device device);
// The point at position `pos` of size_order.
const BenchPoint& at_size_position(const BenchReport& r, int pos);
// "data.grid = 200", or "(config as given)" without a sweep.
std::string point_label(const BenchPoint& p);
// The crossover sentence for `c`: `better` is what the GPU becomes ("faster", "cheaper per
// run"), `worse` its opposite ("slower", "dearer"), `never` the sentence when it never does.
std::string crossover_sentence(const BenchReport& r, const Crossover& c, const std::string& better,
                               const std::string& worse, const std::string& never);

// A time in the unit that suits it: "303.7 us", "12.30 ms", "1.234 s" (the unit chosen by
// the rounded value); "-" for a negative (unknown) time.
std::string seconds_text(double s);

// Repeats that disagree (core/bench_stats' kSpreadLimit): max / min of a finished run's
// repeats (1 for a run that did not finish or has one repeat), and whether it is above the
// limit.
double run_spread(const RunResult& run);
bool run_spread_wide(const RunResult& run);
// "6.84×" ("inf×" when the fastest repeat read 0).
std::string spread_text(double spread);
// Why the point's medians, speed-up and verdicts are uncertain: "cpu repeats spread 6.84×
// (max/min > 1.5)", one clause per such device; "" when no run at `p` spreads that much.
std::string point_uncertainty(const BenchPoint& p);

}  // namespace nntrain
