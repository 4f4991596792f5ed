// json_reader.hpp — the one JSON reader behind config files and model.json.
//
// Parsing errors carry the line and column; every value error names the JSON pointer of what
// is wrong (/optimizer/lr, /layers/0/W/2); a key nobody asked for is an error with the
// nearest valid name ("did you mean"), never silently ignored (docs/DESIGN.md §3).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "errors.hpp"
#include "names.hpp"

namespace nntrain {

// Parses JSON text. Throws UsageError("<source>: malformed JSON at line L, column C: ..."),
// and UsageError("<source>: key \"k\" appears twice in /path ...") for an object with a
// repeated key: JSON parsers keep one of the two silently (this library the last), so a
// second "train" block would drop the first one's settings without a word.
nlohmann::json parse_json_text(const std::string& text, const std::string& source);

// The same check as a parser callback, for other JSON texts (override values): pass it to
// nlohmann::json::parse.
nlohmann::json::parser_callback_t no_duplicate_keys(const std::string& source);

// Byte offset of the first byte that is not valid UTF-8, or std::string::npos.
size_t invalid_utf8_at(const std::string& s);

// Levenshtein distance, for "did you mean".
size_t edit_distance(const std::string& a, const std::string& b);

// The nearest of `names` to `v`, when near enough to be a likely misspelling.
std::optional<std::string> nearest(const std::string& v, const std::vector<std::string>& names);

// "string \"x\"", "number 3", "an array", ...: how an error message names a value.
std::string json_type_name(const nlohmann::json& v);

// Reads the keys of one JSON object, remembering which were asked for, so that finish()
// reports any key nobody asked for. Errors are UsageError("<prefix><path>: <message>"):
// prefix "config " for config files, "<file>: " for model files.
class ObjectReader {
 public:
  ObjectReader(const nlohmann::json& j, std::string path, std::string prefix = "config ");

  // A key set to null is present (reported as a wrong type), not "use the default".
  bool has(const std::string& key);
  const nlohmann::json& at(const std::string& key) const { return j_.at(key); }
  std::string path(const std::string& key) const { return path_ + "/" + key; }
  const std::string& prefix() const { return prefix_; }

  std::string str(const std::string& key, const std::string& def);
  std::string choice(const std::string& key, const std::string& def, const std::vector<std::string>& allowed);
  template <class E, size_t N>
  E choice(const std::string& key, E def, const NamedValue<E> (&table)[N]) {
    return *parse_name(table, choice(key, name_of(table, def), names_of(table)));
  }
  double number(const std::string& key, double def, double lo, double hi, bool lo_open = false);
  long long integer(const std::string& key, long long def, long long lo, long long hi);
  bool boolean(const std::string& key, bool def);
  // An integer anywhere (an array element, a root key), checked against [lo, hi].
  long long integer_value(const nlohmann::json& v, const std::string& path, long long lo, long long hi) const;

  [[noreturn]] void fail(const std::string& path, const std::string& msg) const;
  // Every key present must have been asked for.
  void finish() const;

 private:
  const nlohmann::json& j_;
  std::string path_, prefix_;
  std::vector<std::string> known_;
};

}  // namespace nntrain
