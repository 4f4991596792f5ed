// bench_stats.hpp — the arithmetic behind `nntrain bench`, kept free of I/O so it can be
// tested on its own: summary statistics of repeated timings, the --sweep syntax, the
// CPU/GPU crossover finder, and prices, costs and the per-point verdict (--price).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "names.hpp"

namespace nntrain {

// Statistics of n >= 1 timings (seconds). stddev is the sample standard deviation
// (divides by n - 1; 0 for a single sample); median of an even count is the mean of the
// two middle values.
struct SampleStats {
  int n = 0;
  double median = 0, min = 0, max = 0, mean = 0, stddev = 0;
};
// Throws std::invalid_argument on an empty vector.
SampleStats summarize(const std::vector<double>& samples);

// Repeats that disagree this much (slowest / fastest) make a median a poor summary: other
// work on the machine, a clock change, a page-in. Above it bench flags the run and marks the
// point's speed-up and verdict uncertain (docs/BENCH.md, "Repeats that disagree"). 1.5 is
// the limit issue 44 proposed: a factor no device comparison at one point should hinge on,
// and far below what a busy 2-core machine gave (median 20.6 ms, min 3.0 ms at load 5.7).
constexpr double kSpreadLimit = 1.5;
// max / min of the repeats: 1 for one repeat (or all zero), infinity when the fastest is 0
// and another is not.
double spread_ratio(const SampleStats& s);
// Two or more repeats whose spread_ratio exceeds `limit`.
bool spread_is_wide(const SampleStats& s, double limit = kSpreadLimit);

// `key.path=v1,v2,...`. The values are split at top-level commas only — commas inside
// [...], {...} or "..." stay — so `model.layers=[2,20,1],[2,64,1]` is two values. Each
// value is parsed as JSON when it is valid JSON, else taken as a string (as overrides are).
struct SweepSpec {
  std::string key;                  // dotted config path, e.g. "data.grid"
  std::vector<std::string> texts;   // each value as written
  std::vector<nlohmann::json> values;
  // The override that sets point i: "key=text".
  std::string override_for(size_t i) const { return key + "=" + texts[i]; }
};
// Throws UsageError naming what is wrong (no '=', empty key, empty value, unbalanced brackets);
// `option` is the flag the messages name (`sweep --grid` uses the same grammar).
// A value listed twice is refused too (the two points would be one run twice).
SweepSpec parse_sweep(const std::string& arg, const std::string& option = "--sweep");
// Throws UsageError when a key.path=value override sets `axis`'s key (or a key inside it):
// the swept value replaces it at every point, so it would be dropped without a word.
void check_axis_vs_overrides(const SweepSpec& axis, const std::vector<std::string>& overrides,
                             const std::string& option);

// Top-level comma split used by parse_sweep. Throws UsageError on unbalanced brackets or
// an unterminated string.
std::vector<std::string> split_top_level(const std::string& list, const std::string& option = "--sweep");

// One sweep point's median times; a negative time means "this device has no valid time
// here" (not run, or diverged). The cost crossover passes costs per run instead of seconds:
// the finder only compares the two devices' numbers.
struct PointTimes {
  double samples = 0;   // data size of the point (the x axis of a crossover plot)
  double cpu_seconds = -1;
  double gpu_seconds = -1;
};

// Where the GPU overtakes the CPU, over points given in ascending size order.
struct Crossover {
  bool evaluated = false;  // at least one point has both times
  int first_faster = -1;   // first point where GPU < CPU; -1 if none
  int faster_from = -1;    // first point from which GPU < CPU at every later valid point; -1 if none
  // The valid point just before faster_from (where the GPU was not faster); -1 when
  // faster_from is the first valid point (the GPU faster at every size tried).
  int slower_before = -1;
  // faster_from is the first valid point but smaller points lack a time on a device (a run
  // diverged or did not run): the crossover is below faster_from, not below the range.
  bool unknown_before = false;
  // Log-log interpolation of the size where CPU time / GPU time = 1, between the valid
  // point before `faster_from` and `faster_from`; 0 when there is no such bracket
  // (GPU never faster, already faster at the smallest size, or the two points have the same
  // data size: a sweep of the model, not of the data).
  double interpolated_samples = 0;
};
Crossover find_crossover(const std::vector<PointTimes>& points);

// --price cpu=X,gpu=Y: what an hour of each device costs, in a unit the user names with
// --currency (only a label: nntrain converts nothing).
struct Prices {
  double cpu = -1, gpu = -1;  // per hour; < 0 = not given
  std::string currency;       // e.g. "EUR"; "" = not given
  bool has(Device d) const { return of(d) > 0; }
  double of(Device d) const { return d == Device::cpu ? cpu : gpu; }
  // "EUR" or "price units" when no currency was given.
  std::string unit() const { return currency.empty() ? std::string("price units") : currency; }
};
// Parses "cpu=0.2,gpu=1.1" (either or both, in any order). Throws UsageError naming the value
// for an unknown device, a device given twice, or a price that is not a finite number > 0.
Prices parse_prices(const std::string& arg);
// Checks a --currency label: 1 to 16 printable characters, no comma or quote.
void check_currency(const std::string& label);

// Cost of `seconds` of a device priced `price_per_hour`: price × seconds / 3600. Plain
// arithmetic on a measured time; the price is the user's.
double cost_of(double price_per_hour, double seconds);

// Reports show costs per this many runs: one run of a benchmark-sized problem costs a
// millionth of a price unit or less ("7.28e-08 price units" says nothing to a reader), a
// thousand runs an amount people write.
constexpr int kCostRuns = 1000;
// A number for people, rounded to three significant digits: plain from 0.01 to below 100
// ("0.0728", "0.0260", "7.28"), whole from 100 to below 1e6 ("728", "7284"), else in
// engineering notation, the exponent a multiple of 3 ("72.8e-6", "1.10e-3", "1.25e9"); "0"
// for zero, "-" for a negative or non-finite value.
std::string engineering_text(double v);

// The cost crossover: find_crossover over each point's cost per run (cost_of each time at
// its device's price; a missing time stays missing). Both prices must be given.
Crossover find_cost_crossover(const std::vector<PointTimes>& times, const Prices& prices);

// A factor as the verdict prints it: "14.2", "4.7", "1.04" (two decimals below 1.095, so
// a near tie does not read "1.0×"), "215" (none from 100).
std::string ratio_text(double factor);

// The verdict for one point: which device is faster and which is cheaper, by how much, e.g.
// "gpu 14.2× faster, 4.7× cheaper per run at these prices" or "gpu 1.8× faster, but cpu
// 1.7× cheaper per run at these prices". `what` names the measure ("per run", "to loss
// 0.05"). Times must be > 0; without prices (nullptr, or one device unpriced) only speed.
std::string verdict_text(double cpu_seconds, double gpu_seconds, const Prices* prices, const std::string& what);

}  // namespace nntrain
