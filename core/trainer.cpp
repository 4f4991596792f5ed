// trainer.cpp — see trainer.hpp.
#include "trainer.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>

namespace nntrain {

namespace {
// Set from a signal handler, which may run on any thread (the fast backend's pool workers
// included), and read by the training thread: a lock-free atomic, not a volatile
// sig_atomic_t (that is only defined for a handler on the thread that reads it).
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the stop flag is set from a signal handler");

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

void request_stop() { g_stop.store(true, std::memory_order_relaxed); }
bool stop_requested() { return g_stop.load(std::memory_order_relaxed); }

BackendOptions backend_options(const Config& cfg, Device device) {
  BackendOptions o;
  o.spec = cfg.model_spec();
  o.optimizer = cfg.optimizer;
  o.batch_size = cfg.train.batch_size;
  o.shuffle = cfg.train.shuffle;
  o.seed = cfg.seed;
  o.threads = cfg.cpu.threads;
  o.gpu_path = cfg.gpu.path;
  o.chunk_epochs = device == Device::gpu && cfg.gpu.chunk_epochs > 0 ? cfg.gpu.chunk_epochs : cfg.train.log_every;
  o.chunk_epochs = std::max(1, std::min(o.chunk_epochs, std::max(1, cfg.train.epochs)));
  return o;
}

RunResult run_training(const BackendRegistry& registry, const Config& cfg, const Dataset& data, const Params& init,
                       Device device, const ProgressFn& progress) {
  const BackendOptions opt = backend_options(cfg, device);
  RunResult r;
  r.device = device;
  r.samples = data.n;
  r.epochs_requested = cfg.train.epochs;
  r.warmup_epochs = cfg.timing.warmup_epochs;

  const auto t_setup = std::chrono::steady_clock::now();
  auto backend = make_backend(registry, device, cfg.cpu.backend, data, opt);
  backend->load(init);
  r.setup_seconds = seconds_since(t_setup);
  r.setup = backend->setup();
  r.backend = backend->name();
  r.details = backend->details();
  r.threads = backend->threads();
  r.simulated = backend->simulated();

  // Warm-up: caches, clocks, lazy module loads, graph instantiation. Then start over.
  if (cfg.timing.warmup_epochs > 0) {
    std::vector<float> scratch(size_t(cfg.timing.warmup_epochs));
    const auto t0 = std::chrono::steady_clock::now();
    backend->train(cfg.timing.warmup_epochs, scratch.data());
    r.warmup_seconds = seconds_since(t0);
    backend->load(init);
  }

  const int total = cfg.train.epochs;
  const int chunk = opt.chunk_epochs;
  std::vector<float> curve(static_cast<size_t>(total));
  for (int rep = 0; rep < cfg.timing.repeats; ++rep) {
    if (rep > 0) backend->load(init);
    double seconds = 0;
    int done = 0;
    while (done < total) {
      const int n = std::min(chunk, total - done);
      seconds += backend->train(n, curve.data() + done);
      for (int e = done; e < done + n && !r.diverged_epoch; ++e)
        if (!std::isfinite(curve[size_t(e)])) r.diverged_epoch = e + 1;
      done += n;
      if (rep == 0 && progress) progress(done, total, curve[size_t(done - 1)]);
      if (r.diverged_epoch) break;
      if (stop_requested()) {
        r.interrupted = true;
        break;
      }
    }
    r.train_seconds_per_repeat.push_back(seconds);
    if (rep == 0) {
      r.epochs_done = r.diverged_epoch ? r.diverged_epoch : done;
      r.losses.assign(curve.begin(), curve.begin() + r.epochs_done);
      r.final_params = backend->params();
      // Finite losses but NaN/Inf weights: the last update blew up (the loss recorded is the
      // one before it). That is divergence at the last epoch done.
      if (!r.diverged_epoch && r.epochs_done > 0 && !all_finite(r.final_params)) {
        r.diverged_epoch = r.epochs_done;
        r.weights_nonfinite = true;
      }
    } else if (!std::equal(r.losses.begin(), r.losses.end(), curve.begin(),
                           [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; })) {
      r.nondeterministic = true;
    }
    if (r.diverged_epoch || r.interrupted) break;
  }
  if (total == 0) r.final_params = backend->params();
  r.train_seconds = median(r.train_seconds_per_repeat);
  return r;
}

CurveComparison compare_curves(const std::vector<float>& a, const std::vector<float>& b, double rel_tol) {
  CurveComparison c;
  const size_t n = std::min(a.size(), b.size());
  c.compared_epochs = int(n);
  bool agreeing = true;
  for (size_t i = 0; i < n; ++i) {
    const double x = a[i], y = b[i];
    const double d = std::fabs(x - y);
    const double rel = d / std::max({std::fabs(x), std::fabs(y), 1e-30});
    c.max_abs_diff = std::max(c.max_abs_diff, d);
    c.max_rel_diff = std::max(c.max_rel_diff, rel);
    if (agreeing && rel <= rel_tol) c.agree_until_epoch = int(i) + 1;
    else agreeing = false;
  }
  return c;
}

}  // namespace nntrain
