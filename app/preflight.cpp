// preflight.cpp — what `train`, `bench` and `sweep` check before anything runs or is
// written: the data, the initial weights, the memory a run needs and the devices (one
// function each, so the subcommands refuse the same things the same way), and the one rule
// for `--device both` on a machine whose GPU cannot run: the CPU half runs alone, after a
// warning naming what is missing; `--device gpu` there is exit 3 with the same reason.
#include <fmt/format.h>
#include <sys/stat.h>

#include <filesystem>
#include <utility>
#include <vector>

#include "backend_registry.hpp"
#include "commands.hpp"
#include "errors.hpp"
#include "fileio.hpp"
#include "memcheck.hpp"
#include "sysinfo.hpp"

namespace nntrain {

namespace {

std::string layers_text(const std::vector<int>& w) {
  std::string s;
  for (int x : w) s += (s.empty() ? "" : ",") + std::to_string(x);
  return "[" + s + "]";
}

void check_same_shape(const Params& p, const ModelSpec& spec, const std::string& file) {
  if (p.spec.widths != spec.widths)
    throw UsageError(file + ": model layers " + layers_text(p.spec.widths) + " do not match config /model/layers " +
                     layers_text(spec.widths));
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
  // A batch is drawn from the samples trained on: the held-out ones are not among them.
  const int held_out = validation_samples(p.data.n, cfg.data.validation_fraction);
  const int trained = p.data.n - held_out;
  if (cfg.train.batch_size > trained)
    throw UsageError("config /train/batch_size: " + std::to_string(cfg.train.batch_size) + " is larger than the " +
                     (held_out ? "training set (" + std::to_string(trained) + " samples: " +
                                     std::to_string(p.data.n) + " less " + std::to_string(held_out) +
                                     " held out by /data/validation_fraction)"
                               : "data set (" + std::to_string(p.data.n) + " samples)") +
                     "; use 0 for full batch");
  // Refuse a network, batch or curve that cannot fit before allocating any of it.
  const double batch = batch_samples(cfg.train.batch_size, trained);
  double backend_bytes = 0;  // the devices train one after the other: the larger one's
  for (const Device d : cfg.devices()) {
    const BackendEntry& e = find_backend(backend_registry(), d, cfg.cpu.backend);
    double bytes = backend_host_bytes(e, backend_options(cfg, d), trained);
    if (held_out)  // the held-out set's backend lives beside it
      bytes += backend_host_bytes(e, evaluation_options(backend_options(cfg, d)), held_out) +
               training_bytes(cfg.model_spec(), held_out, 1);
    backend_bytes = std::max(backend_bytes, bytes);
  }
  check_fits_in_memory(training_bytes(cfg.model_spec(), batch, cfg.train.epochs) + backend_bytes +
                           double(p.data.x.size() + p.data.y.size()) * sizeof(float),
                       "config /model/layers (" + std::to_string(cfg.model_spec().param_count()) +
                           " parameters) with /train/epochs " + std::to_string(cfg.train.epochs) + " on " +
                           std::to_string(p.data.n) + " samples");
  if (!init_model.empty()) {
    p.init = load_model(init_model, &p.init_names);
    check_same_shape(p.init, cfg.model_spec(), init_model);
  } else {
    p.init = init_params(cfg.model_spec(), cfg.model.init, cfg.seed);
  }
  return p;
}

void check_gpu_path(const BackendRegistry& registry, const Config& cfg) {
  // The fits checks: the GPU's, the network against the chosen path's limits and a diagnostic
  // variable asked of a path it does not apply to; the fast CPU backend's, its NNTRAIN_FAST_*
  // variables. A variable's message names it and what it needs ("use auto or cublas" would
  // not help it).
  for (const Device d : cfg.devices()) {
    const std::string why = backend_fit_problem(find_backend(registry, d, cfg.cpu.backend), backend_options(cfg, d));
    if (why.empty()) continue;
    if (why.rfind("NNTRAIN_", 0) == 0) throw EnvError(why);
    if (d == Device::cpu) throw UsageError("config /model/layers: " + layers_text(cfg.model.layers) + ": " + why);
    throw UsageError(std::string("config /gpu/path: ") + to_string(cfg.gpu.path) + ": model " +
                     layers_text(cfg.model.layers) + ": " + why + " (use auto or cublas)");
  }
}

namespace {

// Why `device` cannot train here, "" when it can. For the GPU, the probe's GpuInfo says what
// is missing (no driver, a driver too old, no device, a CPU-only build) without the
// registry's generic "no CUDA device:" prefix; a probe without one (a test's) has its reason.
std::string unusable_reason(const BackendRegistry& registry, Device device, CpuBackendKind cpu_backend) {
  const BackendProbe p = probe_device(registry, device, cpu_backend);
  if (p.available) return "";
  return device == Device::gpu && !p.gpu.reason.empty() ? p.gpu.reason : p.reason;
}

}  // namespace

void require_devices(const BackendRegistry& registry, const Config& cfg, const std::string& what) {
  // The network against the path first: that needs no device, so a config no GPU could run
  // is exit 2 on any machine.
  check_gpu_path(registry, cfg);
  for (const Device d : cfg.devices()) {
    const std::string why = unusable_reason(registry, d, cfg.cpu.backend);
    if (why.empty()) continue;
    // A CPU is always there: what its backend's probe refuses is a setting (NNTRAIN_FAST_ISA
    // naming an instruction set this CPU lacks), bad usage, exit 2.
    if (d == Device::cpu) throw UsageError(why);
    throw DeviceUnavailable(what + ": " + why + (d == Device::gpu ? std::string("; ") + kCpuHalfHint : ""));
  }
}

std::string drop_missing_gpu(const BackendRegistry& registry, Config& cfg) {
  if (cfg.device != DeviceChoice::both) return "";
  const std::string why = unusable_reason(registry, Device::gpu, cfg.cpu.backend);
  if (why.empty()) return "";
  check_gpu_path(registry, cfg);  // a net no GPU path takes stays exit 2, GPU or not
  cfg.device = DeviceChoice::cpu;
  return why;
}

void warn_gpu_not_run(const std::string& what, const std::string& reason) {
  fmt::print(stderr, "nntrain: warning: {}: the GPU half is not run: {}; the CPU half runs alone\n", what, reason);
}

namespace {

// The files a run writes in its folder (cmd_train.cpp, record_failure, the stop watchdog).
constexpr const char* kRunFiles[] = {"config.resolved.json", "metrics.csv",    "summary.json",
                                     "model.json",           "model.cpu.json", "model.gpu.json",
                                     "surface.cpu.csv",      "surface.gpu.csv"};

}  // namespace

void check_run_folder(const TrainArgs& a, const Config& cfg) {
  if (a.out.empty()) return;  // a new numbered folder: nothing in it yet
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {"--config", a.config}, {"data.csv", cfg.data.csv_resolved}, {"--init-model", a.init_model}};
  for (const char* name : kRunFiles) {
    const std::string file = a.out + "/" + name;
    if (!a.save_model.empty() && same_file(file, a.save_model))
      throw UsageError(fmt::format("--save-model {} is the run's own {} in --out {}: choose another file",
                                   a.save_model, name, a.out));
    const std::string what = fmt::format("--out {}: the run writes its {} there, but {}", a.out, name, file);
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      throw UsageError(what + " is not a regular file; remove it or choose another --out");
    for (const auto& [option, path] : inputs)
      if (!path.empty() && same_file(file, path))
        throw UsageError(fmt::format("{} is {} {}: writing it would overwrite the input; choose another --out", what,
                                     option, path));
  }
}

nlohmann::json portable_config_json(const Config& cfg) {
  nlohmann::json j = config_to_json(cfg);
  if (!cfg.data.csv.empty())
    j["data"]["csv"] = std::filesystem::absolute(cfg.data.csv_resolved).lexically_normal().string();
  return j;
}

nlohmann::json resolved_config_json(const Config& cfg) {
  nlohmann::json j = portable_config_json(cfg);
  const BuildInfo& b = build_info();
  j["nntrain"] = {{"version", b.version}, {"build_type", b.build_type}, {"git_revision", b.git_revision}};
  return j;
}

}  // namespace nntrain
