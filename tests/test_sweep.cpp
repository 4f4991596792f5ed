// test_sweep.cpp — `nntrain sweep`: the grid's order and validation, the collected table's
// statuses and exit codes (against hand-written summaries), and the command end to end: the
// local launcher (6 points, one diverging), a missing point, bad grids, the #SBATCH lines and
// a Slurm allocation's CPUs. What a stopped, killed or interrupted sweep leaves and how a rerun
// resumes it is test_sweep_resume.cpp; the real Slurm run is tests/slurm_sweep_test.sh.
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "bench_report.hpp"
#include "cli_util.hpp"
#include "errors.hpp"
#include "proc_util.hpp"
#include "sweep_plan.hpp"
#include "sweep_util.hpp"

using namespace testutil;
using namespace nntrain;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("sweep grid: the Cartesian product, first axis slowest", "[sweep]") {
  const auto axes = parse_grid({"optimizer.lr=0.1,0.2", "model.layers=[2,4,1],[2,8,1],[2,16,1]"});
  const auto pts = grid_points(axes);
  const std::vector<std::vector<size_t>> expected = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}};
  CHECK(pts == expected);
  CHECK(point_label(axes, pts[4]) == "optimizer.lr=0.2, model.layers=[2,8,1]");
  CHECK(point_overrides(axes, pts[2]) == std::vector<std::string>{"optimizer.lr=0.1", "model.layers=[2,16,1]"});
  CHECK(grid_points(parse_grid({"seed=7"})).size() == 1);
  CHECK(grid_points(parse_grid({"seed=1,2", "data.grid=5,6,7", "optimizer.lr=1,2"})).size() == 12);
  CHECK(point_dir(7, 6) == "points/007");
  CHECK(point_dir(1234, 2000) == "points/1234");
  CHECK(point_dir_digits(1000) == 3);
  CHECK(point_dir_digits(1001) == 4);
}

TEST_CASE("sweep grid: duplicate, overlapping and empty axes are refused", "[sweep][errors]") {
  CHECK_THROWS_WITH(parse_grid({"optimizer.lr=0.1", "optimizer.lr=0.2"}), Catch::Contains("given twice"));
  CHECK_THROWS_WITH(parse_grid({"model={\"layers\":[2,4,1]}", "model.layers=[2,8,1]"}),
                    Catch::Contains("same config value"));
  CHECK_THROWS_WITH(parse_grid({"optimizer.lr="}), Catch::Contains("--grid optimizer.lr: value 1 of 1 is empty"));
  CHECK_THROWS_AS(parse_grid({}), UsageError);
  CHECK(config_keys_overlap("model", "model.layers"));
  CHECK_FALSE(config_keys_overlap("model.layers", "model.layers_x"));
}

TEST_CASE("sweep and bench tables print times in us, ms or s", "[sweep][bench]") {
  // The sweep table once printed a 3 us training time as "0.00 ms"; it uses bench's rule now.
  CHECK(seconds_text(3.2e-6) == "3.2 us");
  CHECK(seconds_text(999e-6) == "999.0 us");
  CHECK(seconds_text(0.01234) == "12.34 ms");
  CHECK(seconds_text(1.5) == "1.500 s");
  CHECK(seconds_text(-1) == "-");
  // The unit follows the rounded value: never "1000.0 us" or "1000.00 ms".
  CHECK(seconds_text(0.00099996) == "1.00 ms");
  CHECK(seconds_text(0.00099994) == "999.9 us");
  CHECK(seconds_text(0.9999996) == "1.000 s");
  CHECK(seconds_text(0.999994) == "999.99 ms");
}

TEST_CASE("sweep timing: the most points at once during each local point, from their recorded intervals", "[sweep]") {
  auto local = [](double start, double end, const char* host = "h") {
    json j = {{"launcher", "local"}, {"jobs", 2}, {"host", host}, {"started_unix", start}};
    if (end >= 0) j["finished_unix"] = end;
    return j;
  };
  const json a = local(0, 10), b = local(1, 3), c = local(2, 4);  // at t = 2: a, b and c
  const json d = local(10, 12), e = local(11, 20);  // d starts as a ends: [start, end)
  const json f = local(20, 25);                     // e ends as f starts; h overlaps its end
  const json g = local(5, 6, "other");              // inside a's time, on another host
  const json h = local(24, -1);                     // no finish recorded: open-ended
  const json slurm = {{"launcher", "slurm"}, {"host", "h"}, {"started_unix", 0.5}, {"finished_unix", 30.0}};
  const json old = {{"launcher", "local"}, {"jobs", 2}, {"host", "h"}, {"started_utc", "T"}};  // before the times
  const json i = local(30, 35, "k"), j = local(35, 40, "k");  // one after the other: alone
  const json r = local(3, 5);  // starts as b ends: a, c and r at t = 3, not four
  const json z = local(6, 6);  // empty (a clock step): still beside a
  // A rerun point: its earlier attempt ran beside q, its rerun beside nothing.
  json p = local(50, 60, "m");
  p["earlier_runs"] = json::array({{{"launcher", "local"}, {"host", "m"}, {"started_unix", 40.0}, {"finished_unix", 45.0}}});
  const json q = local(42, 44, "m");
  const std::vector<const json*> infos = {&a,   &b,     &c, &d, &e, &f, &g, &h, &slurm, nullptr,
                                          &old, &i, &j, &r, &z, &p, &q};
  CHECK(points_at_once(infos) == std::vector<int>{3, 3, 3, 2, 2, 2, 1, 2, 0, 0, 0, 1, 1, 3, 2, 1, 2});

  // The timing column: the count where known, else the launcher's --jobs.
  const json point = {{"index", 0}, {"values", {1}}, {"devices", {"cpu"}}};
  json alone = a, three = a;
  alone["points_at_once"] = 1;
  three["points_at_once"] = 3;
  CHECK(point_rows(point, nullptr, &alone, "")[0].timing == "alone");
  CHECK(point_rows(point, nullptr, &three, "")[0].timing == "concurrent:3");
  CHECK(point_rows(point, nullptr, &old, "")[0].timing == "concurrent:2");
}

TEST_CASE("sweep table: statuses, best point and exit code from what the points left", "[sweep]") {
  const json point = {{"index", 3}, {"values", {0.1, json::array({2, 4, 1})}}, {"devices", {"cpu"}}};
  const json ok = {{"status", "ok"},
                   {"runs", {{{"device", "cpu"}, {"backend", "cpu-fast"}, {"status", "ok"}, {"final_loss", 0.25},
                              {"train_seconds", 1.5}, {"epochs", 300}, {"threads", 1},
                              {"target", {{"loss", 0.3}, {"reached", true}, {"epoch", 120}, {"seconds", 0.5},
                                          {"seconds_kind", "interpolated"}}}}}}};
  const json better = {{"status", "ok"}, {"runs", {{{"device", "cpu"}, {"status", "ok"}, {"final_loss", 0.125}}}}};
  const json diverged = {
      {"status", "diverged"}, {"runs", {{{"device", "cpu"}, {"status", "diverged"}, {"final_loss", nullptr}, {"diverged_epoch", 4}}}}};
  const json concurrent = {{"launcher", "local"}, {"jobs", 2}, {"host", "h"}, {"exit_code", 0}};

  auto rows = point_rows(point, &ok, &concurrent, "");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].point == 3);
  CHECK(rows[0].status == "ok");
  CHECK(*rows[0].final_loss == 0.25);
  CHECK(*rows[0].target_seconds == 0.5);  // time-to-target when the run has one
  CHECK(rows[0].target_kind == "interpolated");  // and how it was obtained
  CHECK(rows[0].timing == "concurrent:2");
  CHECK_FALSE(point_rows(point, &better, nullptr, "")[0].target_seconds);  // no target: empty
  json missed = ok;
  missed["runs"][0]["target"] = {{"loss", 0.01}, {"reached", false}, {"epoch", nullptr}, {"seconds", nullptr}};
  const auto mrow = point_rows(point, &missed, nullptr, "")[0];
  CHECK_FALSE(mrow.target_seconds);
  CHECK(mrow.note == "target 0.01 not reached");

  const auto drows = point_rows(point, &diverged, nullptr, "");
  CHECK(drows[0].status == "diverged");
  CHECK(drows[0].note == "diverged at epoch 4");
  // A simulated GPU's run: its time is the simulator's clock, and the row says so.
  json sim = ok;
  sim["runs"][0]["device"] = "gpu";
  sim["runs"][0]["simulated"] = true;
  CHECK(point_rows(point, &sim, nullptr, "")[0].note == "simulated GPU: its times are not measurements");
  sim["runs"][0]["target"]["reached"] = false;
  CHECK(point_rows(point, &sim, nullptr, "")[0].note ==
        "target 0.3 not reached; simulated GPU: its times are not measurements");
  CHECK(rows[0].note.empty());

  const json started = {{"launcher", "slurm"}, {"host", "node7"}, {"started_utc", "T"}};
  const auto missing = point_rows(point, nullptr, &started, "");
  CHECK(missing[0].status == "missing");
  CHECK(missing[0].timing == "slurm");
  CHECK_THAT(missing[0].note, Catch::Contains("node7"));
  CHECK(point_rows(point, nullptr, nullptr, "")[0].note == "not run");
  const json ended = {{"exit_code", 3}};
  const auto failed = point_rows(point, nullptr, &ended, "--device gpu: no CUDA device: none");
  CHECK(failed[0].status == "failed");
  CHECK(failed[0].note == "--device gpu: no CUDA device: none");
  // Exit 130 and no summary: stopped while its data loaded (train writes nothing then).
  const json stopped = {{"exit_code", 130}};
  const auto early = point_rows(point, nullptr, &stopped, "nntrain: interrupted before training started");
  CHECK(early[0].status == "interrupted");
  CHECK(early[0].note == "stopped before training started (nothing written)");

  SweepTable all_ok = make_table({"optimizer.lr", "model.layers"}, {point_rows(point, &ok, nullptr, "")[0],
                                                                     point_rows(point, &better, nullptr, "")[0]});
  CHECK(all_ok.exit_code == 0);
  REQUIRE(all_ok.best);
  CHECK(*all_ok.best == 1);
  SweepTable with_div = make_table({"a", "b"}, {rows[0], drows[0]});
  CHECK(with_div.exit_code == 4);
  CHECK(*with_div.best == 0);
  SweepTable with_missing = make_table({"a", "b"}, {rows[0], drows[0], missing[0]});
  CHECK(with_missing.exit_code == 5);
  CHECK(status_counts(with_missing) == json({{"ok", 1}, {"diverged", 1}, {"interrupted", 0}, {"failed", 0}, {"missing", 1}}));

  const std::string csv = results_csv(with_div);
  CHECK_THAT(csv, Catch::StartsWith("point,a,b,status,device,backend,threads,epochs,final_loss,train_seconds,"
                                    "time_to_target_seconds,time_to_target_kind,timing,host,note\n"));
  CHECK_THAT(csv, Catch::Contains("\n3,0.1,\"[2,4,1]\",ok,cpu,cpu-fast,1,300,0.25,1.5,0.5,interpolated,concurrent:2,h,\n"));
  CHECK_THAT(csv, Catch::Contains(",diverged,cpu,,0,0,,,,,,,diverged at epoch 4\n"));
}

TEST_CASE("sweep launcher: a stop signal's copy to the process group is not a second signal", "[sweep][signals]") {
  // `timeout -s INT` sends the launcher SIGINT and then its process group SIGINT: the same
  // sender microseconds apart. Ctrl-C pressed again later, or a signal from someone else,
  // is a second one.
  CHECK(same_stop_signal(4242, 10.0, 4242, 10.00001));
  CHECK(same_stop_signal(0, 10.0, 0, 10.5));  // (the terminal's: from the kernel)
  CHECK_FALSE(same_stop_signal(0, 10.0, 0, 11.5));
  CHECK_FALSE(same_stop_signal(4242, 10.0, 4243, 10.00001));
  CHECK_FALSE(same_stop_signal(4242, 10.0, 4242, 10.0 + kSameSignalSeconds));
}

namespace {

// A bad grid is exit 2 with a message naming it, before anything runs or is written.
void check_bad_grid(const std::string& grid, const std::string& message, const std::string& base = kBase) {
  const std::string out = fresh_dir("sweep_bad");
  const auto r = run_nntrain("sweep " + base + " --out " + out + " " + grid);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains(message));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(out));
}

}  // namespace

TEST_CASE("sweep bad grid: unknown key is exit 2 naming the point", "[sweep][errors]") {
  check_bad_grid("--grid optimizer.lrr=0.1,0.2", "point 1 of 2 (optimizer.lrr=0.1) is invalid: config /optimizer/lrr: unknown key \"lrr\"");
}

TEST_CASE("sweep bad grid: a bad value is exit 2 naming the point", "[sweep][errors]") {
  check_bad_grid("--grid optimizer.lr=0.1,-1,0.2", "point 2 of 3 (optimizer.lr=-1) is invalid: config /optimizer/lr");
}

TEST_CASE("sweep bad grid: an empty list is exit 2", "[sweep][errors]") {
  check_bad_grid("--grid optimizer.lr=", "--grid optimizer.lr: value 1 of 1 is empty");
}

TEST_CASE("sweep bad grid: a duplicate key is exit 2", "[sweep][errors]") {
  check_bad_grid("--grid optimizer.lr=0.1 --grid optimizer.lr=0.2", "--grid optimizer.lr is given twice");
}

TEST_CASE("sweep bad grid: a flag's bad value names the flag within the point", "[sweep][errors]") {
  check_bad_grid("--grid seed=1,2 --threads 5000",
                 "point 1 of 2 (seed=1) is invalid: --threads (config /cpu/threads): value 5000 is out of range");
  check_bad_grid("--grid seed=1,2 cpu.threads=5000", "point 1 of 2 (seed=1) is invalid: config /cpu/threads: value 5000");
}

TEST_CASE("sweep bad grid: a key a flag also sets is exit 2", "[sweep][errors]") {
  check_bad_grid("--lr 0.1 --grid optimizer.lr=0.1,0.2", "also set by a flag");
}

TEST_CASE("sweep bad grid: a key an override also sets is exit 2 (the grid value would drop it)", "[sweep][errors]") {
  check_bad_grid("--grid seed=1,2 seed=5", "--grid seed: the override seed=5 sets it too");
  // Objects merge (CONFIG.md): a key inside them that they do not name stays the override's.
  CHECK_NOTHROW(check_axis_vs_overrides(parse_sweep(R"(optimizer={"lr":0.1},{"lr":0.2})", "--grid"),
                                        {"optimizer.type=sgd"}, "--grid"));
  CHECK_THROWS_WITH(check_axis_vs_overrides(parse_sweep("optimizer.lr=0.1,0.2", "--grid"), {"optimizer.lr=0.3"}, "--grid"),
                    Catch::Contains("--grid optimizer.lr: the override optimizer.lr=0.3 sets it too"));
  // ... unless they name it: then it is lost.
  CHECK_THROWS_WITH(check_axis_vs_overrides(parse_sweep(R"(optimizer={"lr":0.1},{"type":"sgd"})", "--grid"),
                                            {"optimizer.lr=0.3"}, "--grid"),
                    Catch::Contains("the override optimizer.lr=0.3 sets it too"));
  // An override of the section above the axis: lost where its object sets the swept key.
  CHECK_THROWS_WITH(check_axis_vs_overrides(parse_sweep("optimizer.lr=0.1,0.2", "--grid"), {R"(optimizer={"lr":0.3})"},
                                            "--grid"),
                    Catch::Contains("sets it too"));
  CHECK_NOTHROW(check_axis_vs_overrides(parse_sweep("optimizer.lr=0.1,0.2", "--grid"), {R"(optimizer={"type":"sgd"})"},
                                        "--grid"));
  CHECK_NOTHROW(check_axis_vs_overrides(parse_sweep("optimizer.lr=0.1,0.2", "--grid"), {"optimizer.type=sgd"}, "--grid"));
}

TEST_CASE("sweep: a missing --init-model is said once, not blamed on a grid point", "[sweep][errors]") {
  const std::string out = fresh_dir("sweep_init_missing");
  const auto r = run_nntrain(std::string("sweep ") + kBase + " --out " + out + " --grid seed=1,2 --init-model " + out +
                             "-no-such.json");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("no-such.json"));
  CHECK_THAT(r.err, !Catch::Contains("point 1 of 2"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("sweep bad grid: more than 10,000 points is exit 2 before anything is written", "[sweep][errors]") {
  std::string seeds, lrs;
  for (int i = 0; i < 101; ++i) seeds += (i ? "," : "") + std::to_string(i);
  for (int i = 1; i <= 100; ++i) lrs += (i > 1 ? "," : "") + std::to_string(i) + "e-4";
  // (--dry-run: were the limit gone, this would plan the folders, not train 10,100 runs.)
  check_bad_grid("--dry-run --grid seed=" + seeds + " --grid optimizer.lr=" + lrs,
                 "--grid: 10100 points (101 x 100) is more than one sweep plans (10000)");
}

TEST_CASE("sweep and bench: a value listed twice is exit 2 (the two points would be one run)", "[sweep][errors]") {
  check_bad_grid("--grid seed=1,2,1", "--grid seed: 1 is listed twice (values 1 and 3)");
  CHECK_THROWS_WITH(parse_sweep("data.grid=[5, 5],4,[5,5]"), Catch::Contains("listed twice (values 1 and 3)"));
  CHECK_NOTHROW(parse_sweep("data.grid=5,[5,5]"));  // written differently: the resolved configs tell
  // 5 and [5,5] are both a 5 x 5 grid, and across two axes seed 1 is the config's own seed.
  const std::string any_grid = "--config configs/peaks.json --quiet train.epochs=3";  // kBase sets data.grid
  check_bad_grid("--grid 'data.grid=4,5,[5,5]'",
                 "--grid: points 2 and 3 (data.grid=5 and data.grid=[5,5]) give the same config", any_grid);
  check_bad_grid("--grid seed=1,7 --grid 'data.grid=[4,4],4'",
                 "--grid: points 1 and 2 (seed=1, data.grid=[4,4] and seed=1, data.grid=4) give the same config",
                 any_grid);
  const auto w = run_nntrain("bench " + any_grid + " --device cpu --sweep 'data.grid=5,[5,5]'");
  CHECK(w.exit_code == 2);
  CHECK_THAT(w.err, Catch::Contains("--sweep data.grid: values 1 and 2 (\"5\" and \"[5,5]\") give the same config"));
  const std::string out = fresh_dir("bench_twice");
  const auto r = run_nntrain(std::string("bench ") + kBase + " --device cpu --sweep data.grid=5,5 --export-json " + out +
                             "/b.json");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--sweep data.grid: 5 is listed twice"));
  const auto o = run_nntrain(std::string("bench ") + kBase + " --device cpu --sweep data.grid=4,5 data.grid=6");
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.err, Catch::Contains("--sweep data.grid: the override data.grid=10 sets it too"));
}

TEST_CASE("sweep local: 6 points (lr x widths, one diverging), collected, resumed, a missing point collected",
          "[sweep][cli]") {
  const std::string out = fresh_dir("sweep_local");
  const std::string cmd = std::string("sweep ") + kBase + " " + kGrid + " --jobs 2 --out " + out;
  const auto r = run_nntrain(cmd);
  INFO(r.err);
  CHECK(r.exit_code == 4);  // every point finished, one diverged (docs/EXIT_CODES.md)

  const json plan = read_json(out + "/plan.json");
  REQUIRE(plan["points"].size() == 6);
  CHECK(plan["points"][1]["label"] == "optimizer.lr=0.01, model.layers=[2,64,64,64,1]");
  // Each point is an ordinary train run with its resolved config.
  const json cfg = read_json(out + "/points/005/config.resolved.json");
  CHECK(cfg["optimizer"]["lr"] == 1.0);
  CHECK(cfg["model"]["layers"] == json::array({2, 64, 64, 64, 1}));
  CHECK(cfg["train"]["epochs"] == 300);
  CHECK(read_json(out + "/points/005/sweep-run.json")["jobs"] == 2);

  const json res = read_json(out + "/results.json");
  CHECK(res["counts"]["ok"] == 5);
  CHECK(res["counts"]["diverged"] == 1);
  CHECK(res["exit_code"] == 4);
  CHECK(res["rows"][5]["status"] == "diverged");  // lr 1 on the deep net
  CHECK(res["rows"][4]["status"] == "ok");        // lr 1 on the narrow one
  // Timing: concurrent:2 where another point ran during it (the two points started first
  // overlap unless the first ended before the second began), alone where none did.
  for (const auto& row : res["rows"]) CHECK((row["timing"] == "alone" || row["timing"] == "concurrent:2"));
  const json run0 = read_json(out + "/points/000/sweep-run.json"), run1 = read_json(out + "/points/001/sweep-run.json");
  REQUIRE(run0["started_unix"].is_number());
  CHECK(run0["finished_unix"].get<double>() >= run0["started_unix"].get<double>());
  const bool overlap = run1["started_unix"].get<double>() < run0["finished_unix"].get<double>() &&
                       run0["started_unix"].get<double>() < run1["finished_unix"].get<double>();
  CHECK(res["rows"][0]["timing"] == (overlap ? "concurrent:2" : "alone"));
  CHECK(res["best"]["status"] == "ok");
  for (const auto& row : res["rows"])
    if (row["status"] == "ok") CHECK(row["final_loss"].get<double>() >= res["best"]["final_loss"].get<double>());
  // The table's final losses are the points' own summaries'.
  CHECK(res["rows"][2]["final_loss"] == read_json(out + "/points/002/summary.json")["runs"][0]["final_loss"]);
  CHECK_THAT(r.out, Catch::Contains("6 points, 6 rows: 5 ok, 1 diverged") && Catch::Contains("best (lowest final loss)"));
  const std::string csv = slurp(out + "/results.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 7);

  // Resume: only the point without a result runs again; the others are left alone.
  const std::string kept = slurp(out + "/points/000/sweep-run.json");
  fs::remove(out + "/points/003/summary.json");
  const auto again = run_nntrain(cmd);
  CHECK(again.exit_code == 4);
  CHECK_THAT(again.err, Catch::Contains("6 points, 5 finished earlier, 1 to run"));
  CHECK(slurp(out + "/points/000/sweep-run.json") == kept);
  CHECK(fs::exists(out + "/points/003/summary.json"));
  // The rerun ran with no other point beside it; its first attempt is kept as an earlier run.
  CHECK(read_json(out + "/results.json")["rows"][3]["timing"] == "alone");
  CHECK(read_json(out + "/points/003/sweep-run.json")["earlier_runs"].size() == 1);

  // Another sweep into the same folder is refused.
  const auto other = run_nntrain(std::string("sweep ") + kBase + " --grid optimizer.lr=0.02 --out " + out);
  CHECK(other.exit_code == 2);
  CHECK_THAT(other.err, Catch::Contains("holds a different sweep"));

  // Collect with a point that never ran: listed as missing, exit 5.
  fs::remove(out + "/points/003/summary.json");
  fs::remove(out + "/points/003/sweep-run.json");
  // And a training time under 1 ms: the table prints it in us (it once printed "0.00 ms").
  json s0 = read_json(out + "/points/000/summary.json");
  s0["runs"][0]["train_seconds"] = 3.2e-6;
  std::ofstream(out + "/points/000/summary.json") << s0.dump();
  const auto col = run_nntrain("sweep --collect " + out);
  CHECK(col.exit_code == 5);
  const json res2 = read_json(out + "/results.json");
  CHECK(res2["counts"]["missing"] == 1);
  CHECK(res2["counts"]["diverged"] == 1);
  CHECK(res2["counts"]["ok"] == 4);
  CHECK(res2["rows"][3]["status"] == "missing");
  CHECK(res2["rows"][3]["note"] == "not run");
  CHECK(res2["complete"] == false);
  CHECK_THAT(col.out, Catch::Contains("4 ok, 1 diverged, 1 missing"));
  CHECK_THAT(col.out, Catch::Contains(" 3.2 us "));
  fs::remove_all(out);
}

TEST_CASE("sweep slurm: names and folders an #SBATCH line cannot carry", "[sweep][slurm][errors]") {
  // A config name with a space, '#' and a newline becomes a job name of safe characters (the
  // newline would otherwise end the directives and start a shell line).
  const std::string out = fresh_dir("sweep_slurm_name");
  const auto dry = run_nntrain(std::string("sweep ") + kBase + " --grid seed=1,2 --launcher slurm --dry-run --out " +
                               out + " 'name=peaks lr #1\ntouch /tmp/x\n#'");
  CHECK(dry.exit_code == 0);
  const std::string script = slurp(out + "/sweep.sbatch");
  CHECK_THAT(script, Catch::Contains("#SBATCH --job-name=nntrain-sweep-peaks_lr__1_touch__tmp_x__\n"));
  CHECK(script.find("\ntouch") == std::string::npos);
  fs::remove_all(out);
  // A sweep folder with a space, a '#' or a '%' in its path: exit 2, nothing written.
  for (const char* bad : {"sweep dir", "sweep#1", "sweep%a"}) {
    const std::string d = fresh_dir(bad);
    const auto r = run_nntrain(std::string("sweep ") + kBase + " --grid seed=1,2 --launcher slurm --dry-run --out '" +
                               d + "'");
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("#SBATCH"));
    CHECK_FALSE(fs::exists(d));
  }
}

TEST_CASE("sweep: a local launcher's points inside a Slurm allocation share its CPUs, and one that ran alone says so",
          "[sweep][slurm]") {
  const std::string out = fresh_dir("sweep_in_alloc");
  REQUIRE(run_nntrain(std::string("sweep ") + kBase + " --grid seed=1,2 --dry-run --out " + out).exit_code == 0);
  // What the local launcher runs for --jobs 2 inside `salloc -c 4`.
  const auto r = run_nntrain("sweep --run-point " + out + " 0 --jobs 2", "SLURM_JOB_ID=77 SLURM_CPUS_ON_NODE=4");
  CHECK(r.exit_code == 0);
  const json info = read_json(out + "/points/000/sweep-run.json");
  CHECK(info["launcher"] == "local");
  CHECK(info["threads"] == 2);
  CHECK(info["slurm"]["job_id"] == "77");
  CHECK(run_nntrain("sweep --collect " + out).exit_code == 5);  // (point 1 never ran)
  // Given half the CPUs for --jobs 2, but no other point ran beside it: its time was not
  // shared (once the table said concurrent:2 for every point of a --jobs 2 sweep).
  CHECK(read_json(out + "/results.json")["rows"][0]["timing"] == "alone");
  // Point 1 after it, not beside it: both alone.
  CHECK(run_nntrain("sweep --run-point " + out + " 1 --jobs 2", "SLURM_JOB_ID=77 SLURM_CPUS_ON_NODE=4").exit_code == 0);
  CHECK(run_nntrain("sweep --collect " + out).exit_code == 0);
  const json rows = read_json(out + "/results.json")["rows"];
  CHECK(rows[0]["timing"] == "alone");
  CHECK(rows[1]["timing"] == "alone");
  fs::remove_all(out);
}
