// model_io.cpp — model.json: writing (PyTorch's layout, shortest round-trip floats) and
// reading through the same JSON reader as config files (JSON paths, unknown keys refused).
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "errors.hpp"
#include "fileio.hpp"
#include "json_reader.hpp"
#include "mlp.hpp"

namespace nntrain {

using nlohmann::json;

namespace {

// `"key": ["a", "b"],` on its own line; nothing for no names. A name the data gave that is
// not UTF-8 is written with U+FFFD rather than failing after training.
void write_names(std::ostream& os, const char* key, const std::vector<std::string>& names, int width) {
  if (names.empty()) return;
  if (int(names.size()) != width)
    throw std::logic_error(std::string("model.json \"") + key + "\": " + std::to_string(names.size()) +
                           " names for a width of " + std::to_string(width));
  os << "\n  \"" << key << "\": " << json(names).dump(-1, ' ', false, json::error_handler_t::replace) << ",";
}

}  // namespace

std::string model_to_json_string(const Params& p, const ModelNames& names) {
  // Written by hand rather than through json::dump so floats print with the shortest
  // repr that round-trips (max_digits10) and the W rows stay one per line.
  std::ostringstream os;
  os.precision(9);
  os << "{\n  \"format\": \"nntrain-mlp\",\n  \"version\": 1,";
  write_names(os, "inputs", names.inputs, p.spec.widths.front());
  write_names(os, "outputs", names.outputs, p.spec.widths.back());
  os << "\n  \"layers\": [";
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

void save_model(const Params& p, const std::string& path, const ModelNames& names) {
  if (!all_finite(p))
    throw IoError("refusing to write " + path + ": the weights contain NaN or Inf (JSON cannot hold them)");
  write_file_atomic(path, model_to_json_string(p, names));
}

namespace {

// One float32 weight: a JSON number within float's range.
float read_float(const ObjectReader& r, const json& v, const std::string& where) {
  if (!v.is_number()) r.fail(where, "expected a number");
  const double d = v.get<double>();
  // From the half-way point between FLT_MAX and 2^128 on a double rounds to infinity as a
  // float; below it, to FLT_MAX (whose 9-digit text, as saved, is just above it).
  if (!std::isfinite(d) || std::fabs(d) >= 0x1.ffffffp127) r.fail(where, "not a finite float32 number");
  return static_cast<float>(d);
}

// A layer's "in"/"out": a positive integer up to 2^20.
int read_width(ObjectReader& r, const std::string& key) {
  return int(r.integer(key, 0, 1, 1 << 20));  // 2.0 is 2, as in a config
}

// `n` rows or values as the shape says, checked before anything is allocated, so a file
// claiming "in": 1000000 with three numbers in W is an error, not a 4 TB allocation.
void check_length(const ObjectReader& r, const json& a, size_t n, const std::string& where, const char* what) {
  if (!a.is_array() || a.size() != n)
    r.fail(where, "expected " + std::to_string(n) + " " + what + ", got " +
                      (a.is_array() ? std::to_string(a.size()) : std::string("no array")));
}

struct LayerJson {
  int in = 0, out = 0;
  Activation act = Activation::identity;
  const json* W = nullptr;
  const json* b = nullptr;
  std::string at;  // its JSON path
};

LayerJson read_layer_shape(const json& L, const std::string& at, const std::string& prefix) {
  ObjectReader r(L, at, prefix);
  LayerJson out;
  out.at = at;
  std::string missing;
  for (const char* k : {"in", "out", "activation", "W", "b"})
    if (!r.has(k) && missing.empty()) missing = k;
  r.finish();  // a misspelt key first: "bias" is reported as "did you mean \"b\"", not as a missing "b"
  if (!missing.empty()) r.fail(at, "missing \"" + missing + "\"");
  out.in = read_width(r, "in");
  out.out = read_width(r, "out");
  out.W = &r.at("W");
  out.b = &r.at("b");
  check_length(r, *out.W, size_t(out.out), at + "/W", "rows (\"out\")");
  for (int row = 0; row < out.out; ++row)
    check_length(r, (*out.W)[size_t(row)], size_t(out.in), at + "/W/" + std::to_string(row), "values (\"in\")");
  check_length(r, *out.b, size_t(out.out), at + "/b", "values (\"out\")");
  parse_activation(r.choice("activation", "", activation_names()), out.act);
  return out;
}

// "inputs"/"outputs": `width` distinct, non-empty strings (the data's column names).
std::vector<std::string> read_names(ObjectReader& root, const std::string& key, int width, const char* what) {
  const json& a = root.at(key);
  check_length(root, a, size_t(width), "/" + key, what);
  std::vector<std::string> out;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string at = "/" + key + "/" + std::to_string(i);
    if (!a[i].is_string() || a[i].get<std::string>().empty()) root.fail(at, "expected a non-empty column name");
    out.push_back(a[i].get<std::string>());
    for (size_t k = 0; k < i; ++k)
      if (out[k] == out[i]) root.fail(at, "\"" + out[i] + "\" is named twice");
  }
  return out;
}

}  // namespace

Params load_model(const std::string& path, ModelNames* names) {
  const std::string prefix = path + ": ";
  const json j = parse_json_text(read_file(path, "model file"), path);  // UsageError with line and column
  ObjectReader root(j, "", prefix);
  const bool has_format = root.has("format"), has_version = root.has("version"), has_layers = root.has("layers");
  const bool has_inputs = root.has("inputs"), has_outputs = root.has("outputs");
  root.finish();  // a misspelt key first ("layerz": did you mean "layers"?)
  if (!has_format || root.at("format") != "nntrain-mlp") root.fail("/format", "expected \"nntrain-mlp\"");
  if (!has_version || root.at("version") != 1) root.fail("/version", "expected 1");
  if (!has_layers || !root.at("layers").is_array() || root.at("layers").empty())
    root.fail("/layers", "expected a non-empty array");

  const json& layers = root.at("layers");
  std::vector<LayerJson> shapes;
  ModelSpec spec;
  for (size_t l = 0; l < layers.size(); ++l) {
    const LayerJson s = read_layer_shape(layers[l], "/layers/" + std::to_string(l), prefix);
    if (l == 0) spec.widths.push_back(s.in);
    else if (spec.widths.back() != s.in)
      root.fail(s.at + "/in", "is " + std::to_string(s.in) + " but the previous layer has " +
                                  std::to_string(spec.widths.back()) + " outputs");
    spec.widths.push_back(s.out);
    if (l + 1 < layers.size()) {
      if (l > 0 && s.act != spec.hidden) root.fail(s.at + "/activation", "all hidden layers must share one activation");
      spec.hidden = s.act;
    } else {
      spec.output = s.act;
    }
    shapes.push_back(s);
  }
  ModelNames read;
  if (has_inputs) read.inputs = read_names(root, "inputs", spec.widths.front(), "names (the model's inputs)");
  if (has_outputs) read.outputs = read_names(root, "outputs", spec.widths.back(), "names (the model's outputs)");
  if (names) *names = read;
  Params p{spec, std::vector<float>(spec.param_count())};
  for (size_t l = 0; l < shapes.size(); ++l) {
    const LayerJson& s = shapes[l];
    for (int r = 0; r < s.out; ++r)
      for (int c = 0; c < s.in; ++c)
        p.W(int(l))[size_t(r) * s.in + c] =
            read_float(root, (*s.W)[size_t(r)][size_t(c)], s.at + "/W/" + std::to_string(r) + "/" + std::to_string(c));
    for (int r = 0; r < s.out; ++r) p.b(int(l))[r] = read_float(root, (*s.b)[size_t(r)], s.at + "/b/" + std::to_string(r));
  }
  return p;
}

}  // namespace nntrain
