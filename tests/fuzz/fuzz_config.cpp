// fuzz_config.cpp — libFuzzer target: config JSON text (and an optional first-line
// key.path=value override) → Config validation.
//
// Invariants: bad input only ever throws UsageError (anything else — another exception, a
// sanitizer report, a crash — is a finding); a config that validates converts back to JSON
// that validates again to the same resolved config, and that JSON can be written.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "config.hpp"
#include "json_reader.hpp"
#include "errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nntrain;
  std::string text(reinterpret_cast<const char*>(data), size);
  std::string override_arg;
  const size_t nl = text.find('\n');
  if (nl != std::string::npos && text.substr(0, nl).find('=') != std::string::npos) {
    override_arg = text.substr(0, nl);
    text = text.substr(nl + 1);
  }
  try {
    nlohmann::json j = parse_json_text(text, "fuzz.json");
    if (!j.is_object()) return 0;
    if (!override_arg.empty()) apply_override(j, override_arg);
    const Config c = config_from_json(j, "configs");
    const nlohmann::json resolved = config_to_json(c);
    (void)resolved.dump(2);  // throws on invalid UTF-8: that would be a finding
    const Config again = config_from_json(resolved, "configs");
    if (config_to_json(again) != resolved) std::abort();
  } catch (const UsageError&) {
  }
  return 0;
}
