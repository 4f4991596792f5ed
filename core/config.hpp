// config.hpp — the one Config struct of nntrain, parsed and validated in one place.
//
// Precedence: built-in defaults < config file < key.path=value overrides < explicit flags.
// A command-line flag is one more key.path=value override, applied after the user's (the
// flag table in app/cli_flags.cpp). The file and the overrides are merged as JSON first, then
// converted and validated once (the defaults are the Config struct's initialisers), so every
// error names the JSON path (/optimizer/lr) whatever layer the bad value came from.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlp.hpp"
#include "names.hpp"

namespace nntrain {

struct DataConfig {
  // Either a generator ...
  std::string generator = "peaks";  // "" when csv is used
  int grid_x1 = 200, grid_x2 = 200;
  double range_lo = -3.0, range_hi = 3.0;
  // ... or a CSV file with named input and target columns.
  std::string csv;  // as written in the config
  std::string csv_resolved;  // relative paths resolve against the config file's folder
  std::vector<std::string> inputs, targets;
  // Held-out validation (docs/CONFIG.md): this fraction of the samples, picked by the seed,
  // is not trained on; 0 = no split. Its loss is evaluated every `validation_every` epochs.
  double validation_fraction = 0.0;
  int validation_every = 1;
};

struct ModelConfig {
  std::vector<int> layers{2, 20, 5, 1};
  Activation activation = Activation::relu;
  Activation output_activation = Activation::identity;
  Init init = Init::glorot_uniform;
};

struct OptimizerConfig {
  std::string type = "adam";  // "adam" | "sgd"
  double lr = 0.08, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
};

struct TrainConfig {
  int epochs = 2000;
  int batch_size = 0;  // 0 = full batch
  bool shuffle = true;
  int log_every = 100;
  // Time to target (docs/DESIGN.md §7): the first epoch whose loss <= this, and the training
  // time up to it. Absent (or null in the config) = no target.
  std::optional<double> target_loss;
};

struct TimingConfig {
  int warmup_epochs = 5;
  int repeats = 1;
};

struct CpuConfig {
  CpuBackendKind backend = CpuBackendKind::fast;
  int threads = 0;               // 0 = all hardware threads
};

struct GpuConfig {
  GpuPath path = GpuPath::automatic;
  int chunk_epochs = 0;       // epochs per device→host loss copy; 0 = train.log_every
};

struct Config {
  std::string name = "experiment";
  uint64_t seed = 1;
  DataConfig data;
  ModelConfig model;
  std::string loss = "mse";
  OptimizerConfig optimizer;
  TrainConfig train;
  DeviceChoice device = DeviceChoice::cpu;
  TimingConfig timing;
  CpuConfig cpu;
  GpuConfig gpu;
  std::string output_dir = "runs/experiment";

  ModelSpec model_spec() const;
  std::vector<Device> devices() const;  // {cpu}, {gpu} or {cpu, gpu}
};

// Applies one "key.path=value" override. The value is parsed as JSON when it is valid JSON
// (numbers, true/false, [..], {..}, "quoted"), else taken as a string. Throws UsageError.
void apply_override(nlohmann::json& j, const std::string& assignment);

// Sets a dotted path to a value (creating objects on the way).
void set_path(nlohmann::json& j, const std::string& dotted, const nlohmann::json& value);

// Deep merge: `over` wins; objects merge recursively, everything else replaces.
void merge_json(nlohmann::json& base, const nlohmann::json& over);

// Converts and validates. Unknown keys, wrong types and out-of-range values throw
// UsageError naming the JSON path and, for a misspelt key, the nearest valid one.
// `config_dir` anchors relative data paths.
Config config_from_json(const nlohmann::json& j, const std::string& config_dir);

// The fully resolved config (every field, defaults included).
nlohmann::json config_to_json(const Config& c);

// The first two configs (by position, i < k) whose every resolved setting is equal: two
// sweep points that would be one run twice however their values were written
// (`data.grid=10,[10,10]`). nullopt when all differ.
std::optional<std::pair<size_t, size_t>> first_same_configs(const std::vector<Config>& configs);

// The whole precedence chain: reads `path` and validates it as written (a bad value in the
// file is an error even when overridden), applies `overrides` (key.path=value, the
// command-line flags' last) in order, and validates the result.
Config load_config(const std::string& path, const std::vector<std::string>& overrides);

}  // namespace nntrain
