// cpu_fast.hpp — the fast CPU backend ("cpu-fast"): SIMD across samples, a tile of samples
// kept in L1 through the forward and the backward pass, a thread pool, OpenBLAS for wide
// layers, and results that are bit-identical for any thread count.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend.hpp"

namespace nntrain {

// Knobs for tests and measurements; the defaults are what the tool uses.
struct FastCpuTuning {
  // "auto" (the widest the CPU supports), "avx512", "avx2" or "generic". The environment
  // variable NNTRAIN_FAST_ISA overrides "auto".
  std::string isa = "auto";
  // A layer goes through OpenBLAS sgemm when min(in, out) >= this (and the build has
  // OpenBLAS); -1 = the measured default kFastBlasMinWidth, or NNTRAIN_FAST_BLAS_MIN.
  int blas_min_width = -1;
  // Vectors of samples per register block in the fused first-layers forward (AVX-512 and
  // AVX2; the baseline set uses 1): 1 or 2; 0 = by CPU (pick_forward_cols in
  // cpu_fast_tuning.cpp), or NNTRAIN_FAST_FWD_COLS. The same bits either way.
  int forward_cols = 0;
  // Shuffled batches of one chunk (at most 256 samples) on two or more threads: a worker
  // gathers the next batch's tile during each step (the shuffle's indices and the rows), so
  // that the step's thread only computes. 1 = on, 0 = off (the tile gathered in the step, as
  // for every other batch), -1 = on, or NNTRAIN_FAST_GATHER_AHEAD (0 or 1). The same bits
  // either way.
  int gather_ahead = -1;
  // Tests: this worker (1 … threads - 1) never takes part in a step, as if it were
  // descheduled for the whole run; the other threads must do its chunks. 0 = none.
  int absent_worker = 0;
  // Tests: this worker joins every step and then sleeps 200 us before it looks for work, as
  // if descheduled at the worst moment: the others have done its chunks (and the reduction)
  // by then, and it must take nothing again. 0 = none.
  int late_worker = 0;
  // Tests: in a step that gathers ahead, thread 0 waits for the worker to join (so that every
  // such step does, whatever the machine's load), and the steps that found their tile
  // gathered ahead are counted into *tiles_ahead_used (when not null).
  bool wait_for_ahead = false;
  long long* tiles_ahead_used = nullptr;
};

// Measured switch point (docs/BENCHMARKS.md, "BLAS switch point").
constexpr int kFastBlasMinWidth = 128;

std::unique_ptr<Backend> make_cpu_fast_backend(const Dataset& data, const BackendOptions& opt,
                                               const FastCpuTuning& tuning = {});

// The most layers the fast backend's per-layer tables hold, and why a model is over it ("" when
// it is not): the registry's fits check, exit 2 before a run folder exists.
constexpr int kFastMaxLayers = 64;
std::string fast_cpu_layers_problem(const ModelSpec& spec);

// What the fast backend allocates on the host for `samples` training samples, in bytes (its
// chunk slots, per-thread scratch and data layout: with many chunks and a wide net, several
// times the weights), for the preflight's memory check.
double fast_cpu_host_bytes(const BackendOptions& opt, int samples);

// The kernel sets this CPU can run, widest first (e.g. {"avx512", "avx2", "generic"}).
std::vector<std::string> fast_cpu_isas();
// Whether this binary was built with OpenBLAS.
bool fast_cpu_has_blas();

// Why the NNTRAIN_FAST_* variables (docs/CONFIG.md) are not values they take, naming the
// variable; "" when each is unset or well formed. The same on every machine: the registry's
// fits check, so a bad value is exit 2 before a run folder exists (a Slurm sweep's too).
std::string fast_cpu_env_problem();

// Why this CPU cannot run the instruction set NNTRAIN_FAST_ISA names; "" when it can or the
// variable is unset. The registry's probe: checked where the run's devices are (a Slurm
// sweep's on its nodes).
std::string fast_cpu_isa_problem();

}  // namespace nntrain
