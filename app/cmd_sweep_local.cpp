// cmd_sweep_local.cpp — the local launcher and `sweep --run-point DIR I`.
//
// Every point runs as its own process, `nntrain sweep --run-point DIR I` (this executable),
// exactly what a Slurm array task runs: one code path for both launchers, and a point is an
// ordinary train run (run_train_command, in that process) with its own stop flag, thread
// pool and log (points/NNN/train.log). `--jobs N` keeps N such processes running and gives
// each hardware_threads / N CPU threads, unless the config sets cpu.threads; the collected
// table then marks each point's time with the most points that ran at once during it
// (sweep-run.json records its start and end; core/sweep_plan points_at_once).
//
// Signals: each point runs in its own process group (set by the child and by the launcher, so
// no group signal can reach a point in the moment after fork), so Ctrl-C at the terminal, or
// `timeout -s INT`'s signal to the launcher's group, reaches the launcher alone. The first
// SIGINT/SIGTERM/SIGHUP makes it start no new point and send one SIGTERM to each running
// point, which stops after its chunk in flight and writes its results marked interrupted; the
// launcher waits for them, writes the table and exits 130. A second signal SIGKILLs the
// points; the first one again (the same sender within a second: `timeout` and a shell's
// `kill` signal the launcher, then its group) is not a second one. A point starts with these
// signals blocked and unblocks them once its handler is in place: a SIGTERM sent as it starts
// stops it after its first chunk instead of killing it before it wrote anything (a "missing"
// point with an empty log). A point treats every SIGTERM as "stop after this chunk" (a
// scheduler that signals every process of a job, then the launcher, must not kill it by
// sending two); whoever started it escalates with SIGKILL. A rerun into the same folder
// (--out) skips the finished points: the command every hint names (DIR/launch.json). One
// launcher at a time per folder: DIR/sweep.lock, an flock its points inherit, so a launcher
// that was SIGKILLed still holds the folder while its points run.
#include <fcntl.h>
#include <sys/file.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <thread>

#include "backend_registry.hpp"
#include "cmd_sweep.hpp"
#include "commands.hpp"
#include "errors.hpp"
#include "fileio.hpp"
#include "sweep_plan.hpp"
#include "sysinfo.hpp"
#include "trainer.hpp"

namespace nntrain {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string host_name() {
  char buf[256] = {};
  return ::gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string();
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

size_t parse_index(const std::string& text, size_t n) {
  const bool digits = !text.empty() && text.size() < 10 && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoul(text) >= n)
    throw UsageError(fmt::format("--run-point: point \"{}\" is not in this sweep (it has {} points: 0 to {})", text, n,
                                 n - 1));
  return std::stoul(text);
}

// The CPU threads a point may use: the config's when it sets them; else the CPUs there are
// (under Slurm the CPUs the task or job was given, else this machine's) shared with the N-1
// other points of a local launcher's --jobs N; 0 (all) for a point alone outside Slurm.
int point_threads(const json& cfg, int jobs) {
  const int configured = cfg.at("cpu").value("threads", 0);
  if (configured > 0) return configured;
  int cpus = 0;
  for (const char* var : {"SLURM_CPUS_PER_TASK", "SLURM_CPUS_ON_NODE"}) {
    const std::string v = env_or_empty(var);
    if (!v.empty() && v.size() < 9 && v.find_first_not_of("0123456789") == std::string::npos && std::stoi(v) > 0) {
      cpus = std::stoi(v);
      break;
    }
  }
  if (jobs > 1) return std::max(1, (cpus > 0 ? cpus : hardware_threads()) / jobs);
  return cpus;
}

// Now, in seconds since the Unix epoch (microseconds kept): comparable between the points,
// which are separate processes.
double unix_seconds() {
  using namespace std::chrono;
  return double(duration_cast<microseconds>(system_clock::now().time_since_epoch()).count()) / 1e6;
}

// `local`: started by the local launcher (it passes --jobs), maybe inside a Slurm allocation;
// otherwise a point run under SLURM_JOB_ID is a Slurm array task.
json run_info(size_t index, int jobs, int threads, bool local) {
  const bool slurm = !local && !env_or_empty("SLURM_JOB_ID").empty();
  json info = {{"point", index},  {"launcher", slurm ? "slurm" : "local"},
               {"jobs", jobs},    {"threads", threads},
               {"host", host_name()}, {"pid", ::getpid()}, {"started_utc", utc_now()}};
  if (!env_or_empty("SLURM_JOB_ID").empty())
    info["slurm"] = {{"job_id", env_or_empty("SLURM_JOB_ID")},
                     {"array_job_id", env_or_empty("SLURM_ARRAY_JOB_ID")},
                     {"array_task_id", env_or_empty("SLURM_ARRAY_TASK_ID")},
                     {"node", env_or_empty("SLURMD_NODENAME")}};
  return info;
}

// `sweep --run-point`: every SIGTERM (and SIGINT, unless ignored) asks for a stop after the
// chunk in flight; none kills (see the top of this file).
void on_point_signal(int, siginfo_t*, void*) { request_stop(); }

// The local launcher: 1 after the first stop signal, 2 after a second one (the points are
// then SIGKILLed); the first one's sender and time tell its duplicate from a second signal.
// The handler blocks the other stop signals while it runs: these are never written at once.
volatile std::sig_atomic_t g_launcher_signals = 0;
volatile long g_first_from = 0;
volatile double g_first_t = 0;
void on_launcher_signal(int, siginfo_t* info, void*) {
  timespec now {};
  ::clock_gettime(CLOCK_MONOTONIC, &now);  // (async-signal-safe)
  const double t = double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
  const long from = info ? long(info->si_pid) : 0;
  if (g_launcher_signals == 0) {
    g_first_from = from;
    g_first_t = t;
    g_launcher_signals = 1;
  } else if (!same_stop_signal(g_first_from, g_first_t, from, t)) {
    g_launcher_signals = 2;
  }
  request_stop();
}

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, sig);
  return set;
}

void install_handler(void (*handler)(int, siginfo_t*, void*)) {
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    // A background job's SIGINT is ignored: keep it so (as train does).
    // So is a SIGHUP ignored by nohup.
    if (sig != SIGTERM && ::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_sigaction = handler;
    sa.sa_mask = stop_signals();
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace

int run_point(const std::string& dir, const std::string& index_text, int jobs, bool local) {
  install_handler(on_point_signal);
  // The local launcher starts a point with the stop signals blocked (spawn_point): one that
  // came meanwhile is delivered now, to the handler.
  const sigset_t stops = stop_signals();
  ::sigprocmask(SIG_UNBLOCK, &stops, nullptr);
  const SweepPlan plan = read_plan(dir);
  const size_t i = parse_index(index_text, plan.size());
  const std::string pdir = plan.point_dir(i);
  const int threads = point_threads(plan.point(i).at("config"), jobs);
  json info = run_info(i, jobs, threads, local);
  // The point's earlier attempts (a rerun: the earlier one failed, was interrupted or
  // killed) ran beside other points too: their intervals stay, for those points' timing.
  // One with no end (killed, and no launcher recorded one: `--run-point` by hand) ended
  // before this one starts.
  const json before = read_json_or_null(pdir + "/sweep-run.json");
  json earlier = before.is_object() && before.contains("earlier_runs") && before.at("earlier_runs").is_array()
                     ? before.at("earlier_runs")
                     : json::array();
  if (before.is_object() && before.contains("started_unix")) {
    json run = {{"launcher", before.value("launcher", "")}, {"host", before.value("host", "")},
                {"started_unix", before.at("started_unix")}};
    run["finished_unix"] = before.contains("finished_unix") ? before.at("finished_unix") : json(unix_seconds());
    earlier.push_back(run);
  }
  if (!earlier.empty()) info["earlier_runs"] = earlier;
  // A result of an earlier, unfinished attempt must not pass for this one's.
  std::error_code ec;
  fs::remove(pdir + "/summary.json", ec);
  // The run's interval, for the table's timing column (which points ran at once: core/
  // sweep_plan points_at_once): taken before the training starts and after it ends.
  info["started_unix"] = unix_seconds();
  write_file_atomic(pdir + "/sweep-run.json", info.dump(2) + "\n");

  TrainArgs ta;
  ta.config = pdir + "/config.json";
  ta.out = pdir;
  ta.quiet = true;
  ta.init_model = plan.json.value("init_model", "");
  ta.write_surface = plan.json.value("write_surface", 0);
  if (threads > 0) ta.overrides.push_back("cpu.threads=" + std::to_string(threads));
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = guarded([&] { return run_train_command(ta, backend_registry()); });
  info["exit_code"] = rc;
  info["finished_unix"] = unix_seconds();
  info["finished_utc"] = utc_now();
  info["wall_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  write_file_atomic(pdir + "/sweep-run.json", info.dump(2) + "\n");
  return rc;
}

namespace {

// fork + exec of `nntrain sweep --run-point DIR I --jobs J`, its output to the point's
// train.log, in a process group of its own, with the stop signals blocked until run_point has
// its handler (see the top of this file). Ignored signals stay ignored: a sweep started with
// SIGINT ignored (a background job) starts its points the same way.
pid_t spawn_point(const std::string& exe, const SweepPlan& plan, size_t i, int jobs) {
  const std::string log = plan.point_dir(i) + "/train.log";
  const std::vector<std::string> argv = {exe, "sweep", "--run-point", plan.dir, std::to_string(i),
                                         "--jobs", std::to_string(jobs)};
  std::vector<char*> args;
  for (const auto& s : argv) args.push_back(const_cast<char*>(s.c_str()));
  args.push_back(nullptr);
  const sigset_t stops = stop_signals();
  sigset_t before;
  ::sigprocmask(SIG_BLOCK, &stops, &before);
  const pid_t pid = ::fork();
  if (pid != 0) {
    const int fork_errno = errno;
    // Both sides set the group: whichever runs first, no group signal reaches the point.
    // (EACCES: the child has exec'd, its group already set; ESRCH: it has ended.)
    if (pid > 0) ::setpgid(pid, pid);
    ::sigprocmask(SIG_SETMASK, &before, nullptr);
    if (pid < 0) throw IoError(std::string("cannot start a sweep point: fork failed: ") + std::strerror(fork_errno));
    return pid;
  }
  ::setpgid(0, 0);  // the terminal's Ctrl-C goes to the launcher, which passes it on once
  const int in = ::open("/dev/null", O_RDONLY);
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in < 0 || out < 0) ::_exit(126);
  ::dup2(in, 0);
  ::dup2(out, 1);
  ::dup2(out, 2);
  ::execv(args[0], args.data());
  ::_exit(127);
}

// The launcher's progress lines: a failed write (the terminal hung up: SIGHUP) must not end
// the launcher while its points run.
template <typename... T>
void say(fmt::format_string<T...> f, T&&... args) noexcept {
  try {
    fmt::print(stderr, f, std::forward<T>(args)...);
  } catch (...) {
  }
}

// A point's run that has no end in its sweep-run.json (the point was killed, and could not
// write it) ends now at the latest: the launcher calls this once the point has gone, so that
// collect does not count it as running beside every later point. Best effort: it only labels
// times, and must not stop a sweep.
// `signal`: the launcher's SIGKILL (after a second stop signal) that ended the point, recorded
// with the exit code the point could not write (collect: interrupted, not missing).
void close_open_run(const SweepPlan& plan, size_t i, int signal = 0) {
  const std::string file = plan.point_dir(i) + "/sweep-run.json";
  try {
    json info = read_json_or_null(file);
    if (!info.is_object() || !info.contains("started_unix") || info.contains("finished_unix")) return;
    info["finished_unix"] = unix_seconds();
    info["finished_note"] = "the point recorded no end: the launcher's time after it had ended";
    if (signal > 0) {
      info["exit_code"] = 128 + signal;
      info["signal"] = signal;
    }
    write_file_atomic(file, info.dump(2) + "\n");
  } catch (const std::exception&) {
  }
}

// What the point left, as the table will say it: its summary decides (a point whose stop came
// after its last epoch exits 130 with a whole result: ok), else its exit code.
std::string outcome(const SweepPlan& plan, size_t i, int rc) {
  const json s = read_point_summary(plan, i);
  std::string loss;
  if (s.is_object() && s.contains("runs") && !s["runs"].empty() && s["runs"][0]["final_loss"].is_number())
    loss = fmt::format(", final loss {:.6g}", s["runs"][0]["final_loss"].get<double>());
  if (point_finished(s.is_null() ? nullptr : &s, plan.point(i).value("devices", json::array()).size()))
    return s.value("status", "") == "diverged" ? "diverged" : "ok" + loss;
  if (rc == kExitOk) return "ok" + loss;
  if (rc == kExitDiverged) return "diverged";
  if (rc == kExitInterrupted) return "interrupted";
  return fmt::format("failed (exit {}; see {}/train.log)", rc, plan.point(i).at("dir").get<std::string>());
}

}  // namespace

void install_launcher_signals() { install_handler(on_launcher_signal); }

int run_local(const SweepPlan& plan, const SweepArgs& a) {
  const std::vector<size_t> todo = unfinished_points(plan);
  record_launch(plan, a);
  const int jobs = int(std::max<size_t>(1, std::min<size_t>(size_t(a.jobs), todo.size())));
  fmt::print(stderr, "nntrain: sweep {}: {} points, {} finished earlier, {} to run{}\n", plan.dir, plan.size(),
             plan.size() - todo.size(), todo.size(), jobs > 1 ? fmt::format(" ({} at once)", jobs) : "");
  if (a.dry_run) {
    for (const size_t i : todo) fmt::print("{} {}\n", plan.point(i).at("dir").get<std::string>(), plan.point(i).at("label").get<std::string>());
    return kExitOk;
  }
  // One launcher per sweep folder, and not while points an earlier launcher started still run
  // (it died of SIGKILL, say): the points inherit this lock's file descriptor, so it is held
  // until the last of them ends.
  const std::string lock = plan.dir + "/sweep.lock";
  const int lock_fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0644);  // (no O_CLOEXEC: see above)
  if (lock_fd < 0) throw IoError(fmt::format("cannot open {}: {}", lock, std::strerror(errno)));
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd);
    throw UsageError(fmt::format("sweep {} is in use: another launcher, or points one started, still run there "
                                 "(it holds {}); wait for them or stop them",
                                 plan.dir, lock));
  }
  // Points an earlier launcher started and that recorded no end (killed with it, or after
  // it): they held this lock, so they have all ended by now.
  for (size_t i = 0; i < plan.size(); ++i) close_open_run(plan, i);
  const std::string exe = self_executable();
  install_launcher_signals();  // (main did already; --run-point's callers may not)
  std::map<pid_t, size_t> running;
  size_t next = 0, done = 0;
  bool forwarded = false, killed = false;
  while (running.size() > 0 || (next < todo.size() && !stop_requested())) {
    while (running.size() < size_t(jobs) && next < todo.size() && !stop_requested()) {
      const size_t i = todo[next++];
      running[spawn_point(exe, plan, i, jobs)] = i;
      if (!a.quiet) say("nntrain: sweep point {} started: {}\n", i, plan.point(i).at("label").get<std::string>());
    }
    if (stop_requested() && !forwarded) {
      for (const auto& [pid, i] : running) ::kill(pid, SIGTERM);
      forwarded = true;
      say("nntrain: sweep stopping: {} running point(s) stop after their chunk in flight "
          "(signal again, a second later, to kill them now)\n", running.size());
    }
    if (g_launcher_signals >= 2 && !killed) {
      for (const auto& [pid, i] : running) ::kill(pid, SIGKILL);
      killed = true;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0 && running.count(pid)) {
      const size_t i = running[pid];
      running.erase(pid);
      close_open_run(plan, i, killed && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? SIGKILL : 0);
      const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      ++done;
      if (!a.quiet) say("nntrain: sweep [{}/{}] point {}: {}\n", done, todo.size(), i, outcome(plan, i, rc));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  // One hint: collect's line naming the command that resumes (launch.json), not a second one.
  if (stop_requested()) say("nntrain: sweep interrupted; the points that finished are kept\n");
  const int code = collect_sweep(plan.dir);
  ::close(lock_fd);  // (the points that inherited it have ended)
  // A stop after every point had its result interrupted nothing: the table's code.
  return stop_requested() && code == kExitIncomplete ? kExitInterrupted : code;
}

}  // namespace nntrain
