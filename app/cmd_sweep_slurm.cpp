// cmd_sweep_slurm.cpp — `sweep --launcher slurm`: one Slurm job array, one task per point
// that has no result yet, each task running `nntrain sweep --run-point DIR I`. The batch
// script (DIR/sweep.sbatch) holds every option, so it can be read, edited and resubmitted;
// `--dry-run` writes it and submits nothing. Slurm schedules, runs, retries and accounts; the
// points write their own folders, and `sweep --collect DIR` reads them wherever they ran
// (DIR must be on a file system the nodes share).
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>

#include "cmd_sweep.hpp"
#include "errors.hpp"
#include "fileio.hpp"
#include "sweep_plan.hpp"

namespace nntrain {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// "0-5" for all of 0..5, else "0-2,4,7-8".
std::string array_spec(const std::vector<size_t>& ids) {
  std::string s;
  for (size_t k = 0; k < ids.size();) {
    size_t e = k;
    while (e + 1 < ids.size() && ids[e + 1] == ids[e] + 1) ++e;
    s += (s.empty() ? "" : ",") + (e == k ? std::to_string(ids[k]) : fmt::format("{}-{}", ids[k], ids[e]));
    k = e + 1;
  }
  return s;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The job's name: the config's name with every character other than a letter, a digit, '.',
// '_' or '-' replaced by '_' (sbatch splits a directive at a space and ends it at a '#'; a
// newline would end the directives and start a shell line).
std::string job_name(const std::string& name) {
  std::string s = "nntrain-sweep-";
  for (const char c : name) s += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ? c : '_';
  return s;
}

// One --slurm-arg on an #SBATCH line: sbatch splits a directive at whitespace, ends it at a
// '#' and reads "..." with backslash escapes inside a word (its _get_argument), so the value
// after the first '=' is double-quoted where it holds any of these, '"' and '\' escaped
// (--comment="a b"). Without '=' the option is written as given ("-p gpu": two words, as
// sbatch has always read it).
std::string sbatch_word(const std::string& arg) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos || arg.find_first_of(" \t\"'\\#", eq) == std::string::npos) return arg;
  std::string q = arg.substr(0, eq + 1) + "\"";
  for (const char c : arg.substr(eq + 1)) q += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return q + "\"";
}

std::string batch_script(const SweepPlan& plan, const SweepArgs& a, const std::string& array) {
  std::string s = "#!/bin/bash\n";
  s += "# nntrain sweep: one array task per point of " + plan.dir + "/plan.json.\n";
  s += "# Written by `nntrain sweep --launcher slurm`; collect with: nntrain sweep --collect " + plan.dir + "\n";
  s += "#SBATCH --job-name=" + job_name(plan.json.value("name", std::string("sweep"))) + "\n";
  s += "#SBATCH --array=" + array + (a.jobs_set ? "%" + std::to_string(a.jobs) : "") + "\n";
  // Each task's stdout and stderr: the point's own train.log (%Na: the task id, zero-padded
  // like the point folders).
  s += fmt::format("#SBATCH --output={}/points/%{}a/train.log\n", plan.dir, point_dir_digits(plan.size()));
  for (const auto& arg : a.slurm_args) s += "#SBATCH " + sbatch_word(arg) + "\n";
  s += "exec " + shell_quote(self_executable()) + " sweep --run-point " + shell_quote(plan.dir) +
       " \"$SLURM_ARRAY_TASK_ID\"\n";
  return s;
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "";
  for (size_t b = 0; b <= p.size();) {
    const size_t e = std::min(p.find(':', b), p.size());
    const fs::path dir = p.substr(b, e - b).empty() ? fs::path(".") : fs::path(p.substr(b, e - b));
    if (::access((dir / program).c_str(), X_OK) == 0) return true;
    b = e + 1;
  }
  return false;
}

}  // namespace

void require_sbatch() {
  if (!on_path("sbatch"))
    throw DeviceUnavailable("--launcher slurm: sbatch not found on PATH (--dry-run writes the script without it)");
}

void check_slurm_dir(const std::string& dir) {
  for (const char c : dir) {
    const auto u = static_cast<unsigned char>(c);
    const bool control = u < 0x20 || u == 0x7f;
    if (control || c == ' ' || c == '#' || c == '"' || c == '\'' || c == '\\' || c == '%')
      throw UsageError(fmt::format("--launcher slurm: the sweep folder {} has {} in its path, which an #SBATCH "
                                   "--output line cannot carry; use an --out without spaces, quotes, '#', '%' or '\\'",
                                   escape_control_bytes(dir),
                                   control    ? "a control character (" + escape_control_bytes(std::string(1, c)) + ")"
                                   : c == ' ' ? std::string("a space")
                                              : fmt::format("'{}'", c)));
  }
}

std::string shell_word(const std::string& s) {
  return s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-+=:,@") == std::string::npos
             ? s
             : shell_quote(s);
}

namespace {

// sbatch --parsable prints "JOBID" or "JOBID;CLUSTER".
std::string submit(const std::string& script) {
  require_sbatch();
  const std::string cmd = "sbatch --parsable " + shell_quote(script);
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) throw IoError("cannot run sbatch");
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int status = ::pclose(p);
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const std::string id = out.substr(0, out.find_first_of(";\n"));
  if (rc != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw IoError(fmt::format("sbatch {} failed (exit {}){}", script, rc, out.empty() ? "" : ": " + out));
  return id;
}

}  // namespace

int run_slurm(const SweepPlan& plan, const SweepArgs& a) {
  const std::vector<size_t> todo = unfinished_points(plan);
  record_launch(plan, a);
  if (todo.empty()) {
    fmt::print(stderr, "nntrain: sweep {}: all {} points have a result; nothing to submit\n", plan.dir, plan.size());
    return collect_sweep(plan.dir);
  }
  const std::string array = array_spec(todo);
  const std::string script = plan.dir + "/sweep.sbatch";
  write_file_atomic(script, batch_script(plan, a, array));
  fs::permissions(script, fs::perms::owner_exec, fs::perm_options::add);
  fmt::print(stderr, "nntrain: sweep {}: {} points, {} to run as array {}{}\n", plan.dir, plan.size(), todo.size(),
             array, a.jobs_set ? fmt::format(" (at most {} at once)", a.jobs) : "");
  if (a.dry_run) {
    fmt::print("{}\n", script);
    fmt::print(stderr, "nntrain: --dry-run: not submitted; submit with: sbatch {}\n", shell_word(script));
    return kExitOk;
  }
  const std::string id = submit(script);
  json record = {{"job_id", id}, {"array", array}, {"script", script}};
  write_file_atomic(plan.dir + "/slurm-job.json", record.dump(2) + "\n");
  fmt::print("{}\n", id);
  fmt::print(stderr, "nntrain: submitted Slurm job {}; when it has run: nntrain sweep --collect {}\n", id,
             shell_word(plan.dir));
  return kExitOk;
}

}  // namespace nntrain
