// json_reader.cpp — see json_reader.hpp.
#include "json_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <memory>

namespace nntrain {

using nlohmann::json;

json::parser_callback_t no_duplicate_keys(const std::string& source) {
  // One frame per open object or array: the keys seen so far and the current key (objects),
  // the current element's index (arrays), for the path in the message.
  struct Frame {
    bool object = false;
    std::vector<std::string> keys;
    size_t index = 0;
  };
  auto frames = std::make_shared<std::vector<Frame>>();
  return [frames, source](int /*depth*/, json::parse_event_t event, json& parsed) {
    auto& f = *frames;
    auto next_element = [&] {
      if (!f.empty() && !f.back().object) ++f.back().index;
    };
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        f.push_back(Frame{event == json::parse_event_t::object_start, {}, 0});
        break;
      case json::parse_event_t::key: {
        const std::string key = parsed.get<std::string>();
        Frame& top = f.back();
        if (std::find(top.keys.begin(), top.keys.end(), key) != top.keys.end()) {
          std::string path;
          for (size_t k = 0; k + 1 < f.size(); ++k)
            path += "/" + (f[k].object ? f[k].keys.back() : std::to_string(f[k].index));
          throw UsageError(source + ": key \"" + key + "\" appears twice in " + (path.empty() ? "/" : path) +
                           " (give each key once: one of the two would be dropped silently)");
        }
        top.keys.push_back(key);
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        f.pop_back();
        next_element();
        break;
      case json::parse_event_t::value:
        next_element();
        break;
    }
    return true;
  };
}

namespace {

// Where `token` first stands as a number of its own: outside every string ("1e400" as a
// name is no number) and not part of a longer token.
size_t number_token_at(const std::string& text, const std::string& token) {
  const auto part_of_number = [](char c) { return std::isalnum((unsigned char)c) || c == '.' || c == '-' || c == '+'; };
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (text.compare(i, token.size(), token) == 0 && (i == 0 || !part_of_number(text[i - 1])) &&
               (i + token.size() == text.size() || !part_of_number(text[i + token.size()]))) {
      return i;
    }
  }
  return std::string::npos;
}

}  // namespace

json parse_json_text(const std::string& text, const std::string& source) {
  try {
    return json::parse(text, no_duplicate_keys(source), true, /*ignore_comments=*/false);
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
    // The library's own "parse error at line L, column C: " says the position again.
    std::string what = e.what();
    if (const auto pos = what.find("parse error"); pos != std::string::npos) what = what.substr(pos);
    if (what.rfind("parse error at line ", 0) == 0)
      if (const auto colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);
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
      const size_t at = number_token_at(text, token);
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

std::string json_type_name(const json& v) {
  if (v.is_string()) return "string \"" + v.get<std::string>() + "\"";
  if (v.is_boolean()) return std::string("boolean ") + (v.get<bool>() ? "true" : "false");
  if (v.is_null()) return "null";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  if (v.is_number()) return "number " + v.dump();
  return v.type_name();
}

namespace {

std::string fmt_num(double d) {
  json v = d;
  return v.dump();
}

}  // namespace

std::optional<std::string> nearest(const std::string& v, const std::vector<std::string>& names) {
  // "ReLU" for "relu" is three edits but one intent: a match but for case comes first.
  const auto lower = [](std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  for (const auto& a : names)
    if (lower(a) == lower(v)) return a;
  std::string best;
  size_t best_d = std::numeric_limits<size_t>::max();
  for (const auto& a : names) {
    const size_t d = edit_distance(v, a);
    if (d < best_d) best_d = d, best = a;
  }
  if (!best.empty() && best_d <= std::max<size_t>(2, best.size() / 3)) return best;
  return std::nullopt;
}

ObjectReader::ObjectReader(const json& j, std::string path, std::string prefix)
    : j_(j), path_(std::move(path)), prefix_(std::move(prefix)) {
  if (!j_.is_object()) fail(path_.empty() ? "/" : path_, "expected an object, got " + json_type_name(j_));
}

void ObjectReader::fail(const std::string& path, const std::string& msg) const {
  throw UsageError(prefix_ + path + ": " + msg);
}

bool ObjectReader::has(const std::string& key) {
  known_.push_back(key);
  return j_.contains(key);
}

std::string ObjectReader::str(const std::string& key, const std::string& def) {
  if (!has(key)) return def;
  const json& v = j_.at(key);
  if (!v.is_string()) fail(path(key), "expected a string, got " + json_type_name(v));
  // A path with a NUL (\u0000) would name another file (the OS reads up to it) or, as a
  // folder, never be created: no key takes one.
  if (v.get_ref<const std::string&>().find('\0') != std::string::npos)
    fail(path(key), "the string holds a NUL character (\\u0000)");
  return v.get<std::string>();
}

std::string ObjectReader::choice(const std::string& key, const std::string& def,
                                 const std::vector<std::string>& allowed) {
  const std::string v = str(key, def);
  std::string list;
  for (const auto& a : allowed) {
    if (v == a) return v;
    list += (list.empty() ? "" : ", ") + a;
  }
  const auto near = nearest(v, allowed);
  fail(path(key), "unknown value \"" + v + "\" (expected one of: " + list + ")" +
                      (near ? " (did you mean \"" + *near + "\"?)" : std::string()));
}

double ObjectReader::number(const std::string& key, double def, double lo, double hi, bool lo_open) {
  if (!has(key)) return def;
  const json& v = j_.at(key);
  if (!v.is_number()) fail(path(key), "expected a number, got " + json_type_name(v));
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(path(key), "expected a finite number");
  if (d < lo || d > hi || (lo_open && d == lo))
    fail(path(key), "value " + v.dump() + " is out of range (expected " + (lo_open ? "> " : ">= ") + fmt_num(lo) +
                        " and <= " + fmt_num(hi) + ")");
  return d;
}

long long ObjectReader::integer(const std::string& key, long long def, long long lo, long long hi) {
  if (!has(key)) return def;
  return integer_value(j_.at(key), path(key), lo, hi);
}

bool ObjectReader::boolean(const std::string& key, bool def) {
  if (!has(key)) return def;
  const json& v = j_.at(key);
  if (!v.is_boolean()) fail(path(key), "expected true or false, got " + json_type_name(v));
  return v.get<bool>();
}

long long ObjectReader::integer_value(const json& v, const std::string& path, long long lo, long long hi) const {
  const std::string range = " is out of range (expected " + std::to_string(lo) + " to " + std::to_string(hi) + ")";
  long long x;
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<unsigned long long>() > (unsigned long long)hi)
      fail(path, "value " + v.dump() + range);
    x = v.get<long long>();
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::floor(d) != d) fail(path, "expected an integer, got number " + v.dump());
    // Compare in double before converting: a double at or beyond 2^63 does not fit a
    // long long, and converting it is undefined behaviour (double(LLONG_MAX) is 2^63).
    if (d < double(lo) || d > double(hi) || d >= 9223372036854775808.0 || d < -9223372036854775808.0)
      fail(path, "value " + v.dump() + range);
    x = static_cast<long long>(d);
  } else {
    fail(path, "expected an integer, got " + json_type_name(v));
  }
  if (x < lo || x > hi) fail(path, "value " + std::to_string(x) + range);
  return x;
}

void ObjectReader::finish() const {
  for (auto it = j_.begin(); it != j_.end(); ++it) {
    if (std::find(known_.begin(), known_.end(), it.key()) != known_.end()) continue;
    std::string msg = "unknown key \"" + it.key() + "\"";
    if (const auto near = nearest(it.key(), known_)) {
      msg += " (did you mean \"" + *near + "\"?)";
    } else {
      std::string list;  // each key once, in the order asked (a key may be asked twice)
      for (size_t i = 0; i < known_.size(); ++i)
        if (std::find(known_.begin(), known_.begin() + long(i), known_[i]) == known_.begin() + long(i))
          list += (list.empty() ? "" : ", ") + known_[i];
      msg += " (valid keys here: " + list + ")";
    }
    fail(path(it.key()), msg);
  }
}

}  // namespace nntrain
