// backend.hpp — the one interface the trainer sees; every device implements it.
//
// A backend owns the data in its own layout and the training state (parameters and
// optimiser moments). The trainer asks it to run a chunk of epochs at a time; a GPU backend
// keeps per-epoch losses on the device and copies them back once per chunk, so no epoch
// waits on the host.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config.hpp"
#include "dataset.hpp"
#include "gpu_info.hpp"
#include "mlp.hpp"
#include "names.hpp"

namespace nntrain {

// Everything a backend needs to know besides the data and the initial weights.
struct BackendOptions {
  ModelSpec spec;
  OptimizerConfig optimizer;
  int batch_size = 0;  // 0 = full batch
  bool shuffle = true;
  uint64_t seed = 1;   // mini-batch shuffle key (with the epoch number)
  int threads = 0;     // CPU threads; 0 = all hardware threads
  GpuPath gpu_path = GpuPath::automatic;
  int chunk_epochs = 100;  // the trainer's chunk size (a GPU may capture a graph of it)
  // A trainer's extra full-batch backend for a model's loss alone (make_evaluator): the
  // diagnostics a run asks for (NNTRAIN_RESIDENT_STAMPS) are the training backend's, not its.
  bool evaluation = false;
};

// One-off costs a backend paid before training, each in seconds (0 where not applicable).
struct SetupReport {
  double context_seconds = 0;   // CUDA context creation
  double handle_seconds = 0;    // cuBLAS handle, streams, events
  double module_seconds = 0;    // kernel module load
  double alloc_seconds = 0;     // buffers, data re-layout, thread pool start
  double transfer_seconds = 0;  // host→device copy of the data
  double total() const {
    return context_seconds + handle_seconds + module_seconds + alloc_seconds + transfer_seconds;
  }
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual Device device() const = 0;
  virtual std::string name() const = 0;    // e.g. "cpu-reference", "cpu-fast", "gpu-cublas"
  // One line for reports: threads, SIMD, GPU name, path chosen and why.
  virtual std::string details() const = 0;
  // The CPU threads a step keeps busy (what reports call "threads"): fewer than asked for
  // where the batches are too small to share (the fast backend's details say why).
  virtual int threads() const { return 1; }
  // True on a simulated device (GPGPU-Sim): its times are not measurements.
  virtual bool simulated() const { return false; }

  // Loads parameters and resets the optimiser state and the epoch counter (so the next
  // epoch is epoch 0 again: same shuffles, same Adam bias correction).
  virtual void load(const Params& p) = 0;
  // Copies the current parameters out.
  virtual Params params() = 0;

  // Runs `epochs` epochs and writes one loss per epoch to losses[0..epochs): for full
  // batch the loss before that epoch's update, for mini-batch the mean of its batch
  // losses. Returns the seconds the epochs took on this device's clock (steady clock on
  // the CPU; CUDA events on the GPU), nothing else included.
  virtual double train(int epochs, float* losses) = 0;

  virtual SetupReport setup() const = 0;
};

// The backend registry: which implementation trains which device, and what each says about
// this machine. The table is built above core (app/backend_registry.cpp names the
// implementations in kernels/), and the trainer and app/ receive it, so neither the engine
// nor the commands include an implementation. Each entry is a small device interface, as
// ggml's device registry has: a probe, a fits check and a factory.

// What a backend's probe finds on this machine.
struct BackendProbe {
  bool available = true;
  std::string reason;  // why not available, as a refusal quotes it ("no CUDA device: ...")
  bool simulated = false;  // times on it are not measurements
  // Its lines in `nntrain info`: label, text.
  std::vector<std::pair<std::string, std::string>> info;
  GpuInfo gpu;  // the GPU entry's description for reports and contexts; empty on the CPU
};

using BackendFactory = std::unique_ptr<Backend> (*)(const Dataset& data, const BackendOptions& opt);
using BackendProbeFn = BackendProbe (*)();
// Why the backend cannot train `opt` (the network on the GPU path asked for) on this
// machine, or "" when it can. Checked before anything runs or is written.
using BackendFitsFn = std::string (*)(const BackendOptions& opt);
// The host memory the backend allocates for `samples` training samples beyond what
// training_bytes() (core/memcheck.hpp) counts for every backend, in bytes: the preflight
// adds it before anything is allocated or written.
using BackendHostBytesFn = double (*)(const BackendOptions& opt, int samples);
struct BackendEntry {
  Device device;
  const char* name;  // the config's name: "fast"/"reference" (cpu.backend), "cuda" for the GPU
  BackendFactory make;
  BackendProbeFn probe = nullptr;  // none: always available, nothing to show
  BackendFitsFn fits = nullptr;    // none: anything fits
  BackendHostBytesFn host_bytes = nullptr;  // none: nothing beyond training_bytes()
};
using BackendRegistry = std::vector<BackendEntry>;

// The entry for `device`: on the CPU the one named by `cpu_backend`, on the GPU the first.
// Throws UsageError when the registry has none.
const BackendEntry& find_backend(const BackendRegistry& registry, Device device, CpuBackendKind cpu_backend);

// The entry's probe; an entry without one is available and shows nothing.
BackendProbe probe_backend(const BackendEntry& entry);
// The entry's fits check; "" for an entry without one.
std::string backend_fit_problem(const BackendEntry& entry, const BackendOptions& opt);
// The entry's host bytes beyond training_bytes(); 0 for an entry without the function.
double backend_host_bytes(const BackendEntry& entry, const BackendOptions& opt, int samples);

// Creates the backend for `device`. Throws DeviceUnavailable when the device cannot be
// used, UsageError when the options do not suit it.
std::unique_ptr<Backend> make_backend(const BackendRegistry& registry, Device device, CpuBackendKind cpu_backend,
                                      const Dataset& data, const BackendOptions& opt);

// Epoch bookkeeping every backend shares: how an epoch splits into batches.
struct BatchPlan {
  int n = 0;           // samples
  int batch = 0;       // samples per batch (n for full batch)
  int batches = 0;     // per epoch; the last may be short
  bool shuffle = false;
  int size(int b) const { return b + 1 < batches ? batch : n - batch * (batches - 1); }
};
BatchPlan make_batch_plan(int n, int batch_size, bool shuffle);
// The full-batch rule, written once: samples per batch of `batch_size` over `n` samples,
// which is all n (a full batch) for batch_size 0 or >= n.
int batch_samples(int batch_size, int n);

}  // namespace nntrain
