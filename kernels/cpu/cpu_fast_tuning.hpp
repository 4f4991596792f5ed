// cpu_fast_tuning.hpp — the fast backend's knobs, resolved in one place: each from its
// FastCpuTuning field where a test or measurement set one, else from its NNTRAIN_FAST_*
// environment variable (docs/CONFIG.md), else the default. The variables are read once per
// process (cpu_fast_tuning.cpp is the only code that reads them); a bad value is a one-line
// UsageError naming the variable, raised by every backend made while it is set.
#pragma once

#include <string>

#include "cpu_fast.hpp"
#include "cpu_fast_kernels.hpp"

namespace nntrain::fast {

struct FastSettings {
  const Kernels* kernels = nullptr;  // NNTRAIN_FAST_ISA
  int blas_min = kFastBlasMinWidth;  // NNTRAIN_FAST_BLAS_MIN
  int fwd_cols = 1;                  // NNTRAIN_FAST_FWD_COLS (1 on the 4-lane set, whatever asked)
  bool gather_ahead = true;          // NNTRAIN_FAST_GATHER_AHEAD
  bool phases = false;               // NNTRAIN_FAST_PHASES
};

FastSettings resolve_settings(const FastCpuTuning& tuning);

// The resolved values, as the details() line shows them.
std::string describe(const FastSettings& s);

}  // namespace nntrain::fast
