// preflight.cpp — what `train` and `bench` check before anything runs or is written: the
// data, the initial weights, the memory a run needs and the devices (one function each, so
// the two subcommands refuse the same things the same way).
#include "backend_registry.hpp"
#include "commands.hpp"
#include "errors.hpp"
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
  if (cfg.train.batch_size > p.data.n)
    throw UsageError("config /train/batch_size: " + std::to_string(cfg.train.batch_size) +
                     " is larger than the data set (" + std::to_string(p.data.n) +
                     " samples); use 0 for full batch");
  // Refuse a network, batch or curve that cannot fit before allocating any of it.
  const double batch = batch_samples(cfg.train.batch_size, p.data.n);
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

void check_gpu_path(const BackendRegistry& registry, const Config& cfg) {
  // Only the GPU entry has a fits check today: the network against the fused kernel's limits.
  for (const Device d : cfg.devices()) {
    const std::string why = backend_fit_problem(find_backend(registry, d, cfg.cpu.backend), backend_options(cfg, d));
    if (!why.empty())
      throw UsageError("config /gpu/path: fused: model " + layers_text(cfg.model.layers) + ": " + why +
                       " (use auto or cublas)");
  }
}

void require_devices(const BackendRegistry& registry, const Config& cfg, const std::string& what) {
  // The network against the path first: that needs no device, so a config no GPU could run
  // is exit 2 on any machine.
  check_gpu_path(registry, cfg);
  for (const Device d : cfg.devices()) {
    const BackendProbe p = probe_device(registry, d, cfg.cpu.backend);
    if (!p.available) throw DeviceUnavailable(what + ": " + p.reason);
  }
}

nlohmann::json resolved_config_json(const Config& cfg) {
  nlohmann::json j = config_to_json(cfg);
  const BuildInfo& b = build_info();
  j["nntrain"] = {{"version", b.version}, {"build_type", b.build_type}, {"git_revision", b.git_revision}};
  return j;
}

}  // namespace nntrain
