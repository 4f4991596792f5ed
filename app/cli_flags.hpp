// cli_flags.hpp — the one table of command-line flags that set a config key.
//
// Each such flag is declared once, here, with the config key it sets; a flag given on the
// command line becomes one more "key=value" override, applied after the user's own
// overrides (precedence: defaults < config file < key=value overrides < flags). Adding a
// flag for an existing config key is one line in kConfigFlags (app/cli_flags.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "errors.hpp"

namespace nntrain {

// Which subcommands declare a row: train (and sweep, whose points are train runs), bench.
enum CommandMask : unsigned { kForTrain = 1u, kForBench = 2u };

// The values of the table's flags as CLI11 parsed them (typed, so "--epochs many" is refused
// by CLI11 naming the flag, as any other malformed option).
struct ConfigFlagValues {
  std::vector<long long> integers;
  std::vector<unsigned long long> unsigned_integers;
  std::vector<double> reals;
  std::vector<std::string> texts;
  std::vector<CLI::Option*> options;  // one per table row used by this subcommand, or nullptr
};

// Declares the table's flags for `command` on `app`.
void add_config_flags(CLI::App& app, unsigned command, ConfigFlagValues& values);

// For options naming a file or folder: an empty value ("--out ''", an unset shell variable)
// is an error, not "the default".
extern const CLI::Validator kNonEmptyPath;

// --device's grammar, shared with bench's old --devices: "cpu", "gpu", "both", or a comma
// list of cpu and gpu in any order ("cpu,gpu" = "both"). `choice` is the config's name for
// it, or empty with `error` saying what is wrong (quoting `text`).
struct DeviceListParse {
  std::string choice, error;
};
DeviceListParse parse_device_list(const std::string& text);

// "key=value" for every table flag given on the command line, in table order.
std::vector<std::string> config_flag_overrides(const ConfigFlagValues& values);

// The config keys the given flags set (for bench's "a flag would override the sweep" check).
std::vector<std::string> config_flag_keys(const ConfigFlagValues& values);

// A config error ("config /cpu/threads: value 2000 ...") about a key that one of the given
// flags set names that flag first ("--threads (config /cpu/threads): value 2000 ..."): the
// flag's value is the one refused (flags are applied last), and the user typed the flag, not
// the key. Any other error's message is returned as is, a ConfigFileError's too (the file's
// own value was refused, whatever the flag says).
std::string blame_flag(const UsageError& error, const std::vector<std::string>& flag_keys);

}  // namespace nntrain
