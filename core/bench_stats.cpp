// bench_stats.cpp — see bench_stats.hpp.
#include "bench_stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string_view>

#include "errors.hpp"

namespace nntrain {

SampleStats summarize(const std::vector<double>& samples) {
  if (samples.empty()) throw std::invalid_argument("summarize: no samples");
  std::vector<double> v = samples;
  std::sort(v.begin(), v.end());
  SampleStats s;
  s.n = int(v.size());
  const size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.min = v.front();
  s.max = v.back();
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / double(n);
  if (n > 1) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(ss / double(n - 1));
  }
  return s;
}

double spread_ratio(const SampleStats& s) {
  if (s.n < 2 || s.max <= 0) return 1.0;
  return s.min > 0 ? s.max / s.min : INFINITY;
}

bool spread_is_wide(const SampleStats& s, double limit) { return s.n >= 2 && spread_ratio(s) > limit; }

std::vector<std::string> split_top_level(const std::string& list, const std::string& option) {
  std::vector<std::string> out;
  std::string cur;
  std::vector<char> stack;  // expected closing brackets
  bool in_string = false, escaped = false;
  for (char c : list) {
    if (in_string) {
      cur += c;
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[') stack.push_back(']');
    else if (c == '{') stack.push_back('}');
    else if (c == ']' || c == '}') {
      if (stack.empty() || stack.back() != c)
        throw UsageError(option + " values \"" + list + "\": unbalanced '" + std::string(1, c) + "'");
      stack.pop_back();
    } else if (c == ',' && stack.empty()) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (in_string) throw UsageError(option + " values \"" + list + "\": unterminated string");
  if (!stack.empty())
    throw UsageError(option + " values \"" + list + "\": missing '" + std::string(1, stack.back()) + "'");
  out.push_back(cur);
  return out;
}

SweepSpec parse_sweep(const std::string& arg, const std::string& option) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError(option + " \"" + arg + "\" is not of the form key.path=v1,v2,...");
  SweepSpec s;
  s.key = arg.substr(0, eq);
  if (s.key.find_first_of(" \t,[]{}\"") != std::string::npos)
    throw UsageError(option + " key \"" + s.key + "\" is not a config key path (e.g. data.grid)");
  const std::vector<std::string> parts = split_top_level(arg.substr(eq + 1), option);
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& t = parts[i];
    const size_t b = t.find_first_not_of(" \t"), e = t.find_last_not_of(" \t");
    if (b == std::string::npos)
      throw UsageError(option + " " + s.key + ": value " + std::to_string(i + 1) + " of " +
                       std::to_string(parts.size()) + " is empty");
    const std::string text = t.substr(b, e - b + 1);
    nlohmann::json v;
    try {
      v = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error&) {
      v = text;
    }
    for (size_t k = 0; k < s.values.size(); ++k)  // two points would be one run twice
      if (s.values[k] == v)
        throw UsageError(option + " " + s.key + ": " + text + " is listed twice (values " + std::to_string(k + 1) +
                         " and " + std::to_string(i + 1) + "): the two points would be the same run");
    s.texts.push_back(text);
    s.values.push_back(v);
  }
  return s;
}

namespace {

// Whether `v` sets the dotted `path` below it: a non-object replaces everything below, an
// object (merged, RFC 7386) only the keys it names.
bool sets_path(const nlohmann::json& v, const std::string& path) {
  if (!v.is_object()) return true;
  const size_t dot = path.find('.');
  const std::string head = path.substr(0, dot);
  if (!v.contains(head)) return false;
  return dot == std::string::npos || sets_path(v.at(head), path.substr(dot + 1));
}

}  // namespace

void check_axis_vs_overrides(const SweepSpec& axis, const std::vector<std::string>& overrides,
                             const std::string& option) {
  for (const std::string& o : overrides) {
    const size_t eq = o.find('=');
    const std::string key = o.substr(0, eq);
    // The axis's value is applied after the overrides, so the override is lost where a swept
    // value sets its key (the same key, or one inside the axis's), or where the override's
    // own object sets the axis's key (one inside the override's).
    bool lost = key == axis.key;
    if (key.rfind(axis.key + ".", 0) == 0) {
      const std::string below = key.substr(axis.key.size() + 1);
      lost = std::any_of(axis.values.begin(), axis.values.end(),
                         [&](const nlohmann::json& v) { return sets_path(v, below); });
    } else if (axis.key.rfind(key + ".", 0) == 0 && eq != std::string::npos) {
      const nlohmann::json value = nlohmann::json::parse(o.substr(eq + 1), nullptr, false);
      lost = value.is_object() && sets_path(value, axis.key.substr(key.size() + 1));
    }
    if (lost)
      throw UsageError(option + " " + axis.key + ": the override " + o +
                       " sets it too, and every swept value would replace it; drop the override or the sweep");
  }
}

Crossover find_crossover(const std::vector<PointTimes>& points) {
  Crossover c;
  std::vector<int> valid;
  for (size_t i = 0; i < points.size(); ++i)
    if (points[i].cpu_seconds > 0 && points[i].gpu_seconds > 0) valid.push_back(int(i));
  if (valid.empty()) return c;
  c.evaluated = true;
  auto gpu_wins = [&](int i) { return points[size_t(i)].gpu_seconds < points[size_t(i)].cpu_seconds; };
  for (int i : valid)
    if (gpu_wins(i)) {
      c.first_faster = i;
      break;
    }
  // Walk back from the largest size while the GPU keeps winning.
  for (size_t k = valid.size(); k-- > 0;) {
    if (!gpu_wins(valid[k])) break;
    c.faster_from = valid[k];
    c.slower_before = k > 0 ? valid[k - 1] : -1;
    c.unknown_before = k == 0 && valid[0] > 0;
    if (k > 0) {
      const PointTimes& lo = points[size_t(valid[k - 1])];
      const PointTimes& hi = points[size_t(valid[k])];
      if (!gpu_wins(valid[k - 1]) && lo.samples > 0 && hi.samples > lo.samples) {
        const double r0 = std::log(lo.cpu_seconds / lo.gpu_seconds);  // <= 0
        const double r1 = std::log(hi.cpu_seconds / hi.gpu_seconds);  // > 0
        const double t = r1 > r0 ? -r0 / (r1 - r0) : 1.0;
        c.interpolated_samples = std::exp(std::log(lo.samples) + t * (std::log(hi.samples) - std::log(lo.samples)));
      }
    }
  }
  return c;
}

namespace {
std::string trimmed(const std::string& t) {
  const size_t b = t.find_first_not_of(" \t"), e = t.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : t.substr(b, e - b + 1);
}
}  // namespace

Prices parse_prices(const std::string& arg) {
  Prices p;
  const auto fail = [&](const std::string& why) { throw UsageError("--price \"" + arg + "\": " + why); };
  if (trimmed(arg).empty()) fail("expected device=price per hour, e.g. cpu=0.2,gpu=1.1");
  size_t start = 0;
  while (start <= arg.size()) {
    const size_t comma = std::min(arg.find(',', start), arg.size());
    const std::string item = trimmed(arg.substr(start, comma - start));
    start = comma + 1;
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      fail("\"" + item + "\" is not device=price (e.g. cpu=0.2,gpu=1.1)");
    const std::string name = trimmed(item.substr(0, eq)), text = trimmed(item.substr(eq + 1));
    const auto d = parse_name(kDeviceNames, name);
    if (!d) fail("unknown device \"" + name + "\" (expected cpu or gpu)");
    if (p.of(*d) > 0) fail(name + " is priced twice");
    char* end = nullptr;
    const double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || text.find_first_of("xX") != std::string::npos)
      fail(name + " price \"" + text + "\" is not a number");  // strtod reads hex: 0x10 is no price typed
    if (!std::isfinite(v) || !(v > 0))
      fail(name + " price " + text + " is not a finite number > 0 (the price of one hour of the device)");
    (*d == Device::cpu ? p.cpu : p.gpu) = v;
  }
  return p;
}

void check_currency(const std::string& label) {
  // The label goes raw into the console, CSV-like lists and the Markdown page: a character
  // Markdown reads as code, emphasis, HTML ('<!--' hides the rest of a GitHub page) or a link
  // is refused with the rest, not escaped in one output and shown raw in another.
  const bool bad_char = std::any_of(label.begin(), label.end(), [](char c) {
    return (unsigned char)c < 0x20 || c == 0x7f || std::string_view(",\"|\\`*_<>[]~&").find(c) != std::string_view::npos;
  });
  if (trimmed(label).empty() || label.size() > 16 || bad_char)
    throw UsageError("--currency \"" + label + "\": expected a short label such as EUR or USD (1 to 16 characters, "
                     "none of , \" | \\ ` * _ < > [ ] ~ & or a control character)");
}

double cost_of(double price_per_hour, double seconds) { return price_per_hour * seconds / 3600.0; }

std::string engineering_text(double v) {
  if (!std::isfinite(v) || v < 0) return "-";
  if (v == 0) return "0";
  // Rounded to three digits first, so the form follows the printed value (0.0099996 is
  // 0.0100, 99.96 is 100, 999.7e-6 is 1.00e-3); '#' keeps a trailing zero ("0.0260"). Whole
  // amounts from 100 keep every digit ("7284").
  auto digits3 = [](double x) {  // "0.0260", "72.0", "125" (not "125." or "125.0")
    return x >= 99.95 ? fmt::format("{:.0f}", x) : fmt::format("{:#.3g}", x);
  };
  const double r = std::stod(fmt::format("{:.3g}", v));
  if (r >= 0.01 && r < 100) return digits3(r);
  if (r >= 100 && std::round(v) < 1e6) return fmt::format("{:.0f}", v);
  const int e = int(std::floor(std::log10(r) / 3 + 1e-12)) * 3;
  return digits3(r / std::pow(10.0, e)) + "e" + std::to_string(e);
}

Crossover find_cost_crossover(const std::vector<PointTimes>& times, const Prices& prices) {
  std::vector<PointTimes> costs;
  for (const PointTimes& t : times)
    costs.push_back({t.samples, t.cpu_seconds > 0 ? cost_of(prices.cpu, t.cpu_seconds) : -1.0,
                     t.gpu_seconds > 0 ? cost_of(prices.gpu, t.gpu_seconds) : -1.0});
  return find_crossover(costs);
}

std::string ratio_text(double f) {
  if (f < 1.095) return fmt::format("{:.2f}", f);
  if (std::round(f * 10) / 10 < 100) return fmt::format("{:.1f}", f);  // 99.96 prints "100", not "100.0"
  return fmt::format("{:.0f}", f);
}

std::string verdict_text(double cpu_seconds, double gpu_seconds, const Prices* prices, const std::string& what) {
  const double speed = cpu_seconds / gpu_seconds;  // > 1: the GPU is faster
  const char* fast = speed > 1 ? "gpu" : "cpu";
  std::string s = speed == 1 ? std::string("cpu and gpu equally fast")
                             : fmt::format("{} {}× faster", fast, ratio_text(speed > 1 ? speed : 1 / speed));
  if (!prices || !prices->has(Device::cpu) || !prices->has(Device::gpu)) return s + " " + what;
  const double ratio = cost_of(prices->cpu, cpu_seconds) / cost_of(prices->gpu, gpu_seconds);  // > 1: GPU cheaper
  const char* cheap = ratio > 1 ? "gpu" : "cpu";
  const std::string factor = ratio_text(ratio > 1 ? ratio : 1 / ratio);
  if (ratio == 1) s += ", the same cost " + what;
  else if (speed == 1) s += fmt::format("; {} {}× cheaper {}", cheap, factor, what);
  else if (std::string(cheap) == fast) s += fmt::format(", {}× cheaper {}", factor, what);
  else s += fmt::format(", but {} {}× cheaper {}", cheap, factor, what);
  return s + " at these prices";
}

}  // namespace nntrain
