// bench_points.cpp — see bench_points.hpp.
#include "bench_points.hpp"

#include <fmt/format.h>

#include <cmath>

namespace nntrain {

const RunResult* find_run(const BenchPoint& p, Device device) {
  for (const auto& r : p.runs)
    if (r.device == device) return &r;
  return nullptr;
}

std::string point_label(const BenchPoint& p) {
  return p.key.empty() ? std::string("(config as given)") : p.key + " = " + p.text;
}

const BenchPoint& at_size_position(const BenchReport& r, int pos) {
  return r.points[size_t(r.size_order[size_t(pos)])];
}

std::string crossover_sentence(const BenchReport& r, const Crossover& c, const std::string& better,
                               const std::string& worse, const std::string& never) {
  if (!r.both_devices) return "not evaluated (needs both cpu and gpu)";
  if (!c.evaluated) return "not evaluated (no point has a valid time on both devices)";
  if (c.faster_from < 0) return never;
  const BenchPoint& p = at_size_position(r, c.faster_from);
  std::string s;
  if (c.slower_before < 0 && c.unknown_before) {
    s = fmt::format("GPU {} at every size with a time on both devices, from {} ({} samples): the crossover is "
                    "below {} samples, where no point has one",
                    better, point_label(p), p.samples, p.samples);
  } else if (c.slower_before < 0) {
    s = fmt::format("GPU {} at every size tried, from {} ({} samples): the crossover is below this range", better,
                    point_label(p), p.samples);
  } else if (c.interpolated_samples <= 0) {  // the point before has the same data size
    const BenchPoint& q = at_size_position(r, c.slower_before);
    s = fmt::format("GPU {} from {} ({} samples) on, {} at {} ({} samples): no break-even size, the two points "
                    "differ in more than their data",
                    better, point_label(p), p.samples, worse, point_label(q), q.samples);
  } else
    s = fmt::format("GPU {} from {} ({} samples) on; break-even near {:.0f} samples (log-log interpolation)", better,
                    point_label(p), p.samples, c.interpolated_samples);
  if (c.first_faster >= 0 && c.first_faster != c.faster_from) {
    const BenchPoint& f = at_size_position(r, c.first_faster);
    s += fmt::format(" (GPU was also {} at {} but {} again at a larger size: noisy or non-monotonic)", better,
                     point_label(f), worse);
  }
  return s;
}

std::string seconds_text(double s) {
  if (s < 0) return "-";
  // The unit follows the printed value: 0.99999 ms is "1.00 ms", not "1000.0 us".
  if (std::round(s * 1e7) < 1e4) return fmt::format("{:.1f} us", s * 1e6);
  if (std::round(s * 1e5) < 1e5) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

double run_spread(const RunResult& run) {
  if (run.status() != "ok" || run.train_seconds_per_repeat.empty()) return 1.0;
  return spread_ratio(summarize(run.train_seconds_per_repeat));
}

bool run_spread_wide(const RunResult& run) {
  return run.status() == "ok" && !run.train_seconds_per_repeat.empty() &&
         spread_is_wide(summarize(run.train_seconds_per_repeat));
}

std::string spread_text(double spread) {
  return std::isfinite(spread) ? fmt::format("{:.2f}\u00d7", spread) : std::string("inf\u00d7");
}

std::string point_uncertainty(const BenchPoint& p) {
  std::string s;
  for (const RunResult& run : p.runs)
    if (run_spread_wide(run))
      s += fmt::format("{}{} repeats spread {} (max/min > {:g})", s.empty() ? "" : ", ", to_string(run.device),
                       spread_text(run_spread(run)), kSpreadLimit);
  return s;
}

double point_median(const BenchPoint& p, Device device) {
  const RunResult* r = find_run(p, device);
  if (!r || r->status() != "ok" || r->train_seconds_per_repeat.empty()) return -1;
  return summarize(r->train_seconds_per_repeat).median;
}

}  // namespace nntrain
