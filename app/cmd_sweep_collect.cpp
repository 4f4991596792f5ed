// cmd_sweep_collect.cpp — `sweep --collect DIR`: one table over every point of the plan,
// whatever launcher ran it and wherever: results.csv, results.json and the printed table.
// A point without a result is a row saying why (failed: the error line of its log; missing:
// never started, or started and not finished), never dropped; the exit code says whether
// every point finished (core/sweep_plan make_table).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "bench_report.hpp"
#include "cmd_sweep.hpp"
#include "errors.hpp"
#include "fileio.hpp"
#include "sweep_plan.hpp"

namespace nntrain {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The last "nntrain: error: ..." (or internal error) line of a point's log, without the prefix.
std::string log_error(const std::string& file) {
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line)) {
    for (const char* prefix : {"nntrain: error: ", "nntrain: internal error: "})
      if (line.rfind(prefix, 0) == 0) last = line.substr(std::char_traits<char>::length(prefix));
  }
  return last;
}

std::string cell_value(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// bench's formatter: a time under 1 ms in us (a tiny point's training once showed "0.00 ms").
std::string cell_seconds(const std::optional<double>& s) { return s ? seconds_text(*s) : ""; }

void print_table(const SweepTable& t) {
  std::vector<std::string> head = {"point"};
  head.insert(head.end(), t.keys.begin(), t.keys.end());
  for (const char* h : {"status", "device", "backend", "final loss", "train time", "to target", "timing", "host", "note"})
    head.emplace_back(h);
  std::vector<std::vector<std::string>> cells;
  for (const SweepRow& r : t.rows) {
    std::vector<std::string> c = {std::to_string(r.point)};
    for (const auto& v : r.values) c.push_back(cell_value(v));
    c.push_back(r.status);
    c.push_back(r.device);
    c.push_back(r.backend);
    c.push_back(r.final_loss ? fmt::format("{:.6g}", *r.final_loss) : "");
    c.push_back(cell_seconds(r.train_seconds));
    c.push_back(cell_seconds(r.target_seconds) + (r.target_kind == "interpolated" ? " (interpolated)" : ""));
    c.push_back(r.timing);
    c.push_back(r.host);
    c.push_back(r.note);
    cells.push_back(std::move(c));
  }
  std::vector<size_t> w(head.size());
  for (size_t k = 0; k < head.size(); ++k) {
    w[k] = head[k].size();
    for (const auto& c : cells) w[k] = std::max(w[k], c[k].size());
  }
  auto line = [&](const std::vector<std::string>& c) {
    std::string s;
    for (size_t k = 0; k < c.size(); ++k) s += (k ? "  " : "") + (k + 1 < c.size() ? fmt::format("{:<{}}", c[k], w[k]) : c[k]);
    fmt::print("{}\n", s);
  };
  line(head);
  for (const auto& c : cells) line(c);
}

// This process's argv (/proc/self/cmdline: NUL-separated words); empty when unreadable.
std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> words;
  std::string w;
  while (std::getline(in, w, '\0')) words.push_back(w);
  return words;
}

}  // namespace

void record_launch(const SweepPlan& plan, const SweepArgs& a) {
  try {
    const std::vector<std::string> argv = own_command_line();
    if (argv.empty()) return;
    std::string resume;
    for (const std::string& w : argv)
      if (w != "--dry-run") resume += (resume.empty() ? "" : " ") + shell_word(w);
    if (a.out.empty()) resume += " --out " + shell_word(plan.dir);
    const json launch = {{"command", argv}, {"cwd", fs::current_path().string()}, {"resume", resume}};
    write_file_atomic(plan.dir + "/launch.json", launch.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  } catch (const std::exception&) {
  }
}

std::string resume_command(const std::string& dir) {
  const json launch = read_json_or_null(dir + "/launch.json");
  if (launch.is_object() && launch.contains("resume") && launch.at("resume").is_string()) {
    const std::string cwd = launch.value("cwd", "");
    std::error_code ec;
    const bool here = cwd.empty() || fs::equivalent(cwd, fs::current_path(), ec);
    return (here ? "" : "cd " + shell_word(cwd) + " && ") + launch.at("resume").get<std::string>();
  }
  return "the sweep's command again, with --out " + shell_word(dir);
}

int collect_sweep(const std::string& dir, bool print) {
  const SweepPlan plan = read_plan(dir);
  std::vector<std::string> keys;
  for (const auto& ax : plan.json.at("grid")) keys.push_back(ax.at("key").get<std::string>());
  // Every point's sweep-run.json first: which points ran at once is known only from all.
  std::vector<json> infos;
  std::vector<const json*> info_ptrs;
  for (size_t i = 0; i < plan.size(); ++i) infos.push_back(read_json_or_null(plan.point_dir(i) + "/sweep-run.json"));
  for (const json& info : infos) info_ptrs.push_back(info.is_object() ? &info : nullptr);
  const std::vector<int> at_once = points_at_once(info_ptrs);
  std::vector<SweepRow> rows;
  for (size_t i = 0; i < plan.size(); ++i) {
    const std::string pdir = plan.point_dir(i);
    const json summary = read_json_or_null(pdir + "/summary.json");
    json info = infos[i];
    if (at_once[i] > 0) info["points_at_once"] = at_once[i];
    const bool has_summary = fs::exists(pdir + "/summary.json");
    const json* s = summary.is_null() ? nullptr : &summary;
    json unreadable = json::object();  // summary.json present but unreadable: say so
    if (!s && has_summary) s = &unreadable;
    for (SweepRow& r : point_rows(plan.point(i), s, info.is_null() ? nullptr : &info, log_error(pdir + "/train.log")))
      rows.push_back(std::move(r));
  }
  const SweepTable t = make_table(keys, std::move(rows));
  write_file_atomic(plan.dir + "/results.csv", results_csv(t));
  write_file_atomic(plan.dir + "/results.json", results_json(t, plan.json).dump(2) + "\n");
  if (print) print_table(t);

  const json counts = status_counts(t);
  std::string summary_line;
  for (const char* status : {"ok", "diverged", "interrupted", "failed", "missing"})
    if (const int n = counts.value(status, 0); n > 0)
      summary_line += (summary_line.empty() ? "" : ", ") + fmt::format("{} {}", n, status);
  fmt::print("\n{} points, {} rows: {}\n", plan.size(), t.rows.size(), summary_line);
  if (t.best) {
    const SweepRow& b = t.rows[*t.best];
    fmt::print("best (lowest final loss): point {} ({}) on {}: {:.6g}\n", b.point,
               plan.point(b.point).value("label", ""), b.device, *b.final_loss);
  }
  fmt::print("results: {}/results.csv, {}/results.json\n", plan.dir, plan.dir);
  if (t.exit_code == kExitIncomplete)
    fmt::print(stderr, "nntrain: error: sweep incomplete: some points have no result (missing, failed or interrupted); "
                       "{}to run them: {}\n",
               fs::exists(plan.dir + "/slurm-job.json") ? "once the Slurm job has ended, " : "",
               resume_command(plan.dir));
  else if (t.exit_code == kExitDiverged)
    fmt::print(stderr, "nntrain: error: every point finished, {} diverged (marked \"diverged\")\n",
               counts.value("diverged", 0));
  return t.exit_code;
}

}  // namespace nntrain
