// sweep_plan.hpp — the arithmetic of `nntrain sweep` without I/O, so it can be tested on its
// own: the grid (bench's --sweep grammar, one axis per --grid), its Cartesian product in a
// fixed order, and the collected table (one row per point and device, its status, the best
// point, the exit code). app/cmd_sweep*.cpp do the files, processes and printing.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench_stats.hpp"

namespace nntrain {

// True when setting `a` and setting `b` touch the same config value: the same key, or one
// inside the other ("model" and "model.layers").
bool config_keys_overlap(const std::string& a, const std::string& b);

// Each `key.path=v1,v2,...` with parse_sweep's grammar (messages name `--grid`). UsageError
// for no axis, or two axes whose keys overlap (a duplicate key would silently sweep nothing).
std::vector<SweepSpec> parse_grid(const std::vector<std::string>& args);

// The Cartesian product as value indices, one vector per point: the first axis varies
// slowest, the last fastest (the nested loops `for a in axis0: for b in axis1: ...`).
std::vector<std::vector<size_t>> grid_points(const std::vector<SweepSpec>& axes);

// The overrides that set one point ("key=text", in axis order) and its label
// ("optimizer.lr=0.1, model.layers=[2,20,1]").
std::vector<std::string> point_overrides(const std::vector<SweepSpec>& axes, const std::vector<size_t>& at);
std::string point_label(const std::vector<SweepSpec>& axes, const std::vector<size_t>& at);

// A point's folder under the sweep's: "points/007" (at least 3 digits, as many as the
// largest index needs, so the names sort in point order).
int point_dir_digits(size_t n_points);
std::string point_dir(size_t index, size_t n_points);

// A point that reached a result: summary.json with status ok or diverged (a rerun of a
// diverged point diverges again: it is a result), or interrupted only after every one of its
// `devices` runs had trained all its epochs (the stop came after the last chunk: the model
// and curve are whole; run_complete). Interrupted, failed and missing are not: a rerun runs them.
bool point_finished(const nlohmann::json* summary, size_t devices);
// One run of summary.json's "runs" that trained every epoch it was asked for.
bool run_complete(const nlohmann::json& run);

// The local launcher's stop signals: true when a signal from `from` (siginfo's si_pid, 0 from
// the kernel: a terminal's Ctrl-C) at `t` seconds is the first one again rather than a second
// signal: the same sender within kSameSignalSeconds. `timeout -s INT` and a shell's kill of a
// job signal the launcher and then its process group, which holds the launcher too, so one
// stop arrives twice (once in ~20 tries as two deliveries, which had SIGKILLed the points).
// No allocation: called from a signal handler.
constexpr double kSameSignalSeconds = 1.0;
inline bool same_stop_signal(long first_from, double first_t, long from, double t) {
  return from == first_from && t - first_t < kSameSignalSeconds;
}

// One row of the collected table: one device's run of one point (a point with no result has
// one row per device it was to train).
struct SweepRow {
  size_t point = 0;
  std::vector<nlohmann::json> values;  // the swept values, in axis order
  std::string status;                  // ok | diverged | interrupted | failed | missing
  std::string device, backend;
  int threads = 0, epochs = 0;
  std::optional<double> final_loss, train_seconds, target_seconds;
  nlohmann::json target;  // summary.json's "target" object when the run has one, else null
  std::string target_kind;  // its seconds_kind ("measured" or "interpolated") when reached
  std::string timing;     // "alone", "concurrent:N" (N points ran at once during it) or "slurm"
  std::string host, note;
};

// For the local launcher's points, each point's most points running at once at some instant
// of its run, itself included, from their sweep-run.json (`run_infos[i]`, nullptr when
// absent): the interval from "started_unix" to "finished_unix" (no finish recorded: still
// running, so open-ended; the launcher records the end of a point that died without it),
// counting the other points' runs and their "earlier_runs" (attempts before a rerun), only
// on the same "host". 0 where a point has no such interval (not run, a Slurm task, or a
// sweep-run.json from before these times were recorded). collect puts it in run_info as
// "points_at_once" for point_rows.
std::vector<int> points_at_once(const std::vector<const nlohmann::json*>& run_infos);

// What one point left in its folder: `summary` (summary.json), `run_info` (sweep-run.json,
// written by `sweep --run-point` when it starts and when it ends), the last error line of
// its log. Any may be absent (nullptr / empty). `point` is the plan's entry.
std::vector<SweepRow> point_rows(const nlohmann::json& point, const nlohmann::json* summary,
                                 const nlohmann::json* run_info, const std::string& log_error);

struct SweepTable {
  std::vector<std::string> keys;  // the swept keys, in axis order
  std::vector<SweepRow> rows;
  std::optional<size_t> best;     // the ok row with the lowest final loss
  int exit_code = 0;              // 0 all ok; 4 all finished, some diverged; 5 some not finished
};
SweepTable make_table(const std::vector<std::string>& keys, std::vector<SweepRow> rows);

// "ok": 5, "diverged": 1, ... (every status, zeros included, in a fixed order).
nlohmann::json status_counts(const SweepTable& t);
std::string results_csv(const SweepTable& t);
nlohmann::json results_json(const SweepTable& t, const nlohmann::json& plan);

}  // namespace nntrain
