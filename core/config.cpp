// config.cpp — parsing, merging and validating the experiment config; see config.hpp.
#include "config.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "errors.hpp"
#include "fileio.hpp"
#include "json_reader.hpp"

namespace nntrain {

using nlohmann::json;

void merge_json(json& base, const json& over) {
  if (!base.is_object() || !over.is_object()) {
    base = over;
    return;
  }
  for (auto it = over.begin(); it != over.end(); ++it) {
    if (base.contains(it.key()) && base[it.key()].is_object() && it.value().is_object())
      merge_json(base[it.key()], it.value());
    else
      base[it.key()] = it.value();
  }
}

// RFC 7386 (JSON merge patch), as its pseudocode: the keys `patch` names are set, a null
// removes one, an object merges into what is there (into {} where that is no object, so a
// null inside a new section is removed too); the keys it does not name stay.
json merge_patch(const json& target, const json& patch) {
  if (!patch.is_object()) return patch;
  json result = target.is_object() ? target : json::object();
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    if (it.value().is_null())
      result.erase(it.key());
    else
      result[it.key()] = merge_patch(result.contains(it.key()) ? result[it.key()] : json(), it.value());
  }
  return result;
}

void set_path(json& j, const std::string& dotted, const json& value) {
  json* cur = &j;
  size_t start = 0;
  std::string walked;
  while (true) {
    const size_t dot = dotted.find('.', start);
    const std::string key = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (key.empty()) throw UsageError("override key '" + dotted + "' has an empty component");
    walked += "/" + key;
    if (!cur->is_object())
      throw UsageError("override '" + dotted + "': " + walked.substr(0, walked.rfind('/')) +
                       " is not an object");
    if (dot == std::string::npos) {
      // `optimizer={"type":"sgd"}` sets the type and keeps the file's lr (it once reset every
      // key it did not name to its default, without a word).
      (*cur)[key] = merge_patch(cur->contains(key) ? (*cur)[key] : json(), value);
      return;
    }
    cur = &(*cur)[key];
    if (cur->is_null()) *cur = json::object();
    start = dot + 1;
  }
}

void apply_override(json& j, const std::string& assignment) {
  // JSON text is UTF-8; a stray Latin-1 byte would otherwise fail much later, when the
  // resolved config is written, after the run folder exists.
  const size_t bad = invalid_utf8_at(assignment);
  if (bad != std::string::npos)
    throw UsageError("override argument is not valid UTF-8 (byte " + std::to_string(bad + 1) + " of " +
                     std::to_string(assignment.size()) + ")");
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError("override '" + assignment + "' is not of the form key.path=value");
  const std::string key = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  json value;
  try {
    value = json::parse(text, no_duplicate_keys("override '" + assignment + "'"));
  } catch (const json::parse_error&) {
    value = text;  // a bare word: relu, data/x.csv, ...
  } catch (const json::exception&) {
    throw UsageError("override '" + assignment + "': the number is not finite in double precision");
  }
  set_path(j, key, value);
}

namespace {

// Widths above this are refused: a 65536-wide dense layer already has 4 G parameters.
constexpr long long kMaxWidth = 65536;
constexpr long long kMaxGridSide = 1 << 20;
constexpr double kMaxRange = 1e30;  // data.range bounds (see read_generator)

std::vector<std::string> string_list(const ObjectReader& r, const json& v, const std::string& path) {
  if (!v.is_array() || v.empty())
    r.fail(path, "expected a non-empty array of column names, got " + json_type_name(v));
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string() || v[i].get<std::string>().empty())
      r.fail(path + "/" + std::to_string(i), "expected a column name, got " + json_type_name(v[i]));
    if (!seen.insert(v[i].get<std::string>()).second)
      r.fail(path + "/" + std::to_string(i), "column \"" + v[i].get<std::string>() + "\" is listed twice");
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

Activation activation_at(ObjectReader& r, const std::string& key, Activation def) {
  const std::string name = r.choice(key, activation_name(def), activation_names());
  Activation a = def;
  parse_activation(name, a);
  return a;
}

// One reader per section: each takes the section's JSON and fills its part of the Config.

void read_csv_source(ObjectReader& d, DataConfig& c, const std::string& config_dir) {
  c.generator.clear();
  c.csv = d.str("csv", "");
  if (c.csv.empty()) d.fail("/data/csv", "must name a file");
  namespace fs = std::filesystem;
  const fs::path p(c.csv);
  c.csv_resolved = p.is_absolute() || config_dir.empty() ? p.string() : (fs::path(config_dir) / p).string();
  if (!d.has("inputs")) d.fail("/data/inputs", "required with \"csv\": the input column names");
  c.inputs = string_list(d, d.at("inputs"), "/data/inputs");
  if (!d.has("targets")) d.fail("/data/targets", "required with \"csv\": the target column names");
  c.targets = string_list(d, d.at("targets"), "/data/targets");
  for (const auto& t : c.targets)
    if (std::find(c.inputs.begin(), c.inputs.end(), t) != c.inputs.end())
      d.fail("/data/targets", "column \"" + t + "\" is both an input and a target");
}

void read_generator(ObjectReader& d, DataConfig& c) {
  c.generator = d.choice("generator", "peaks", {"peaks"});
  if (d.has("grid")) {
    const json& g = d.at("grid");
    if (g.is_array()) {
      if (g.size() != 2) d.fail("/data/grid", "expected N or [N1, N2], got an array of " + std::to_string(g.size()));
      c.grid_x1 = int(d.integer_value(g[0], "/data/grid/0", 1, kMaxGridSide));
      c.grid_x2 = int(d.integer_value(g[1], "/data/grid/1", 1, kMaxGridSide));
    } else {
      c.grid_x1 = c.grid_x2 = int(d.integer_value(g, "/data/grid", 1, kMaxGridSide));
    }
  }
  if (d.has("range")) {
    const json& r = d.at("range");
    if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number())
      d.fail("/data/range", "expected [low, high], got " + json_type_name(r));
    c.range_lo = r[0].get<double>();
    c.range_hi = r[1].get<double>();
    // The inputs are float32 and the peaks function multiplies powers of them by exp(-x^2):
    // beyond ~1e38 a grid point is no float, and near 1e61 the product is inf * 0 = NaN.
    // Within +-1e30 every grid point and target is finite (training may still diverge).
    if (!std::isfinite(c.range_lo) || !std::isfinite(c.range_hi) || !(c.range_lo < c.range_hi) ||
        std::fabs(c.range_lo) > kMaxRange || std::fabs(c.range_hi) > kMaxRange)
      d.fail("/data/range", "expected low < high, both within +-1e30, got " + r.dump());
  }
}

void read_validation(ObjectReader& d, DataConfig& c) {
  if (d.has("validation_fraction")) {
    const json& v = d.at("validation_fraction");
    if (!v.is_number()) d.fail("/data/validation_fraction", "expected a number, got " + json_type_name(v));
    const double f = v.get<double>();
    // 1 would leave nothing to train on; 0 is "no split".
    if (!std::isfinite(f) || f < 0 || f >= 1)
      d.fail("/data/validation_fraction", "value " + v.dump() + " is out of range (expected >= 0 and < 1; 0 = no split)");
    c.validation_fraction = f;
  }
  c.validation_every = int(d.integer("validation_every", c.validation_every, 1, 1000000000));
}

void read_data(const json& j, DataConfig& c, const std::string& config_dir) {
  ObjectReader d(j, "/data");
  const bool has_csv = d.has("csv");
  const bool has_gen = d.has("generator");
  if (has_csv && has_gen) d.fail("/data", "give either \"generator\" or \"csv\", not both");
  // A peaks config made a CSV one by an override keeps its grid: say what the key is (not
  // "unknown", and without listing it among a CSV's keys).
  for (const char* key : {"grid", "range"})
    if (has_csv && j.contains(key))
      d.fail(std::string("/data/") + key, std::string("applies to generated data, not to a CSV file; remove it (as an "
                                                      "override: data={\"") + key + "\":null,...})");
  if (has_csv) read_csv_source(d, c, config_dir);
  else read_generator(d, c);
  read_validation(d, c);
  d.finish();
}

void read_model(const json& j, ModelConfig& c) {
  ObjectReader m(j, "/model");
  if (m.has("layers")) {
    const json& L = m.at("layers");
    if (!L.is_array() || L.size() < 2)
      m.fail("/model/layers", "expected an array of at least 2 widths (inputs ... outputs), got " + json_type_name(L));
    c.layers.clear();
    for (size_t i = 0; i < L.size(); ++i)
      c.layers.push_back(int(m.integer_value(L[i], "/model/layers/" + std::to_string(i), 1, kMaxWidth)));
  }
  c.activation = activation_at(m, "activation", c.activation);
  c.output_activation = activation_at(m, "output_activation", c.output_activation);
  parse_init(m.choice("init", init_name(c.init), {"glorot_uniform", "he_uniform"}), c.init);
  m.finish();
}

void read_optimizer(const json& j, OptimizerConfig& c) {
  ObjectReader o(j, "/optimizer");
  c.type = o.choice("type", c.type, {"adam", "sgd"});
  c.lr = o.number("lr", c.lr, 0.0, 1e6, /*lo_open=*/true);
  c.beta1 = o.number("beta1", c.beta1, 0.0, 0.999999);
  c.beta2 = o.number("beta2", c.beta2, 0.0, 0.999999999);
  c.eps = o.number("eps", c.eps, 0.0, 1.0, /*lo_open=*/true);
  // The update runs in fp32, and the fast backend flushes subnormals to 0: a value > 0 below
  // float32's smallest normal number trains nothing (lr) or divides 0 by 0 (eps, where a
  // gradient and its moments are 0).
  for (const auto& [key, v] : {std::pair<const char*, double>{"lr", c.lr}, {"eps", c.eps}})
    if (v < double(std::numeric_limits<float>::min()))
      o.fail(std::string("/optimizer/") + key, "value " + json(v).dump() +
                                               " is below float32's smallest normal number, 1.1754944e-38 (the update "
                                               "runs in float32 and may flush smaller values to 0)");
  o.finish();
}

void read_train(const json& j, TrainConfig& c) {
  ObjectReader t(j, "/train");
  c.epochs = int(t.integer("epochs", c.epochs, 0, 1000000000));
  c.batch_size = int(t.integer("batch_size", c.batch_size, 0, std::numeric_limits<int>::max()));
  c.shuffle = t.boolean("shuffle", c.shuffle);
  c.log_every = int(t.integer("log_every", c.log_every, 1, 1000000000));
  // null is allowed here, meaning "no target" (the resolved config writes it so).
  c.target_loss.reset();
  if (t.has("target_loss") && !t.at("target_loss").is_null()) {
    const json& v = t.at("target_loss");
    if (!v.is_number()) t.fail("/train/target_loss", "expected a number > 0 or null, got " + json_type_name(v));
    const double d = v.get<double>();
    if (!std::isfinite(d) || !(d > 0))
      t.fail("/train/target_loss", "value " + v.dump() + " is not a loss to reach (expected a finite number > 0; "
                                   "leave the key out or null for no target)");
    c.target_loss = d;
  }
  t.finish();
}

void read_timing(const json& j, TimingConfig& c) {
  ObjectReader t(j, "/timing");
  c.warmup_epochs = int(t.integer("warmup_epochs", c.warmup_epochs, 0, 1000000));
  c.repeats = int(t.integer("repeats", c.repeats, 1, 1000));
  t.finish();
}

void read_cpu(const json& j, CpuConfig& c) {
  ObjectReader t(j, "/cpu");
  c.backend = t.choice("backend", c.backend, kCpuBackendNames);
  c.threads = int(t.integer("threads", c.threads, 0, 1024));
  t.finish();
}

void read_gpu(const json& j, GpuConfig& c) {
  ObjectReader t(j, "/gpu");
  if (const std::string note = retired_name_note("gpu.path", t.str("path", "")); !note.empty())
    t.fail(t.path("path"), note);
  c.path = t.choice("path", c.path, kGpuPathNames);
  c.chunk_epochs = int(t.integer("chunk_epochs", c.chunk_epochs, 0, 1000000000));
  t.finish();
}

void read_output(const json& j, std::string& dir) {
  ObjectReader t(j, "/output");
  dir = t.str("dir", dir);
  if (dir.empty()) t.fail("/output/dir", "must not be empty");
  t.finish();
}

// Cross-field checks that need no data: the model's ends match the data's columns.
void check_model_fits_data(const Config& c) {
  const size_t n_in = c.data.csv.empty() ? 2 : c.data.inputs.size();
  const size_t n_out = c.data.csv.empty() ? 1 : c.data.targets.size();
  const auto fail = [](const std::string& path, const std::string& msg) {
    throw UsageError("config " + path + ": " + msg);
  };
  if (size_t(c.model.layers.front()) != n_in)
    fail("/model/layers/0", "is " + std::to_string(c.model.layers.front()) + " but the data has " +
                                std::to_string(n_in) + " input" + (n_in == 1 ? "" : "s"));
  if (size_t(c.model.layers.back()) != n_out)
    fail("/model/layers/" + std::to_string(c.model.layers.size() - 1),
         "is " + std::to_string(c.model.layers.back()) + " but the data has " + std::to_string(n_out) + " target" +
             (n_out == 1 ? "" : "s"));
}

}  // namespace

Config config_from_json(const json& j, const std::string& config_dir) {
  Config c;
  ObjectReader root(j, "");
  c.name = root.str("name", c.name);
  if (c.name.empty()) root.fail("/name", "must not be empty");
  if (root.has("seed"))
    c.seed = static_cast<uint64_t>(root.integer_value(j.at("seed"), "/seed", 0, std::numeric_limits<long long>::max()));
  if (root.has("data")) read_data(j.at("data"), c.data, config_dir);
  if (root.has("model")) read_model(j.at("model"), c.model);
  c.loss = root.choice("loss", c.loss, {"mse"});
  if (root.has("optimizer")) read_optimizer(j.at("optimizer"), c.optimizer);
  if (root.has("train")) read_train(j.at("train"), c.train);
  c.device = root.choice("device", c.device, kDeviceChoiceNames);
  if (root.has("timing")) read_timing(j.at("timing"), c.timing);
  if (root.has("cpu")) read_cpu(j.at("cpu"), c.cpu);
  if (root.has("gpu")) read_gpu(j.at("gpu"), c.gpu);
  if (root.has("output")) read_output(j.at("output"), c.output_dir);
  // config.resolved.json's record of the build that wrote it: read back, it sets nothing.
  if (root.has("nntrain") && !j.at("nntrain").is_object())
    root.fail("/nntrain", "must be an object (config.resolved.json's record of the nntrain that wrote it)");
  root.finish();
  check_model_fits_data(c);
  return c;
}

json config_to_json(const Config& c) {
  json j;
  j["name"] = c.name;
  j["seed"] = c.seed;
  if (c.data.csv.empty()) {
    j["data"] = {{"generator", c.data.generator},
                 {"grid", {c.data.grid_x1, c.data.grid_x2}},
                 {"range", {c.data.range_lo, c.data.range_hi}}};
  } else {
    j["data"] = {{"csv", c.data.csv}, {"inputs", c.data.inputs}, {"targets", c.data.targets}};
  }
  j["data"]["validation_fraction"] = c.data.validation_fraction;
  j["data"]["validation_every"] = c.data.validation_every;
  j["model"] = {{"layers", c.model.layers},
                {"activation", activation_name(c.model.activation)},
                {"output_activation", activation_name(c.model.output_activation)},
                {"init", init_name(c.model.init)}};
  j["loss"] = c.loss;
  j["optimizer"] = {{"type", c.optimizer.type},
                    {"lr", c.optimizer.lr},
                    {"beta1", c.optimizer.beta1},
                    {"beta2", c.optimizer.beta2},
                    {"eps", c.optimizer.eps}};
  j["train"] = {{"epochs", c.train.epochs},
                {"batch_size", c.train.batch_size},
                {"shuffle", c.train.shuffle},
                {"log_every", c.train.log_every},
                {"target_loss", c.train.target_loss ? json(*c.train.target_loss) : json(nullptr)}};
  j["device"] = to_string(c.device);
  j["timing"] = {{"warmup_epochs", c.timing.warmup_epochs}, {"repeats", c.timing.repeats}};
  j["cpu"] = {{"backend", to_string(c.cpu.backend)}, {"threads", c.cpu.threads}};
  j["gpu"] = {{"path", to_string(c.gpu.path)}, {"chunk_epochs", c.gpu.chunk_epochs}};
  j["output"] = {{"dir", c.output_dir}};
  return j;
}

ModelSpec Config::model_spec() const {
  ModelSpec s;
  s.widths = model.layers;
  s.hidden = model.activation;
  s.output = model.output_activation;
  return s;
}

std::vector<Device> Config::devices() const { return devices_of(device); }

std::optional<std::pair<size_t, size_t>> first_same_configs(const std::vector<Config>& configs) {
  std::map<std::string, size_t> seen;
  for (size_t k = 0; k < configs.size(); ++k) {
    const auto [it, fresh] = seen.emplace(config_to_json(configs[k]).dump(), k);
    if (!fresh) return std::make_pair(it->second, k);
  }
  return std::nullopt;
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  json j = parse_json_text(read_file(path, "config file"), path);
  if (!j.is_object()) throw UsageError(path + ": expected a JSON object at the top level");
  if (const auto f = j.find("format"); f != j.end() && f->is_string())  // model.json, a sweep's results
    throw UsageError(path + ": a \"" + escape_control_bytes(f->get<std::string>()) +
                     "\" file, not an experiment config" +
                     (*f == "nntrain-mlp" ? " (a saved model: it goes to --init-model or predict --model)" : ""));
  const std::string dir = std::filesystem::path(path).parent_path().string();
  // The file is valid as written, on its own: a bad value in it is an error even when an
  // override or a flag replaces it (a sweep script must not keep a broken file alive).
  try {
    (void)config_from_json(j, dir);
  } catch (const UsageError& e) {
    if (overrides.empty()) throw;
    throw ConfigFileError(std::string(e.what()) + " (in " + path + " as written, before overrides)");
  }
  if (overrides.empty()) return config_from_json(j, dir);
  for (const auto& o : overrides) apply_override(j, o);
  return config_from_json(j, dir);
}

}  // namespace nntrain
