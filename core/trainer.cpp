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
// One repeat's chunk boundaries: after each chunk, the epochs done and the device seconds
// summed so far (each chunk timed by the backend on its own clock).
struct RepeatClock {
  std::vector<int> epochs;
  std::vector<double> seconds;
  int done() const { return epochs.empty() ? 0 : epochs.back(); }
  double total() const { return seconds.empty() ? 0.0 : seconds.back(); }
};

// Runs one repeat's epochs in chunks into `curve`, marking divergence and interrupts on `r`.
// A chunk that would hold `split_at` before its last epoch ends there instead, so the clock is
// read exactly at that epoch (the time-to-target measurement; 0 = no split).
RepeatClock run_repeat(Backend& backend, int total, int chunk, int split_at, std::vector<float>& curve, RunResult& r,
                       const ProgressFn& progress) {
  RepeatClock clock;
  double seconds = 0;
  int done = 0;
  while (done < total) {
    int n = std::min(chunk, total - done);
    if (split_at > done && split_at < done + n) n = split_at - done;
    seconds += backend.train(n, curve.data() + done);
    for (int e = done; e < done + n && !r.diverged_epoch; ++e)
      if (!std::isfinite(curve[size_t(e)])) r.diverged_epoch = e + 1;
    done += n;
    clock.epochs.push_back(done);
    clock.seconds.push_back(seconds);
    if (progress) progress(done, total, curve[size_t(done - 1)]);
    if (r.diverged_epoch) break;
    if (stop_requested()) {
      r.interrupted = true;
      break;
    }
  }
  return clock;
}

// Time to `target` from the first repeat's curve and every repeat's chunk boundaries
// (TargetResult in trainer.hpp says what is measured and what is interpolated).
TargetResult time_to_target(double target, const std::vector<float>& losses, const std::vector<RepeatClock>& clocks) {
  TargetResult t;
  t.loss = target;
  t.epoch = first_epoch_at_or_below(losses, target);
  t.reached = t.epoch > 0;
  if (!t.reached || clocks.empty()) return t;
  for (const RepeatClock& c : clocks)
    for (size_t k = 0; k < c.epochs.size(); ++k)
      if (c.epochs[k] == t.epoch) t.readings.push_back(c.seconds[k]);
  const RepeatClock& first = clocks.front();
  size_t k = 0;
  while (k + 1 < first.epochs.size() && first.epochs[k] < t.epoch) ++k;
  t.bracket_from = k ? first.epochs[k - 1] : 0;
  t.bracket_from_seconds = k ? first.seconds[k - 1] : 0.0;
  t.bracket_to = first.epochs[k];
  t.bracket_to_seconds = first.seconds[k];
  t.measured = !t.readings.empty();
  if (t.measured) {
    t.seconds = median(t.readings);
  } else {  // linear in epochs within the first repeat's crossing chunk: an estimate, labelled
    const double f = double(t.epoch - t.bracket_from) / double(std::max(1, t.bracket_to - t.bracket_from));
    t.seconds = t.bracket_from_seconds + f * (t.bracket_to_seconds - t.bracket_from_seconds);
  }
  return t;
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
  std::vector<float> curve(static_cast<size_t>(total));
  std::vector<RepeatClock> clocks;
  int split_at = 0;  // from the second repeat on: the crossing epoch, where a chunk ends
  for (int rep = 0; rep < cfg.timing.repeats; ++rep) {
    if (rep > 0) backend->load(init);
    clocks.push_back(run_repeat(*backend, total, opt.chunk_epochs, split_at, curve, r, rep == 0 ? progress : ProgressFn{}));
    r.train_seconds_per_repeat.push_back(clocks.back().total());
    if (rep == 0) {
      r.epochs_timed = clocks.back().done();
      r.epochs_done = r.diverged_epoch ? r.diverged_epoch : r.epochs_timed;
      r.losses.assign(curve.begin(), curve.begin() + r.epochs_done);
      r.final_params = backend->params();
      // Finite losses but NaN/Inf weights: the last update blew up (the loss recorded is the
      // one before it). That is divergence at the last epoch done.
      if (!r.diverged_epoch && r.epochs_done > 0 && !all_finite(r.final_params)) {
        r.diverged_epoch = r.epochs_done;
        r.weights_nonfinite = true;
      }
      if (cfg.train.target_loss) split_at = first_epoch_at_or_below(r.losses, *cfg.train.target_loss);
    } else if (!std::equal(r.losses.begin(), r.losses.end(), curve.begin(),
                           [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; })) {
      r.nondeterministic = true;
    }
    if (r.diverged_epoch || r.interrupted) break;
  }
  if (total == 0) r.final_params = backend->params();
  r.train_seconds = median(r.train_seconds_per_repeat);
  if (cfg.train.target_loss) r.target = time_to_target(*cfg.train.target_loss, r.losses, clocks);
  return r;
}

int first_epoch_at_or_below(const std::vector<float>& losses, double target) {
  for (size_t e = 0; e < losses.size(); ++e)
    if (double(losses[e]) <= target) return int(e) + 1;  // NaN compares false: never a crossing
  return 0;
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
