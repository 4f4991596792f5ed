// cmd_train.cpp — `nntrain train`: validate everything, then train each device, then write.
//
// Order matters for "bad input writes nothing": the config, the data, the initial model,
// the device and the output location are all checked before the output folder exists.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "commands.hpp"
#include "errors.hpp"
#include "fileio.hpp"
#include "gpu.hpp"
#include "memcheck.hpp"
#include "report.hpp"
#include "surface.hpp"
#include "sysinfo.hpp"

namespace nntrain {

namespace {

void check_same_shape(const Params& p, const ModelSpec& spec, const std::string& file) {
  auto widths = [](const std::vector<int>& w) {
    std::string s;
    for (int x : w) s += (s.empty() ? "" : ",") + std::to_string(x);
    return "[" + s + "]";
  };
  if (p.spec.widths != spec.widths)
    throw UsageError(file + ": model layers " + widths(p.spec.widths) + " do not match config /model/layers " +
                     widths(spec.widths));
  if (p.spec.layers() > 1 && p.spec.hidden != spec.hidden)
    throw UsageError(file + ": hidden activation " + activation_name(p.spec.hidden) +
                     " does not match config /model/activation " + activation_name(spec.hidden));
  if (p.spec.output != spec.output)
    throw UsageError(file + ": output activation " + activation_name(p.spec.output) +
                     " does not match config /model/output_activation " + activation_name(spec.output));
}

}  // namespace

Prepared prepare_run(const Config& cfg, const std::string& init_model) {
  Prepared p;
  p.data = load_dataset(cfg.data);
  if (cfg.train.batch_size > p.data.n)
    throw UsageError("config /train/batch_size: " + std::to_string(cfg.train.batch_size) +
                     " is larger than the data set (" + std::to_string(p.data.n) +
                     " samples); use 0 for full batch");
  // Refuse a network, batch or curve that cannot fit before allocating any of it.
  const double batch = cfg.train.batch_size > 0 ? cfg.train.batch_size : p.data.n;
  check_fits_in_memory(training_bytes(cfg.model_spec(), batch, cfg.train.epochs) +
                           double(p.data.x.size() + p.data.y.size()) * sizeof(float),
                       "config /model/layers (" + std::to_string(cfg.model_spec().param_count()) +
                           " parameters) with /train/epochs " + std::to_string(cfg.train.epochs) + " on " +
                           std::to_string(p.data.n) + " samples");
  if (!init_model.empty()) {
    p.init = load_model(init_model);
    check_same_shape(p.init, cfg.model_spec(), init_model);
  } else {
    p.init = init_params(cfg.model_spec(), cfg.model.init, cfg.seed);
  }
  return p;
}

void require_devices(const Config& cfg) {
  for (const auto& d : cfg.devices()) {
    if (d != "gpu") continue;
    const GpuInfo g = query_gpu();
    if (!g.built_with_cuda) throw DeviceUnavailable("--device " + cfg.device + ": " + g.reason);
    if (!g.available) throw DeviceUnavailable("--device " + cfg.device + ": no CUDA device: " + g.reason);
    const std::string why = gpu_path_problem(cfg.model_spec(), cfg.gpu.path);
    if (!why.empty()) throw UsageError("config /gpu/path: fused: " + why + " (use auto or cublas)");
  }
}

nlohmann::json resolved_config_json(const Config& cfg) {
  nlohmann::json j = config_to_json(cfg);
  const BuildInfo& b = build_info();
  j["nntrain"] = {{"version", b.version}, {"build_type", b.build_type}, {"git_revision", b.git_revision}};
  return j;
}

int cmd_train(const TrainArgs& a) {
  const Config cfg = load_config(a.config, a.overrides,
                                 flags_json(a.set_flags, a.device, a.epochs, a.lr, a.seed, a.batch_size, a.threads,
                                            a.cpu_backend, a.gpu_path));
  Prepared prep = prepare_run(cfg, a.init_model);
  require_devices(cfg);
  if (a.write_surface) check_surface_request(cfg, a.write_surface);
  if (!a.out.empty()) check_output_location(a.out);
  else check_output_location(cfg.output_dir);
  if (!a.save_model.empty()) check_output_file(a.save_model, "--save-model");

  const std::string dir = a.out.empty() ? make_numbered_run_dir(cfg.output_dir) : (ensure_directory(a.out), a.out);
  // dump(..., replace): a path or name that is not UTF-8 must not fail after training.
  const auto dump = [](const nlohmann::json& j) {
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  };
  write_file_atomic(dir + "/config.resolved.json", dump(resolved_config_json(cfg)));

  const bool to_stdout = !a.json;
  const bool color = to_stdout && want_color(stdout);
  if (to_stdout && !a.quiet) print_header(stdout, cfg, prep.data, color);

  Progress progress(a.quiet, ::isatty(STDERR_FILENO) != 0);
  std::vector<RunResult> runs;
  for (const auto& device : cfg.devices()) {
    progress.begin(device, cfg.train.epochs);
    runs.push_back(run_training(cfg, prep.data, prep.init, device,
                                [&](int done, int total, float loss) { progress.update(done, total, loss); }));
    progress.end();
    if (runs.back().diverged_epoch || runs.back().interrupted) break;
  }

  // Results: everything that finished is written, marked with its status.
  write_file_atomic(dir + "/metrics.csv", metrics_csv(runs));
  const nlohmann::json summary = summary_json(cfg, runs);
  write_file_atomic(dir + "/summary.json", dump(summary));
  // A diverged run's weights are NaN/Inf: no model or surface file for it, and none left over
  // from an earlier run in the same --out folder to be mistaken for this run's. The same for a
  // device that never ran (an earlier device diverged or the run was interrupted).
  const std::vector<std::string> devices = cfg.devices();
  for (size_t k = 0; k < devices.size(); ++k) {
    const std::string file = dir + (k == 0 ? "/model.json" : "/model." + devices[k] + ".json");
    const std::string surface = dir + "/surface." + devices[k] + ".csv";
    if (k >= runs.size() || runs[k].diverged_epoch) {
      std::filesystem::remove(file);
      std::filesystem::remove(surface);
      continue;
    }
    write_file_atomic(file, model_to_json_string(runs[k].final_params));
    if (!a.write_surface) std::filesystem::remove(surface);  // an earlier run's, not this model's
  }
  // --save-model is what a sweep script picks up next: only a finished run is saved there.
  if (!a.save_model.empty()) {
    if (runs.front().status() == "ok") save_model(runs.front().final_params, a.save_model);
    else fmt::print(stderr, "nntrain: --save-model {} not written: the run {}\n", a.save_model, runs.front().status());
  }
  if (a.write_surface)
    for (const auto& r : runs)
      if (!r.diverged_epoch)
        write_file_atomic(dir + "/surface." + r.device + ".csv", surface_csv(cfg, r.final_params, a.write_surface));

  if (a.json) {
    nlohmann::json s = summary;
    s["output_dir"] = dir;
    fmt::print("{}", dump(s));
  } else {
    print_results(stdout, cfg, runs, color);
    fmt::print("\nResults in {}/ (config.resolved.json, metrics.csv, summary.json{})\n", dir,
               runs.front().diverged_epoch ? "; no model.json: the run diverged" : ", model.json");
  }
  for (const auto& r : runs) {
    if (r.diverged_epoch) {
      fmt::print(stderr, "nntrain: error: training diverged on {}: {} at epoch {}; results up to it kept in {}\n",
                 r.device, r.weights_nonfinite ? "weights became NaN/Inf in the update" : "loss is not finite",
                 r.diverged_epoch, dir);
      return kExitDiverged;
    }
    if (r.interrupted) {
      fmt::print(stderr, "nntrain: interrupted on {} after epoch {}; partial results written to {}\n", r.device,
                 r.epochs_done, dir);
      return kExitInterrupted;
    }
  }
  return kExitOk;
}

}  // namespace nntrain
