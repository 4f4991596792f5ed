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
#include "backend_registry.hpp"
#include "cli_flags.hpp"
#include "commands.hpp"
#include "errors.hpp"
#include "fileio.hpp"
#include "report.hpp"
#include "sweep_plan.hpp"
#include "sysinfo.hpp"

namespace nntrain {

namespace {

void check_export_path(const std::string& path, const char* option, const std::string& config) {
  if (path.empty()) return;  // not asked for
  check_output_file(path, option, /*stdout_ok=*/true);  // "-": stdout
  check_output_not_input(path, option, {{"--config", config}});
}

// Everything bench decided before running: one validated Config per sweep point.
struct BenchPlan {
  std::vector<Device> devices;
  std::string device_words;  // the devices as the user chose them, for messages: "--device both"
  std::string gpu_not_run;   // why the GPU half of `both` is not run here, or ""
  std::optional<Prices> prices;  // --price, --currency
  std::optional<SweepSpec> sweep;
  std::vector<Config> configs;  // one per point, in sweep order
};

// A flag beats the sweep value, so a swept key that a flag also sets would sweep nothing.
void check_sweep_vs_flags(const SweepSpec& sweep, const std::vector<std::string>& flag_keys) {
  for (const auto& k : flag_keys) {
    const bool clash = k == sweep.key || k.rfind(sweep.key + ".", 0) == 0 || sweep.key.rfind(k + ".", 0) == 0;
    if (clash)
      throw UsageError("--sweep " + sweep.key + ": this key is also set by a bench option (drop the flag or the sweep)");
  }
  if (config_keys_overlap(sweep.key, "device"))
    throw UsageError("--sweep " + sweep.key + ": bench runs every device at every point; choose them with "
                     "--device cpu,gpu (old spelling: --devices)");
}

// The device flags as overrides: --device is a table flag (already in flag_overrides);
// --devices, its old spelling, becomes the same override here, with a note. Neither: both,
// placed below the user's overrides (so `device=cpu` there is obeyed). Returns the words
// messages quote ("--devices cpu,gpu" as typed, or "--device both").
std::string device_overrides(const BenchArgs& a, std::vector<std::string>& defaults,
                             std::vector<std::string>& flag_overrides, std::vector<std::string>& flag_keys) {
  if (!a.devices_alias_set) {
    if (!a.device_set) defaults.push_back("device=\"both\"");
    return "";  // the resolved config names it
  }
  if (a.device_set) throw UsageError("--devices " + a.devices_alias + ": give --device or its old spelling --devices, not both");
  const DeviceListParse p = parse_device_list(a.devices_alias);
  if (!p.error.empty()) throw UsageError("--devices " + p.error);
  fmt::print(stderr, "nntrain: note: --devices is the old spelling of --device (same values)\n");
  flag_overrides.push_back("device=\"" + p.choice + "\"");
  flag_keys.emplace_back("device");
  return "--devices " + a.devices_alias;
}

// Validates every point (config, data, initial weights, devices and GPU path — the same
// checks as `train`) and the export paths, before anything runs.
// --price and --currency: every device that runs needs a price (a cost for one of two devices
// would compare nothing); a price for a device not run is allowed (one price list, any run).
std::optional<Prices> parse_price_options(const BenchArgs& a, const std::vector<Device>& devices,
                                          const std::string& device_words) {
  if (!a.price_given) {
    if (a.currency_given)
      throw UsageError("--currency " + a.currency + ": give --price as well (it labels its amounts)");
    return std::nullopt;
  }
  Prices p = parse_prices(a.price);
  if (a.currency_given) check_currency(a.currency);
  p.currency = a.currency;
  for (const Device d : devices)
    if (!p.has(d))
      throw UsageError(fmt::format("--price \"{}\": no price for {}, which {} runs", a.price, to_string(d),
                                   device_words));
  return p;
}

// Every point's GPU path first (a net too wide for `--gpu-path fused` is exit 2 on any
// machine, before the points ahead of it run), then the devices with train's rule: `both`
// without a usable GPU runs the CPU half after a warning; `gpu` there is exit 3.
void resolve_devices(BenchPlan& plan) {
  const size_t n_points = plan.configs.size();
  for (size_t i = 0; i < n_points; ++i) {
    try {
      check_gpu_path(backend_registry(), plan.configs[i]);
    } catch (const EnvError& e) {
      if (!plan.sweep) throw;
      throw EnvError(fmt::format("{} (met at --sweep {} value {} of {}: \"{}\")", e.what(), plan.sweep->key, i + 1,
                                 n_points, plan.sweep->texts[i]));
    } catch (const UsageError& e) {
      if (!plan.sweep) throw;
      throw UsageError(fmt::format("--sweep {}: value {} of {} (\"{}\") is invalid: {}", plan.sweep->key, i + 1,
                                   n_points, plan.sweep->texts[i], e.what()));
    }
  }
  if (plan.device_words.empty()) plan.device_words = std::string("--device ") + to_string(plan.configs.front().device);
  for (Config& cfg : plan.configs) plan.gpu_not_run = drop_missing_gpu(backend_registry(), cfg);
  if (!plan.gpu_not_run.empty()) warn_gpu_not_run("bench " + plan.device_words, plan.gpu_not_run);
  for (const Config& cfg : plan.configs) require_devices(backend_registry(), cfg, "bench " + plan.device_words);
  plan.devices = plan.configs.front().devices();
  if (std::find(plan.devices.begin(), plan.devices.end(), Device::gpu) != plan.devices.end())
    if (const std::string why = bench_gpu_problem(registry_gpu_info(backend_registry())); !why.empty())
      throw UsageError("bench " + plan.device_words + ": " + why);
}

BenchPlan validate_all(const BenchArgs& a) {
  BenchPlan plan;
  if (!a.sweep.empty()) plan.sweep = parse_sweep(a.sweep);

  // Precedence: defaults < config file < bench's defaults (5 repeats, both devices) <
  // overrides < sweep value < flags. --reps defaults to 5 (statistics need repeats) unless
  // an override sets timing.repeats; an explicit --reps always wins.
  std::vector<std::string> defaults, flag_overrides = a.flag_overrides, flag_keys = a.flag_keys;
  if (!a.reps_set) defaults.push_back("timing.repeats=5");
  plan.device_words = device_overrides(a, defaults, flag_overrides, flag_keys);
  (void)parse_price_options(a, {}, "");  // their syntax first; which devices need one, below
  if (plan.sweep) check_sweep_vs_flags(*plan.sweep, flag_keys);
  if (plan.sweep) check_axis_vs_overrides(*plan.sweep, a.overrides, "--sweep");

  const size_t n_points = plan.sweep ? plan.sweep->texts.size() : 1;
  for (size_t i = 0; i < n_points; ++i) {
    std::vector<std::string> o = defaults;
    o.insert(o.end(), a.overrides.begin(), a.overrides.end());
    if (plan.sweep) o.push_back(plan.sweep->override_for(i));
    o.insert(o.end(), flag_overrides.begin(), flag_overrides.end());
    try {
      plan.configs.push_back(load_config(a.config, o));
      (void)prepare_run(plan.configs.back(), "");
    } catch (const UsageError& e) {
      if (!plan.sweep) throw;
      throw UsageError(fmt::format("--sweep {}: value {} of {} (\"{}\") is invalid: {}", plan.sweep->key, i + 1,
                                   n_points, plan.sweep->texts[i], blame_flag(e, flag_keys)));
    }
  }
  if (const auto same = first_same_configs(plan.configs))
    throw UsageError(fmt::format("--sweep {}: values {} and {} (\"{}\" and \"{}\") give the same config: the two "
                                 "points would be the same run",
                                 plan.sweep->key, same->first + 1, same->second + 1, plan.sweep->texts[same->first],
                                 plan.sweep->texts[same->second]));
  resolve_devices(plan);
  plan.prices = parse_price_options(a, plan.devices, plan.device_words);
  check_export_path(a.export_json, "--export-json", a.config);
  check_export_path(a.export_markdown, "--export-markdown", a.config);
  if (!a.export_json.empty() && !a.export_markdown.empty() &&
      std::filesystem::weakly_canonical(a.export_json) == std::filesystem::weakly_canonical(a.export_markdown))
    throw UsageError(fmt::format("--export-json and --export-markdown both name {}: the Markdown would "
                                 "overwrite the JSON", a.export_json));
  return plan;
}

BenchReport new_report(const BenchArgs& a, const BenchPlan& plan) {
  BenchReport report;
  const Config& first = plan.configs.front();
  report.name = first.name;
  report.devices = plan.devices;
  const GpuInfo gpu = registry_gpu_info(backend_registry());
  report.context = context_json(&gpu);
  report.context["date_utc"] = utc_now();
  report.context["config_file"] = a.config;
  std::vector<std::string> names;
  for (const Device d : plan.devices) names.emplace_back(to_string(d));
  report.context["devices"] = names;
  // A swept setting has no one value: each result carries its own.
  const auto unless_swept = [&](const char* key, int v) {
    return plan.sweep && plan.sweep->key == key ? nlohmann::json(nullptr) : nlohmann::json(v);
  };
  report.context["repeats"] = unless_swept("timing.repeats", first.timing.repeats);
  report.context["warmup_epochs"] = unless_swept("timing.warmup_epochs", first.timing.warmup_epochs);
  report.context["cpu_backend"] = to_string(first.cpu.backend);
  report.context["sweep_key"] = plan.sweep ? nlohmann::json(plan.sweep->key) : nlohmann::json(nullptr);
  report.context["overrides"] = a.overrides;
  if (!plan.gpu_not_run.empty()) report.context["gpu_not_run"] = plan.gpu_not_run;
  report.context["target_loss"] = first.train.target_loss ? nlohmann::json(*first.train.target_loss) : nlohmann::json(nullptr);
  report.prices = plan.prices;
  if (plan.prices)
    report.context["prices"] = {
        {"cpu", plan.prices->has(Device::cpu) ? nlohmann::json(plan.prices->cpu) : nlohmann::json(nullptr)},
        {"gpu", plan.prices->has(Device::gpu) ? nlohmann::json(plan.prices->gpu) : nlohmann::json(nullptr)},
        {"currency", plan.prices->currency.empty() ? nlohmann::json(nullptr) : nlohmann::json(plan.prices->currency)},
        {"per", "hour"}};
  return report;
}

// Trains every point on every device (same initial weights per point). Returns false when
// interrupted (nothing is exported then); sets `diverged` when a run diverged.
bool run_all(const BenchArgs& a, const BenchPlan& plan, BenchReport& report, bool& diverged) {
  Progress progress(a.quiet, ::isatty(STDERR_FILENO) != 0);
  const size_t n_points = plan.configs.size();
  for (size_t i = 0; i < n_points; ++i) {
    const Config& cfg = plan.configs[i];
    Prepared prep = prepare_run(cfg, "");
    BenchPoint p;
    p.index = int(i);
    if (plan.sweep) {
      p.key = plan.sweep->key;
      p.text = plan.sweep->texts[i];
      p.value = plan.sweep->values[i];
    }
    // The samples trained on (the runs' own count): a held-out split is not trained on.
    p.samples = prep.data.n - validation_samples(prep.data.n, cfg.data.validation_fraction);
    p.epochs = cfg.train.epochs;
    for (const Device device : plan.devices) {
      const std::string label = fmt::format("[{}/{}]{} {}", i + 1, n_points,
                                            plan.sweep ? " " + plan.sweep->override_for(i) : std::string(),
                                            to_string(device));
      progress.begin(label, cfg.train.epochs);
      p.runs.push_back(run_training(backend_registry(), cfg, prep.data, prep.init, device,
                                    [&](int done, int total, float loss) { progress.update(done, total, loss); }));
      progress.end();
      const RunResult& r = p.runs.back();
      if (r.interrupted) {
        fmt::print(stderr, "nntrain: bench interrupted at {}; no export written\n", label);
        return false;
      }
      if (r.diverged_epoch) {
        diverged = true;
        fmt::print(stderr, "nntrain: warning: {} diverged at epoch {}; its time is excluded, the bench goes on\n",
                   label, r.diverged_epoch);
      }
    }
    report.points.push_back(std::move(p));
  }
  return true;
}

}  // namespace

int cmd_bench(const BenchArgs& a) {
  const BenchPlan plan = validate_all(a);
  BenchReport report = new_report(a, plan);
  bool diverged = false;
  if (!run_all(a, plan, report, diverged)) return kExitInterrupted;
  finish_report(report);

  // An export to stdout (-) is all of stdout: the table goes to stderr then.
  FILE* table = a.export_json == "-" || a.export_markdown == "-" ? stderr : stdout;
  print_bench(table, report, want_color(table));
  if (!a.export_json.empty()) {
    write_output(a.export_json, bench_json(report).dump(2) + "\n");
    if (a.export_json != "-") fmt::print(stderr, "nntrain: wrote {}\n", a.export_json);
  }
  if (!a.export_markdown.empty()) {
    write_output(a.export_markdown, bench_markdown(report));
    if (a.export_markdown != "-") fmt::print(stderr, "nntrain: wrote {}\n", a.export_markdown);
  }
  if (diverged) {
    fmt::print(stderr, "nntrain: error: training diverged in at least one bench run (marked \"diverged\")\n");
    return kExitDiverged;
  }
  return kExitOk;
}

}  // namespace nntrain
