// report.cpp — see report.hpp.
#include "report.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include "bench_points.hpp"
#include "bench_stats.hpp"
#include "run_json.hpp"
#include "sysinfo.hpp"

namespace nntrain {

using nlohmann::json;

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

const RunResult* find_device(const std::vector<RunResult>& runs, Device device) {
  for (const auto& r : runs)
    if (r.device == device) return &r;
  return nullptr;
}

// Time to target, saying how the time was obtained (docs/DESIGN.md §7).
std::string target_text(const TargetResult& t, int epochs_done) {
  if (!t.reached) return fmt::format("loss {:g} not reached in {} epochs", t.loss, epochs_done);
  if (t.measured)
    return fmt::format("loss {:g} reached at epoch {} after {} (measured: clock read at that epoch{})", t.loss, t.epoch,
                       seconds_text(t.seconds),
                       t.readings.size() > 1 ? fmt::format(", median of {} repeats", t.readings.size()) : "");
  return fmt::format("loss {:g} reached at epoch {} after ~{} (interpolated between the measured {} at epoch {} and "
                     "{} at epoch {}; timing.repeats >= 2 measures it)",
                     t.loss, t.epoch, seconds_text(t.seconds), seconds_text(t.bracket_from_seconds), t.bracket_from,
                     seconds_text(t.bracket_to_seconds), t.bracket_to);
}

}  // namespace

bool want_color(std::FILE* f) { return std::getenv("NO_COLOR") == nullptr && ::isatty(::fileno(f)); }

std::string metrics_csv(const std::vector<RunResult>& runs) {
  // val_loss is appended (readers of the first three columns are unaffected), only with a
  // held-out split; empty on the epochs between evaluations.
  bool validation = false;
  for (const auto& r : runs) validation = validation || r.validation_samples > 0;
  std::string s = validation ? "device,epoch,loss,val_loss\n" : "device,epoch,loss\n";
  for (const auto& r : runs)
    for (size_t e = 0; e < r.losses.size(); ++e) {
      s += fmt::format("{},{},{:.9g}", to_string(r.device), e + 1, r.losses[e]);
      if (validation) {
        const bool evaluated = r.validation_every > 0 && e < r.val_losses.size() && e % size_t(r.validation_every) == 0;
        s += evaluated ? fmt::format(",{:.9g}", r.val_losses[e]) : std::string(",");
      }
      s += "\n";
    }
  return s;
}

json run_context(const GpuInfo* gpu) {
  json c = context_json(gpu);
  c["date_utc"] = utc_now();
  return c;
}

static std::string speedup_withheld(const RunResult* cpu, const RunResult* gpu) {
  if (gpu->simulated) return kSimulatedNote;
  // A stop in a later timing repeat leaves whole repeats behind (the cut one left out): those
  // cover every epoch and compare.
  for (const RunResult* r : {cpu, gpu})
    if (r->diverged_epoch || r->epochs_timed < r->epochs_requested || r->train_seconds_per_repeat.empty())
      return fmt::format("the {} run {}: its time does not cover the {} epochs the other's does", to_string(r->device),
                         r->diverged_epoch ? "diverged" : "was interrupted", r->epochs_requested);
  if (!(gpu->train_seconds > 0)) return gpu->epochs_requested == 0 ? "no epoch was trained" : "the GPU's time read 0";
  return "";
}

json summary_json(const Config& cfg, const std::vector<RunResult>& runs, const json& context) {
  json j;
  j["name"] = cfg.name;
  // The run as a whole: the first run that did not finish decides (cmd_train sets "failed").
  j["status"] = "ok";
  for (const auto& r : runs)
    if (r.status() != "ok") {
      j["status"] = r.status();
      break;
    }
  j["runs"] = json::array();
  for (const auto& r : runs) {
    json o = run_result_json(r);
    if (r.train_seconds_per_repeat.size() > 1) {
      const auto [mn, mx] = std::minmax_element(r.train_seconds_per_repeat.begin(), r.train_seconds_per_repeat.end());
      o["train_seconds_min"] = *mn;
      o["train_seconds_max"] = *mx;
      o["train_seconds_repeats"] = r.train_seconds_per_repeat;
      o["spread_wide"] = run_spread_wide(r);
    }
    o["setup_breakdown"] = {{"context_seconds", r.setup.context_seconds},
                            {"handle_seconds", r.setup.handle_seconds},
                            {"module_seconds", r.setup.module_seconds},
                            {"alloc_seconds", r.setup.alloc_seconds},
                            {"transfer_seconds", r.setup.transfer_seconds}};
    j["runs"].push_back(o);
  }
  const RunResult* cpu = find_device(runs, Device::cpu);
  const RunResult* gpu = find_device(runs, Device::gpu);
  if (cpu && gpu) {
    // Only two finished runs' times cover the same epochs (as bench's points).
    if (const std::string why = speedup_withheld(cpu, gpu); why.empty()) {
      j["speedup"] = cpu->train_seconds / gpu->train_seconds;
    } else {
      j["speedup"] = nullptr;
      j["speedup_note"] = why;
    }
    const CurveComparison c = compare_curves(cpu->losses, gpu->losses);
    j["comparison"] = {{"agree_until_epoch", c.agree_until_epoch},
                       {"agree_rel_tol", 1e-4},
                       {"max_abs_loss_diff", c.max_abs_diff},
                       {"max_rel_loss_diff", c.max_rel_diff},
                       {"compared_epochs", c.compared_epochs}};
  }
  j["context"] = context.is_object() && !context.empty() ? context : run_context(nullptr);
  return j;
}

void print_header(std::FILE* out, const Config& cfg, const Dataset& data, const GpuInfo* gpu, const json& context,
                  bool color) {
  const char* b = color ? "\033[1m" : "";
  const char* e = color ? "\033[0m" : "";
  const BuildInfo& bi = build_info();
  std::string layers;
  for (int w : cfg.model.layers) layers += (layers.empty() ? "" : "-") + std::to_string(w);
  fmt::print(out, "{}nntrain {}{} ({}, {}) — experiment \"{}\"\n", b, bi.version, e, bi.git_revision, bi.build_type,
             cfg.name);
  const int held_out = validation_samples(data.n, cfg.data.validation_fraction);
  fmt::print(out, "  data     {} — {} samples{}, {} in, {} out\n", data.description, data.n,
             held_out ? fmt::format(" ({} held out for validation by seed {}, evaluated every {} epoch(s))", held_out,
                                    cfg.seed, cfg.data.validation_every)
                      : std::string(),
             data.inputs, data.outputs);
  fmt::print(out, "  model    {} {} (output {}), {} init, {} parameters, {:.1f} MFLOP/epoch\n", layers,
             activation_name(cfg.model.activation), activation_name(cfg.model.output_activation),
             init_name(cfg.model.init), cfg.model_spec().param_count(),
             6.0 * double(cfg.model_spec().macs_per_sample()) * data.n / 1e6);
  fmt::print(out, "  training {} lr {} · {} epochs · {} · seed {} · fp32\n", cfg.optimizer.type, cfg.optimizer.lr,
             cfg.train.epochs,
             batch_samples(cfg.train.batch_size, data.n) == data.n
                 ? std::string("full batch")
                 : fmt::format("batch {}{}", cfg.train.batch_size, cfg.train.shuffle ? " shuffled" : ""),
             cfg.seed);
  fmt::print(out, "  device   {} · CPU {} ({} hardware threads{}) · {}\n", to_string(cfg.device),
             context.value("cpu_model", std::string("-")), context.value("hardware_threads", 0),
             load_average_note(context.value("load_average_1min", -1.0)), context.value("date_utc", std::string("-")));
  if (gpu && gpu->available)
    fmt::print(out, "  gpu      {}{}\n", gpu->name,
               gpu->simulated ? std::string(" — SIMULATED: ") + kSimulatedNote : std::string());
  fmt::print(out, "  timing   {} warm-up epoch(s) excluded{} · {} repeat(s)\n", warmup_epochs_of(cfg),
             warmup_epochs_of(cfg) < cfg.timing.warmup_epochs
                 ? fmt::format(" (timing.warmup_epochs {} capped by train.epochs)", cfg.timing.warmup_epochs)
                 : std::string(),
             cfg.timing.repeats);
  if (cfg.train.target_loss)
    fmt::print(out, "  target   loss {:g}: the first epoch at or below it, timed at chunk boundaries\n",
               *cfg.train.target_loss);
  if (!bi.optimized)
    fmt::print(out, "  warning  this build is not optimised ({}): timings are not representative\n", bi.build_type);
  std::fflush(out);
}

std::string loss_chart(const std::vector<const RunResult*>& runs, int width, int height) {
  static const char kSym[] = {'*', 'o', '+', 'x'};
  double lo = INFINITY, hi = -INFINITY;
  size_t n = 0;
  for (const auto* r : runs) {
    for (float v : r->losses)
      if (std::isfinite(v) && v > 0) lo = std::min(lo, double(v)), hi = std::max(hi, double(v));
    n = std::max(n, r->losses.size());
  }
  if (n == 0 || !(lo <= hi)) return "  (no finite losses to chart)\n";
  if (hi / lo < 1.0001) hi = lo * 1.0001;
  const double llo = std::log10(lo), lhi = std::log10(hi);
  std::vector<std::string> grid(size_t(height), std::string(size_t(width), ' '));
  for (size_t k = 0; k < runs.size(); ++k) {
    const auto& L = runs[k]->losses;
    for (int c = 0; c < width; ++c) {
      const size_t e0 = size_t(double(c) * n / width), e1 = std::max(e0 + 1, size_t(double(c + 1) * n / width));
      // The column shows the mean log-loss of its epochs.
      double s = 0;
      int cnt = 0;
      for (size_t e = e0; e < e1 && e < L.size(); ++e)
        if (std::isfinite(L[e]) && L[e] > 0) s += std::log10(double(L[e])), ++cnt;
      if (!cnt) continue;
      const double f = (s / cnt - llo) / (lhi - llo);
      const int row = height - 1 - std::clamp(int(std::lround(f * (height - 1))), 0, height - 1);
      char& cell = grid[size_t(row)][size_t(c)];
      cell = cell == ' ' || cell == kSym[k % 4] ? kSym[k % 4] : '#';
    }
  }
  std::string s;
  for (int r = 0; r < height; ++r) {
    const double v = std::pow(10.0, lhi - (lhi - llo) * r / (height - 1));
    const std::string label = (r == 0 || r == height - 1 || r == height / 2) ? fmt::format("{:9.3g}", v) : "";
    s += fmt::format("  {:>9} |{}\n", label, grid[size_t(r)]);
  }
  s += fmt::format("  {:>9} +{}\n", "", std::string(size_t(width), '-'));
  s += fmt::format("  {:>9}  1{:>{}}\n", "epoch", n, width - 1);
  std::string legend = "  ";
  for (size_t k = 0; k < runs.size(); ++k)
    legend += fmt::format("{} {}   ", kSym[k % 4], to_string(runs[k]->device));
  if (runs.size() > 1) legend += "# overlap";
  s += legend + "   (log scale)\n";
  return s;
}

// The timing table: one row per run, its repeats, details, GPU set-up and target.
static void print_timing(std::FILE* out, const std::vector<RunResult>& runs, const char* b, const char* e) {
  fmt::print(out, "\n{}Timing{} (training only; set-up and warm-up reported apart)\n", b, e);
  fmt::print(out, "  {:<6} {:<14} {:>7} {:>12} {:>12} {:>13} {:>11} {:>11} {:>11}\n", "device", "backend", "threads",
             "train", "per epoch", "samples/s", "set-up", "transfer", "warm-up");
  for (const auto& r : runs) {
    fmt::print(out, "  {:<6} {:<14} {:>7} {:>12} {:>12} {:>13.4g} {:>11} {:>11} {:>11}\n", to_string(r.device), r.backend,
               r.threads, seconds_text(r.train_seconds),
               seconds_text(r.seconds_per_epoch()), r.samples_per_second(),
               seconds_text(r.setup_seconds), seconds_text(r.setup.transfer_seconds),
               seconds_text(r.warmup_seconds));
    if (r.train_seconds_per_repeat.size() > 1) {
      const auto [mn, mx] = std::minmax_element(r.train_seconds_per_repeat.begin(), r.train_seconds_per_repeat.end());
      fmt::print(out, "  {:<6} {} repeats: median {}, min {}, max {}{}\n", "", r.train_seconds_per_repeat.size(),
                 seconds_text(r.train_seconds), seconds_text(*mn), seconds_text(*mx),
                 run_spread_wide(r) ? fmt::format(" — spread {} (max/min > {:g}): other work disturbed the timing, "
                                                  "the median is uncertain",
                                                  spread_text(run_spread(r)), kSpreadLimit)
                                    : std::string());
    }
    if (r.simulated) fmt::print(out, "  {:<6} SIMULATED: {}\n", "", kSimulatedNote);
    fmt::print(out, "  {:<6} {}\n", "", r.details);
    if (r.device == Device::gpu)  // docs/DESIGN.md §7: each one-off GPU cost apart from the timed epochs
      fmt::print(out, "  {:<6} set-up: context {}, handles {}, modules {}, buffers {}, data copy {}\n", "",
                 seconds_text(r.setup.context_seconds), seconds_text(r.setup.handle_seconds),
                 seconds_text(r.setup.module_seconds), seconds_text(r.setup.alloc_seconds),
                 seconds_text(r.setup.transfer_seconds));
    if (r.nondeterministic) fmt::print(out, "  {:<6} warning: repeats gave different loss curves\n", "");
    if (r.target) fmt::print(out, "  {:<6} {}\n", "", target_text(*r.target, r.epochs_done));
  }
}

// The loss checkpoints (every log_every epochs, the first and the last), the CPU/GPU
// agreement and the chart.
static void print_loss_table(std::FILE* out, const Config& cfg, const std::vector<RunResult>& runs, const char* b,
                             const char* e) {
  const RunResult* cpu = find_device(runs, Device::cpu);
  const RunResult* gpu = find_device(runs, Device::gpu);
  size_t n = 0;
  for (const auto& r : runs) n = std::max(n, r.losses.size());
  if (n > 0) {
    fmt::print(out, "\n{}Loss{} (MSE; epoch = loss before that epoch's update)\n  {:>8}", b, e, "epoch");
    for (const auto& r : runs) fmt::print(out, " {:>14}", to_string(r.device));
    if (runs.size() == 2) fmt::print(out, " {:>12}", "rel. diff");
    fmt::print(out, "\n");
    std::vector<size_t> rows{1};
    for (size_t ep = size_t(cfg.train.log_every); ep < n; ep += size_t(cfg.train.log_every))
      if (ep > 1) rows.push_back(ep);  // log_every 1: epoch 1 is the first row already
    if (rows.back() != n) rows.push_back(n);
    // Keep the table readable: at most ~21 rows, evenly thinned.
    if (rows.size() > 21) {
      std::vector<size_t> t;
      for (size_t k = 0; k < 20; ++k) t.push_back(rows[k * (rows.size() - 1) / 20]);
      t.push_back(rows.back());
      rows = t;
    }
    for (size_t ep : rows) {
      fmt::print(out, "  {:>8}", ep);
      for (const auto& r : runs)
        fmt::print(out, " {:>14}", ep <= r.losses.size() ? fmt::format("{:.6g}", r.losses[ep - 1]) : "-");
      if (runs.size() == 2 && ep <= runs[0].losses.size() && ep <= runs[1].losses.size()) {
        const double x = runs[0].losses[ep - 1], y = runs[1].losses[ep - 1];
        fmt::print(out, " {:>12.2e}", std::fabs(x - y) / std::max({std::fabs(x), std::fabs(y), 1e-30}));
      }
      fmt::print(out, "\n");
    }
    if (cpu && gpu) {
      const CurveComparison c = compare_curves(cpu->losses, gpu->losses);
      fmt::print(out,
                 "  CPU and GPU curves agree within 1e-4 relative up to epoch {} of {}; largest gap {:.3g} "
                 "(relative {:.3g}).\n  Later divergence is expected: fp32 sums in a different order take a "
                 "different path in chaotic training (docs/DESIGN.md §9).\n",
                 c.agree_until_epoch, c.compared_epochs, c.max_abs_diff, c.max_rel_diff);
    }
    std::vector<const RunResult*> ptrs;
    for (const auto& r : runs) ptrs.push_back(&r);
    fmt::print(out, "\n{}", loss_chart(ptrs));
  }
}

// The trained model's loss beside the last epoch's, the best epoch, and the held-out loss.
static void print_model_losses(std::FILE* out, const std::vector<RunResult>& runs, const char* b, const char* e) {
  bool any = false;
  for (const auto& r : runs) any = any || !r.losses.empty();
  if (!any) return;
  fmt::print(out, "\n{}Trained model{} (model_loss: its MSE after the last update; the last epoch's loss is before "
                  "it)\n", b, e);
  for (const auto& r : runs) {
    if (r.losses.empty()) continue;
    const BestEpoch best = best_epoch(r.losses);
    const std::string model = std::isfinite(r.model_loss) ? fmt::format("{:.6g}", r.model_loss)
                                                          : "not evaluated (" + r.model_loss_note + ")";
    fmt::print(out, "  {:<6} model loss {} · last epoch's loss {:.6g} (epoch {}) · best epoch {}: {:.6g}\n",
               to_string(r.device), model, r.losses.back(), r.losses.size(), best.epoch, best.loss);
    if (r.validation_every > 0) {
      const BestEpoch vbest = best_epoch(r.val_losses);
      fmt::print(out, "  {:<6} validation ({} held-out samples, every {} epoch(s)): model {} · best {:.6g} at epoch {}\n",
                 "", r.validation_samples, r.validation_every,
                 std::isfinite(r.model_validation_loss) ? fmt::format("{:.6g}", r.model_validation_loss)
                                                        : std::string("not evaluated"),
                 vbest.loss, vbest.epoch);
    }
  }
}

void print_results(std::FILE* out, const Config& cfg, const std::vector<RunResult>& runs, bool color) {
  const char* b = color ? "\033[1m" : "";
  const char* e = color ? "\033[0m" : "";
  print_timing(out, runs, b, e);
  const RunResult* cpu = find_device(runs, Device::cpu);
  const RunResult* gpu = find_device(runs, Device::gpu);
  if (cpu && gpu && !speedup_withheld(cpu, gpu).empty()) {
    fmt::print(out, "  speed-up: none: {}\n", speedup_withheld(cpu, gpu));
  } else if (cpu && gpu) {
    const double sp = cpu->train_seconds / gpu->train_seconds;
    fmt::print(out, "  speed-up: GPU is {:.2f}× {} than CPU for this experiment\n", sp >= 1 ? sp : 1 / sp,
               sp >= 1 ? "faster" : "slower");
  }
  print_loss_table(out, cfg, runs, b, e);
  print_model_losses(out, runs, b, e);
  for (const auto& r : runs) {
    if (r.diverged_epoch)
      fmt::print(out, "\n{}: training diverged: loss is {} at epoch {}{}\n", to_string(r.device), r.losses.back(),
                 r.diverged_epoch,
                 r.exploded ? fmt::format(", above {:.4g} ({:g} x the larger of the first epoch's loss and the "
                                          "targets' variance)", r.explode_threshold, kExplodeFactor)
                            : std::string());
    if (r.interrupted && r.interrupted_repeat)
      fmt::print(out, "\n{}: interrupted before timing repeat {} finished (left out of the times), after epoch {}\n",
                 to_string(r.device), r.interrupted_repeat, r.epochs_done);
    else if (r.interrupted)
      fmt::print(out, "\n{}: interrupted {}\n", to_string(r.device),
                 r.epochs_done ? fmt::format("after epoch {}", r.epochs_done) : std::string("during the warm-up"));
  }
  std::fflush(out);
}

Progress::Progress(bool quiet, bool tty) : quiet_(quiet), tty_(tty) {}

void Progress::begin(const std::string& label, int total) {
  label_ = label;
  start_ = now_seconds();
  last_print_ = -1;
  if (!quiet_ && !tty_) fmt::print(stderr, "{}: training {} epochs\n", label_, total);
}

void Progress::update(int done, int total, float loss) {
  if (quiet_) return;
  const double t = now_seconds();
  if (tty_) {
    const int width = 30;
    const int filled = total ? int(double(done) / total * width) : width;
    fmt::print(stderr, "\r{} [{}{}] {}/{} loss {:.6g}  ", label_, std::string(size_t(filled), '#'),
               std::string(size_t(width - filled), '.'), done, total, loss);
    std::fflush(stderr);
  } else if (done == total || last_print_ < 0 || t - last_print_ >= 2.0) {
    fmt::print(stderr, "{}: epoch {}/{} loss {:.6g} ({:.1f} s)\n", label_, done, total, loss, t - start_);
    last_print_ = t;
  }
}

void Progress::warmup_begin(int epochs) {
  if (quiet_) return;
  fmt::print(stderr, "{}: warm-up: {} epoch(s), not timed, then the initial weights are restored\n", label_, epochs);
  std::fflush(stderr);
}

void Progress::warmup_end(int epochs, double seconds) {
  if (quiet_) return;
  fmt::print(stderr, "{}: warm-up ran {} epoch(s) in {}\n", label_, epochs, seconds_text(seconds));
  start_ = now_seconds();  // the progress line's clock counts training only
}

void Progress::end() {
  if (!quiet_ && tty_) fmt::print(stderr, "\n");
}

}  // namespace nntrain
