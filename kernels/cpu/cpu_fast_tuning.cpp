// cpu_fast_tuning.cpp — FastCpuTuning and the NNTRAIN_FAST_* variables resolved into the
// settings a fast backend runs with (cpu_fast_tuning.hpp).
#include "cpu_fast_tuning.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "errors.hpp"

namespace nntrain::fast {
namespace {

// The variables as the process started with them (unset and empty alike: the default).
struct FastEnv {
  std::string isa, blas_min, fwd_cols, gather_ahead, phases;
};

const FastEnv& fast_env() {
  static const FastEnv env = [] {
    auto get = [](const char* name) {
      const char* v = std::getenv(name);
      return std::string(v ? v : "");
    };
    return FastEnv{get("NNTRAIN_FAST_ISA"), get("NNTRAIN_FAST_BLAS_MIN"), get("NNTRAIN_FAST_FWD_COLS"),
                   get("NNTRAIN_FAST_GATHER_AHEAD"), get("NNTRAIN_FAST_PHASES")};
  }();
  return env;
}

// A numeric variable's value: a plain decimal (digits, no leading zero), within [lo, hi]; -1
// when unset. Anything else is an error naming the variable and what it must be.
int env_int(const char* name, const std::string& v, int lo, int hi, const char* what) {
  if (v.empty()) return -1;
  long n = -1;
  if (v.size() <= 9 && v.find_first_not_of("0123456789") == std::string::npos && (v[0] != '0' || v.size() == 1))
    n = std::strtol(v.c_str(), nullptr, 10);
  if (n < lo || n > hi) throw UsageError(fmt::format("{}: not {}: {}", name, what, v));
  return int(n);
}

// The numeric variables, each read once here: their value when the backend is made
// (resolve_settings) and their form when the run is checked (fast_cpu_env_problem).
struct EnvRange {
  const char* name;
  int lo, hi;
  const char* what;
  int read(const std::string& v) const { return env_int(name, v, lo, hi, what); }
};
constexpr EnvRange kEnvBlasMin{"NNTRAIN_FAST_BLAS_MIN", 0, 999999999, "a width"};
constexpr EnvRange kEnvFwdCols{"NNTRAIN_FAST_FWD_COLS", 1, 2, "1 or 2"};
constexpr EnvRange kEnvGatherAhead{"NNTRAIN_FAST_GATHER_AHEAD", 0, 1, "0 or 1"};
constexpr EnvRange kEnvPhases{"NNTRAIN_FAST_PHASES", 0, 1, "0 or 1"};

const Kernels& pick_kernels(std::string isa) {
  if (isa == "auto") isa = !fast_env().isa.empty() ? fast_env().isa : fast_cpu_isas().front();
  const auto ok = fast_cpu_isas();
  if (std::find(ok.begin(), ok.end(), isa) == ok.end())
    throw UsageError("fast CPU backend: instruction set \"" + isa + "\" is not available on this CPU (available: " +
                     fmt::format("{}", fmt::join(ok, ", ")) + ")");
#if defined(__x86_64__)
  if (isa == "avx512") return kernels_avx512();
  if (isa == "avx2") return kernels_avx2();
#endif
  return kernels_generic();
}

// Vectors of samples per register block in the fused first-layers forward (FirstForward::
// cols) of a kernel set of `lanes` floats per vector. Its inner loop keeps OUT accumulator
// chains per vector, each a multiply-add every iteration with 4 cycles of latency, and
// loads each weight as a broadcast once per block. A core with two 512-bit FMA pipes needs 8
// chains in flight, so 2 vectors (10 chains for the reference net's 5 outputs). AMD Zen 4
// (family 19h: the only one of that family with AVX-512) runs a 512-bit FMA on both of its
// 256-bit pipes, one per cycle, so 5 chains suffice; there the block of 1 vector measured ~8 %
// faster (the kernel alone, 256-sample chunks: median 1,894 against 2,051 TSC ticks;
// docs/BENCHMARKS.md). The AVX2 set (8 lanes) takes 2 on every CPU: two 256-bit pipes need 8
// chains, and a block of 1 spends more loads (8 broadcasts a row) than multiply-adds (7); on
// AMD Zen 3 (family 19h too) its forward measured ~25 % faster with 2. The baseline set
// (4 lanes) has only blocks of 1. Bits are the same either way. NNTRAIN_FAST_FWD_COLS=1|2
// overrides (for A/B runs).
int pick_forward_cols(int requested, int lanes) {
  if (requested == 1 || requested == 2) return requested;
  if (requested != 0)
    throw UsageError(fmt::format("fast CPU backend: forward block of {} vectors (1 or 2)", requested));
  if (const int env = kEnvFwdCols.read(fast_env().fwd_cols); env > 0) return env;
  if (lanes != 16) return 2;
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163 &&  // "AuthenticAMD"
      __get_cpuid(1, &a, &b, &c, &d)) {
    const unsigned family = ((a >> 8) & 0xF) + (((a >> 8) & 0xF) == 0xF ? (a >> 20) & 0xFF : 0);
    if (family == 0x19) return 1;
  }
#endif
  return 2;
}

bool pick_gather_ahead(int requested) {
  if (requested == 0 || requested == 1) return requested == 1;
  if (requested != -1) throw UsageError(fmt::format("fast CPU backend: gather_ahead {} (0, 1 or -1)", requested));
  const int env = kEnvGatherAhead.read(fast_env().gather_ahead);
  return env != 0;
}

int pick_blas_min(int requested) {
  if (requested >= 0) return requested;
  const int env = kEnvBlasMin.read(fast_env().blas_min);
  return env >= 0 ? env : kFastBlasMinWidth;
}

}  // namespace

FastSettings resolve_settings(const FastCpuTuning& tuning) {
  FastSettings s;
  s.kernels = &pick_kernels(tuning.isa);
  // Each knob is checked whatever the batches and the kernel set, so that a bad value fails
  // every run, not only those that would use it.
  s.gather_ahead = pick_gather_ahead(tuning.gather_ahead);
  // NNTRAIN_FAST_PHASES=1 (docs/CONFIG.md): a diagnostic of where the steps' time goes, per
  // thread, printed to stderr when the backend is destroyed. Off (the default), each of a
  // step's phase points costs one predictable branch.
  s.phases = kEnvPhases.read(fast_env().phases) == 1;
  s.blas_min = pick_blas_min(tuning.blas_min_width);
  const int cols = pick_forward_cols(tuning.forward_cols, s.kernels->lanes);
  s.fwd_cols = s.kernels->lanes >= 8 ? cols : 1;
  return s;
}

std::string describe(const FastSettings& s) {
  return fmt::format("NNTRAIN_FAST_ISA={} BLAS_MIN={} FWD_COLS={} GATHER_AHEAD={} PHASES={}", s.kernels->isa,
                     s.blas_min, s.fwd_cols, int(s.gather_ahead), int(s.phases));
}

}  // namespace nntrain::fast

namespace nntrain {

std::string fast_cpu_env_problem() {
  const fast::FastEnv& env = fast::fast_env();
  const std::vector<std::string> known = {"avx512", "avx2", "generic"};
  if (!env.isa.empty() && std::find(known.begin(), known.end(), env.isa) == known.end())
    return fmt::format("NNTRAIN_FAST_ISA: not avx512, avx2 or generic: {}", env.isa);
  try {
    (void)fast::kEnvBlasMin.read(env.blas_min);
    (void)fast::kEnvFwdCols.read(env.fwd_cols);
    (void)fast::kEnvGatherAhead.read(env.gather_ahead);
    (void)fast::kEnvPhases.read(env.phases);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::string fast_cpu_isa_problem() {
  const std::string& isa = fast::fast_env().isa;
  const std::vector<std::string> ok = fast_cpu_isas();
  if (isa.empty() || std::find(ok.begin(), ok.end(), isa) != ok.end()) return "";
  return fmt::format("NNTRAIN_FAST_ISA={}: this CPU cannot run that instruction set (it can: {})", isa,
                     fmt::join(ok, ", "));
}

}  // namespace nntrain
