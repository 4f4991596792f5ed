// config.cpp — parsing, merging and validating the experiment config; see config.hpp.
#include "config.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "errors.hpp"

namespace nntrain {

using nlohmann::json;

json parse_config_text(const std::string& text, const std::string& source) {
  try {
    return json::parse(text, nullptr, true, /*ignore_comments=*/false);
  } catch (const json::parse_error& e) {
    // Turn the byte offset into line:column, which is what a person can find.
    size_t line = 1, col = 1;
    for (size_t i = 0; i < e.byte - (e.byte > 0 ? 1 : 0) && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = e.what();
    const auto pos = what.find("parse error");
    if (pos != std::string::npos) what = what.substr(pos);
    throw UsageError(source + ": malformed JSON at line " + std::to_string(line) + ", column " +
                     std::to_string(col) + ": " + what);
  } catch (const json::exception& e) {
    // A number beyond double's range (1e400) is valid JSON that no double holds; the library
    // reports it without a position, so find the literal for the line and column.
    std::string what = e.what();
    const size_t q1 = what.find('\''), q2 = what.rfind('\'');
    std::string where;
    if (q1 != std::string::npos && q2 > q1 + 1) {
      const std::string token = what.substr(q1 + 1, q2 - q1 - 1);
      const size_t at = text.find(token);
      if (at != std::string::npos) {
        const size_t line = 1 + size_t(std::count(text.begin(), text.begin() + long(at), '\n'));
        const size_t nl = text.rfind('\n', at);
        const size_t col = at - (nl == std::string::npos ? 0 : nl + 1) + 1;
        where = " at line " + std::to_string(line) + ", column " + std::to_string(col);
      }
      what = "number " + token + " is not finite in double precision";
    }
    throw UsageError(source + ": invalid JSON" + where + ": " + what);
  }
}

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
      (*cur)[key] = value;
      return;
    }
    cur = &(*cur)[key];
    if (cur->is_null()) *cur = json::object();
    start = dot + 1;
  }
}

size_t invalid_utf8_at(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    size_t len;
    unsigned cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return i;
    i += len;
  }
  return std::string::npos;
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
    value = json::parse(text);
  } catch (const json::parse_error&) {
    value = text;  // a bare word: relu, data/x.csv, ...
  } catch (const json::exception&) {
    throw UsageError("override '" + assignment + "': the number is not finite in double precision");
  }
  set_path(j, key, value);
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

namespace {

std::string type_name(const json& v) {
  if (v.is_string()) return "string \"" + v.get<std::string>() + "\"";
  if (v.is_boolean()) return std::string("boolean ") + (v.get<bool>() ? "true" : "false");
  if (v.is_null()) return "null";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  if (v.is_number()) return "number " + v.dump();
  return v.type_name();
}

[[noreturn]] void fail(const std::string& path, const std::string& msg) {
  throw UsageError("config " + path + ": " + msg);
}

// Reads the keys of one JSON object, remembering which were asked for, so that any key
// nobody asked for is reported (with the nearest valid name) instead of ignored.
class ObjectReader {
 public:
  ObjectReader(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) fail(display(), "expected an object, got " + type_name(j_));
  }

  bool has(const std::string& key) {
    known_.push_back(key);
    // A key set to null is present, not "use the default": it is reported as a wrong type.
    return j_.contains(key);
  }
  const json& at(const std::string& key) const { return j_.at(key); }
  std::string path(const std::string& key) const { return path_ + "/" + key; }

  std::string str(const std::string& key, const std::string& def) {
    if (!has(key)) return def;
    const json& v = j_.at(key);
    if (!v.is_string()) fail(path(key), "expected a string, got " + type_name(v));
    return v.get<std::string>();
  }
  std::string choice(const std::string& key, const std::string& def, std::initializer_list<const char*> allowed) {
    const std::string v = str(key, def);
    std::string list;
    for (const char* a : allowed) {
      if (v == a) return v;
      list += (list.empty() ? "" : ", ") + std::string(a);
    }
    fail(path(key), "unknown value \"" + v + "\" (expected one of: " + list + ")" + suggest(v, allowed));
  }
  double number(const std::string& key, double def, double lo, double hi, bool lo_open = false) {
    if (!has(key)) return def;
    const json& v = j_.at(key);
    if (!v.is_number()) fail(path(key), "expected a number, got " + type_name(v));
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(path(key), "expected a finite number");
    if (d < lo || d > hi || (lo_open && d == lo))
      fail(path(key), "value " + v.dump() + " is out of range (expected " + (lo_open ? "> " : ">= ") +
                          fmt_num(lo) + " and <= " + fmt_num(hi) + ")");
    return d;
  }
  long long integer(const std::string& key, long long def, long long lo, long long hi) {
    if (!has(key)) return def;
    return as_integer(j_.at(key), path(key), lo, hi);
  }
  bool boolean(const std::string& key, bool def) {
    if (!has(key)) return def;
    const json& v = j_.at(key);
    if (!v.is_boolean()) fail(path(key), "expected true or false, got " + type_name(v));
    return v.get<bool>();
  }

  static long long as_integer(const json& v, const std::string& path, long long lo, long long hi) {
    long long x;
    if (v.is_number_integer()) {
      if (v.is_number_unsigned() && v.get<unsigned long long>() > (unsigned long long)hi)
        fail(path, "value " + v.dump() + " is out of range (expected " + std::to_string(lo) + " to " +
                       std::to_string(hi) + ")");
      x = v.get<long long>();
    } else if (v.is_number_float()) {
      const double d = v.get<double>();
      if (!std::isfinite(d) || std::floor(d) != d) fail(path, "expected an integer, got number " + v.dump());
      // Compare in double before converting: a double at or beyond 2^63 does not fit a
      // long long, and converting it is undefined behaviour (double(LLONG_MAX) is 2^63).
      if (d < double(lo) || d > double(hi) || d >= 9223372036854775808.0 || d < -9223372036854775808.0)
        fail(path, "value " + v.dump() + " is out of range (expected " + std::to_string(lo) + " to " +
                       std::to_string(hi) + ")");
      x = static_cast<long long>(d);
    } else {
      fail(path, "expected an integer, got " + type_name(v));
    }
    if (x < lo || x > hi)
      fail(path, "value " + std::to_string(x) + " is out of range (expected " + std::to_string(lo) + " to " +
                     std::to_string(hi) + ")");
    return x;
  }

  // Every key present must have been asked for.
  void finish() const {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (std::find(known_.begin(), known_.end(), it.key()) != known_.end()) continue;
      std::string best;
      size_t best_d = std::numeric_limits<size_t>::max();
      for (const auto& k : known_) {
        const size_t d = edit_distance(it.key(), k);
        if (d < best_d) best_d = d, best = k;
      }
      std::string msg = "unknown key \"" + it.key() + "\"";
      if (!best.empty() && best_d <= std::max<size_t>(2, best.size() / 3))
        msg += " (did you mean \"" + best + "\"?)";
      else {
        std::string list;
        for (const auto& k : known_) list += (list.empty() ? "" : ", ") + k;
        msg += " (valid keys here: " + list + ")";
      }
      fail(path(it.key()), msg);
    }
  }

 private:
  std::string display() const { return path_.empty() ? "/" : path_; }
  static std::string fmt_num(double d) {
    json v = d;
    return v.dump();
  }
  static std::string suggest(const std::string& v, std::initializer_list<const char*> allowed) {
    std::string best;
    size_t best_d = std::numeric_limits<size_t>::max();
    for (const char* a : allowed) {
      const size_t d = edit_distance(v, a);
      if (d < best_d) best_d = d, best = a;
    }
    if (!best.empty() && best_d <= std::max<size_t>(2, best.size() / 3)) return " (did you mean \"" + best + "\"?)";
    return "";
  }

  const json& j_;
  std::string path_;
  std::vector<std::string> known_;
};

std::vector<std::string> string_list(const json& v, const std::string& path) {
  if (!v.is_array() || v.empty()) fail(path, "expected a non-empty array of column names, got " + type_name(v));
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string() || v[i].get<std::string>().empty())
      fail(path + "/" + std::to_string(i), "expected a column name, got " + type_name(v[i]));
    if (!seen.insert(v[i].get<std::string>()).second)
      fail(path + "/" + std::to_string(i), "column \"" + v[i].get<std::string>() + "\" is listed twice");
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

Activation activation_at(ObjectReader& r, const std::string& key, Activation def) {
  const std::string name = r.choice(key, activation_name(def), {"relu", "tanh", "sigmoid", "identity", "leaky_relu"});
  Activation a = def;
  parse_activation(name, a);
  return a;
}

// Widths above this are refused: a 65536-wide dense layer already has 4 G parameters.
constexpr long long kMaxWidth = 65536;
constexpr long long kMaxGridSide = 1 << 20;

}  // namespace

Config config_from_json(const json& j, const std::string& config_dir) {
  Config c;
  ObjectReader root(j, "");
  c.name = root.str("name", c.name);
  if (c.name.empty()) fail("/name", "must not be empty");
  c.seed = root.has("seed") ? static_cast<uint64_t>(ObjectReader::as_integer(j.at("seed"), "/seed", 0,
                                                                              std::numeric_limits<long long>::max()))
                            : c.seed;

  // data
  if (root.has("data")) {
    ObjectReader d(j.at("data"), "/data");
    const bool has_csv = d.has("csv");
    const bool has_gen = d.has("generator");
    if (has_csv && has_gen) fail("/data", "give either \"generator\" or \"csv\", not both");
    if (has_csv) {
      c.data.generator.clear();
      c.data.csv = d.str("csv", "");
      if (c.data.csv.empty()) fail("/data/csv", "must name a file");
      namespace fs = std::filesystem;
      fs::path p(c.data.csv);
      c.data.csv_resolved = p.is_absolute() || config_dir.empty() ? p.string() : (fs::path(config_dir) / p).string();
      if (!d.has("inputs")) fail("/data/inputs", "required with \"csv\": the input column names");
      c.data.inputs = string_list(d.at("inputs"), "/data/inputs");
      if (!d.has("targets")) fail("/data/targets", "required with \"csv\": the target column names");
      c.data.targets = string_list(d.at("targets"), "/data/targets");
      for (const auto& t : c.data.targets)
        if (std::find(c.data.inputs.begin(), c.data.inputs.end(), t) != c.data.inputs.end())
          fail("/data/targets", "column \"" + t + "\" is both an input and a target");
    } else {
      c.data.generator = d.choice("generator", "peaks", {"peaks"});
      if (d.has("grid")) {
        const json& g = d.at("grid");
        if (g.is_array()) {
          if (g.size() != 2) fail("/data/grid", "expected N or [N1, N2], got an array of " + std::to_string(g.size()));
          c.data.grid_x1 = int(ObjectReader::as_integer(g[0], "/data/grid/0", 1, kMaxGridSide));
          c.data.grid_x2 = int(ObjectReader::as_integer(g[1], "/data/grid/1", 1, kMaxGridSide));
        } else {
          c.data.grid_x1 = c.data.grid_x2 = int(ObjectReader::as_integer(g, "/data/grid", 1, kMaxGridSide));
        }
      }
      if (d.has("range")) {
        const json& r = d.at("range");
        if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number())
          fail("/data/range", "expected [low, high], got " + type_name(r));
        c.data.range_lo = r[0].get<double>();
        c.data.range_hi = r[1].get<double>();
        if (!std::isfinite(c.data.range_lo) || !std::isfinite(c.data.range_hi) || !(c.data.range_lo < c.data.range_hi))
          fail("/data/range", "expected finite low < high, got " + r.dump());
      }
    }
    d.finish();
  }

  // model
  if (root.has("model")) {
    ObjectReader m(j.at("model"), "/model");
    if (m.has("layers")) {
      const json& L = m.at("layers");
      if (!L.is_array() || L.size() < 2)
        fail("/model/layers", "expected an array of at least 2 widths (inputs ... outputs), got " + type_name(L));
      c.model.layers.clear();
      for (size_t i = 0; i < L.size(); ++i)
        c.model.layers.push_back(int(ObjectReader::as_integer(L[i], "/model/layers/" + std::to_string(i), 1, kMaxWidth)));
    }
    c.model.activation = activation_at(m, "activation", c.model.activation);
    c.model.output_activation = activation_at(m, "output_activation", c.model.output_activation);
    const std::string init = m.choice("init", init_name(c.model.init), {"glorot_uniform", "he_uniform"});
    parse_init(init, c.model.init);
    m.finish();
  }

  c.loss = root.choice("loss", c.loss, {"mse"});

  if (root.has("optimizer")) {
    ObjectReader o(j.at("optimizer"), "/optimizer");
    c.optimizer.type = o.choice("type", c.optimizer.type, {"adam", "sgd"});
    c.optimizer.lr = o.number("lr", c.optimizer.lr, 0.0, 1e6, /*lo_open=*/true);
    c.optimizer.beta1 = o.number("beta1", c.optimizer.beta1, 0.0, 0.999999);
    c.optimizer.beta2 = o.number("beta2", c.optimizer.beta2, 0.0, 0.999999999);
    c.optimizer.eps = o.number("eps", c.optimizer.eps, 0.0, 1.0, /*lo_open=*/true);
    o.finish();
  }

  if (root.has("train")) {
    ObjectReader t(j.at("train"), "/train");
    c.train.epochs = int(t.integer("epochs", c.train.epochs, 0, 1000000000));
    c.train.batch_size = int(t.integer("batch_size", c.train.batch_size, 0, std::numeric_limits<int>::max()));
    c.train.shuffle = t.boolean("shuffle", c.train.shuffle);
    c.train.log_every = int(t.integer("log_every", c.train.log_every, 1, 1000000000));
    t.finish();
  }

  c.device = root.choice("device", c.device, {"cpu", "gpu", "both"});

  if (root.has("timing")) {
    ObjectReader t(j.at("timing"), "/timing");
    c.timing.warmup_epochs = int(t.integer("warmup_epochs", c.timing.warmup_epochs, 0, 1000000));
    c.timing.repeats = int(t.integer("repeats", c.timing.repeats, 1, 1000));
    t.finish();
  }

  if (root.has("cpu")) {
    ObjectReader t(j.at("cpu"), "/cpu");
    c.cpu.backend = t.choice("backend", c.cpu.backend, {"fast", "reference"});
    c.cpu.threads = int(t.integer("threads", c.cpu.threads, 0, 1024));
    t.finish();
  }

  if (root.has("gpu")) {
    ObjectReader t(j.at("gpu"), "/gpu");
    c.gpu.path = t.choice("path", c.gpu.path, {"auto", "fused", "cublas"});
    c.gpu.chunk_epochs = int(t.integer("chunk_epochs", c.gpu.chunk_epochs, 0, 1000000000));
    t.finish();
  }

  if (root.has("output")) {
    ObjectReader t(j.at("output"), "/output");
    c.output_dir = t.str("dir", c.output_dir);
    if (c.output_dir.empty()) fail("/output/dir", "must not be empty");
    t.finish();
  }
  root.finish();

  // Cross-field checks that need no data.
  const size_t n_in = c.data.csv.empty() ? 2 : c.data.inputs.size();
  const size_t n_out = c.data.csv.empty() ? 1 : c.data.targets.size();
  if (size_t(c.model.layers.front()) != n_in)
    fail("/model/layers/0", "is " + std::to_string(c.model.layers.front()) + " but the data has " +
                                std::to_string(n_in) + " input" + (n_in == 1 ? "" : "s"));
  if (size_t(c.model.layers.back()) != n_out)
    fail("/model/layers/" + std::to_string(c.model.layers.size() - 1),
         "is " + std::to_string(c.model.layers.back()) + " but the data has " + std::to_string(n_out) + " target" +
             (n_out == 1 ? "" : "s"));
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
                {"log_every", c.train.log_every}};
  j["device"] = c.device;
  j["timing"] = {{"warmup_epochs", c.timing.warmup_epochs}, {"repeats", c.timing.repeats}};
  j["cpu"] = {{"backend", c.cpu.backend}, {"threads", c.cpu.threads}};
  j["gpu"] = {{"path", c.gpu.path}, {"chunk_epochs", c.gpu.chunk_epochs}};
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

std::vector<std::string> Config::devices() const {
  if (device == "both") return {"cpu", "gpu"};
  return {device};
}

}  // namespace nntrain

#include "fileio.hpp"

namespace nntrain {

Config load_config(const std::string& path, const std::vector<std::string>& overrides, const json& flags) {
  json j = parse_config_text(read_file(path, "config file"), path);
  if (!j.is_object()) throw UsageError(path + ": expected a JSON object at the top level");
  for (const auto& o : overrides) apply_override(j, o);
  merge_json(j, flags);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return config_from_json(j, dir);
}

}  // namespace nntrain
