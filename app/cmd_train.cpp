// cmd_train.cpp — `nntrain train`: validate everything, then train each device, then write.
//
// Order matters for "bad input writes nothing": the config, the data, the initial model,
// the device and the output location are all checked before the output folder exists.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

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
    else fmt::print(stderr, "nntrain: --save-model {} not written: the run {}\n", a.save_model,
                    runs.front().status() == "interrupted" ? "was interrupted" : runs.front().status());
  }
  // A reused --out folder: an earlier run's files of a device this run has none for (it asked
  // for one device, or `both` ran the CPU half alone) would pass for this run's.
  for (const Device d : {Device::cpu, Device::gpu}) {
    const auto at = std::find(devices.begin(), devices.end(), d);
    const std::string name = to_string(d);
    if (at == devices.end()) std::filesystem::remove(dir + "/surface." + name + ".csv");
    if (at == devices.end() || at == devices.begin()) std::filesystem::remove(dir + "/model." + name + ".json");
  }
}

// Weights trained on other columns fit any data of the same widths: used by position, as
// asked, but said once, since the new model.json records this data's names.
void warn_other_columns(const std::string& init_model, const ModelNames& from, const ModelNames& data) {
  if (init_model.empty() || from.inputs.empty() || (from.inputs == data.inputs && from.outputs == data.outputs))
    return;
  const auto list = [](const ModelNames& n) {
    return fmt::format("{} -> {}", fmt::join(n.inputs, ", "), fmt::join(n.outputs, ", "));
  };
  fmt::print(stderr,
             "nntrain: warning: --init-model {} was trained on columns {}; this data's are {} (its weights are "
             "used by position)\n",
             init_model, list(from), list(data));
}

// Why a run diverged, as its exit line says it. Full batch, epoch 1's loss is the initial
// weights' (no update has run yet): a loss not finite there is data that overflows float32.
std::string divergence_reason(const RunResult& r, bool full_batch) {
  if (r.weights_nonfinite) return "weights became NaN/Inf in the update";
  if (r.exploded)
    return fmt::format("loss {:.4g} exploded past {:.4g} ({:g} x the larger of the first epoch's loss and the "
                       "targets' variance)",
                       r.losses.back(), r.explode_threshold, kExplodeFactor);
  if (r.diverged_epoch == 1 && full_batch)
    return "the initial weights' loss is not finite in float32 (the data's values or the weights are too large "
           "for it: scale the inputs and targets)";
  return "loss is not finite";
}

// The documented exit code of a finished train, with its one-line message (docs/DESIGN.md §5).
int exit_code_of(const Config& cfg, const std::vector<RunResult>& runs, const std::string& dir) {
  for (const auto& r : runs) {
    if (r.diverged_epoch) {
      const std::string why = divergence_reason(r, batch_samples(cfg.train.batch_size, r.samples) == r.samples);
      fmt::print(stderr, "nntrain: error: training diverged on {}: {} at epoch {}; results up to it kept in {}\n",
                 to_string(r.device), why,
                 r.diverged_epoch, dir);
      return kExitDiverged;
    }
    if (r.interrupted && r.interrupted_repeat) {
      fmt::print(stderr,
                 "nntrain: interrupted on {} before timing repeat {} finished, after all {} epochs had trained; that "
                 "repeat is left out of the times; results written to {}\n",
                 to_string(r.device), r.interrupted_repeat, r.epochs_done, dir);
      return kExitInterrupted;
    }
    if (r.interrupted) {
      fmt::print(stderr, "nntrain: interrupted on {} {}; partial results written to {}\n", to_string(r.device),
                 r.epochs_done ? fmt::format("after epoch {}", r.epochs_done)
                               : std::string("during the warm-up, before any epoch trained"),
                 dir);
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
                                 const nlohmann::json& context, const std::string& dir) {
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
  nlohmann::json summary = summary_json(cfg, runs, context);
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

// SIGINT/SIGTERM asks the trainer to stop after the chunk in flight, but one epoch of a wide
// net can take minutes (issue 44). If the run has not come back within kStopGrace of the
// request, this thread writes what finished (the devices done, and the epochs of the one in
// flight the trainer reported) with "status": "interrupted", and exits with the interrupted
// code. One mutex orders it with the main thread: whichever claims the writing first writes.
class StopWatchdog {
 public:
  static constexpr double kStopGrace = 0.5;  // seconds; with the writing and the exit, ~1 s after the signal

  StopWatchdog(const TrainArgs& a, const Config& cfg, const nlohmann::json& context, std::string dir)
      : args_(a), cfg_(cfg), context_(context), dir_(std::move(dir)), thread_([this] { loop(); }) {
    args_.write_surface = 0;  // a surface can take longer than the grace: none on this path
  }
  ~StopWatchdog() {
    quit_ = true;
    thread_.join();
  }
  // The trainer's report after each chunk: the curves so far of the device in flight.
  void chunk(const ChunkReport& c) {
    std::lock_guard<std::mutex> lock(m_);
    if (c.done == 0) {  // the backend is ready: the run's identity, no epochs yet
      live_ = *c.run;
      live_valid_ = true;
      return;
    }
    live_.losses.insert(live_.losses.end(), c.losses + c.from, c.losses + c.done);
    if (c.val_losses) live_.val_losses.insert(live_.val_losses.end(), c.val_losses + c.from, c.val_losses + c.done);
    live_.epochs_done = live_.epochs_timed = c.done;
    live_.train_seconds = c.seconds;
    live_.diverged_epoch = c.run->diverged_epoch;
  }
  // The device in flight is warming up (true) or has finished its warm-up (false).
  void warming(bool on) {
    std::lock_guard<std::mutex> lock(m_);
    warming_ = on;
  }
  // A device finished: it joins the results, and no run is in flight.
  void finished(std::vector<RunResult>& runs, RunResult r) {
    std::lock_guard<std::mutex> lock(m_);
    runs.push_back(std::move(r));
    finished_ = runs;
    live_valid_ = false;
  }
  // From here on the main thread writes the results; the watchdog never will.
  void claim() {
    std::lock_guard<std::mutex> lock(m_);
    claimed_ = true;
  }

 private:
  void loop() {
    while (!quit_ && !stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(kStopGrace);
    while (!quit_ && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!quit_) write_and_exit();
  }

  void write_and_exit() {
    std::lock_guard<std::mutex> lock(m_);
    if (claimed_) return;
    std::vector<RunResult> runs = finished_;
    if (live_valid_) {
      live_.interrupted = true;
      live_.model_loss_note = "the run was interrupted";
      runs.push_back(live_);
    }
    // Where the device in flight was: its warm-up, an epoch, or past its epochs (the trainer
    // reports the first repeat's chunks only): a later timed repeat, or with one repeat the
    // trained model's evaluation.
    const bool later = live_.epochs_requested > 0 && live_.epochs_done >= live_.epochs_requested;
    const std::string where = warming_ ? std::string("its warm-up")
                              : later  ? std::string(cfg_.timing.repeats > 1 ? "a later timing repeat"
                                                                             : "the trained model's evaluation")
                                       : fmt::format("epoch {}", live_.epochs_done + 1);
    write_file_atomic(dir_ + "/metrics.csv", metrics_csv(runs));
    nlohmann::json summary = summary_json(cfg_, runs, context_);
    summary["status"] = "interrupted";
    if (live_valid_)
      summary["interrupted_note"] = fmt::format(
          "{} stopped inside {}, which had not returned {:g} s after the signal: {}", to_string(live_.device), where,
          kStopGrace,
          warming_ ? "no epoch had trained"
          : later  ? "every epoch had trained once; its model is not written"
                   : "its epochs before it are kept, its weights (inside the epoch) are not written");
    write_file_atomic(dir_ + "/summary.json", dump(summary));
    // The finished devices' models; none (and no stale one) for the device in flight.
    if (finished_.empty()) args_.save_model.clear();
    write_models(args_, cfg_, finished_, dir_);
    const std::string msg = fmt::format(
        "nntrain: interrupted{}; the finished epochs are written to {}\n",
        live_valid_ ? fmt::format(" on {} during {} (it did not return within {:g} s of the signal)",
                                  to_string(live_.device), where, kStopGrace)
                    : std::string(),
        dir_);
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, msg.data(), msg.size());
    ::_exit(kExitInterrupted);
  }

  TrainArgs args_;
  const Config& cfg_;
  const nlohmann::json& context_;
  std::string dir_;
  std::mutex m_;
  bool claimed_ = false, live_valid_ = false, warming_ = false;
  std::vector<RunResult> finished_;
  RunResult live_;
  std::atomic<bool> quit_{false};
  std::thread thread_;  // last: started once every member above exists
};

// Everything the run's inputs and outputs must pass before the first file is written.
void check_before_writing(const TrainArgs& a, const Config& cfg, const BackendRegistry& registry,
                          const Prepared& prep) {
  warn_other_columns(a.init_model, prep.init_names, data_column_names(cfg.data));
  (void)validation_samples(prep.data.n, cfg.data.validation_fraction);  // a split that leaves nothing: exit 2 now
  require_devices(registry, cfg, std::string("--device ") + to_string(cfg.device));
  if (a.write_surface) check_surface_request(cfg, a.write_surface);
  check_output_location(a.out.empty() ? cfg.output_dir : a.out);
  check_run_folder(a, cfg);
  if (!a.save_model.empty()) {
    check_output_file(a.save_model, "--save-model");
    check_output_not_input(a.save_model, "--save-model",
                           {{"--config", a.config}, {"data.csv", cfg.data.csv_resolved}, {"--init-model", a.init_model}});
  }
}

}  // namespace

int cmd_train(const TrainArgs& a) { return run_train_command(a, backend_registry()); }

int run_train_command(const TrainArgs& a, const BackendRegistry& registry) {
  // Everything is checked before the output folder exists: bad input writes nothing.
  Config cfg = load_config(a.config, a.overrides);
  // `both` without a usable GPU is the CPU half, after a warning: here, so that sweep points
  // (which come straight to this function) follow the same rule as `nntrain train`.
  if (const std::string why = drop_missing_gpu(registry, cfg); !why.empty()) warn_gpu_not_run("--device both", why);
  Prepared prep = prepare_run(cfg, a.init_model);
  check_before_writing(a, cfg, registry, prep);
  if (stop_requested()) {  // it came while the data loaded (seconds for a large CSV)
    fmt::print(stderr, "nntrain: interrupted before training started; nothing written\n");
    return kExitInterrupted;
  }

  const std::string dir = a.out.empty() ? make_numbered_run_dir(cfg.output_dir) : (ensure_directory(a.out), a.out);
  write_file_atomic(dir + "/config.resolved.json", dump(resolved_config_json(cfg)));

  const bool color = !a.json && want_color(stdout);
  const auto devices = cfg.devices();
  const bool trains_gpu = std::find(devices.begin(), devices.end(), Device::gpu) != devices.end();
  const GpuInfo gpu = trains_gpu ? registry_gpu_info(registry) : GpuInfo{};
  const nlohmann::json context = run_context(trains_gpu ? &gpu : nullptr);  // before the runs: their date and load
  if (!a.json && !a.quiet) print_header(stdout, cfg, prep.data, trains_gpu ? &gpu : nullptr, context, color);

  Progress progress(a.quiet, ::isatty(STDERR_FILENO) != 0);
  std::vector<RunResult> runs;
  StopWatchdog watchdog(a, cfg, context, dir);
  TrainHooks hooks;
  hooks.evaluate = true;
  hooks.progress = [&](int done, int total, float loss) { progress.update(done, total, loss); };
  hooks.warmup_begin = [&](int n) {
    watchdog.warming(true);
    progress.warmup_begin(n);
  };
  hooks.warmup_end = [&](int n, double s) {
    // A stop during the warm-up ends the run without an epoch (the trainer checks right after
    // it): until the run has wound down, the watchdog still says "its warm-up", not "epoch 1".
    if (!stop_requested()) watchdog.warming(false);
    progress.warmup_end(n, s);
  };
  hooks.chunk_done = [&](const ChunkReport& c) { watchdog.chunk(c); };
  for (const Device device : cfg.devices()) {
    progress.begin(to_string(device), cfg.train.epochs);
    try {
      watchdog.finished(runs, run_training(registry, cfg, prep.data, prep.init, device, hooks));
    } catch (...) {
      progress.end();
      watchdog.claim();
      record_failure(cfg, runs, device, context, dir);
    }
    progress.end();
    if (runs.back().diverged_epoch || runs.back().interrupted) break;
  }

  // Results: everything that finished is written, marked with its status.
  watchdog.claim();
  write_file_atomic(dir + "/metrics.csv", metrics_csv(runs));
  const nlohmann::json summary = summary_json(cfg, runs, context);
  write_file_atomic(dir + "/summary.json", dump(summary));
  write_models(a, cfg, runs, dir);

  if (a.json) {
    nlohmann::json s = summary;
    s["output_dir"] = dir;
    fmt::print("{}", dump(s));
  } else if (a.quiet) {
    fmt::print("{}\n", dir);  // -q: the results folder alone, for scripts
  } else {
    print_results(stdout, cfg, runs, color);
    fmt::print("\nResults in {}/ (config.resolved.json, metrics.csv, summary.json{})\n", dir,
               runs.front().diverged_epoch ? "; no model.json: the run diverged" : ", model.json");
  }
  return exit_code_of(cfg, runs, dir);
}

}  // namespace nntrain
