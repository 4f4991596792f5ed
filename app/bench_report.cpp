// bench_report.cpp — see bench_report.hpp.
#include "bench_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <numeric>
#include <string_view>

#include "bench_worth.hpp"
#include "run_json.hpp"
#include "sysinfo.hpp"

namespace nntrain {

using nlohmann::json;

namespace {

std::string sweep_value_text(const BenchPoint& p) { return p.key.empty() ? std::string("-") : p.text; }

// speed-up = CPU median / GPU median at a point; <= 0 when either is missing.
double point_speedup(const BenchPoint& p) {
  const double c = point_median(p, Device::cpu), g = point_median(p, Device::gpu);
  return c > 0 && g > 0 ? c / g : 0.0;
}

std::string speedup_text(double sp) {
  if (sp <= 0) return "-";
  if (sp == 1) return "equally fast";  // as the verdict says it
  return sp >= 1 ? fmt::format("GPU {:.2f}× faster", sp) : fmt::format("GPU {:.2f}× slower", 1 / sp);
}

// The speed-up of a point, marked when its repeats disagree (the comparison may not hold).
std::string point_speedup_text(const BenchPoint& p) {
  const double sp = point_speedup(p);
  return speedup_text(sp) + (sp > 0 && !point_uncertainty(p).empty() ? " (uncertain)" : "");
}

// `text` as a Markdown code span: the fence is one backtick longer than any run inside.
std::string md_code(const std::string& text) {
  size_t longest = 0, run = 0;
  for (char c : text) longest = std::max(longest, run = c == '`' ? run + 1 : 0);
  const std::string fence(longest + 1, '`');
  const bool pad = !text.empty() && (text.front() == '`' || text.back() == '`');
  return fence + (pad ? " " : "") + text + (pad ? " " : "") + fence;
}

// User text (the experiment's name, a swept value) safe anywhere on the page: in a table
// cell a `|` would split the cell and a newline end the row, in the heading a newline would
// start a paragraph. A backslash and a `|` are escaped (CommonMark reads both back as
// themselves, in a cell and out), a control character becomes a space.
std::string md_escape(const std::string& text) {
  std::string s;
  for (char c : text) {
    // A table's '|', and the ASCII punctuation that would make code, emphasis, raw HTML (a
    // '<!--' hides the rest of a GitHub page) or a link: CommonMark reads each escaped one as
    // itself.
    if (std::string_view("\\|`*_<>[]~&").find(c) != std::string_view::npos) s += '\\';
    s += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c;
  }
  return s;
}

std::string overrides_text(const json& c, bool markdown) {
  if (!c.contains("overrides") || !c["overrides"].is_array() || c["overrides"].empty()) return "none";
  std::string s;
  for (const auto& o : c["overrides"]) {
    const std::string q = shell_quote(o.is_string() ? o.get<std::string>() : o.dump());
    s += (s.empty() ? "" : " ") + (markdown ? md_code(q) : q);
  }
  return s;
}

std::string text_at(const json& c, const char* key) {
  return c.contains(key) && c[key].is_string() ? c[key].get<std::string>() : std::string("-");
}

// A context setting; `null` where the bench swept it.
int int_at(const json& c, const char* key) {
  return c.contains(key) && c[key].is_number_integer() ? c[key].get<int>() : 0;
}

// The warm-up the runs had: timing.warmup_epochs, or fewer where train.epochs capped it (a
// run never warms up for longer than it trains), or the swept values' range.
std::string warmup_text(const BenchReport& r) {
  const int asked = int_at(r.context, "warmup_epochs");
  int lo = std::numeric_limits<int>::max(), hi = std::numeric_limits<int>::min();
  for (const BenchPoint& p : r.points)
    for (const RunResult& run : p.runs) lo = std::min(lo, run.warmup_epochs), hi = std::max(hi, run.warmup_epochs);
  if (lo > hi) lo = hi = asked;  // no runs
  if (!r.points.empty() && r.points[0].key == "timing.warmup_epochs")
    return lo == hi ? fmt::format("{} warm-up epoch(s) excluded", lo)
                    : fmt::format("{}-{} warm-up epochs excluded (timing.warmup_epochs swept)", lo, hi);
  if (lo == asked) return fmt::format("{} warm-up epoch(s) excluded", asked);
  if (lo == hi) return fmt::format("{} warm-up epoch(s) excluded (timing.warmup_epochs {} capped by train.epochs)", lo, asked);
  return fmt::format("{}-{} warm-up epochs excluded (timing.warmup_epochs {}, capped by train.epochs where smaller)", lo,
                     hi, asked);
}

// The repeats per point: timing.repeats, or the swept values' range.
std::string repeats_text(const BenchReport& r) {
  if (!r.points.empty() && r.points[0].key == "timing.repeats") {
    int lo = std::numeric_limits<int>::max(), hi = std::numeric_limits<int>::min();
    for (const BenchPoint& p : r.points)
      if (p.value.is_number_integer()) lo = std::min(lo, p.value.get<int>()), hi = std::max(hi, p.value.get<int>());
    if (lo < hi) return fmt::format("{}-{} timed repeats per point (timing.repeats swept)", lo, hi);
    if (lo == hi) return fmt::format("{} timed repeat(s) per point", lo);
  }
  return fmt::format("{} timed repeat(s) per point", int_at(r.context, "repeats"));
}

// A run's time cells: a run that did not finish (diverged, stopped) has no time to compare.
std::string time_cell(const RunResult& run, double seconds) {
  return run.status() == "ok" ? seconds_text(seconds) : std::string("-");
}

// Samples per second at the median, with the same digits on the console and the page.
std::string rate_cell(const RunResult& run, const SampleStats& st) {
  if (run.status() != "ok" || st.median <= 0) return "-";
  return fmt::format("{:.4g}", double(run.samples) * run.epochs_timed / st.median);
}

std::string loss_text(const RunResult& r) {
  return r.losses.empty() ? std::string("-") : fmt::format("{:.6g}", r.losses.back());
}

std::string crossover_message(const BenchReport& r) {
  return crossover_sentence(r, r.crossover, "faster", "slower", "GPU never faster in this range");
}

json crossover_json(const BenchReport& r) {
  if (!r.both_devices) return nullptr;
  const Crossover& c = r.crossover;
  json j;
  j["evaluated"] = c.evaluated;
  j["found"] = c.faster_from >= 0;
  j["message"] = crossover_message(r);
  auto point_ref = [&](int pos) -> json {
    if (pos < 0) return nullptr;
    const BenchPoint& p = at_size_position(r, pos);
    return {{"point", p.index}, {"key", p.key.empty() ? json(nullptr) : json(p.key)}, {"value", p.value},
            {"samples", p.samples}, {"speedup", point_speedup(p)}};
  };
  j["gpu_faster_from"] = point_ref(c.faster_from);
  j["first_gpu_faster"] = point_ref(c.first_faster);
  j["interpolated_samples"] = c.interpolated_samples > 0 ? json(c.interpolated_samples) : json(nullptr);
  return j;
}

// The points whose repeats disagree, after the tables: what they are and what to do.
std::string uncertain_markdown(const BenchReport& r) {
  std::string s;
  for (int i : r.size_order) {
    const BenchPoint& p = r.points[size_t(i)];
    if (const std::string why = point_uncertainty(p); !why.empty())
      s += fmt::format("- {}: {}\n", point_label(p), why);
  }
  if (s.empty()) return s;
  return fmt::format("\n**Uncertain** — repeats that disagree (slowest / fastest above {:g}{}): the median, "
                     "speed-up and verdicts at these points may not hold; rerun them on a quieter machine or with "
                     "more --reps.\n\n",
                     kSpreadLimit, load_average_note(r.context.value("load_average_1min", -1.0))) +
         s;
}

}  // namespace

std::string bench_gpu_problem(const GpuInfo& gpu) {
  // The resident grid's stamped kernel (a diagnostic, docs/CONFIG.md) writes a clock per
  // phase: its times are not the path's.
  if (const char* stamps = std::getenv("NNTRAIN_RESIDENT_STAMPS"); stamps && *stamps)
    return "NNTRAIN_RESIDENT_STAMPS is set: the stamped kernel's times are not the path's, so bench will not "
           "time them (unset it; train runs the stamped kernel)";
  if (!gpu.simulated) return "";
  return "the GPU is a simulator (" + gpu.name +
         "): its times are not measurements, so bench will not time it (train --device both checks its results)";
}

std::string shell_quote(const std::string& arg) {
  const bool bare = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
  });
  if (bare) return arg;
  const bool control = std::any_of(arg.begin(), arg.end(), [](char c) { return (unsigned char)c < 0x20 || c == 0x7f; });
  std::string s = control ? "$'" : "'";
  for (char c : arg) {
    if (!control) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
    else if (c == '\n') s += "\\n";
    else if (c == '\t') s += "\\t";
    else if (c == '\\' || c == '\'') s += std::string("\\") + c;
    else if ((unsigned char)c < 0x20 || c == 0x7f) s += fmt::format("\\x{:02x}", (unsigned char)c);
    else s += c;
  }
  return s + "'";
}

std::string shell_command(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + shell_quote(a);
  return s;
}

std::vector<std::string> process_argv() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  for (size_t at = 0; at < all.size();) {  // NUL-terminated arguments
    const size_t end = std::min(all.find('\0', at), all.size());
    out.push_back(all.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

void finish_report(BenchReport& r) {
  if (!r.context.is_object()) r.context = json::object();
  if (!r.context.contains("command_line")) {
    const std::vector<std::string> argv = process_argv();
    r.context["argv"] = argv;
    r.context["command_line"] = shell_command(argv);
  }
  r.context["spread_limit"] = kSpreadLimit;
  r.both_devices = std::count(r.devices.begin(), r.devices.end(), Device::cpu) > 0 &&
                   std::count(r.devices.begin(), r.devices.end(), Device::gpu) > 0;
  r.size_order.resize(r.points.size());
  std::iota(r.size_order.begin(), r.size_order.end(), 0);
  std::stable_sort(r.size_order.begin(), r.size_order.end(),
                   [&](int a, int b) { return r.points[size_t(a)].samples < r.points[size_t(b)].samples; });
  std::vector<PointTimes> t;
  for (int i : r.size_order) {
    const BenchPoint& p = r.points[size_t(i)];
    t.push_back({double(p.samples), point_median(p, Device::cpu), point_median(p, Device::gpu)});
  }
  r.crossover = r.both_devices ? find_crossover(t) : Crossover{};
  const bool both_priced = r.prices && r.prices->has(Device::cpu) && r.prices->has(Device::gpu);
  r.cost_crossover = r.both_devices && both_priced ? find_cost_crossover(t, *r.prices) : Crossover{};
  r.has_target = false;
  for (const auto& p : r.points)
    for (const auto& run : p.runs) r.has_target = r.has_target || run.target.has_value();
}

json bench_json(const BenchReport& r) {
  json j;
  j["schema_version"] = 2;
  j["name"] = r.name;
  j["context"] = r.context;
  j["results"] = json::array();
  j["points"] = json::array();
  for (const auto& p : r.points) {
    const json key = p.key.empty() ? json(nullptr) : json(p.key);
    for (const auto& run : p.runs) {
      json o = run_result_json(run);
      o["point"] = p.index;
      o["key"] = key;
      o["value"] = p.value;
      o["times"] = run.train_seconds_per_repeat;
      const SampleStats s = summarize(run.train_seconds_per_repeat);
      o["repeats"] = s.n;
      o["median"] = s.median;
      o["min"] = s.min;
      o["max"] = s.max;
      o["mean"] = s.mean;
      o["stddev"] = s.stddev;
      const double spread = spread_ratio(s);
      o["spread"] = std::isfinite(spread) ? json(spread) : json(nullptr);
      o["spread_wide"] = run_spread_wide(run);
      o["seconds_per_epoch"] = run.epochs_timed ? s.median / run.epochs_timed : 0.0;
      o["samples_per_second"] = s.median > 0 ? double(run.samples) * run.epochs_timed / s.median : 0.0;
      if (r.prices) o["cost"] = result_cost_json(r, run);
      j["results"].push_back(o);
    }
    const double sp = point_speedup(p);
    const std::string doubt = point_uncertainty(p);
    json point = {{"point", p.index}, {"key", key}, {"value", p.value}, {"samples", p.samples},
                  {"speedup", sp > 0 ? json(sp) : json(nullptr)}, {"uncertain", !doubt.empty()},
                  {"uncertain_reason", doubt.empty() ? json(nullptr) : json(doubt)}};
    add_point_worth_json(r, p, point);
    j["points"].push_back(point);
  }
  j["crossover"] = crossover_json(r);
  j["cost_crossover"] = cost_crossover_json(r);
  return j;
}

std::string bench_markdown(const BenchReport& report) {
  // Escaped once here for every place they land (heading, tables, crossover, uncertain list).
  BenchReport r = report;
  r.name = md_escape(r.name);
  for (BenchPoint& p : r.points) p.text = md_escape(p.text);
  const json& c = r.context;
  std::string s = fmt::format("## nntrain bench: {}\n\n", r.name);
  std::string gpu = "none";
  if (c.contains("gpu") && c["gpu"].value("available", false))
    gpu = c["gpu"].value("name", std::string("?"));
  else if (c.contains("gpu") && c["gpu"].contains("reason"))
    gpu = "none (" + c["gpu"]["reason"].get<std::string>() + ")";
  // The header a pasted page needs to be reproduced: when, what was run, on what.
  s += fmt::format("- date: {} (UTC)\n", text_at(c, "date_utc"));
  s += fmt::format("- command: {}\n", md_code(text_at(c, "command_line")));
  s += fmt::format("- config: {}; overrides: {}\n", md_code(text_at(c, "config_file")), overrides_text(c, true));
  s += fmt::format("- nntrain {} (commit {}), {} build, {}, {}, {}\n", c.value("nntrain_version", ""),
                   c.value("git_revision", ""), c.value("build_type", ""), c.value("compiler", "?"),
                   c.value("cuda_build", "?"), c.value("precision", "fp32"));
  s += fmt::format("- CPU: {} ({} hardware threads{})\n", c.value("cpu_model", ""), c.value("hardware_threads", 0),
                   load_average_note(c.value("load_average_1min", -1.0)));
  s += fmt::format("- GPU: {}\n", gpu);
  if (c.contains("gpu_not_run"))  // --device both without a usable GPU: only the CPU half ran
    s += fmt::format("- the GPU half of the devices asked for was not run: {}\n", text_at(c, "gpu_not_run"));
  s += fmt::format("- {} (median shown), {}; set-up reported apart\n", repeats_text(r), warmup_text(r));
  s += worth_markdown_context(r) + "\n";
  const std::string key = r.points.empty() || r.points[0].key.empty() ? "point" : r.points[0].key;
  s += fmt::format("| {} | samples | device | backend | threads | epochs | median | min | max | stddev | max/min | "
                   "samples/s | final loss | set-up |{}\n",
                   key, worth_run_header(r));
  s += "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + worth_run_align(r) + "\n";
  for (int i : r.size_order) {
    const BenchPoint& p = r.points[size_t(i)];
    for (const auto& run : p.runs) {
      const SampleStats st = summarize(run.train_seconds_per_repeat);
      const std::string spread = run_spread_wide(run) ? "**" + spread_text(run_spread(run)) + " wide**"
                                                      : spread_text(run_spread(run));
      s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |{}\n",
                       sweep_value_text(p), p.samples, to_string(run.device), run.backend, run.threads, run.epochs_done,
                       run.status() == "ok" ? seconds_text(st.median) : run.status(), time_cell(run, st.min),
                       time_cell(run, st.max), time_cell(run, st.stddev), spread, rate_cell(run, st), loss_text(run),
                       seconds_text(run.setup_seconds), worth_run_cells(r, run));
    }
  }
  if (r.both_devices) {
    s += fmt::format("\n| {} | samples | CPU median | GPU median | speed-up |{}\n|---|---:|---:|---:|---|{}\n", key,
                     worth_point_header(r), worth_point_align(r));
    for (size_t pos = 0; pos < r.size_order.size(); ++pos) {
      const BenchPoint& p = r.points[size_t(r.size_order[pos])];
      s += fmt::format("| {} | {} | {} | {} | {} |{}\n", sweep_value_text(p), p.samples,
                       seconds_text(point_median(p, Device::cpu)), seconds_text(point_median(p, Device::gpu)),
                       point_speedup_text(p), worth_point_cells(r, int(pos)));
    }
    s += "\n**Crossover:** " + crossover_message(r) + "\n" + worth_markdown_footer(r);
  } else {
    s += fmt::format("\nOnly {} ran: no CPU/GPU comparison or crossover.\n",
                     r.devices.empty() ? std::string("-") : std::string(to_string(r.devices[0])));
  }
  return s + uncertain_markdown(r);
}

namespace {
// The console's header: build, run (date, config, overrides), command, machine, settings.
void print_bench_header(std::FILE* out, const BenchReport& r, const char* b, const char* e) {
  const json& c = r.context;
  fmt::print(out, "{}nntrain {} bench{} ({}, {} build{}) — experiment \"{}\"\n", b, c.value("nntrain_version", ""),
             e, c.value("git_revision", ""), c.value("build_type", ""), c.value("optimized", false) ? "" : ", NOT optimised",
             r.name);
  fmt::print(out, "  run      {} UTC · config {} · overrides {}\n", text_at(c, "date_utc"), text_at(c, "config_file"),
             overrides_text(c, false));
  fmt::print(out, "  command  {}\n", text_at(c, "command_line"));
  fmt::print(out, "  cpu      {} ({} hardware threads; SIMD {}{})\n", c.value("cpu_model", ""),
             c.value("hardware_threads", 0), c.value("cpu_simd", ""),
             load_average_note(c.value("load_average_1min", -1.0)));
  if (c.contains("gpu")) {
    const json& g = c["gpu"];
    if (g.value("available", false))
      fmt::print(out, "  gpu      {}, compute capability {}, {} SMs\n", g.value("name", ""),
                 g.value("compute_capability", ""), g.value("sm_count", 0));
    else
      fmt::print(out, "  gpu      none: {}\n", g.value("reason", ""));
    if (g.contains("driver_version") || g.contains("runtime_version") || g.contains("cublas_version"))
      fmt::print(out, "  cuda     driver {} · runtime {} · cuBLAS {}\n", cuda_version_string(g.value("driver_version", 0)),
                 cuda_version_string(g.value("runtime_version", 0)), cublas_version_string(g.value("cublas_version", 0)));
  }
  fmt::print(out, "  build    {} · {} · {} · precision {}\n", c.value("build_type", ""), c.value("compiler", ""),
             c.value("cuda_build", ""), c.value("precision", "fp32"));
  fmt::print(out, "  timing   {} (median, min, max, mean, stddev) · {}\n", repeats_text(r), warmup_text(r));
  print_worth_header(out, r);
  if (!c.value("optimized", true))
    fmt::print(out, "  warning  this build is not optimised: timings are not representative\n");
}
}  // namespace

void print_bench(std::FILE* out, const BenchReport& r, bool color) {
  const char* b = color ? "\033[1m" : "";
  const char* e = color ? "\033[0m" : "";
  const json& c = r.context;
  print_bench_header(out, r, b, e);

  for (const auto& p : r.points) {
    fmt::print(out, "\n{}Point {}/{}: {}{} — {} samples, {} epochs\n", b, p.index + 1, r.points.size(),
               point_label(p), e, p.samples, p.epochs);
    fmt::print(out, "  {:<6} {:<14} {:>7} {:>10} {:>10} {:>10} {:>10} {:>10} {:>11} {:>12} {:>10}\n", "device",
               "backend", "threads", "median", "min", "max", "mean", "stddev", "samples/s", "final loss", "set-up");
    for (const auto& run : p.runs) {
      const SampleStats st = summarize(run.train_seconds_per_repeat);
      fmt::print(out, "  {:<6} {:<14} {:>7} {:>10} {:>10} {:>10} {:>10} {:>10} {:>11} {:>12} {:>10}\n",
                 to_string(run.device), run.backend, run.threads, time_cell(run, st.median), time_cell(run, st.min),
                 time_cell(run, st.max), time_cell(run, st.mean), time_cell(run, st.stddev), rate_cell(run, st),
                 loss_text(run), seconds_text(run.setup_seconds));
      if (run.status() != "ok")
        fmt::print(out, "  {:<6} {} at epoch {}: its time is not used\n", "", run.status(),
                   run.diverged_epoch ? run.diverged_epoch : run.epochs_done);
      if (run.nondeterministic) fmt::print(out, "  {:<6} warning: repeats gave different loss curves\n", "");
      if (run_spread_wide(run))
        fmt::print(out, "  {:<6} warning: repeats spread {} (max/min > {:g}{}): the median is uncertain\n", "",
                   spread_text(run_spread(run)), kSpreadLimit, load_average_note(c.value("load_average_1min", -1.0)));
      print_run_worth(out, r, run);
    }
    if (r.both_devices) fmt::print(out, "  speed-up: {}\n", point_speedup_text(p));
    print_point_worth(out, r, p);
  }

  const std::string key = r.points.empty() || r.points[0].key.empty() ? "point" : r.points[0].key;
  fmt::print(out, "\n{}Summary{} (median training time; set-up and warm-up excluded)\n", b, e);
  fmt::print(out, "  {:<16} {:>10}", key, "samples");
  for (const auto d : r.devices) fmt::print(out, " {:>10}", to_string(d));
  if (r.has_target)
    for (const auto d : r.devices) fmt::print(out, " {:>13}", std::string(to_string(d)) + " to target");
  if (r.both_devices) fmt::print(out, "  {}", "speed-up");
  fmt::print(out, "\n");
  for (int i : r.size_order) {
    const BenchPoint& p = r.points[size_t(i)];
    fmt::print(out, "  {:<16} {:>10}", sweep_value_text(p), p.samples);
    for (const auto d : r.devices) fmt::print(out, " {:>10}", seconds_text(point_median(p, d)));
    if (r.has_target)
      for (const auto d : r.devices) fmt::print(out, " {:>13}", point_target_text(p, d));
    if (r.both_devices) fmt::print(out, "  {}", point_speedup_text(p));
    fmt::print(out, "\n");
  }
  if (r.has_target)
    fmt::print(out, "  (time to target: median clock reading at the crossing epoch; * interpolated within a chunk; "
                    "- not reached or not finished)\n");
  fmt::print(out, "\n{}Crossover{}: {}\n", b, e, crossover_message(r));
  print_worth_footer(out, r, b, e);
  std::fflush(out);
}

}  // namespace nntrain
