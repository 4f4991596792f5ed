// sweep_plan.cpp — see sweep_plan.hpp.
#include "sweep_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "errors.hpp"

namespace nntrain {

using nlohmann::json;

bool config_keys_overlap(const std::string& a, const std::string& b) {
  return a == b || a.rfind(b + ".", 0) == 0 || b.rfind(a + ".", 0) == 0;
}

std::vector<SweepSpec> parse_grid(const std::vector<std::string>& args) {
  if (args.empty()) throw UsageError("sweep: give at least one --grid key.path=v1,v2,...");
  std::vector<SweepSpec> axes;
  for (const std::string& arg : args) {
    SweepSpec s = parse_sweep(arg, "--grid");
    for (const SweepSpec& earlier : axes)
      if (config_keys_overlap(earlier.key, s.key))
        throw UsageError(earlier.key == s.key
                             ? "--grid " + s.key + " is given twice: put all its values in one --grid"
                             : "--grid " + s.key + " and --grid " + earlier.key + " set the same config value");
    axes.push_back(std::move(s));
  }
  return axes;
}

std::vector<std::vector<size_t>> grid_points(const std::vector<SweepSpec>& axes) {
  std::vector<std::vector<size_t>> out;
  if (axes.empty()) return out;
  std::vector<size_t> at(axes.size(), 0);
  while (true) {
    out.push_back(at);
    // Odometer: the last axis turns fastest.
    size_t k = axes.size();
    while (k > 0) {
      --k;
      if (++at[k] < axes[k].texts.size()) break;
      at[k] = 0;
      if (k == 0) return out;
    }
  }
}

std::vector<std::string> point_overrides(const std::vector<SweepSpec>& axes, const std::vector<size_t>& at) {
  std::vector<std::string> o;
  for (size_t k = 0; k < axes.size(); ++k) o.push_back(axes[k].override_for(at[k]));
  return o;
}

std::string point_label(const std::vector<SweepSpec>& axes, const std::vector<size_t>& at) {
  std::string s;
  for (const std::string& o : point_overrides(axes, at)) s += (s.empty() ? "" : ", ") + o;
  return s;
}

int point_dir_digits(size_t n_points) {
  int d = 1;
  for (size_t v = n_points > 0 ? n_points - 1 : 0; v >= 10; v /= 10) ++d;
  return std::max(3, d);
}

std::string point_dir(size_t index, size_t n_points) {
  return fmt::format("points/{:0{}}", index, point_dir_digits(n_points));
}

bool run_complete(const json& run) {
  if (!run.is_object() || !run.contains("epochs") || !run.contains("epochs_requested")) return false;
  const json& done = run.at("epochs");
  const json& asked = run.at("epochs_requested");
  return done.is_number_integer() && asked.is_number_integer() && asked.get<long>() > 0 && done == asked;
}

bool point_finished(const json* summary, size_t devices) {
  // A result collect can read (point_rows): a status without its runs (a truncated or
  // hand-edited file) is no result, or a resume would skip the point collect calls failed.
  if (!summary || !summary->is_object() || !summary->contains("runs") || !summary->at("runs").is_array()) return false;
  const json& runs = summary->at("runs");
  if (runs.empty() || !std::all_of(runs.begin(), runs.end(), [](const json& r) { return r.is_object(); })) return false;
  const std::string s = summary->value("status", "");
  if (s == "diverged") return true;  // the devices after it never run
  const size_t all = std::max<size_t>(devices, 1);
  if (s == "ok") return runs.size() >= all;
  return s == "interrupted" && runs.size() >= all && std::all_of(runs.begin(), runs.end(), run_complete);
}

namespace {

std::optional<double> number_at(const json& o, const char* key) {
  if (o.is_object() && o.contains(key) && o.at(key).is_number()) return o.at(key).get<double>();
  return std::nullopt;
}

std::string text_at(const json* o, const char* key) {
  if (o && o->is_object() && o->contains(key) && o->at(key).is_string()) return o->at(key).get<std::string>();
  return "";
}

// How the point's time was taken: alone on this machine, beside other points, or on a node.
// Beside how many: the most points that ran at once during it (points_at_once), so a point
// no other point ran beside says so; without those times (older files), the launcher's N.
std::string timing_of(const json* run_info) {
  if (!run_info) return "";
  if (text_at(run_info, "launcher") == "slurm") return "slurm";
  const int jobs = run_info->value("jobs", 1);
  const int at_once = run_info->contains("points_at_once") ? run_info->value("points_at_once", 0) : 0;
  const int n = at_once > 0 ? at_once : jobs;
  return n > 1 ? fmt::format("concurrent:{}", n) : "alone";
}

// A local point's run: [start, end) in Unix seconds (end infinite when not recorded: the run
// is still going). `info` is a sweep-run.json, or one of its "earlier_runs".
struct Span {
  std::string host;
  double start = 0, end = 0;
};

std::optional<Span> span_of(const json* info) {
  if (!info || !info->is_object() || text_at(info, "launcher") != "local") return std::nullopt;
  const std::optional<double> start = number_at(*info, "started_unix");
  if (!start) return std::nullopt;
  const std::optional<double> end = number_at(*info, "finished_unix");
  return Span{text_at(info, "host"), *start, end ? std::max(*end, *start) : HUGE_VAL};
}

SweepRow base_row(const json& point, const json* run_info) {
  SweepRow r;
  r.point = point.at("index").get<size_t>();
  for (const auto& v : point.at("values")) r.values.push_back(v);
  r.timing = timing_of(run_info);
  r.host = text_at(run_info, "host");
  return r;
}

SweepRow run_row(const json& point, const json* run_info, const json& run) {
  SweepRow r = base_row(point, run_info);
  r.status = run.value("status", "failed");
  r.device = text_at(&run, "device");
  r.backend = text_at(&run, "backend");
  r.threads = run.value("threads", 0);
  r.epochs = run.value("epochs", 0);
  r.final_loss = number_at(run, "final_loss");
  r.train_seconds = number_at(run, "train_seconds");
  if (run.contains("target") && run.at("target").is_object()) {
    r.target = run.at("target");
    if (r.target.value("reached", false)) {
      r.target_seconds = number_at(r.target, "seconds");
      r.target_kind = text_at(&r.target, "seconds_kind");
    } else r.note = fmt::format("target {} not reached", r.target.value("loss", json()).dump());
  }
  if (r.status == "diverged" && run.contains("diverged_epoch"))
    r.note = fmt::format("diverged at epoch {}", run.at("diverged_epoch").dump());
  if (r.status == "interrupted" && run_complete(run)) {
    // The stop came after the last chunk: every epoch trained, the model written.
    r.status = "ok";
    r.note = "the stop came after its last epoch";
  } else if (r.status == "interrupted") {
    r.note = fmt::format("interrupted after epoch {}", r.epochs);
  }
  if (run.value("simulated", false))  // GPGPU-Sim's clock: its times are no measurement
    r.note += std::string(r.note.empty() ? "" : "; ") + "simulated GPU: its times are not measurements";
  return r;
}

}  // namespace

std::vector<SweepRow> point_rows(const json& point, const json* summary, const json* run_info,
                                 const std::string& log_error) {
  std::vector<SweepRow> rows;
  if (summary && summary->is_object() && summary->contains("runs") && summary->at("runs").is_array()) {
    for (const json& run : summary->at("runs"))
      if (run.is_object()) rows.push_back(run_row(point, run_info, run));  // (a hand-edited file's `1`: no run)
    if (summary->value("status", "") == "failed") {
      SweepRow r = base_row(point, run_info);
      r.status = "failed";
      r.device = text_at(summary, "failed_device");
      r.note = text_at(summary, "error");
      rows.push_back(r);
    }
    if (!rows.empty()) {
      // A device the run never reached (an earlier one was interrupted or failed): its own
      // row, so the point is not counted finished on the first device's result alone.
      // After a divergence the next device never runs, and a rerun diverges again: that
      // device's row is the point's result too (point_finished agrees), not "missing".
      const std::string status = summary->value("status", "");
      for (const auto& d : point.value("devices", json::array())) {
        if (!d.is_string() || std::any_of(rows.begin(), rows.end(), [&](const SweepRow& r) { return r.device == d; }))
          continue;
        SweepRow r = base_row(point, run_info);
        r.device = d.get<std::string>();
        r.status = status == "interrupted" ? "interrupted" : status == "diverged" ? "diverged" : "missing";
        r.note = status == "interrupted" ? "not run: the stop came before this device"
                 : status == "diverged"  ? "not run: an earlier device diverged"
                                         : "not run: an earlier device did not finish";
        rows.push_back(r);
      }
      return rows;
    }
  }
  // No result: one row per device the point was to train, saying why.
  const bool ended = run_info && run_info->contains("exit_code") && run_info->at("exit_code").is_number();
  for (const auto& d : point.value("devices", json::array({"cpu"}))) {
    SweepRow r = base_row(point, run_info);
    r.device = d.get<std::string>();
    if (ended && run_info->contains("signal")) {
      // The launcher's SIGKILL after a second stop signal: cut off, not a failure of its own.
      r.status = "interrupted";
      r.note = fmt::format("killed by signal {} before it wrote a result", run_info->at("signal").dump());
    } else if (ended && run_info->at("exit_code") == kExitInterrupted) {
      // Stopped while its data loaded: train writes nothing then (a stop after that leaves
      // a summary). Not a failure: a resume runs it, as any interrupted point.
      r.status = "interrupted";
      r.note = "stopped before training started (nothing written)";
    } else if (ended) {
      r.status = "failed";
      r.note = !log_error.empty() ? log_error
                                  : fmt::format("exited with code {} and {}", run_info->at("exit_code").dump(),
                                                summary ? "a summary.json without its runs" : "no summary.json");
    } else if (run_info) {
      r.status = "missing";
      r.note = fmt::format("started{} at {}, no result (still running, or killed)",
                           r.host.empty() ? "" : " on " + r.host, text_at(run_info, "started_utc"));
    } else {
      r.status = "missing";
      r.note = summary ? "summary.json unreadable" : "not run";
    }
    rows.push_back(r);
  }
  return rows;
}

SweepTable make_table(const std::vector<std::string>& keys, std::vector<SweepRow> rows) {
  SweepTable t;
  t.keys = keys;
  t.rows = std::move(rows);
  bool diverged = false, unfinished = false;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const SweepRow& r = t.rows[i];
    if (r.status == "diverged") diverged = true;
    else if (r.status != "ok") unfinished = true;
    if (r.status == "ok" && r.final_loss && (!t.best || *r.final_loss < *t.rows[*t.best].final_loss)) t.best = i;
  }
  t.exit_code = unfinished ? kExitIncomplete : diverged ? kExitDiverged : kExitOk;
  return t;
}

json status_counts(const SweepTable& t) {
  json c = json::object();
  for (const char* s : {"ok", "diverged", "interrupted", "failed", "missing"}) c[s] = 0;
  for (const SweepRow& r : t.rows) c[r.status] = c.value(r.status, 0) + 1;
  return c;
}

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// A swept value as written on the command line: a string without its JSON quotes.
std::string value_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string number_text(const std::optional<double>& v) { return v ? fmt::format("{}", *v) : ""; }

json number_json(const std::optional<double>& v) { return v && std::isfinite(*v) ? json(*v) : json(nullptr); }

json row_json(const SweepTable& t, const SweepRow& r) {
  json values = json::object();
  for (size_t k = 0; k < t.keys.size() && k < r.values.size(); ++k) values[t.keys[k]] = r.values[k];
  return {{"point", r.point},     {"values", values},     {"status", r.status},
          {"device", r.device},   {"backend", r.backend}, {"threads", r.threads},
          {"epochs", r.epochs},   {"final_loss", number_json(r.final_loss)},
          {"train_seconds", number_json(r.train_seconds)},
          {"time_to_target_seconds", number_json(r.target_seconds)}, {"target", r.target},
          {"timing", r.timing},   {"host", r.host},       {"note", r.note}};
}

}  // namespace

std::string results_csv(const SweepTable& t) {
  std::string out = "point";
  for (const auto& k : t.keys) out += "," + csv_field(k);
  out += ",status,device,backend,threads,epochs,final_loss,train_seconds,time_to_target_seconds,time_to_target_kind,"
         "timing,host,note\n";
  for (const SweepRow& r : t.rows) {
    out += std::to_string(r.point);
    for (const auto& v : r.values) out += "," + csv_field(value_text(v));
    out += fmt::format(",{},{},{},{},{},{},{},{},{},{},{},{}\n", r.status, csv_field(r.device), csv_field(r.backend),
                       r.threads, r.epochs, number_text(r.final_loss), number_text(r.train_seconds),
                       number_text(r.target_seconds), csv_field(r.target_kind), r.timing, csv_field(r.host),
                       csv_field(r.note));
  }
  return out;
}

json results_json(const SweepTable& t, const json& plan) {
  json rows = json::array();
  for (const SweepRow& r : t.rows) rows.push_back(row_json(t, r));
  return {{"format", "nntrain-sweep-results"},
          {"version", 1},
          {"name", plan.value("name", "")},
          {"keys", t.keys},
          {"points", plan.contains("points") ? plan.at("points").size() : 0},
          {"counts", status_counts(t)},
          {"complete", t.exit_code != kExitIncomplete},
          {"exit_code", t.exit_code},
          {"best", t.best ? row_json(t, t.rows[*t.best]) : json(nullptr)},
          {"rows", rows}};
}

std::vector<int> points_at_once(const std::vector<const json*>& run_infos) {
  // Every run: each point's latest (the one its row reports) and its earlier attempts.
  struct Run {
    Span span;
    size_t point;
    bool latest;
  };
  std::vector<Run> runs;
  for (size_t i = 0; i < run_infos.size(); ++i) {
    if (const auto s = span_of(run_infos[i])) runs.push_back({*s, i, true});
    if (run_infos[i] && run_infos[i]->is_object() && run_infos[i]->contains("earlier_runs") &&
        run_infos[i]->at("earlier_runs").is_array())
      for (const json& e : run_infos[i]->at("earlier_runs"))
        if (const auto s = span_of(&e)) runs.push_back({*s, i, false});
  }
  std::vector<int> most(run_infos.size(), 0);
  for (const Run& me_run : runs) {
    if (!me_run.latest) continue;
    const Span& me = me_run.span;
    // The other runs on this host that share an instant with this one (only they can
    // contain an instant of it; one that starts as this one starts counts even if this one
    // is empty).
    std::vector<const Span*> near;
    for (const Run& o : runs)
      if (&o != &me_run && o.span.host == me.host && (o.span.start < me.end || o.span.start == me.start) &&
          me.start < o.span.end)
        near.push_back(&o.span);
    // The count can only rise where some run starts: at this one's start or at another's
    // start inside it. At each such instant t: this run and the others with start <= t < end.
    std::vector<double> instants = {me.start};
    for (const Span* o : near)
      if (o->start > me.start) instants.push_back(o->start);
    int best = 1;
    for (const double t : instants) {
      int n = 1;
      for (const Span* o : near)
        if (o->start <= t && t < o->end) ++n;
      best = std::max(best, n);
    }
    most[me_run.point] = best;
  }
  return most;
}

}  // namespace nntrain
