// bench_worth.cpp — see bench_worth.hpp.
#include "bench_worth.hpp"

#include <fmt/format.h>

#include <set>

namespace nntrain {

using nlohmann::json;

namespace {

const Prices* prices_of(const BenchReport& r) { return r.prices ? &*r.prices : nullptr; }

bool both_priced(const BenchReport& r) {
  return r.prices && r.prices->has(Device::cpu) && r.prices->has(Device::gpu);
}

// The target of a finished run, or nullptr.
const TargetResult* ok_target(const RunResult* run) {
  return run && run->status() == "ok" && run->target ? &*run->target : nullptr;
}

double run_median(const RunResult& run) {
  return run.status() == "ok" && !run.train_seconds_per_repeat.empty() ? summarize(run.train_seconds_per_repeat).median
                                                                         : -1.0;
}

std::string loss_label(double loss) { return fmt::format("loss {:g}", loss); }

// "GPU 4.7× cheaper" / "GPU 2.1× dearer" from CPU cost / GPU cost.
std::string cost_ratio_text(double ratio) {
  if (ratio <= 0) return "-";
  if (ratio == 1) return "same cost";
  return ratio > 1 ? fmt::format("GPU {}\u00d7 cheaper", ratio_text(ratio))
                   : fmt::format("GPU {}\u00d7 dearer", ratio_text(1 / ratio));
}

// CPU cost / GPU cost for two times (> 0 both), or 0 without both prices.
double cost_ratio(const BenchReport& r, double cpu_seconds, double gpu_seconds) {
  if (!both_priced(r) || !(cpu_seconds > 0) || !(gpu_seconds > 0)) return 0.0;
  return cost_of(r.prices->cpu, cpu_seconds) / cost_of(r.prices->gpu, gpu_seconds);
}

std::string target_time_text(const TargetResult& t) {
  if (!t.reached) return "not reached";
  return seconds_text(t.seconds) + (t.measured ? "" : " (interpolated)");
}

std::string target_losses(const BenchReport& r) {
  std::set<double> losses;
  for (const auto& p : r.points)
    for (const auto& run : p.runs)
      if (run.target) losses.insert(run.target->loss);
  std::string s;
  for (double l : losses) s += (s.empty() ? "" : ", ") + fmt::format("{:g}", l);
  return s;
}

std::string prices_text(const Prices& p) {
  std::string s;
  for (const Device d : {Device::cpu, Device::gpu})
    if (p.has(d)) s += (s.empty() ? "" : ", ") + fmt::format("{} {:g}", to_string(d), p.of(d));
  return s + " " + p.unit() + " per hour";
}

}  // namespace

std::string money_text(double per_run, const Prices& prices) {
  return per_run < 0 ? std::string("-")
                     : fmt::format("{} {} per {} runs", engineering_text(per_run * kCostRuns), prices.unit(),
                                   runs_text());
}

std::string runs_text() {
  std::string s = std::to_string(kCostRuns);
  for (int at = int(s.size()) - 3; at > 0; at -= 3) s.insert(size_t(at), ",");
  return s;
}

double point_target_seconds(const BenchPoint& p, Device device) {
  const TargetResult* t = ok_target(find_run(p, device));
  return t && t->reached ? t->seconds : -1.0;
}

std::string point_target_text(const BenchPoint& p, Device device) {
  const TargetResult* t = ok_target(find_run(p, device));
  if (!t || !t->reached) return "-";
  return seconds_text(t->seconds) + (t->measured ? " " : "*");
}

std::string point_verdict(const BenchReport& r, const BenchPoint& p) {
  const double c = point_median(p, Device::cpu), g = point_median(p, Device::gpu);
  if (!r.both_devices || !(c > 0) || !(g > 0)) return "";
  return verdict_text(c, g, prices_of(r), "per run");
}

std::string point_target_verdict(const BenchReport& r, const BenchPoint& p) {
  const TargetResult* tc = ok_target(find_run(p, Device::cpu));
  const TargetResult* tg = ok_target(find_run(p, Device::gpu));
  if (!r.both_devices || !tc || !tg) return "";
  const std::string what = "to " + loss_label(tc->loss);
  if (tc->reached && tg->reached) {
    std::string s = verdict_text(tc->seconds, tg->seconds, prices_of(r), what);
    if (!tc->measured || !tg->measured) s += " (from an interpolated time to target)";
    return s;
  }
  if (tc->reached != tg->reached)
    return fmt::format("only {} reached {} in {} epochs", tc->reached ? "cpu" : "gpu", loss_label(tc->loss), p.epochs);
  return fmt::format("neither device reached {} in {} epochs", loss_label(tc->loss), p.epochs);
}

std::string cost_crossover_message(const BenchReport& r) {
  if (!both_priced(r)) return "not evaluated (needs --price for cpu and gpu)";
  return crossover_sentence(r, r.cost_crossover, "cheaper per run", "dearer",
                            "GPU never cheaper per run in this range at these prices");
}

json result_cost_json(const BenchReport& r, const RunResult& run) {
  if (!r.prices || !r.prices->has(run.device)) return nullptr;
  const double price = r.prices->of(run.device);
  const double median = run_median(run);
  json o = {{"price_per_hour", price},
            {"currency", r.prices->currency.empty() ? json(nullptr) : json(r.prices->currency)},
            {"per_run", median > 0 ? json(cost_of(price, median)) : json(nullptr)}};
  if (run.target) {
    const TargetResult* t = ok_target(&run);
    o["to_target"] = t && t->reached ? json(cost_of(price, t->seconds)) : json(nullptr);
  }
  return o;
}

void add_point_worth_json(const BenchReport& r, const BenchPoint& p, json& point) {
  if (!r.both_devices || (!r.prices && !r.has_target)) return;
  const double tc = point_target_seconds(p, Device::cpu), tg = point_target_seconds(p, Device::gpu);
  if (r.has_target) point["target_speedup"] = tc > 0 && tg > 0 ? json(tc / tg) : json(nullptr);
  if (r.prices) {
    const double cr = cost_ratio(r, point_median(p, Device::cpu), point_median(p, Device::gpu));
    point["cost_ratio"] = cr > 0 ? json(cr) : json(nullptr);
    if (r.has_target) {
      const double tr = cost_ratio(r, tc, tg);
      point["target_cost_ratio"] = tr > 0 ? json(tr) : json(nullptr);
    }
  }
  const std::string v = point_verdict(r, p), tv = point_target_verdict(r, p);
  point["verdict"] = v.empty() ? json(nullptr) : json(v);
  if (r.has_target) point["target_verdict"] = tv.empty() ? json(nullptr) : json(tv);
}

json cost_crossover_json(const BenchReport& r) {
  if (!r.both_devices || !both_priced(r)) return nullptr;
  const Crossover& c = r.cost_crossover;
  auto point_ref = [&](int pos) -> json {
    if (pos < 0) return nullptr;
    const BenchPoint& p = at_size_position(r, pos);
    return {{"point", p.index}, {"key", p.key.empty() ? json(nullptr) : json(p.key)}, {"value", p.value},
            {"samples", p.samples},
            {"cost_ratio", cost_ratio(r, point_median(p, Device::cpu), point_median(p, Device::gpu))}};
  };
  return {{"evaluated", c.evaluated},
          {"found", c.faster_from >= 0},
          {"message", cost_crossover_message(r)},
          {"gpu_cheaper_from", point_ref(c.faster_from)},
          {"first_gpu_cheaper", point_ref(c.first_faster)},
          {"interpolated_samples", c.interpolated_samples > 0 ? json(c.interpolated_samples) : json(nullptr)}};
}

std::string worth_run_header(const BenchReport& r) {
  std::string s;
  if (r.has_target) s += " time to target | target epoch |";
  if (r.prices) s += fmt::format(" cost per {} runs ({}) |", runs_text(), r.prices->unit());
  if (r.prices && r.has_target) s += fmt::format(" cost to target per {} runs ({}) |", runs_text(), r.prices->unit());
  return s;
}

std::string worth_run_align(const BenchReport& r) {
  return std::string(r.has_target ? "---:|---:|" : "") + (r.prices ? "---:|" : "") +
         (r.prices && r.has_target ? "---:|" : "");
}

std::string worth_run_cells(const BenchReport& r, const RunResult& run) {
  std::string s;
  const TargetResult* t = ok_target(&run);
  if (r.has_target) {
    s += " " + (t ? target_time_text(*t) : std::string("-")) + " |";
    s += " " + (t && t->reached ? std::to_string(t->epoch) : std::string("-")) + " |";
  }
  const bool priced = r.prices && r.prices->has(run.device);
  const auto cost_cell = [&](double seconds) {
    return priced && seconds > 0
               ? fmt::format(" {} |", engineering_text(cost_of(r.prices->of(run.device), seconds) * kCostRuns))
               : std::string(" - |");
  };
  if (r.prices) s += cost_cell(run_median(run));
  if (r.prices && r.has_target) s += cost_cell(t && t->reached ? t->seconds : -1.0);
  return s;
}

std::string worth_point_header(const BenchReport& r) {
  std::string s;
  if (r.has_target) s += " speed-up to target |";
  if (r.prices) s += " cost per run |";
  if (r.prices || r.has_target) s += " verdict |";
  if (r.has_target) s += " verdict to target |";
  if (r.prices) s += " crossover |";
  return s;
}

std::string worth_point_align(const BenchReport& r) {
  std::string s;
  if (r.has_target) s += "---:|";
  if (r.prices) s += "---|";
  if (r.prices || r.has_target) s += "---|";
  if (r.has_target) s += "---|";
  if (r.prices) s += "---|";
  return s;
}

std::string worth_point_cells(const BenchReport& r, int pos) {
  const BenchPoint& p = at_size_position(r, pos);
  const double tc = point_target_seconds(p, Device::cpu), tg = point_target_seconds(p, Device::gpu);
  std::string s;
  if (r.has_target) {
    const double sp = tc > 0 && tg > 0 ? tc / tg : 0.0;
    s += " " + (sp <= 0 ? std::string("-")
                        : fmt::format("GPU {}\u00d7 {}", ratio_text(sp >= 1 ? sp : 1 / sp), sp >= 1 ? "faster" : "slower")) +
         " |";
  }
  if (r.prices)
    s += " " + cost_ratio_text(cost_ratio(r, point_median(p, Device::cpu), point_median(p, Device::gpu))) + " |";
  // A verdict at a point whose repeats disagree is marked where it is read.
  const std::string doubt = point_uncertainty(p).empty() ? "" : "**uncertain:** ";
  const auto or_dash = [&](const std::string& t) { return t.empty() ? std::string("-") : doubt + t; };
  if (r.prices || r.has_target) s += " " + or_dash(point_verdict(r, p)) + " |";
  if (r.has_target) s += " " + or_dash(point_target_verdict(r, p)) + " |";
  if (r.prices) {
    std::string mark;
    if (r.crossover.faster_from == pos) mark = "**GPU faster from here**";
    if (r.cost_crossover.faster_from == pos) mark += std::string(mark.empty() ? "" : "; ") + "**GPU cheaper from here**";
    s += " " + mark + " |";
  }
  return s;
}

std::string worth_markdown_context(const BenchReport& r) {
  std::string s;
  if (r.has_target)
    s += fmt::format("- time to target (loss {}): the first epoch whose loss is at or below it, and the device time of "
                     "the epochs up to it, read at a chunk boundary (median over the repeats that had one); "
                     "\"(interpolated)\" marks a time interpolated within the chunk that holds the epoch\n",
                     target_losses(r));
  if (r.prices)
    s += fmt::format("- prices: {} (as given); each cost is price × a measured median time, shown per {} runs, "
                     "and each ratio divides two of them: arithmetic, not a measurement\n",
                     prices_text(*r.prices), runs_text());
  return s;
}

std::string worth_markdown_footer(const BenchReport& r) {
  if (!r.prices || !r.both_devices) return "";
  return fmt::format("\n**Cost crossover** (at {}): {}\n", prices_text(*r.prices), cost_crossover_message(r));
}

void print_run_worth(std::FILE* out, const BenchReport& r, const RunResult& run) {
  if (run.target) {
    const TargetResult& t = *run.target;
    if (!t.reached)
      fmt::print(out, "  {:<6} to {}: not reached in {} epochs\n", "", loss_label(t.loss), run.epochs_done);
    else if (t.measured)
      fmt::print(out, "  {:<6} to {}: {} at epoch {} (measured: median of {} clock reading(s) at that epoch)\n", "",
                 loss_label(t.loss), seconds_text(t.seconds), t.epoch, t.readings.size());
    else
      fmt::print(out, "  {:<6} to {}: {} at epoch {} (interpolated within epochs {}-{}, measured {} .. {})\n", "",
                 loss_label(t.loss), seconds_text(t.seconds), t.epoch, t.bracket_from + 1, t.bracket_to,
                 seconds_text(t.bracket_from_seconds), seconds_text(t.bracket_to_seconds));
  }
  if (r.prices && r.prices->has(run.device) && run_median(run) > 0) {
    const double price = r.prices->of(run.device);
    const TargetResult* t = ok_target(&run);
    fmt::print(out, "  {:<6} cost: {}{}\n", "", money_text(cost_of(price, run_median(run)), *r.prices),
               t && t->reached ? ", " + money_text(cost_of(price, t->seconds), *r.prices) + " to target" : "");
  }
}

void print_point_worth(std::FILE* out, const BenchReport& r, const BenchPoint& p) {
  if (!r.both_devices) return;
  const std::string doubt = point_uncertainty(p).empty() ? "" : " (uncertain)";
  if (r.prices) {
    const std::string v = point_verdict(r, p);
    if (!v.empty()) fmt::print(out, "  verdict{}: {}\n", doubt, v);
  }
  const std::string tv = point_target_verdict(r, p);
  if (!tv.empty()) fmt::print(out, "  to target{}: {}\n", doubt, tv);
}

void print_worth_header(std::FILE* out, const BenchReport& r) {
  if (r.has_target)
    fmt::print(out, "  target   loss {}: time to the first epoch at or below it (device clock at chunk boundaries)\n",
               target_losses(r));
  if (r.prices)
    fmt::print(out, "  prices   {}: costs are price × measured time (arithmetic)\n", prices_text(*r.prices));
}

void print_worth_footer(std::FILE* out, const BenchReport& r, const char* bold, const char* end) {
  if (r.prices && r.both_devices) fmt::print(out, "{}Cost crossover{}: {}\n", bold, end, cost_crossover_message(r));
}

}  // namespace nntrain
