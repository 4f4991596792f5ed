// errors.hpp — the exception types that map to nntrain's documented exit codes (docs/DESIGN.md §5).
#pragma once

#include <stdexcept>
#include <string>

namespace nntrain {

enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,      // internal or I/O failure
  kExitUsage = 2,         // bad usage, invalid config or input data
  kExitNoDevice = 3,      // requested device unavailable
  kExitDiverged = 4,      // NaN/Inf loss
  kExitIncomplete = 5,    // sweep: some point has no result (missing, failed, interrupted)
  kExitInterrupted = 130  // SIGINT/SIGTERM: stopped at a chunk boundary, partial results kept
};

// A string as an error message shows it: control bytes (NUL, ESC, newline, ...) as \xHH, so
// the message stays one line that a terminal prints as it is.
inline std::string escape_control_bytes(const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      out += std::string("\\x") + kHex[u >> 4] + kHex[u & 15];
    else
      out += c;
  }
  return out;
}

// Invalid config, command line or input data. The message names what and where.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A value of the config file itself refused (load_config checks the file as written, before
// any override or flag): no flag is to blame (app/cli_flags.hpp, blame_flag).
struct ConfigFileError : UsageError {
  using UsageError::UsageError;
};

// An NNTRAIN_* environment variable refused (its form, or set for a path it does not apply
// to). The environment is to blame, not the sweep point that met it first: a sweep's message
// starts with the variable and names the point after it.
struct EnvError : UsageError {
  using UsageError::UsageError;
};

// The requested device cannot be used (no GPU, no driver, CPU-only build).
struct DeviceUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// I/O failure on output (unwritable directory, disk full...).
struct IoError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace nntrain
