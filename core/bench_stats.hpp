// bench_stats.hpp — the arithmetic behind `nntrain bench`, kept free of I/O so it can be
// tested on its own: summary statistics of repeated timings, the --sweep syntax, and the
// CPU/GPU crossover finder.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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
SweepSpec parse_sweep(const std::string& arg, const std::string& option = "--sweep");

// Top-level comma split used by parse_sweep. Throws UsageError on unbalanced brackets or
// an unterminated string.
std::vector<std::string> split_top_level(const std::string& list, const std::string& option = "--sweep");

// One sweep point's median times; a negative time means "this device has no valid time
// here" (not run, or diverged).
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
  // Log-log interpolation of the size where CPU time / GPU time = 1, between the valid
  // point before `faster_from` and `faster_from`; 0 when there is no such bracket
  // (GPU never faster, or already faster at the smallest size).
  double interpolated_samples = 0;
};
Crossover find_crossover(const std::vector<PointTimes>& points);

}  // namespace nntrain
