// cmd_train.cpp — `nntrain train`: validate everything, then train each device, then write.
//
// Order matters for "bad input writes nothing": the config, the data, the initial model,
// the device and the output location are all checked before the output folder exists.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "backend_registry.hpp"
#include "commands.hpp"
#include "errors.hpp"
#include "fileio.hpp"
#include "memcheck.hpp"
#include "report.hpp"
#include "surface.hpp"
#include "sysinfo.hpp"

namespace nntrain {

namespace {

// dump(..., replace): a path or name that is not UTF-8 must not fail after training.
std::string dump(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// Model and surface files of each device that finished. A diverged run's weights are
// NaN/Inf: no model or surface file for it, and none left over from an earlier run in the
// same --out folder to be mistaken for this run's. The same for a device that never ran (an
// earlier device diverged or the run was interrupted).
void write_models(const TrainArgs& a, const Config& cfg, const std::vector<RunResult>& runs, const std::string& dir) {
  const std::vector<Device> devices = cfg.devices();
  for (size_t k = 0; k < devices.size(); ++k) {
    const std::string name = to_string(devices[k]);
    const std::string file = dir + (k == 0 ? "/model.json" : "/model." + name + ".json");
    const std::string surface = dir + "/surface." + name + ".csv";
    if (k >= runs.size() || runs[k].diverged_epoch) {
      std::filesystem::remove(file);
      std::filesystem::remove(surface);
      continue;
    }
    write_file_atomic(file, model_to_json_string(runs[k].final_params, data_column_names(cfg.data)));
    if (a.write_surface) write_file_atomic(surface, surface_csv(cfg, runs[k].final_params, a.write_surface));
    else std::filesystem::remove(surface);  // an earlier run's, not this model's
  }
  // --save-model is what a sweep script picks up next: only a finished run is saved there.
  if (!a.save_model.empty()) {
    if (runs.front().status() == "ok") save_model(runs.front().final_params, a.save_model, data_column_names(cfg.data));
    else fmt::print(stderr, "nntrain: --save-model {} not written: the run {}\n", a.save_model, runs.front().status());
  }
}

// The documented exit code of a finished train, with its one-line message (docs/DESIGN.md §5).
int exit_code_of(const std::vector<RunResult>& runs, const std::string& dir) {
  for (const auto& r : runs) {
    if (r.diverged_epoch) {
      fmt::print(stderr, "nntrain: error: training diverged on {}: {} at epoch {}; results up to it kept in {}\n",
                 to_string(r.device), r.weights_nonfinite ? "weights became NaN/Inf in the update" : "loss is not finite",
                 r.diverged_epoch, dir);
      return kExitDiverged;
    }
    if (r.interrupted) {
      fmt::print(stderr, "nntrain: interrupted on {} after epoch {}; partial results written to {}\n",
                 to_string(r.device), r.epochs_done, dir);
      return kExitInterrupted;
    }
  }
  return kExitOk;
}

// A backend failed mid-run (a CUDA error, memory): the run folder exists, so it must say so.
// Writes the curves of the runs that finished and a summary with "status": "failed", the
// device and the reason, then rethrows the same kind of error (so the exit code is the
// documented one) with a note naming the folder.
[[noreturn]] void record_failure(const Config& cfg, const std::vector<RunResult>& runs, Device device,
                                 const GpuInfo* gpu, const std::string& dir) {
  std::string reason = "unknown error";
  try {
    throw;
  } catch (const std::bad_alloc&) {
    reason = "out of host memory";
  } catch (const std::exception& e) {
    reason = e.what();
  } catch (...) {
  }
  write_file_atomic(dir + "/metrics.csv", metrics_csv(runs));
  nlohmann::json summary = summary_json(cfg, runs, gpu);
  summary["status"] = "failed";
  summary["error"] = reason;
  summary["failed_device"] = to_string(device);
  write_file_atomic(dir + "/summary.json", dump(summary));
  const std::string note = " (" + std::string(to_string(device)) + " run failed; summary.json in " + dir + " says so)";
  try {
    throw;
  } catch (const UsageError&) {
    throw UsageError(reason + note);
  } catch (const DeviceUnavailable&) {
    throw DeviceUnavailable(reason + note);
  } catch (...) {
    throw std::runtime_error(reason + note);
  }
}

}  // namespace

int cmd_train(const TrainArgs& a) { return run_train_command(a, backend_registry()); }

int run_train_command(const TrainArgs& a, const BackendRegistry& registry) {
  // Everything is checked before the output folder exists: bad input writes nothing.
  const Config cfg = load_config(a.config, a.overrides);
  Prepared prep = prepare_run(cfg, a.init_model);
  require_devices(registry, cfg, std::string("--device ") + to_string(cfg.device));
  if (a.write_surface) check_surface_request(cfg, a.write_surface);
  check_output_location(a.out.empty() ? cfg.output_dir : a.out);
  if (!a.save_model.empty()) {
    check_output_file(a.save_model, "--save-model");
    check_output_not_input(a.save_model, "--save-model", {{"--config", a.config}, {"data.csv", cfg.data.csv_resolved}});
  }

  const std::string dir = a.out.empty() ? make_numbered_run_dir(cfg.output_dir) : (ensure_directory(a.out), a.out);
  write_file_atomic(dir + "/config.resolved.json", dump(resolved_config_json(cfg)));

  const bool color = !a.json && want_color(stdout);
  const auto devices = cfg.devices();
  const bool trains_gpu = std::find(devices.begin(), devices.end(), Device::gpu) != devices.end();
  const GpuInfo gpu = trains_gpu ? registry_gpu_info(registry) : GpuInfo{};
  if (!a.json && !a.quiet) print_header(stdout, cfg, prep.data, trains_gpu ? &gpu : nullptr, color);

  Progress progress(a.quiet, ::isatty(STDERR_FILENO) != 0);
  std::vector<RunResult> runs;
  for (const Device device : cfg.devices()) {
    progress.begin(to_string(device), cfg.train.epochs);
    try {
      runs.push_back(run_training(registry, cfg, prep.data, prep.init, device,
                                  [&](int done, int total, float loss) { progress.update(done, total, loss); }));
    } catch (...) {
      progress.end();
      record_failure(cfg, runs, device, trains_gpu ? &gpu : nullptr, dir);
    }
    progress.end();
    if (runs.back().diverged_epoch || runs.back().interrupted) break;
  }

  // Results: everything that finished is written, marked with its status.
  write_file_atomic(dir + "/metrics.csv", metrics_csv(runs));
  const nlohmann::json summary = summary_json(cfg, runs, trains_gpu ? &gpu : nullptr);
  write_file_atomic(dir + "/summary.json", dump(summary));
  write_models(a, cfg, runs, dir);

  if (a.json) {
    nlohmann::json s = summary;
    s["output_dir"] = dir;
    fmt::print("{}", dump(s));
  } else {
    print_results(stdout, cfg, runs, color);
    fmt::print("\nResults in {}/ (config.resolved.json, metrics.csv, summary.json{})\n", dir,
               runs.front().diverged_epoch ? "; no model.json: the run diverged" : ", model.json");
  }
  return exit_code_of(runs, dir);
}

}  // namespace nntrain
