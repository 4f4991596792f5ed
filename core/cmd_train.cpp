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
#include "report.hpp"
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
  if (!a.out.empty()) check_output_location(a.out);
  else check_output_location(cfg.output_dir);
  if (!a.save_model.empty()) {
    const auto parent = std::filesystem::path(a.save_model).parent_path();
    check_output_location(parent.empty() ? "." : parent.string());
  }

  const std::string dir = a.out.empty() ? make_numbered_run_dir(cfg.output_dir) : (ensure_directory(a.out), a.out);
  write_file_atomic(dir + "/config.resolved.json", resolved_config_json(cfg).dump(2) + "\n");

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
  write_file_atomic(dir + "/summary.json", summary.dump(2) + "\n");
  write_file_atomic(dir + "/model.json", model_to_json_string(runs.front().final_params));
  for (size_t k = 1; k < runs.size(); ++k)
    write_file_atomic(dir + "/model." + runs[k].device + ".json", model_to_json_string(runs[k].final_params));
  if (!a.save_model.empty()) save_model(runs.front().final_params, a.save_model);

  if (a.json) {
    nlohmann::json s = summary;
    s["output_dir"] = dir;
    fmt::print("{}\n", s.dump(2));
  } else {
    print_results(stdout, cfg, runs, color);
    fmt::print("\nResults in {}/ (config.resolved.json, metrics.csv, summary.json, model.json)\n", dir);
  }
  for (const auto& r : runs) {
    if (r.diverged_epoch) {
      fmt::print(stderr, "nntrain: error: training diverged on {}: loss is not finite at epoch {}\n", r.device,
                 r.diverged_epoch);
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
