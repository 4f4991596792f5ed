// cmd_sweep.hpp — `nntrain sweep`: a grid of ordinary train runs, one folder per point, run
// here (--launcher local) or as a Slurm job array (--launcher slurm), then collected into
// one table (--collect). The pieces: cmd_sweep.cpp (options, planning and validation),
// cmd_sweep_local.cpp (the local launcher and --run-point), cmd_sweep_slurm.cpp (the batch
// script, sbatch), cmd_sweep_collect.cpp (the table); the arithmetic is core/sweep_plan.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_stats.hpp"
#include "cli_flags.hpp"
#include "config.hpp"

namespace nntrain {

struct SweepArgs {
  std::string config;
  std::vector<std::string> grids;  // each key.path=v1,v2,...
  std::string out;
  std::string launcher = "local";
  int jobs = 1;
  bool jobs_set = false;
  std::vector<std::string> slurm_args;  // each becomes one "#SBATCH <arg>" line
  bool dry_run = false;
  std::string init_model;
  int write_surface = 0;
  std::vector<std::string> run_point;  // DIR I
  std::string collect;                 // DIR
  bool quiet = false;
  std::vector<std::string> overrides;       // the user's key.path=value, every point
  std::vector<std::string> flag_overrides;  // the flag table's, after the grid values
  std::vector<std::string> flag_keys;       // config keys set by flags (a grid key must not be one)
};

// Declares `sweep` and its options on `app` (main.cpp calls it; the flag table's rows for
// train are declared into `flags`).
CLI::App* add_sweep_command(CLI::App& app, SweepArgs& a, ConfigFlagValues& flags);
int cmd_sweep(const SweepArgs& a);

// --- between the pieces -----------------------------------------------------------------

// A validated sweep: plan.json's content and the folder it lives in (absolute).
struct SweepPlan {
  std::string dir;
  nlohmann::json json;  // plan.json
  size_t size() const { return json.at("points").size(); }
  const nlohmann::json& point(size_t i) const { return json.at("points").at(i); }
  std::string point_dir(size_t i) const;  // absolute
};

// Reads DIR/plan.json. UsageError when DIR holds no sweep.
SweepPlan read_plan(const std::string& dir);
// A JSON file's content, or null when it is absent or unreadable (a point's files may be
// half there: a task killed, a node lost).
nlohmann::json read_json_or_null(const std::string& file);
// summary.json of point i, or null when it has none (or it is unreadable).
nlohmann::json read_point_summary(const SweepPlan& plan, size_t i);
// The points without a result (core/sweep_plan point_finished), in order.
std::vector<size_t> unfinished_points(const SweepPlan& plan);
// This executable's absolute path (/proc/self/exe): the local launcher and the batch script run it.
std::string self_executable();

// --launcher slurm: DeviceUnavailable (exit 3) when sbatch is not on PATH; UsageError when
// the sweep folder's absolute path has a character an #SBATCH line cannot carry (a space, a
// quote, '#', '%', '\\' or a control character).
void require_sbatch();
void check_slurm_dir(const std::string& dir);
// s as one shell word: as it is when it needs no quoting, else in single quotes.
std::string shell_word(const std::string& s);

// The local launcher's stop signals (cmd_sweep_local.cpp): main installs them as soon as the
// command line is read, before planning, so a stop then (or its process group's copy) stops
// the sweep before its first point rather than killing the launcher between the points'
// folders and plan.json.
void install_launcher_signals();
int run_local(const SweepPlan& plan, const SweepArgs& a);
int run_slurm(const SweepPlan& plan, const SweepArgs& a);
// `local`: started by the local launcher (which passes --jobs), not as a Slurm array task.
int run_point(const std::string& dir, const std::string& index, int jobs, bool local);
// Writes DIR/results.csv and DIR/results.json, prints the table; returns the exit code
// (0 all ok, 4 all finished but some diverged, 5 some point without a result, with one line
// naming the command that runs them: resume_command).
int collect_sweep(const std::string& dir, bool print_table = true);

// DIR/launch.json: the command line of the launcher that last ran (or submitted) this sweep,
// and the command that resumes it: the same words (this process's /proc/self/cmdline, as the
// shell needs them), less --dry-run, with `--out DIR` added where it had none (the same
// command would plan a new numbered folder). Best effort: a hint must not stop a sweep.
void record_launch(const SweepPlan& plan, const SweepArgs& a);
// The resume command launch.json names; without one (a sweep from before it), a description.
std::string resume_command(const std::string& dir);

}  // namespace nntrain
