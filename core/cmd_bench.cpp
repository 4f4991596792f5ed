// cmd_bench.cpp — `nntrain bench`: validate every sweep point, then train each point on
// each device (same initial weights per point), then report and export.
//
// Nothing runs until every point's config, data and initial weights are valid, the devices
// are usable and the export files can be written: a bad sweep value costs no training
// time and leaves no file. Exports are written atomically, and only when the bench finished.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>

#include "bench_report.hpp"
#include "bench_stats.hpp"
#include "commands.hpp"
#include "errors.hpp"
#include "fileio.hpp"
#include "gpu.hpp"
#include "report.hpp"
#include "sysinfo.hpp"

namespace nntrain {

namespace {

std::vector<std::string> parse_devices(const std::string& list) {
  std::vector<std::string> out;
  for (const auto& d : split_top_level(list)) {
    if (d != "cpu" && d != "gpu")
      throw UsageError("--devices \"" + list + "\": unknown device \"" + d + "\" (expected cpu, gpu or cpu,gpu)");
    if (std::find(out.begin(), out.end(), d) != out.end())
      throw UsageError("--devices \"" + list + "\": " + d + " is listed twice");
    out.push_back(d);
  }
  return out;
}

void check_export_path(const std::string& path, const char* option) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw UsageError(std::string(option) + " " + path + ": is a directory");
  const auto parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec))
    throw UsageError(std::string(option) + " " + path + ": folder " + parent.string() + " does not exist");
  check_output_location(parent.empty() ? "." : parent.string());
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

int cmd_bench(const BenchArgs& a) {
  const std::vector<std::string> devices = parse_devices(a.devices);
  std::optional<SweepSpec> sweep;
  if (!a.sweep.empty()) sweep = parse_sweep(a.sweep);

  // Precedence: defaults < config file < bench's default repeats < overrides < sweep value
  // < flags. --reps defaults to 5 (statistics need repeats) unless an override sets
  // timing.repeats; an explicit --reps always wins.
  std::vector<std::string> base;
  if (!a.reps_set) base.push_back("timing.repeats=" + std::to_string(a.reps));
  base.insert(base.end(), a.overrides.begin(), a.overrides.end());
  nlohmann::json flags = flags_json(a.set_flags, "", 0, 0, 0, 0, a.threads, a.cpu_backend, a.gpu_path);
  if (a.reps_set) flags["timing"]["repeats"] = a.reps;
  if (a.warmup_set) flags["timing"]["warmup_epochs"] = a.warmup;
  flags["device"] = devices.size() == 2 ? "both" : devices[0];

  if (sweep) {
    // A flag beats the sweep value, so a swept key that a flag also sets would sweep nothing.
    const nlohmann::json* cur = &flags;
    std::string rest = sweep->key;
    for (size_t dot; cur && cur->is_object();) {
      dot = rest.find('.');
      const std::string part = rest.substr(0, dot);
      cur = cur->contains(part) ? &(*cur)[part] : nullptr;
      if (dot == std::string::npos) break;
      rest = rest.substr(dot + 1);
    }
    if (cur && cur != &flags)
      throw UsageError("--sweep " + sweep->key + ": this key is also set by a bench option (" +
                       (sweep->key == "device" ? std::string("use --devices") : "drop the flag or the sweep") + ")");
  }

  const size_t n_points = sweep ? sweep->texts.size() : 1;
  auto point_overrides = [&](size_t i) {
    std::vector<std::string> o = base;
    if (sweep) o.push_back(sweep->override_for(i));
    return o;
  };

  // Validate every point before anything runs.
  std::vector<Config> configs;
  for (size_t i = 0; i < n_points; ++i) {
    try {
      configs.push_back(load_config(a.config, point_overrides(i), flags));
      (void)prepare_run(configs.back(), "");
    } catch (const UsageError& e) {
      if (!sweep) throw;
      throw UsageError(fmt::format("--sweep {}: value {} of {} (\"{}\") is invalid: {}", sweep->key, i + 1, n_points,
                                   sweep->texts[i], e.what()));
    }
  }
  for (const auto& d : devices) {
    if (d != "gpu") continue;
    const GpuInfo g = query_gpu();
    if (!g.built_with_cuda) throw DeviceUnavailable("bench --devices " + a.devices + ": " + g.reason);
    if (!g.available) throw DeviceUnavailable("bench --devices " + a.devices + ": no CUDA device: " + g.reason);
  }
  check_export_path(a.export_json, "--export-json");
  check_export_path(a.export_markdown, "--export-markdown");
  if (!a.export_json.empty() && !a.export_markdown.empty() &&
      std::filesystem::weakly_canonical(a.export_json) == std::filesystem::weakly_canonical(a.export_markdown))
    throw UsageError(fmt::format("--export-json and --export-markdown both name {}: the Markdown would "
                                 "overwrite the JSON", a.export_json));

  BenchReport report;
  report.name = configs.front().name;
  report.devices = devices;
  report.context = context_json(true);
  report.context["date_utc"] = utc_now();
  report.context["config_file"] = a.config;
  report.context["devices"] = devices;
  report.context["repeats"] = configs.front().timing.repeats;
  report.context["warmup_epochs"] = configs.front().timing.warmup_epochs;
  report.context["cpu_backend"] = configs.front().cpu.backend;
  report.context["sweep_key"] = sweep ? nlohmann::json(sweep->key) : nlohmann::json(nullptr);
  report.context["overrides"] = a.overrides;

  Progress progress(a.quiet, ::isatty(STDERR_FILENO) != 0);
  bool diverged = false;
  for (size_t i = 0; i < n_points; ++i) {
    const Config& cfg = configs[i];
    Prepared prep = prepare_run(cfg, "");
    BenchPoint p;
    p.index = int(i);
    if (sweep) {
      p.key = sweep->key;
      p.text = sweep->texts[i];
      p.value = sweep->values[i];
    }
    p.samples = prep.data.n;
    p.epochs = cfg.train.epochs;
    for (const auto& device : devices) {
      const std::string label =
          fmt::format("[{}/{}]{} {}", i + 1, n_points, sweep ? " " + sweep->override_for(i) : std::string(), device);
      progress.begin(label, cfg.train.epochs);
      p.runs.push_back(run_training(cfg, prep.data, prep.init, device,
                                    [&](int done, int total, float loss) { progress.update(done, total, loss); }));
      progress.end();
      const RunResult& r = p.runs.back();
      if (r.interrupted) {
        fmt::print(stderr, "nntrain: bench interrupted at {}; no export written\n", label);
        return kExitInterrupted;
      }
      if (r.diverged_epoch) {
        diverged = true;
        fmt::print(stderr, "nntrain: warning: {} diverged at epoch {}; its time is excluded, the bench goes on\n",
                   label, r.diverged_epoch);
      }
    }
    report.points.push_back(std::move(p));
  }
  finish_report(report);

  print_bench(stdout, report, want_color(stdout));
  if (!a.export_json.empty()) {
    write_file_atomic(a.export_json, bench_json(report).dump(2) + "\n");
    fmt::print(stderr, "nntrain: wrote {}\n", a.export_json);
  }
  if (!a.export_markdown.empty()) {
    write_file_atomic(a.export_markdown, bench_markdown(report));
    fmt::print(stderr, "nntrain: wrote {}\n", a.export_markdown);
  }
  if (diverged) {
    fmt::print(stderr, "nntrain: error: training diverged in at least one bench run (marked \"diverged\")\n");
    return kExitDiverged;
  }
  return kExitOk;
}

}  // namespace nntrain
