// test_sweep_resume.cpp — a sweep stopped, killed or interrupted (issue 46): which points a
// rerun runs again (against hand-written summaries), Ctrl-C and SIGHUP, one launcher per
// folder, points killed with an earlier launcher, interrupts at any moment, the printed
// resume command, and the Slurm resubmission of the unfinished points. The rest of
// `nntrain sweep` is test_sweep.cpp.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <ctime>
#include <fmt/format.h>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_util.hpp"
#include "errors.hpp"
#include "proc_util.hpp"
#include "sweep_plan.hpp"
#include "sweep_util.hpp"

using namespace testutil;
using namespace nntrain;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Two points that would each run for minutes, one at a time: for the tests that stop a sweep.
const std::vector<std::string> kLongSweep = {"--config", "configs/peaks.json", "--quiet", "--grid", "seed=1,2",
                                             "train.epochs=2000000", "train.log_every=10", "--threads", "1"};

// `nntrain sweep`, kLongSweep and `extra`, as an argv for spawn().
std::vector<std::string> long_sweep_argv(const std::vector<std::string>& extra) {
  std::vector<std::string> v = {NNTRAIN_BINARY, "sweep"};
  v.insert(v.end(), kLongSweep.begin(), kLongSweep.end());
  v.insert(v.end(), extra.begin(), extra.end());
  return v;
}

}  // namespace

TEST_CASE("sweep resume: which points a rerun runs again, by what each left", "[sweep]") {
  // Written by hand, as train writes them: a run that trained 120 of its 300 epochs.
  auto run = [](const char* device, const char* status, int epochs) {
    return json{{"device", device}, {"status", status}, {"epochs", epochs}, {"epochs_requested", 300},
                {"final_loss", 0.5}};
  };
  auto summary = [](const char* status, const json& runs) { return json{{"status", status}, {"runs", runs}}; };
  const json ok = summary("ok", json::array({run("cpu", "ok", 300)}));
  const json diverged = summary("diverged", json::array({run("cpu", "diverged", 40)}));
  const json interrupted = summary("interrupted", json::array({run("cpu", "interrupted", 120)}));
  // The stop came after the last chunk: every epoch trained, model.json written.
  const json stopped_at_end = summary("interrupted", json::array({run("cpu", "interrupted", 300)}));
  const json failed = summary("failed", json::array());
  // --device both, stopped after the CPU run had finished: the GPU run never started.
  const json cpu_only = summary("interrupted", json::array({run("cpu", "interrupted", 300)}));
  const json both = summary("ok", json::array({run("cpu", "ok", 300), run("gpu", "ok", 300)}));
  const json unreadable = json::object();

  CHECK(point_finished(&ok, 1));
  CHECK(point_finished(&diverged, 1));  // a rerun diverges again: a result
  CHECK_FALSE(point_finished(&interrupted, 1));
  CHECK(point_finished(&stopped_at_end, 1));
  CHECK_FALSE(point_finished(&failed, 1));
  CHECK_FALSE(point_finished(nullptr, 1));
  CHECK_FALSE(point_finished(&unreadable, 1));
  CHECK_FALSE(point_finished(&cpu_only, 2));
  CHECK(point_finished(&both, 2));
  // The table agrees with the resume: what is rerun is never "ok", what is kept always is.
  const json point = {{"index", 0}, {"values", {1}}, {"devices", {"cpu"}}};
  const json point2 = {{"index", 1}, {"values", {2}}, {"devices", {"cpu", "gpu"}}};
  CHECK(point_rows(point, &interrupted, nullptr, "")[0].status == "interrupted");
  CHECK(point_rows(point, &interrupted, nullptr, "")[0].note == "interrupted after epoch 120");
  const auto end_rows = point_rows(point, &stopped_at_end, nullptr, "");
  REQUIRE(end_rows.size() == 1);
  CHECK(end_rows[0].status == "ok");
  CHECK(end_rows[0].note == "the stop came after its last epoch");
  const auto both_rows = point_rows(point2, &cpu_only, nullptr, "");
  REQUIRE(both_rows.size() == 2);
  CHECK(both_rows[0].status == "ok");
  CHECK(both_rows[1].device == "gpu");
  CHECK(both_rows[1].status == "interrupted");
  CHECK(make_table({"k"}, both_rows).exit_code == 5);
  // A status without the runs it stands for (truncated, hand-edited) is no result: a resume
  // reruns it, and collect does not call it ok (the two once disagreed, and the resume
  // command collect printed ran nothing, again and again).
  struct Partial {
    json summary;
    const json& point;
  };
  const json ended = {{"launcher", "local"}, {"exit_code", 0}};
  for (const Partial& p : {Partial{{{"status", "ok"}}, point}, Partial{{{"status", "diverged"}}, point},
                           Partial{summary("ok", json::array()), point}, Partial{summary("ok", json::array({1})), point},
                           Partial{summary("ok", json::array({run("cpu", "ok", 300)})), point2}}) {
    INFO(p.summary.dump());
    CHECK_FALSE(point_finished(&p.summary, p.point["devices"].size()));
    const auto rows = point_rows(p.point, &p.summary, &ended, "");
    CHECK(std::any_of(rows.begin(), rows.end(), [](const SweepRow& r) { return r.status != "ok"; }));
  }
  CHECK(point_rows(point, &ok, &ended, "")[0].status == "ok");
  // --device both whose CPU run diverged: the GPU never ran, and a rerun diverges again. The
  // resume keeps it, and collect says diverged (exit 4), not missing (exit 5, a resume loop).
  const json cpu_diverged = summary("diverged", json::array({run("cpu", "diverged", 40)}));
  CHECK(point_finished(&cpu_diverged, 2));
  const auto div_rows = point_rows(point2, &cpu_diverged, &ended, "");
  REQUIRE(div_rows.size() == 2);
  CHECK(div_rows[1].device == "gpu");
  CHECK(div_rows[1].status == "diverged");
  CHECK(div_rows[1].note == "not run: an earlier device diverged");
  CHECK(make_table({"k"}, div_rows).exit_code == 4);
  const json status_only = {{"status", "ok"}};
  CHECK(point_rows(point, &status_only, &ended, "")[0].note == "exited with code 0 and a summary.json without its runs");
  // A point the launcher SIGKILLed after a second signal: interrupted, with why.
  const json killed = {{"launcher", "local"}, {"started_utc", "T"}, {"exit_code", 137}, {"signal", 9}};
  const auto krows = point_rows(point, nullptr, &killed, "");
  CHECK(krows[0].status == "interrupted");
  CHECK_THAT(krows[0].note, Catch::Contains("signal 9"));
}

TEST_CASE("sweep local: Ctrl-C stops the points cleanly and exits 130", "[sweep][cli][signals]") {
  // SIGINT with --out; SIGHUP (a terminal or ssh session lost) into a numbered folder under
  // output.dir, where "the same command" would start a new sweep: the message names --out.
  const int sig = GENERATE(SIGINT, SIGHUP);
  const std::string base = fresh_dir("sweep_int");
  const std::string log = fresh_dir("sweep_int_log");
  const std::string out = sig == SIGINT ? base : base + "/sweeps/001";
  const KillOnExit cleanup{base};  // (a launcher killed by the signal would leave its point running)
  if (sig == SIGHUP) fs::create_directories(base);
  // Chunks of 1000 epochs (~1 s): the point is still stopping when the second copy comes.
  auto argv = long_sweep_argv(sig == SIGINT ? std::vector<std::string>{"--out", out}
                                            : std::vector<std::string>{"output.dir=" + base});
  argv.push_back("train.log_every=1000");
  const pid_t pid = spawn(argv, NNTRAIN_SOURCE_DIR, log + ".out", log + ".err");
  REQUIRE(pid > 0);
  REQUIRE(wait_until([&] { return fs::exists(out + "/points/000/config.resolved.json"); }, 60));
  ::kill(pid, sig);  // to the launcher alone: it passes the stop on to its point
  // The same signal again from the same sender at once, as `timeout -s INT` sends it to the
  // launcher and then to its process group: one stop, not a second signal (which would
  // SIGKILL the point: no summary.json below).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ::kill(pid, sig);
  const int code = wait_exit(pid, 60);
  INFO(slurp(log + ".err"));
  CHECK(code == 130);
  const json res = read_json(out + "/results.json");
  CHECK(res["rows"][0]["status"] == "interrupted");
  CHECK(res["rows"][1]["status"] == "missing");
  CHECK(read_json(out + "/points/000/summary.json")["status"] == "interrupted");
  // One hint, the command that resumes: this one, with --out added where it had none.
  const std::string err = slurp(log + ".err");
  CHECK_THAT(err, Catch::Contains("to run them: " NNTRAIN_BINARY " sweep --config configs/peaks.json") &&
                      Catch::Contains("--out " + out));
  CHECK(err.find("rerun") == std::string::npos);
  CHECK(read_json(out + "/launch.json")["command"][0] == NNTRAIN_BINARY);
  fs::remove_all(base);
  fs::remove(log + ".out");
  fs::remove(log + ".err");
}

TEST_CASE("sweep local: one launcher per folder, and none while an earlier launcher's points still run",
          "[sweep][cli][signals]") {
  const std::string out = fresh_dir("sweep_lock");
  const std::string log = fresh_dir("sweep_lock_log");
  const KillOnExit cleanup{out};  // (the orphaned point, and any a second launcher started)
  const pid_t pid = spawn(long_sweep_argv({"--out", out}), NNTRAIN_SOURCE_DIR, log + ".out", log + ".err");
  REQUIRE(pid > 0);
  REQUIRE(wait_until([&] { return fs::exists(out + "/points/000/config.resolved.json"); }, 60));
  std::string again = "sweep --out " + out;  // the same sweep, through the shell
  for (const auto& arg : kLongSweep) again += " " + arg;
  // (bounded: a second launcher that went ahead would run its points for minutes)
  const auto second = run_nntrain(again, "timeout -s TERM 60");
  CHECK(second.exit_code == 2);
  CHECK_THAT(second.err, Catch::Contains("is in use") && Catch::Contains("sweep.lock"));
  // The launcher dies without passing anything on (SIGKILL): its point runs on, and still
  // holds the folder.
  ::kill(pid, SIGKILL);
  CHECK(wait_exit(pid, 30) == 256 + SIGKILL);
  const json info = read_json(out + "/points/000/sweep-run.json");
  const pid_t orphan = info["pid"].get<pid_t>();
  REQUIRE(orphan > 0);
  REQUIRE(::kill(orphan, 0) == 0);
  const auto third = run_nntrain(again, "timeout -s TERM 60");
  CHECK(third.exit_code == 2);
  CHECK_THAT(third.err, Catch::Contains("is in use"));
  ::kill(orphan, SIGKILL);
  CHECK(wait_until([&] { return ::kill(orphan, 0) != 0; }, 30));
  // Once it has gone the folder is free: the next launcher starts (the dry run shows which
  // points it would run; the interrupted one has no result).
  const auto dry = run_nntrain(again + " --dry-run");
  CHECK(dry.exit_code == 0);
  CHECK_THAT(dry.out, Catch::Contains("000 ") && Catch::Contains("001 "));
  fs::remove_all(out);
  fs::remove(log + ".out");
  fs::remove(log + ".err");
}

TEST_CASE("sweep slurm: the batch script, submission and a resubmission of the unfinished points",
          "[sweep][slurm]") {
  const std::string out = fresh_dir("sweep_slurm");
  const std::string bin = fresh_dir("sweep_fake_sbatch");
  const std::string args = std::string("sweep ") + kBase + " " + kGrid + " --launcher slurm --jobs 2 --out " + out +
                           " --slurm-arg=--time=5 --slurm-arg=--gres=gpu:1";
  const auto dry = run_nntrain(args + " --dry-run");
  CHECK(dry.exit_code == 0);
  const std::string script = slurp(out + "/sweep.sbatch");
  CHECK_THAT(script, Catch::Contains("#SBATCH --array=0-5%2\n"));
  CHECK_THAT(script, Catch::Contains("#SBATCH --time=5\n#SBATCH --gres=gpu:1\n"));
  CHECK_THAT(script, Catch::Contains("#SBATCH --output=" + fs::absolute(out).string() + "/points/%3a/train.log\n"));
  CHECK_THAT(script, Catch::Contains(" sweep --run-point '" + fs::absolute(out).string() + "' \"$SLURM_ARRAY_TASK_ID\""));
  CHECK_FALSE(fs::exists(out + "/slurm-job.json"));

  // A task is `sweep --run-point DIR I`: run point 1 by hand, as Slurm would.
  const auto task = run_nntrain("sweep --run-point " + out + " 1", "SLURM_JOB_ID=77 SLURM_ARRAY_TASK_ID=1 SLURM_CPUS_ON_NODE=1");
  CHECK(task.exit_code == 0);
  const json info = read_json(out + "/points/001/sweep-run.json");
  CHECK(info["launcher"] == "slurm");
  CHECK(info["threads"] == 1);
  CHECK(info["exit_code"] == 0);
  CHECK(run_nntrain("sweep --run-point " + out + " 6").exit_code == 2);

  // Submission through a stand-in sbatch: the job id is printed; only unfinished points go.
  write_text(bin + "/sbatch", "#!/bin/sh\necho \"$@\" > \"$(dirname \"$0\")/args\"\necho '4242;cluster'\n");
  fs::permissions(bin + "/sbatch", fs::perms::owner_all);
  const auto sub = run_nntrain(args, "PATH=" + bin + ":$PATH");
  CHECK(sub.exit_code == 0);
  CHECK(sub.out == "4242\n");
  CHECK_THAT(slurp(out + "/sweep.sbatch"), Catch::Contains("#SBATCH --array=0,2-5%2\n"));
  CHECK(read_json(out + "/slurm-job.json")["job_id"] == "4242");
  CHECK_THAT(slurp(bin + "/args"), Catch::Contains("--parsable"));

  const auto no_sbatch = run_nntrain(args, "PATH=/nonexistent");
  CHECK(no_sbatch.exit_code == 3);
  CHECK_THAT(no_sbatch.err, Catch::Contains("sbatch not found"));
  // ... and exit 3 leaves nothing behind (docs/EXIT_CODES.md).
  const std::string out3 = fresh_dir("sweep_slurm_none");
  const auto no_sbatch_new = run_nntrain(std::string("sweep ") + kBase + " " + kGrid + " --launcher slurm --out " + out3,
                                         "PATH=/nonexistent");
  CHECK(no_sbatch_new.exit_code == 3);
  CHECK_FALSE(fs::exists(out3));
  // sbatch takes any unambiguous start of a long option: --out is --output, --arr --array.
  for (const char* banned :
       {"--array=1-3", "--arr=1-3", "--out=x.log", "--outp=x", "-ox.log", "-a1-3", "--error=x", "--er=x", "-ex"}) {
    INFO(banned);
    CHECK(run_nntrain(args + " --slurm-arg=" + banned).exit_code == 2);
  }
  CHECK(run_nntrain(args + " --slurm-arg=--open-mode=append --dry-run").exit_code == 0);
  // A value after '=' with a space, a quote or a '#' is double-quoted, as sbatch reads
  // "..." with backslash escapes (written out by hand; unquoted, sbatch split it at the space).
  CHECK(run_nntrain(args + R"( --slurm-arg='--comment=a b "c" #1' --dry-run)").exit_code == 0);
  CHECK_THAT(slurp(out + "/sweep.sbatch"), Catch::Contains("\n#SBATCH --comment=\"a b \\\"c\\\" #1\"\n"));
  // Without '=', as given: sbatch reads "-p gpu" as the option and its value.
  CHECK(run_nntrain(args + " --slurm-arg='-p gpu' --dry-run").exit_code == 0);
  CHECK_THAT(slurp(out + "/sweep.sbatch"), Catch::Contains("\n#SBATCH -p gpu\n"));
  fs::remove_all(out);
  fs::remove_all(bin);
}

TEST_CASE("sweep local: a point killed with an earlier launcher ends before the next launcher's points",
          "[sweep][cli]") {
  const std::string out = fresh_dir("sweep_killed_run");
  const std::string cmd = std::string("sweep ") + kBase + " --grid seed=1,2 --out " + out;
  REQUIRE(run_nntrain(cmd + " --dry-run").exit_code == 0);
  // What a point killed with its launcher (SIGKILL) leaves: a start, no end, no result.
  char host[256] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  const double then = double(std::time(nullptr)) - 1000.0;
  fs::create_directories(out + "/points/000");
  std::ofstream(out + "/points/000/sweep-run.json")
      << json({{"point", 0}, {"launcher", "local"}, {"jobs", 1}, {"host", host}, {"started_unix", then}}).dump();
  const auto r = run_nntrain(cmd);  // one point at a time: both reruns alone
  INFO(r.err);
  CHECK(r.exit_code == 0);
  const json info = read_json(out + "/points/000/sweep-run.json");
  REQUIRE(info["earlier_runs"].size() == 1);
  CHECK(info["earlier_runs"][0]["started_unix"] == then);
  CHECK(info["earlier_runs"][0]["finished_unix"].get<double>() <= info["started_unix"].get<double>());
  const json rows = read_json(out + "/results.json")["rows"];
  CHECK(rows[0]["timing"] == "alone");
  CHECK(rows[1]["timing"] == "alone");
  // The same left by point 1, then rerun by hand (`--run-point`: no launcher to end it).
  std::ofstream(out + "/points/001/sweep-run.json")
      << json({{"point", 1}, {"launcher", "local"}, {"jobs", 1}, {"host", host}, {"started_unix", then}}).dump();
  CHECK(run_nntrain("sweep --run-point " + out + " 1 --jobs 1").exit_code == 0);
  const json info1 = read_json(out + "/points/001/sweep-run.json");
  REQUIRE(info1["earlier_runs"].size() == 1);  // (the file above replaced the launcher's run)
  CHECK(info1["earlier_runs"][0]["finished_unix"].get<double>() <= info1["started_unix"].get<double>());
  CHECK(run_nntrain("sweep --collect " + out).exit_code == 0);
  const json rows2 = read_json(out + "/results.json")["rows"];
  CHECK(rows2[1]["timing"] == "alone");
  // When that killed run ended nobody knows: until the rerun began, at the latest, so point
  // 0, which ran in between, may have run beside it (the conservative label).
  CHECK(rows2[0]["timing"] == "concurrent:2");
  fs::remove_all(out);
}

TEST_CASE("sweep local: a finished point killed before it recorded its end ends as the next launcher starts",
          "[sweep][cli]") {
  const std::string out = fresh_dir("sweep_killed_finished");
  const std::string cmd = std::string("sweep ") + kBase + " --grid seed=1,2 --out " + out;
  REQUIRE(run_nntrain(cmd + " --dry-run").exit_code == 0);
  // Point 0 trains to the end, then its process is killed after the summary was written and
  // before its end was recorded: finished (not rerun), but its run has no end.
  REQUIRE(run_nntrain("sweep --run-point " + out + " 0 --jobs 1").exit_code == 0);
  const std::string file = out + "/points/000/sweep-run.json";
  json info = read_json(file);
  REQUIRE(info.contains("finished_unix"));
  info.erase("finished_unix");
  std::ofstream(file) << info.dump();
  // The next launcher runs point 1 only; point 0's run ended by the time it took the lock.
  const auto r = run_nntrain(cmd);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("2 points, 1 finished earlier, 1 to run"));
  const json closed = read_json(file);
  REQUIRE(closed.contains("finished_unix"));
  CHECK(closed["finished_unix"].get<double>() <= read_json(out + "/points/001/sweep-run.json")["started_unix"].get<double>());
  const json rows = read_json(out + "/results.json")["rows"];
  CHECK(rows[0]["timing"] == "alone");
  CHECK(rows[1]["timing"] == "alone");
  fs::remove_all(out);
}

namespace {

// The command a sweep's hint names ("... to run them: CMD"), or "" when it printed none.
std::string resume_hint(const std::string& err) {
  const std::string key = "to run them: ";
  const size_t at = err.rfind(key);
  if (at == std::string::npos) return "";
  const size_t end = err.find('\n', at);
  return err.substr(at + key.size(), end == std::string::npos ? std::string::npos : end - at - key.size());
}

// `sh -c 'exec CMD'` in the source tree, as a user pastes it: the signal the test sends
// reaches nntrain itself.
pid_t spawn_shell(const std::string& cmd, const std::string& log) {
  return spawn({"/bin/sh", "-c", "exec " + cmd}, NNTRAIN_SOURCE_DIR, log + ".out", log + ".err");
}

}  // namespace

TEST_CASE("sweep local: interrupts at any moment leave no point killed, and a finished point ok",
          "[sweep][cli][signals]") {
  // `timeout -s INT` signals the launcher and then its whole process group. Once in ~20
  // tries that killed a point (a duplicate counted as a second signal, or a SIGTERM that
  // reached a point before its handler was in place): "missing" with an empty log. Twenty
  // interrupts, from before the first point starts to after the last one ends.
  // Without LeakSanitizer's check at exit (sanitized builds): it ptrace-stops the process, and
  // `timeout` follows its signal with SIGCONT, which discards that pending stop, so the check
  // waits forever — a try hung 120 s in CI's ASan run after its sweep had finished; reproduced
  // with SIGCONTs at `nntrain info`'s exit. Release builds have no such check; the other sweep
  // tests keep it.
  const char* asan = std::getenv("ASAN_OPTIONS");
  const std::string no_leak_check = "ASAN_OPTIONS=" + (asan ? std::string(asan) + ":" : "") + "detect_leaks=0";
  const std::string base = fresh_dir("sweep_int_loop");
  const KillOnExit cleanup{base};
  for (int k = 0; k < 20; ++k) {
    const std::string out = base + "/" + std::to_string(k), log = base + "/log" + std::to_string(k);
    fs::create_directories(base);
    const std::string delay = fmt::format("{:.2f}", 0.15 + 0.07 * k);
    const pid_t pid = spawn({"/usr/bin/env", no_leak_check, "/usr/bin/timeout", "--preserve-status", "-s", "INT",
                             delay, NNTRAIN_BINARY, "sweep", "--config", "configs/peaks.json", "--quiet",
                             "data.grid=20", "train.epochs=400", "train.log_every=20", "timing.warmup_epochs=0",
                             "--threads", "1", "--grid", "seed=1,2,3,4", "--out", out},
                            NNTRAIN_SOURCE_DIR, log + ".out", log + ".err");
    REQUIRE(pid > 0);
    const int code = wait_exit(pid, 120);
    const std::string err = slurp(log + ".err");
    INFO("try " << k << ", interrupt after " << delay << " s, exit " << code << " (-1: still running after 120 s), "
                << (fs::exists(out + "/results.json") ? "results.json written" : "no results.json") << "\n"
                << err);
    CHECK((code == 0 || code == 130));
    if (!fs::exists(out + "/results.json")) continue;  // stopped before it planned anything
    const json res = read_json(out + "/results.json");
    for (const json& row : res["rows"]) {
      const std::string pdir = fmt::format("{}/points/{:03}", out, row["point"].get<int>());
      INFO("point " << row["point"] << ": " << row["status"] << ", " << row["note"]);
      // Started (it has a log) and then no result and no word why: what a kill leaves.
      if (row["status"] == "missing") CHECK_FALSE(fs::exists(pdir + "/train.log"));
      if (row["status"] == "interrupted") CHECK(fs::file_size(pdir + "/train.log") > 0);
      CHECK(row["status"] != "failed");
      // Every point that trained all its epochs is a result, whatever its exit code was.
      const json s = fs::exists(pdir + "/summary.json") ? read_json(pdir + "/summary.json") : json();
      if (s.is_object() && s["runs"].size() == 1 && s["runs"][0]["epochs"] == 400) CHECK(row["status"] == "ok");
    }
    if (code == 130) {
      CHECK(resume_hint(err) != "");
      CHECK(std::count(err.begin(), err.end(), '\n') <= 4);  // (start, stopping, interrupted, the hint)
    }
  }
  fs::remove_all(base);
}

TEST_CASE("sweep local: every interrupted or failed point is rerun by the printed command, which then ends ok",
          "[sweep][cli][signals]") {
  // Points of ~0.5 s each (400 samples, a 64-wide net, 3000 epochs), one at a time.
  const std::string base = fresh_dir("sweep_resume");
  const KillOnExit cleanup{base};
  const std::string out = base + "/sweep", log = base + "/log";
  const std::string cmd = std::string(NNTRAIN_BINARY) + " sweep --config configs/peaks.json --quiet data.grid=20 " +
                          "'model.layers=[2,64,64,1]' train.epochs=3000 train.log_every=50 timing.warmup_epochs=0 " +
                          "--threads 1 --grid seed=1,2,3,4 --out " + out;
  REQUIRE(run_nntrain(cmd.substr(cmd.find(" sweep ")) + " --dry-run").exit_code == 0);

  // 1. Failed: points 1 and 3 cannot write their results (a directory where metrics.csv goes:
  // a full disk, a lost mount).
  for (const char* p : {"/points/001/metrics.csv/x", "/points/003/metrics.csv/x"}) fs::create_directories(out + p);
  const auto first = run_nntrain(cmd.substr(cmd.find(" sweep ")));
  INFO(first.err);
  REQUIRE(first.exit_code == 5);
  CHECK(read_json(out + "/results.json")["counts"]["failed"] == 2);
  const std::string resume = resume_hint(first.err);
  REQUIRE(resume == cmd);  // the exact command, to paste
  for (const char* p : {"/points/001/metrics.csv", "/points/003/metrics.csv"}) fs::remove_all(out + p);

  // 2. Interrupted: Ctrl-C as the rerun's first point (1) runs; point 3 is not rerun.
  const pid_t pid = spawn_shell(resume, log);
  REQUIRE(pid > 0);
  const std::string run1 = out + "/points/001/sweep-run.json";
  REQUIRE(wait_until([&] { return fs::exists(run1) && read_json(run1).contains("earlier_runs"); }, 120));
  ::kill(pid, SIGINT);
  REQUIRE(wait_exit(pid, 120) == 130);
  const json mid = read_json(out + "/results.json");
  INFO(mid.dump(1));
  CHECK(mid["counts"]["ok"] == 2);
  REQUIRE(mid["rows"][1]["status"] == "interrupted");  // (a result of this class, to resume)
  CHECK(mid["rows"][3]["status"] == "failed");  // (its first attempt's result: not rerun yet)
  CHECK(resume_hint(slurp(log + ".err")) == resume);  // the same command, every time

  // 3. The same command again: every point ends ok, with all its outputs.
  const auto again = run_nntrain(resume.substr(resume.find(" sweep ")));
  INFO(again.err);
  CHECK(again.exit_code == 0);
  CHECK_THAT(again.err, Catch::Contains("4 points, 2 finished earlier, 2 to run"));
  const json res = read_json(out + "/results.json");
  CHECK(res["counts"]["ok"] == 4);
  CHECK(res["complete"] == true);
  for (int i = 0; i < 4; ++i) {
    const std::string pdir = fmt::format("{}/points/{:03}", out, i);
    INFO(pdir);
    const json s = read_json(pdir + "/summary.json");
    CHECK(s["status"] == "ok");
    CHECK(s["runs"][0]["epochs"] == 3000);
    CHECK(fs::exists(pdir + "/model.json"));
    const std::string metrics = slurp(pdir + "/metrics.csv");
    CHECK(std::count(metrics.begin(), metrics.end(), '\n') == 3001);
    CHECK(read_json(pdir + "/sweep-run.json")["exit_code"] == 0);
  }
  fs::remove_all(base);
}
