// cli_flags.cpp — the flag table; see cli_flags.hpp.
#include "cli_flags.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "names.hpp"

namespace nntrain {

namespace {

enum class Kind { integer, unsigned_integer, real, choice, device };

struct ConfigFlag {
  const char* flag;  // as typed
  const char* key;   // the config key it sets (dotted path)
  const char* help;
  Kind kind;
  std::vector<std::string> choices;  // Kind::choice: the allowed names
  unsigned commands;                 // kForTrain | kForBench (sweep takes train's)
  long long lo = 0, hi = 0;          // integer range checked by CLI11 when lo < hi
};

// One row per flag. A flag that maps to an existing config key is one more row here.
const std::vector<ConfigFlag>& config_flags() {
  static const std::vector<ConfigFlag> kConfigFlags = {
      {"--device", "device", "cpu, gpu, both or a list (cpu,gpu = both); both without a usable GPU runs the CPU half",
       Kind::device, {}, kForTrain | kForBench},
      {"--epochs", "train.epochs", "number of epochs", Kind::integer, {}, kForTrain | kForBench},
      {"--lr", "optimizer.lr", "learning rate", Kind::real, {}, kForTrain | kForBench},
      {"--seed", "seed", "random seed (weights and shuffles)", Kind::unsigned_integer, {}, kForTrain | kForBench},
      {"--batch-size", "train.batch_size", "samples per batch; 0 = full batch", Kind::integer, {},
       kForTrain | kForBench},
      {"--threads", "cpu.threads", "CPU threads; 0 = all", Kind::integer, {}, kForTrain | kForBench},
      {"--backend", "cpu.backend", "CPU backend: fast or reference", Kind::choice, names_of(kCpuBackendNames),
       kForTrain | kForBench},
      {"--gpu-path", "gpu.path", "GPU path: auto, fused, cublas or resident", Kind::choice, names_of(kGpuPathNames),
       kForTrain | kForBench},
      {"--reps", "timing.repeats", "timed repeats per point, 1 to 1000 (default 5)", Kind::integer, {}, kForBench, 1,
       1000},
      {"--warmup", "timing.warmup_epochs", "warm-up epochs per run, 0 to 1000000", Kind::integer, {}, kForBench, 0,
       1000000},
      {"--target-loss", "train.target_loss", "also time the run to the first epoch with loss <= X", Kind::real, {},
       kForTrain | kForBench},
  };
  return kConfigFlags;
}

// A value the key no longer takes (names.hpp, kRetiredNames): its own line, not "not in {...}".
CLI::Validator retired_value(const char* key) {
  return CLI::Validator([key](std::string& text) { return retired_name_note(key, text); }, "");
}

// "nan" and "inf" parse as doubles but are no value a config key takes (JSON has no NaN: it
// would become null, which train.target_loss reads as "no target"). strtod also reads hex
// ("0x10" is 16) and CLI11 turns "" into 0: a decimal number, all of the text, or an error
// naming what was typed.
const CLI::Validator kFinite(
    [](std::string& text) {
      char* end = nullptr;
      const double d = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() || text.find_first_of("xX") != std::string::npos)
        return "value \"" + text + "\" is not a decimal number";
      return std::isfinite(d) ? std::string() : "value " + text + " is not a finite number";
    },
    "");

// Integer flags, checked as text before CLI11 converts them: it wraps "-1" into a huge
// unsigned seed and clamps 99999999999999999999 to 2^63 - 1, and the config's range check would
// then name a value the user never typed. In-range values go on to that check.
CLI::Validator integer_text(bool non_negative) {
  return CLI::Validator(
      [non_negative](std::string& text) -> std::string {
        size_t i = text.size() > 0 && (text[0] == '+' || text[0] == '-') ? 1 : 0;
        if (i == text.size() || text.find_first_not_of("0123456789", i) != std::string::npos)
          return "value " + text + " is not an integer";
        errno = 0;
        const bool negative = text[0] == '-' && text.find_first_not_of('0', 1) != std::string::npos;
        if (non_negative && negative) return "value " + text + " is out of range (expected 0 or more)";
        if (non_negative) (void)std::strtoull(text.c_str(), nullptr, 10);
        else (void)std::strtoll(text.c_str(), nullptr, 10);
        if (errno == ERANGE) return "value " + text + " is out of range (beyond 64 bits)";
        return std::string();
      },
      "");
}

// --device's values: a choice name, or a list of devices (normalised to the choice name, so
// the config override is the same whichever way it was spelt).
const CLI::Validator kDeviceList(
    [](std::string& text) {
      const DeviceListParse p = parse_device_list(text);
      if (!p.error.empty()) return p.error;
      text = p.choice;
      return std::string();
    },
    "");

// The help's name for a flag's value: N, X or the choices (CLI11's own, such as
// "INT:INT:INT in [1 - 1000]", say how it parses, not what to type).
std::string value_name(const ConfigFlag& f) {
  switch (f.kind) {
    case Kind::integer:
    case Kind::unsigned_integer: return "N";
    case Kind::real: return "X";
    case Kind::device: return "cpu|gpu|both";
    case Kind::choice: break;
  }
  std::string s;
  for (const auto& c : f.choices) s += (s.empty() ? "" : "|") + c;
  return s;
}

}  // namespace

const CLI::Validator kNonEmptyPath(
    [](std::string& text) { return text.empty() ? std::string("the path is empty") : std::string(); }, "");

DeviceListParse parse_device_list(const std::string& text) {
  DeviceListParse r;
  if (parse_name(kDeviceChoiceNames, text)) {
    r.choice = text;
    return r;
  }
  std::vector<Device> seen;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto d = parse_name(kDeviceNames, name);
    if (!d) {
      r.error = "\"" + text + "\": unknown device \"" + name + "\" (expected cpu, gpu, both or a list such as cpu,gpu)";
      return r;
    }
    if (std::find(seen.begin(), seen.end(), *d) != seen.end()) {
      r.error = "\"" + text + "\": " + name + " is listed twice";
      return r;
    }
    seen.push_back(*d);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  r.choice = seen.size() == 2 ? "both" : to_string(seen.front());
  return r;
}

void add_config_flags(CLI::App& app, unsigned command, ConfigFlagValues& v) {
  const auto& table = config_flags();
  // Sized once: CLI11 keeps pointers into these vectors.
  v.integers.assign(table.size(), 0);
  v.unsigned_integers.assign(table.size(), 0);
  v.reals.assign(table.size(), 0);
  v.texts.assign(table.size(), "");
  v.options.assign(table.size(), nullptr);
  for (size_t i = 0; i < table.size(); ++i) {
    const ConfigFlag& f = table[i];
    if (!(f.commands & command)) continue;
    CLI::Option* o = nullptr;
    switch (f.kind) {
      case Kind::integer:
        o = app.add_option(f.flag, v.integers[i], f.help)->check(integer_text(false));
        if (f.lo < f.hi) o->check(CLI::Range(f.lo, f.hi).description(""));
        break;
      case Kind::unsigned_integer:
        o = app.add_option(f.flag, v.unsigned_integers[i], f.help)->check(integer_text(true));
        break;
      case Kind::real: o = app.add_option(f.flag, v.reals[i], f.help)->check(kFinite); break;
      case Kind::choice:
        o = app.add_option(f.flag, v.texts[i], f.help)
                ->check(retired_value(f.key))
                ->check(CLI::IsMember(f.choices).description(""));
        break;
      case Kind::device: o = app.add_option(f.flag, v.texts[i], f.help)->transform(kDeviceList); break;
    }
    v.options[i] = o->type_name(value_name(f));
  }
}

std::vector<std::string> config_flag_overrides(const ConfigFlagValues& v) {
  const auto& table = config_flags();
  std::vector<std::string> out;
  for (size_t i = 0; i < table.size() && i < v.options.size(); ++i) {
    if (!v.options[i] || v.options[i]->count() == 0) continue;
    // JSON text of the parsed value: a double prints in the shortest form that reads back to
    // the same double, so "--lr 0.1" sets exactly 0.1.
    nlohmann::json value;
    switch (table[i].kind) {
      case Kind::integer: value = v.integers[i]; break;
      case Kind::unsigned_integer: value = v.unsigned_integers[i]; break;
      case Kind::real: value = v.reals[i]; break;
      case Kind::choice:
      case Kind::device: value = v.texts[i]; break;
    }
    out.push_back(std::string(table[i].key) + "=" + value.dump());
  }
  return out;
}

std::vector<std::string> config_flag_keys(const ConfigFlagValues& v) {
  const auto& table = config_flags();
  std::vector<std::string> out;
  for (size_t i = 0; i < table.size() && i < v.options.size(); ++i)
    if (v.options[i] && v.options[i]->count() > 0) out.emplace_back(table[i].key);
  return out;
}

std::string blame_flag(const UsageError& error, const std::vector<std::string>& flag_keys) {
  static const std::string kPrefix = "config /";
  const std::string message = error.what();
  if (dynamic_cast<const ConfigFileError*>(&error)) return message;
  const size_t colon = message.find(": ");
  if (message.rfind(kPrefix, 0) != 0 || colon == std::string::npos) return message;
  std::string key = message.substr(kPrefix.size(), colon - kPrefix.size());
  std::replace(key.begin(), key.end(), '/', '.');
  if (std::find(flag_keys.begin(), flag_keys.end(), key) == flag_keys.end()) return message;
  for (const ConfigFlag& f : config_flags())
    if (key == f.key) return std::string(f.flag) + " (" + message.substr(0, colon) + ")" + message.substr(colon);
  return message;
}

}  // namespace nntrain
