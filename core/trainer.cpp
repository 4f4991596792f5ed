// trainer.cpp — see trainer.hpp.
#include "trainer.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <limits>
#include <memory>

#include "errors.hpp"
#include "memcheck.hpp"

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

// A loss on a data set through a backend, by Backend::train's contract: a full-batch epoch
// records the loss before its update, i.e. of the weights just loaded. The backend's own
// forward pass (no new kernel), so the number is the one training reports; the update it
// makes after is thrown away, since every evaluation loads its weights first.
class Evaluator {
 public:
  explicit Evaluator(Backend* shared) : b_(shared) {}
  explicit Evaluator(std::unique_ptr<Backend> own) : own_(std::move(own)), b_(own_.get()) {}
  double loss(const Params& p, double& seconds) {
    const auto t0 = std::chrono::steady_clock::now();
    float l = std::numeric_limits<float>::quiet_NaN();
    b_->load(p);
    b_->train(1, &l);
    seconds += seconds_since(t0);
    return l;
  }

 private:
  std::unique_ptr<Backend> own_;
  Backend* b_;
};

}  // namespace

BackendOptions evaluation_options(BackendOptions o) {
  o.batch_size = 0;
  o.shuffle = false;
  o.chunk_epochs = 1;
  o.evaluation = true;
  if (o.gpu_path == GpuPath::resident) o.gpu_path = GpuPath::automatic;  // resident trains small batches only
  return o;
}

namespace {

// A full-batch backend on `data` for evaluations, or nullptr with `note` saying why not (its
// full batch would not fit in host memory, or the device refuses the options or the memory):
// a training run is not failed for a summary number it could not add.
std::unique_ptr<Evaluator> make_evaluator(const BackendRegistry& registry, const Config& cfg, Device device,
                                          const Dataset& data, BackendOptions o, std::string& note) {
  o = evaluation_options(o);
  try {
    check_fits_in_memory(training_bytes(o.spec, data.n, 1), "a full-batch evaluation pass");
    return std::make_unique<Evaluator>(make_backend(registry, device, cfg.cpu.backend, data, o));
  } catch (const std::exception& e) {  // e.g. a GPU that trains mini-batches but has no room for a full batch
    note = e.what();
    return nullptr;
  }
}

// The mean over outputs of the targets' variance: the MSE of predicting their mean. Where the
// targets are constant (to float precision) that is ~0 and any rounding of a near-perfect
// start (--init-model) would "explode" past it: their mean square (the MSE of predicting
// zero) stands in.
double target_variance(const Dataset& d) {
  double var = 0, mean_sq = 0;
  for (int o = 0; o < d.outputs; ++o) {
    double sum = 0, sq = 0;
    for (int i = 0; i < d.n; ++i) sum += d.y[size_t(i) * d.outputs + o];
    const double mean = d.n ? sum / d.n : 0.0;
    for (int i = 0; i < d.n; ++i) sq += (d.y[size_t(i) * d.outputs + o] - mean) * (d.y[size_t(i) * d.outputs + o] - mean);
    var += d.n ? sq / d.n : 0.0;
    mean_sq += d.n ? sq / d.n + mean * mean : 0.0;
  }
  if (var <= 1e-12 * mean_sq) var = mean_sq;
  return d.outputs ? var / d.outputs : 0.0;
}

// Marks divergence on `r` at the first epoch in [from, to) whose loss is NaN/Inf or finite
// and above kExplodeFactor times the larger of the first epoch's loss and `target_var`.
void check_divergence(const std::vector<float>& curve, int from, int to, double target_var, RunResult& r) {
  for (int e = from; e < to && !r.diverged_epoch; ++e) {
    const double l = curve[size_t(e)];
    if (!std::isfinite(l)) {
      r.diverged_epoch = e + 1;
    } else if (e == 0) {
      r.explode_threshold = kExplodeFactor * std::max(l, target_var);
    } else if (r.explode_threshold > 0 && l > r.explode_threshold) {
      r.diverged_epoch = e + 1;
      r.exploded = true;
    }
  }
}

// One repeat's plan: epochs, chunk size, the epoch a chunk must end at (the time-to-target
// measurement; 0 = none), and, first repeat only, the validation and the hooks.
struct RepeatPlan {
  int total = 0, chunk = 1, split_at = 0;
  double target_var = 0;
  Evaluator* validator = nullptr;
  int every = 0;  // with validation: chunks end at its multiples in every repeat (the same timing)
  std::vector<float>* val_curve = nullptr;
  const TrainHooks* hooks = nullptr;
};

// Runs one repeat's epochs in chunks into `curve`, marking divergence and interrupts on `r`.
// With validation, a chunk ends at every multiple of `every` epochs, and the weights the next
// epoch starts from are evaluated there (outside the timed calls).
RepeatClock run_repeat(Backend& backend, const RepeatPlan& p, std::vector<float>& curve, RunResult& r) {
  RepeatClock clock;
  double seconds = 0;
  int done = 0;
  while (done < p.total) {
    int n = std::min(p.chunk, p.total - done);
    if (p.split_at > done && p.split_at < done + n) n = p.split_at - done;
    if (p.every) n = std::min(n, p.every - done % p.every);
    if (p.validator && done % p.every == 0)
      (*p.val_curve)[size_t(done)] = float(p.validator->loss(backend.params(), r.eval_seconds));
    seconds += backend.train(n, curve.data() + done);
    check_divergence(curve, done, done + n, p.target_var, r);
    const int from = done;
    done += n;
    clock.epochs.push_back(done);
    clock.seconds.push_back(seconds);
    if (p.hooks && p.hooks->progress) p.hooks->progress(done, p.total, curve[size_t(done - 1)]);
    if (p.hooks && p.hooks->chunk_done)
      p.hooks->chunk_done({&r, curve.data(), p.val_curve ? p.val_curve->data() : nullptr, from, done, seconds});
    if (r.diverged_epoch) break;
    if (done < p.total && stop_requested()) {  // a stop after the last epoch finished nothing early
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
void clear_stop() { g_stop.store(false, std::memory_order_relaxed); }

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
  TrainHooks hooks;
  hooks.progress = progress;
  return run_training(registry, cfg, data, init, device, hooks);
}

int warmup_epochs_of(const Config& cfg) { return std::min(cfg.timing.warmup_epochs, cfg.train.epochs); }

namespace {

// Warm-up: caches, clocks, lazy module loads, graph instantiation. Then start over. In the
// run's chunks, so that a stop comes as soon as in training (a long warm-up in one call
// outlasted the stop's grace).
void warm_up(Backend& backend, const Params& init, int chunk, RunResult& r, const TrainHooks& hooks) {
  if (r.warmup_epochs <= 0) return;
  if (hooks.warmup_begin) hooks.warmup_begin(r.warmup_epochs);
  std::vector<float> scratch(size_t(r.warmup_epochs));
  const auto t0 = std::chrono::steady_clock::now();
  int done = 0;
  for (int n = 0; done < r.warmup_epochs && !stop_requested(); done += n)
    backend.train(n = std::min(chunk, r.warmup_epochs - done), scratch.data() + done);
  r.warmup_seconds = seconds_since(t0);
  r.warmup_epochs = done;  // fewer when a stop cut it
  backend.load(init);
  if (hooks.warmup_end) hooks.warmup_end(done, r.warmup_seconds);
}

// The timed repeats; the first records the curves and the final weights.
std::vector<RepeatClock> run_repeats(Backend& backend, const Config& cfg, const BackendOptions& opt, const Params& init,
                                     RepeatPlan plan, RunResult& r) {
  std::vector<float> curve(size_t(cfg.train.epochs));
  std::vector<RepeatClock> clocks;
  for (int rep = 0; rep < cfg.timing.repeats; ++rep) {
    if (rep > 0 && stop_requested()) {  // after the last chunk of the one before: none of this one ran
      r.interrupted = true;
      r.interrupted_repeat = rep + 1;
      break;
    }
    if (rep > 0) {
      backend.load(init);
      plan.validator = nullptr;  // the first repeat's curve is the one recorded
      plan.hooks = nullptr;
    }
    plan.chunk = opt.chunk_epochs;
    clocks.push_back(run_repeat(backend, plan, curve, r));
    if (rep > 0 && r.interrupted && clocks.back().done() < plan.total) {
      r.interrupted_repeat = rep + 1;  // its chunk boundaries still time the epochs they end
      break;
    }
    r.train_seconds_per_repeat.push_back(clocks.back().total());
    if (rep == 0) {
      r.epochs_timed = clocks.back().done();
      r.epochs_done = r.diverged_epoch ? r.diverged_epoch : r.epochs_timed;
      r.losses.assign(curve.begin(), curve.begin() + r.epochs_done);
      if (plan.val_curve) r.val_losses.assign(plan.val_curve->begin(), plan.val_curve->begin() + r.epochs_done);
      r.final_params = backend.params();
      // Finite losses but NaN/Inf weights: the last update blew up (the loss recorded is the
      // one before it). That is divergence at the last epoch done.
      if (!r.diverged_epoch && r.epochs_done > 0 && !all_finite(r.final_params)) {
        r.diverged_epoch = r.epochs_done;
        r.weights_nonfinite = true;
      }
      if (cfg.train.target_loss) plan.split_at = first_epoch_at_or_below(r.losses, *cfg.train.target_loss);
    } else if (!std::equal(r.losses.begin(), r.losses.end(), curve.begin(),
                           [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; })) {
      r.nondeterministic = true;
    }
    if (r.diverged_epoch || r.interrupted) break;
  }
  return clocks;
}

// The trained model's loss on the training data and, with a split, on the held-out data: one
// more forward pass each, after training (the training backend itself when it trains full
// batch, else a full-batch one on the same data).
void evaluate_trained_model(const BackendRegistry& registry, const Config& cfg, const Dataset& train,
                            const BackendOptions& opt, Backend& backend, Evaluator* validator, bool evaluate,
                            RunResult& r) {
  if (r.diverged_epoch || r.interrupted) {
    r.model_loss_note = r.diverged_epoch ? "the run diverged" : "the run was interrupted";
    return;
  }
  if (!evaluate) {
    r.model_loss_note = "not asked for (bench times training alone)";
    return;
  }
  if (batch_samples(opt.batch_size, train.n) == train.n) {
    r.model_loss = Evaluator(&backend).loss(r.final_params, r.eval_seconds);
  } else if (auto e = make_evaluator(registry, cfg, r.device, train, opt, r.model_loss_note)) {
    r.model_loss = e->loss(r.final_params, r.eval_seconds);
  }
  if (validator) r.model_validation_loss = validator->loss(r.final_params, r.eval_seconds);
}

}  // namespace

RunResult run_training(const BackendRegistry& registry, const Config& cfg, const Dataset& data, const Params& init,
                       Device device, const TrainHooks& hooks) {
  const BackendOptions opt = backend_options(cfg, device);
  const bool split = cfg.data.validation_fraction > 0;
  const DataSplit parts = split ? split_validation(data, cfg.data.validation_fraction, cfg.seed) : DataSplit{};
  const Dataset& train = split ? parts.train : data;
  RunResult r;
  r.device = device;
  r.samples = train.n;
  r.epochs_requested = cfg.train.epochs;
  r.warmup_epochs = warmup_epochs_of(cfg);

  const auto t_setup = std::chrono::steady_clock::now();
  auto backend = make_backend(registry, device, cfg.cpu.backend, train, opt);
  backend->load(init);
  r.setup_seconds = seconds_since(t_setup);
  r.setup = backend->setup();
  r.backend = backend->name();
  r.details = backend->details();
  r.threads = backend->threads();
  r.simulated = backend->simulated();

  RepeatPlan plan;
  plan.total = cfg.train.epochs;
  plan.target_var = target_variance(train);
  plan.hooks = &hooks;
  std::unique_ptr<Evaluator> validator;
  std::vector<float> val_curve;
  if (split) r.validation_samples = parts.validation.n;
  if (split && hooks.evaluate) {
    r.validation_every = cfg.data.validation_every;
    std::string why;
    validator = make_evaluator(registry, cfg, device, parts.validation, opt, why);
    if (!validator) throw UsageError("data.validation_fraction: " + why);
    val_curve.assign(size_t(plan.total), std::numeric_limits<float>::quiet_NaN());
    plan.validator = validator.get();
    plan.every = cfg.data.validation_every;
    plan.val_curve = &val_curve;
  }
  if (hooks.chunk_done) hooks.chunk_done({&r, nullptr, nullptr, 0, 0, 0.0});

  warm_up(*backend, init, opt.chunk_epochs, r, hooks);
  std::vector<RepeatClock> clocks;
  if (stop_requested() && plan.total > 0) r.interrupted = true;  // stopped during the warm-up: nothing trained
  else clocks = run_repeats(*backend, cfg, opt, init, plan, r);
  r.details = backend->details();  // again, now that it can say how the timed chunks went
  if (plan.total == 0 || r.epochs_timed == 0) r.final_params = backend->params();
  r.train_seconds = median(r.train_seconds_per_repeat);
  if (cfg.train.target_loss) r.target = time_to_target(*cfg.train.target_loss, r.losses, clocks);
  evaluate_trained_model(registry, cfg, train, opt, *backend, validator.get(), hooks.evaluate, r);
  return r;
}

BestEpoch best_epoch(const std::vector<float>& losses) {
  BestEpoch b;
  for (size_t e = 0; e < losses.size(); ++e)
    if (std::isfinite(losses[e]) && (b.epoch == 0 || double(losses[e]) < b.loss)) {
      b.epoch = int(e) + 1;
      b.loss = losses[e];
    }
  return b;
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
