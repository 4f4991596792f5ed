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

// Invalid config, command line or input data. The message names what and where.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
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
