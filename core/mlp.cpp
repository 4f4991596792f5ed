// mlp.cpp — shapes, initialisation and model.json for the MLP; see mlp.hpp.
#include "mlp.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "config.hpp"
#include "errors.hpp"
#include "fileio.hpp"
#include "rng.hpp"

namespace nntrain {

using nlohmann::json;

size_t ModelSpec::weight_offset(int l) const {
  size_t off = 0;
  for (int i = 0; i < l; ++i) off += size_t(widths[i]) * widths[i + 1] + widths[i + 1];
  return off;
}
size_t ModelSpec::bias_offset(int l) const { return weight_offset(l) + size_t(in(l)) * out(l); }
size_t ModelSpec::param_count() const { return weight_offset(layers()); }
int ModelSpec::max_width() const { return *std::max_element(widths.begin(), widths.end()); }
size_t ModelSpec::macs_per_sample() const {
  size_t m = 0;
  for (int l = 0; l < layers(); ++l) m += size_t(in(l)) * out(l);
  return m;
}

Params init_params(const ModelSpec& spec, Init init, uint64_t seed) {
  Params p{spec, std::vector<float>(spec.param_count(), 0.0f)};
  Rng rng(seed);
  for (int l = 0; l < spec.layers(); ++l) {
    const double fan_in = spec.in(l), fan_out = spec.out(l);
    const double limit =
        init == Init::he_uniform ? std::sqrt(6.0 / fan_in) : std::sqrt(6.0 / (fan_in + fan_out));
    float* W = p.W(l);
    for (size_t i = 0; i < size_t(spec.in(l)) * spec.out(l); ++i) W[i] = rng.uniform_symmetric(limit);
  }
  return p;
}

namespace {
struct ActName {
  Activation a;
  const char* name;
};
constexpr ActName kActs[] = {{Activation::identity, "identity"},
                             {Activation::relu, "relu"},
                             {Activation::tanh, "tanh"},
                             {Activation::sigmoid, "sigmoid"},
                             {Activation::leaky_relu, "leaky_relu"}};
}  // namespace

const char* activation_name(Activation a) {
  for (const auto& e : kActs)
    if (e.a == a) return e.name;
  return "?";
}
bool parse_activation(const std::string& name, Activation& out) {
  for (const auto& e : kActs)
    if (name == e.name) {
      out = e.a;
      return true;
    }
  return false;
}
const char* init_name(Init i) { return i == Init::he_uniform ? "he_uniform" : "glorot_uniform"; }
bool parse_init(const std::string& name, Init& out) {
  if (name == "glorot_uniform") out = Init::glorot_uniform;
  else if (name == "he_uniform") out = Init::he_uniform;
  else return false;
  return true;
}

bool all_finite(const Params& p) {
  for (float v : p.values)
    if (!std::isfinite(v)) return false;
  return true;
}

std::string model_to_json_string(const Params& p) {
  // Written by hand rather than through json::dump so floats print with the shortest
  // repr that round-trips (max_digits10) and the W rows stay one per line.
  std::ostringstream os;
  os.precision(9);
  os << "{\n  \"format\": \"nntrain-mlp\",\n  \"version\": 1,\n  \"layers\": [";
  for (int l = 0; l < p.spec.layers(); ++l) {
    const int in = p.spec.in(l), out = p.spec.out(l);
    os << (l ? ",\n" : "\n") << "    {\"in\": " << in << ", \"out\": " << out
       << ", \"activation\": \"" << activation_name(p.spec.activation(l)) << "\",\n     \"W\": [";
    const float* W = p.W(l);
    for (int r = 0; r < out; ++r) {
      os << (r ? ",\n           [" : "[");
      for (int c = 0; c < in; ++c) os << (c ? ", " : "") << W[size_t(r) * in + c];
      os << "]";
    }
    os << "],\n     \"b\": [";
    const float* b = p.b(l);
    for (int r = 0; r < out; ++r) os << (r ? ", " : "") << b[r];
    os << "]}";
  }
  os << "\n  ]\n}\n";
  return os.str();
}

void save_model(const Params& p, const std::string& path) {
  if (!all_finite(p))
    throw IoError("refusing to write " + path + ": the weights contain NaN or Inf (JSON cannot hold them)");
  write_file_atomic(path, model_to_json_string(p));
}

namespace {
[[noreturn]] void model_error(const std::string& file, const std::string& where, const std::string& what) {
  throw UsageError(file + ": " + where + ": " + what);
}

float read_float(const json& v, const std::string& file, const std::string& where) {
  if (!v.is_number()) model_error(file, where, "expected a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || std::fabs(d) > 3.4028234663852886e38)
    model_error(file, where, "not a finite float32 number");
  return static_cast<float>(d);
}
}  // namespace

Params load_model(const std::string& path) {
  const std::string text = read_file(path, "model file");
  const json j = parse_config_text(text, path);  // UsageError with line and column
  if (!j.is_object()) model_error(path, "/", "expected an object");
  if (!j.contains("format") || j.at("format") != "nntrain-mlp")
    model_error(path, "/format", "expected \"nntrain-mlp\"");
  if (!j.contains("version") || j.at("version") != 1) model_error(path, "/version", "expected 1");
  if (!j.contains("layers") || !j.at("layers").is_array() || j.at("layers").empty())
    model_error(path, "/layers", "expected a non-empty array");
  const json& layers = j.at("layers");
  ModelSpec spec;
  for (size_t l = 0; l < layers.size(); ++l) {
    const std::string at = "/layers/" + std::to_string(l);
    const json& L = layers[l];
    if (!L.is_object()) model_error(path, at, "expected an object");
    for (const char* k : {"in", "out", "activation", "W", "b"})
      if (!L.contains(k)) model_error(path, at, std::string("missing \"") + k + "\"");
    if (!L["in"].is_number_integer() || L["in"].get<long long>() < 1 || L["in"].get<long long>() > 1 << 20)
      model_error(path, at + "/in", "expected a positive integer");
    if (!L["out"].is_number_integer() || L["out"].get<long long>() < 1 || L["out"].get<long long>() > 1 << 20)
      model_error(path, at + "/out", "expected a positive integer");
    const int in = L["in"].get<int>(), out = L["out"].get<int>();
    if (l == 0) spec.widths.push_back(in);
    else if (spec.widths.back() != in)
      model_error(path, at + "/in",
                  "is " + std::to_string(in) + " but the previous layer has " + std::to_string(spec.widths.back()) +
                      " outputs");
    spec.widths.push_back(out);
    // Shapes are checked against the arrays in the file before anything is allocated, so a
    // file claiming "in": 1000000 with three numbers in W is an error, not a 4 TB allocation.
    const json& W = L["W"];
    if (!W.is_array() || W.size() != size_t(out))
      model_error(path, at + "/W",
                  "expected " + std::to_string(out) + " rows (\"out\"), got " +
                      (W.is_array() ? std::to_string(W.size()) : std::string("no array")));
    for (int r = 0; r < out; ++r)
      if (!W[r].is_array() || W[r].size() != size_t(in))
        model_error(path, at + "/W/" + std::to_string(r),
                    "expected " + std::to_string(in) + " values (\"in\"), got " +
                        (W[r].is_array() ? std::to_string(W[r].size()) : std::string("no array")));
    const json& b = L["b"];
    if (!b.is_array() || b.size() != size_t(out))
      model_error(path, at + "/b",
                  "expected " + std::to_string(out) + " values (\"out\"), got " +
                      (b.is_array() ? std::to_string(b.size()) : std::string("no array")));
    Activation a;
    if (!L["activation"].is_string() || !parse_activation(L["activation"].get<std::string>(), a))
      model_error(path, at + "/activation", "unknown activation");
    if (l + 1 < layers.size()) {
      if (l > 0 && a != spec.hidden)
        model_error(path, at + "/activation", "all hidden layers must share one activation");
      spec.hidden = a;
    } else {
      spec.output = a;
    }
  }
  Params p{spec, std::vector<float>(spec.param_count())};
  for (size_t l = 0; l < layers.size(); ++l) {
    const std::string at = "/layers/" + std::to_string(l);
    const json& W = layers[l]["W"];
    const int in = spec.in(int(l)), out = spec.out(int(l));
    for (int r = 0; r < out; ++r)
      for (int c = 0; c < in; ++c)
        p.W(int(l))[size_t(r) * in + c] =
            read_float(W[r][c], path, at + "/W/" + std::to_string(r) + "/" + std::to_string(c));
    const json& b = layers[l]["b"];
    for (int r = 0; r < out; ++r) p.b(int(l))[r] = read_float(b[r], path, at + "/b/" + std::to_string(r));
  }
  return p;
}

}  // namespace nntrain
