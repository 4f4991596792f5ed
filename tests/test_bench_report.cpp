// test_bench_report.cpp — bench's page, table and JSON driven by hand-made points (split from
// test_reports.cpp, which keeps train's reports): a simulated or stamped GPU refused, the
// recorded command line's quoting, the page's header (date, command, config, overrides,
// machine, commit), a slower GPU, a diverged run's time left out, repeats that disagree
// flagged with the verdict marked, the spread limit, Markdown escaping of names and values,
// an exact tie, the warm-up the runs had. Several cases exist because a planted bug survived
// without them (scripts/lib/mutants-rows-reports.sh, mutants-rows-userpath.sh).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "bench_report.hpp"
#include "bench_worth.hpp"
#include "cli_util.hpp"
#include "config.hpp"
#include "report.hpp"

using namespace nntrain;
using nlohmann::json;
using testutil::printed_by;

TEST_CASE("bench refuses to time a simulated GPU, and only a simulated one", "[bench][gpusim]") {
  GpuInfo real;
  real.available = true;
  real.name = "NVIDIA H100 80GB HBM3";
  CHECK(bench_gpu_problem(real).empty());
  GpuInfo sim = real;
  sim.name = "GPGPU-Sim_v4.2.0";
  sim.simulated = true;
  const std::string why = bench_gpu_problem(sim);
  CHECK_THAT(why, Catch::Contains("GPGPU-Sim_v4.2.0"));
  CHECK_THAT(why, Catch::Contains("not measurements"));
  // Nor a stamped kernel (a diagnostic whose clock reads cost time), on any GPU.
  ::setenv("NNTRAIN_RESIDENT_STAMPS", "s.csv", 1);
  const std::string stamped = bench_gpu_problem(real);
  ::unsetenv("NNTRAIN_RESIDENT_STAMPS");
  CHECK_THAT(stamped, Catch::Contains("NNTRAIN_RESIDENT_STAMPS is set"));
  ::setenv("NNTRAIN_RESIDENT_STAMPS", "", 1);  // set but empty: off, as the backend reads it
  CHECK(bench_gpu_problem(real).empty());
  ::unsetenv("NNTRAIN_RESIDENT_STAMPS");
}

namespace {

std::string console_of(const BenchReport& r) {
  return printed_by([&](std::FILE* f) { print_bench(f, r, false); });
}

std::string line_of(const std::string& text, const std::string& start) {
  const size_t at = text.find(start);
  return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
}

RunResult timed_run(Device d, std::vector<double> times) {
  RunResult r;
  r.device = d;
  r.backend = d == Device::cpu ? "cpu-fast" : "gpu-fused";
  r.samples = 100;
  r.epochs_requested = r.epochs_done = r.epochs_timed = 4;
  r.warmup_epochs = 4;  // hand_context's 5, capped by the 4 epochs (warmup_epochs_of)
  r.losses = {4.0f, 3.0f, 2.0f, 1.0f};
  r.train_seconds_per_repeat = std::move(times);
  r.train_seconds = summarize(r.train_seconds_per_repeat).median;
  return r;
}

BenchPoint timed_point(int index, int grid, RunResult cpu, RunResult gpu) {
  BenchPoint p;
  p.index = index;
  p.key = "data.grid";
  p.text = std::to_string(grid);
  p.value = grid;
  p.samples = grid * grid;
  p.epochs = 4;
  p.runs = {std::move(cpu), std::move(gpu)};
  return p;
}

// What cmd_bench records, by hand; the command line as the caller gives it.
nlohmann::json hand_context() {
  return {{"nntrain_version", "0.1.0"}, {"git_revision", "abc1234-dirty"}, {"build_type", "Release"},
          {"optimized", true}, {"compiler", "gcc 12.2.0"}, {"cuda_build", "built without CUDA"},
          {"precision", "fp32"}, {"cpu_model", "Test CPU 9000"}, {"hardware_threads", 2},
          {"cpu_simd", "avx2 fma"}, {"load_average_1min", 5.7},
          {"gpu", {{"available", false}, {"reason", "no NVIDIA driver"}}},
          {"date_utc", "2026-11-29T01:02:03Z"}, {"config_file", "configs/peaks.json"},
          {"overrides", {"train.epochs=50", "model.layers=[2,8,1]"}}, {"repeats", 5}, {"warmup_epochs", 5},
          {"command_line", "build/nntrain bench --config configs/peaks.json 'model.layers=[2,8,1]'"}};
}

// A two-device report with hand_context(), its points to be added.
BenchReport hand_report(const std::string& name) {
  BenchReport r;
  r.name = name;
  r.context = hand_context();
  r.devices = {Device::cpu, Device::gpu};
  return r;
}

}  // namespace

TEST_CASE("shell quoting of the recorded command line, checked by bash reading it back", "[report][bench]") {
  CHECK(shell_quote("configs/peaks.json") == "configs/peaks.json");
  CHECK(shell_quote("train.epochs=50") == "train.epochs=50");
  CHECK(shell_quote("model.layers=[2,8,1]") == "'model.layers=[2,8,1]'");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("a\nb") == "$'a\\nb'");
  CHECK(shell_command({"build/nntrain", "bench", "--sweep", "data.grid=4,8"}) == "build/nntrain bench --sweep data.grid=4,8");
  // The independent check: bash parses the quoted line back into the same arguments.
  const std::vector<std::string> args = {"x",     "", "a b", "it's", "$HOME", "`id`", "a\nb\tc\x01", "back\\slash",
                                         "[2,8]", "*", "é", "--price=cpu=1;gpu=2", "!x", "'", "\\'"};
  const std::string dir = testutil::fresh_dir("shell_quote");
  const std::string script = testutil::write_text(dir + "/s.sh", "printf '%s|' " + shell_command(args) + "\n");
  std::FILE* p = ::popen(("bash '" + script + "'").c_str(), "r");
  REQUIRE(p);
  std::string got;
  for (int c; (c = std::fgetc(p)) != EOF;) got += char(c);
  CHECK(::pclose(p) == 0);
  std::string want;
  for (const auto& a : args) want += a + "|";
  CHECK(got == want);
  std::filesystem::remove_all(dir);
  // This process's own arguments: the test binary first.
  const std::vector<std::string> me = process_argv();
  REQUIRE_FALSE(me.empty());
  CHECK_THAT(me[0], Catch::Contains("nntrain_tests"));
}

TEST_CASE("bench page header: date, command, config, overrides, machine and commit", "[report][bench]") {
  BenchReport r;
  r.name = "peaks";
  r.context = hand_context();
  r.devices = {Device::cpu};
  RunResult cpu = timed_run(Device::cpu, {0.020, 0.021, 0.022});
  BenchPoint p = timed_point(0, 10, cpu, cpu);
  p.runs.pop_back();
  r.points = {p};
  finish_report(r);
  // A command line the caller recorded is kept (finish_report fills it from /proc otherwise).
  CHECK(r.context["command_line"] == hand_context()["command_line"]);
  CHECK(r.context["spread_limit"] == 1.5);

  const std::string md = bench_markdown(r);
  CHECK_THAT(md, Catch::Contains("- date: 2026-11-29T01:02:03Z (UTC)\n"));
  CHECK_THAT(md, Catch::Contains("- command: `build/nntrain bench --config configs/peaks.json 'model.layers=[2,8,1]'`\n"));
  CHECK_THAT(md, Catch::Contains("- config: `configs/peaks.json`; overrides: `train.epochs=50` `'model.layers=[2,8,1]'`\n"));
  CHECK_THAT(md, Catch::Contains("- nntrain 0.1.0 (commit abc1234-dirty), Release build, gcc 12.2.0, built without CUDA, fp32\n"));
  CHECK_THAT(md, Catch::Contains("- CPU: Test CPU 9000 (2 hardware threads, load average 5.70)\n") ||
                     Catch::Contains("- CPU: Test CPU 9000 (2 hardware threads, load average 5.7)\n"));
  CHECK_THAT(md, Catch::Contains("- GPU: none (no NVIDIA driver)\n"));
  const json j = bench_json(r);
  for (const char* k : {"date_utc", "command_line", "config_file", "overrides", "cpu_model", "hardware_threads", "gpu",
                        "git_revision", "build_type", "load_average_1min", "spread_limit"})
    CHECK(j["context"].contains(k));
  const std::string out = console_of(r);
  CHECK_THAT(out, Catch::Contains("run      2026-11-29T01:02:03Z UTC · config configs/peaks.json · overrides "
                                  "train.epochs=50 'model.layers=[2,8,1]'"));
  CHECK_THAT(out, Catch::Contains("command  build/nntrain bench --config configs/peaks.json"));

  // --device both on a machine without a GPU: the page says the GPU half was not run.
  CHECK_THAT(md, !Catch::Contains("GPU half"));
  r.context["gpu_not_run"] = "no NVIDIA driver";
  CHECK_THAT(bench_markdown(r), Catch::Contains("- the GPU half of the devices asked for was not run: no NVIDIA driver\n"));

  // Without a recorded command line, this process's own, quoted.
  BenchReport mine;
  mine.name = "x";
  finish_report(mine);
  CHECK(mine.context["command_line"] == shell_command(process_argv()));
  CHECK(mine.context["argv"] == process_argv());
}

TEST_CASE("repeats that disagree are flagged, and that point's speed-up and verdicts marked uncertain",
          "[report][bench][spread]") {
  // Point data.grid = 10: the CPU's five repeats range 3.0 ms .. 25 ms: max/min = 25 / 3 =
  // 8.33 > 1.5. Point data.grid = 20: every spread under 1.5 (the GPU's 1.0 .. 1.4: 1.4).
  BenchReport r = hand_report("spread");
  r.points.push_back(timed_point(0, 10, timed_run(Device::cpu, {0.0206, 0.0030, 0.0250, 0.0206, 0.0210}),
                                 timed_run(Device::gpu, {0.010, 0.010, 0.011, 0.010, 0.010})));
  r.points.push_back(timed_point(1, 20, timed_run(Device::cpu, {0.100, 0.101, 0.102, 0.100, 0.100}),
                                 timed_run(Device::gpu, {0.010, 0.014, 0.012, 0.011, 0.010})));
  r.prices = parse_prices("cpu=1,gpu=3");
  finish_report(r);

  const json j = bench_json(r);
  CHECK(j["results"][0]["spread"].get<double>() == Approx(0.0250 / 0.0030));
  CHECK(j["results"][0]["spread_wide"] == true);
  CHECK(j["results"][1]["spread_wide"] == false);
  CHECK(j["results"][3]["spread"].get<double>() == Approx(1.4));
  CHECK(j["results"][3]["spread_wide"] == false);
  CHECK(j["points"][0]["uncertain"] == true);
  CHECK(j["points"][0]["uncertain_reason"] == "cpu repeats spread 8.33\u00d7 (max/min > 1.5)");
  CHECK(j["points"][1]["uncertain"] == false);
  CHECK(j["points"][1]["uncertain_reason"].is_null());
  CHECK(j["points"][0]["verdict"] == "gpu 2.1\u00d7 faster, but cpu 1.5\u00d7 cheaper per run at these prices");

  const std::string md = bench_markdown(r);
  CHECK_THAT(md, Catch::Contains("| stddev | max/min | samples/s |"));
  CHECK_THAT(line_of(md, "| 10 | 100 | cpu |"), Catch::Contains("| **8.33\u00d7 wide** |"));
  CHECK_THAT(line_of(md, "| 20 | 400 | gpu |"), Catch::Contains("| 1.40\u00d7 |"));
  // The CPU/GPU table: 20.6 / 10.0 ms = 2.06.
  CHECK_THAT(line_of(md, "| 10 | 100 | 20.60 ms |"), Catch::Contains("GPU 2.06\u00d7 faster (uncertain)") &&
                                                         Catch::Contains("**uncertain:** gpu 2.1\u00d7 faster"));
  CHECK_THAT(line_of(md, "| 20 | 400 | 100.00 ms |"), !Catch::Contains("uncertain"));
  CHECK_THAT(md, Catch::Contains("**Uncertain** — repeats that disagree (slowest / fastest above 1.5"));
  CHECK_THAT(md, Catch::Contains("- data.grid = 10: cpu repeats spread 8.33\u00d7 (max/min > 1.5)\n"));
  CHECK_THAT(md, !Catch::Contains("data.grid = 20: "));

  const std::string out = console_of(r);
  CHECK_THAT(out, Catch::Contains("warning: repeats spread 8.33\u00d7 (max/min > 1.5, load average 5.7"));
  CHECK_THAT(out, Catch::Contains("speed-up: GPU 2.06\u00d7 faster (uncertain)"));
  CHECK_THAT(out, Catch::Contains("verdict (uncertain): gpu 2.1\u00d7 faster"));
  CHECK_THAT(out, Catch::Contains("speed-up: GPU 9.09\u00d7 faster\n"));  // 100 ms / 11 ms
}

TEST_CASE("bench: a slower GPU's factor, a diverged run's time left out, the time per epoch from the median",
          "[report][bench]") {
  // data.grid = 10: CPU 10, 11, 14 ms (median 11, mean 11.67), GPU 22 ms: GPU 2x slower.
  // data.grid = 20: the GPU run diverged at epoch 2: its 1 ms is not a time to compare.
  BenchReport r = hand_report("edges");
  r.points.push_back(timed_point(0, 10, timed_run(Device::cpu, {0.010, 0.011, 0.014}),
                                 timed_run(Device::gpu, {0.022, 0.022, 0.022})));
  RunResult diverged = timed_run(Device::gpu, {0.001});
  diverged.diverged_epoch = 2;
  r.points.push_back(timed_point(1, 20, timed_run(Device::cpu, {0.040, 0.040, 0.040}), diverged));
  finish_report(r);

  const json j = bench_json(r);
  CHECK(j["points"][0]["speedup"].get<double>() == Approx(0.5));
  CHECK(j["results"][0]["seconds_per_epoch"].get<double>() == Approx(0.011 / 4));  // median / 4 epochs
  CHECK(j["points"][1]["speedup"].is_null());
  CHECK(j["results"][3]["status"] == "diverged");

  const std::string md = bench_markdown(r);
  CHECK_THAT(line_of(md, "| 10 | 100 | 11.00 ms |"), Catch::Contains("| GPU 2.00\u00d7 slower |"));
  // Its partial time is no time to compare: no min, max, stddev or rate beside "diverged".
  CHECK_THAT(line_of(md, "| 20 | 400 | gpu |"), Catch::Contains("| diverged | - | - | - | 1.00\u00d7 | - |"));
  CHECK_THAT(line_of(md, "| 20 | 400 | 40.00 ms |"), Catch::Contains("| 40.00 ms | - | - |"));
  const std::string out = console_of(r);
  CHECK_THAT(out, Catch::Contains("speed-up: GPU 2.00\u00d7 slower\n"));
  CHECK_THAT(out, Catch::Contains("diverged at epoch 2: its time is not used"));
  const std::string point2 = out.substr(out.find("Point 2/2"));  // median, min, max, mean, stddev, rate: "-"
  CHECK_THAT(line_of(point2, "  gpu "), Catch::Matches(R"(\s*gpu\s+gpu-fused\s+1(\s+-){6}\s+1\s+0\.0 us\s*)"));
}

TEST_CASE("bench: a GPU run lost at the smallest size leaves the crossover below the first compared size, not "
          "below the range",
          "[report][bench]") {
  // data.grid = 10: the GPU diverged; 20 (400 samples): GPU 3 ms against CPU 4 ms.
  BenchReport r = hand_report("gap");
  RunResult diverged = timed_run(Device::gpu, {0.001});
  diverged.diverged_epoch = 2;
  r.points.push_back(timed_point(0, 10, timed_run(Device::cpu, {0.001}), diverged));
  r.points.push_back(timed_point(1, 20, timed_run(Device::cpu, {0.004}), timed_run(Device::gpu, {0.003})));
  r.prices = parse_prices("cpu=1,gpu=1");
  finish_report(r);
  const std::string speed = "GPU faster at every size with a time on both devices, from data.grid = 20 (400 samples): "
                            "the crossover is below 400 samples, where no point has one";
  CHECK(bench_json(r)["crossover"]["message"] == speed);
  CHECK_THAT(bench_markdown(r), Catch::Contains(speed) && Catch::Contains("GPU cheaper per run at every size with a time") &&
                                    !Catch::Contains("below this range"));
  CHECK_THAT(console_of(r), Catch::Contains(speed));
}

TEST_CASE("bench header: timing.repeats swept gives the range, and the JSON context no one value", "[report][bench]") {
  BenchReport r = hand_report("reps");
  r.points.push_back(timed_point(0, 10, timed_run(Device::cpu, {0.010}), timed_run(Device::gpu, {0.005})));
  r.points.push_back(timed_point(1, 10, timed_run(Device::cpu, {0.010, 0.011, 0.012, 0.013}),
                                 timed_run(Device::gpu, {0.005, 0.005, 0.005, 0.005})));
  for (int i = 0; i < 2; ++i) {
    r.points[size_t(i)].key = "timing.repeats";
    r.points[size_t(i)].value = i == 0 ? 1 : 4;
  }
  r.context["repeats"] = nullptr;  // as cmd_bench records a swept setting
  finish_report(r);
  CHECK_THAT(bench_markdown(r), Catch::Contains("- 1-4 timed repeats per point (timing.repeats swept) (median shown)"));
  CHECK_THAT(console_of(r), Catch::Contains("timing   1-4 timed repeats per point (timing.repeats swept)"));
  r.points.pop_back();
  finish_report(r);
  CHECK_THAT(bench_markdown(r), Catch::Contains("- 1 timed repeat(s) per point (median shown)"));
}

TEST_CASE("bench page: a backtick in the command keeps its code span, an interpolated time to target is starred",
          "[report][bench][worth]") {
  BenchReport r = hand_report("marks");
  r.context["command_line"] = "nntrain bench --config `x`.json";
  RunResult cpu = timed_run(Device::cpu, {0.010, 0.010, 0.010});
  RunResult gpu = timed_run(Device::gpu, {0.005, 0.005, 0.005});
  TargetResult t;
  t.loss = 2.5;
  t.reached = true;
  t.epoch = 3;
  t.seconds = 0.0075;  // interpolated on the CPU (epochs 3..4, 5 and 10 ms at their ends)
  t.bracket_from = 2;
  t.bracket_to = 4;
  t.bracket_from_seconds = 0.005;
  t.bracket_to_seconds = 0.010;
  cpu.target = t;
  t.seconds = 0.004;  // measured on the GPU
  t.measured = true;
  t.readings = {0.004};
  gpu.target = t;
  r.points.push_back(timed_point(0, 10, cpu, gpu));
  finish_report(r);

  // A code span holding one backtick is fenced by two (CommonMark).
  CHECK_THAT(bench_markdown(r), Catch::Contains("- command: ``nntrain bench --config `x`.json``\n"));
  const std::string out = console_of(r);
  CHECK_THAT(out, Catch::Contains("7.50 ms*"));
  CHECK_THAT(out, Catch::Contains("4.00 ms "));
  CHECK_THAT(out, !Catch::Contains("4.00 ms*"));
}

TEST_CASE("the spread limit, at and around 1.5, and its edge cases", "[bench][spread]") {
  CHECK(spread_ratio(summarize({1.0, 1.5})) == 1.5);
  CHECK_FALSE(spread_is_wide(summarize({1.0, 1.5})));  // at the limit: not above it
  CHECK(spread_is_wide(summarize({1.0, 1.51})));
  CHECK(spread_ratio(summarize({0.3})) == 1.0);         // one repeat: nothing to disagree
  CHECK_FALSE(spread_is_wide(summarize({0.3})));
  CHECK(std::isinf(spread_ratio(summarize({0.0, 0.2}))));  // a repeat that read 0
  CHECK(spread_is_wide(summarize({0.0, 0.2})));
  CHECK(spread_is_wide(summarize({1.0, 2.0}), 2.5) == false);
  CHECK(kSpreadLimit == 1.5);
}

TEST_CASE("bench page: a name or swept value holding a pipe or a newline keeps every row's columns", "[report][bench]") {
  BenchReport r = hand_report("evil\n\n| x | y |");
  r.points.push_back(timed_point(0, 10, timed_run(Device::cpu, {0.010}), timed_run(Device::gpu, {0.005})));
  r.points.push_back(timed_point(1, 20, timed_run(Device::cpu, {0.040}), timed_run(Device::gpu, {0.010})));
  r.points[0].key = r.points[1].key = "name";
  r.points[0].text = "a|b";
  r.points[1].text = "c\\|d\ne";
  finish_report(r);
  const std::string md = bench_markdown(r);
  // By hand: the heading on one line, each | escaped (and a backslash before one doubled).
  CHECK_THAT(md, Catch::StartsWith("## nntrain bench: evil  \\| x \\| y \\|\n\n"));
  CHECK(line_of(md, "| a\\|b | 100 | cpu |") != "");
  CHECK(line_of(md, "| c\\\\\\|d e | 400 | gpu |") != "");
  // Every table row has as many unescaped pipes as its table's header (15 + the worth
  // columns, or 6), and no line is the name's injected row.
  size_t pipes_expected = 0;
  std::istringstream lines(md);
  for (std::string line; std::getline(lines, line);) {
    CHECK(line != "| x | y |");
    if (line.empty() || line[0] != '|') {
      pipes_expected = 0;
      continue;
    }
    size_t pipes = 0;
    for (size_t i = 0; i < line.size(); ++i)
      if (line[i] == '\\') ++i;
      else if (line[i] == '|') ++pipes;
    if (pipes_expected == 0) pipes_expected = pipes;
    INFO(line);
    CHECK(pipes == pipes_expected);
  }
}

TEST_CASE("bench page: a name that would be code, emphasis, HTML or a link is shown as written", "[report][bench]") {
  BenchReport r = hand_report("x`y *z* _w_ <!-- [l](u) ~~s~~ &amp;");
  r.points.push_back(timed_point(0, 10, timed_run(Device::cpu, {0.010}), timed_run(Device::gpu, {0.005})));
  r.points[0].key = "name";
  r.points[0].text = "<b>";
  finish_report(r);
  const std::string md = bench_markdown(r);
  // By hand: each such character backslash-escaped (CommonMark shows it as itself).
  CHECK_THAT(md, Catch::StartsWith("## nntrain bench: x\\`y \\*z\\* \\_w\\_ \\<!-- \\[l\\](u) \\~\\~s\\~\\~ \\&amp;\n"));
  CHECK(line_of(md, "| \\<b\\> | 100 | cpu |") != "");
}

TEST_CASE("bench page: an exact tie reads equally fast in the speed-up column, as in the verdict", "[report][bench]") {
  BenchReport r = hand_report("tie");
  r.points.push_back(timed_point(0, 10, timed_run(Device::cpu, {0.010}), timed_run(Device::gpu, {0.010})));
  r.points.push_back(timed_point(1, 20, timed_run(Device::cpu, {0.020}), timed_run(Device::gpu, {0.010})));
  finish_report(r);
  const std::string md = bench_markdown(r);
  CHECK_THAT(md, Catch::Contains("| equally fast |"));
  CHECK_THAT(md, !Catch::Contains("GPU 1.00\u00d7 faster"));
  CHECK_THAT(md, Catch::Contains("| GPU 2.00\u00d7 faster |"));
}

TEST_CASE("bench header: the warm-up the runs had where train.epochs capped timing.warmup_epochs", "[report][bench]") {
  BenchReport r = hand_report("warm");  // timing.warmup_epochs 5
  r.points.push_back(timed_point(0, 10, timed_run(Device::cpu, {0.010}), timed_run(Device::gpu, {0.005})));
  finish_report(r);
  // Every run trains 4 epochs, so each warmed up for 4.
  const std::string capped = "4 warm-up epoch(s) excluded (timing.warmup_epochs 5 capped by train.epochs)";
  CHECK_THAT(bench_markdown(r), Catch::Contains("- 5 timed repeat(s) per point (median shown), " + capped + ";"));
  CHECK_THAT(console_of(r), Catch::Contains(capped));
  // A point of 10 epochs (a train.epochs sweep) warms up for all 5: 4 to 5 over the bench.
  r.points.push_back(timed_point(1, 20, timed_run(Device::cpu, {0.040}), timed_run(Device::gpu, {0.010})));
  for (RunResult& run : r.points[1].runs) run.warmup_epochs = 5;
  finish_report(r);
  const std::string mixed = "4-5 warm-up epochs excluded (timing.warmup_epochs 5, capped by train.epochs where smaller)";
  CHECK_THAT(bench_markdown(r), Catch::Contains(mixed));
  CHECK_THAT(console_of(r), Catch::Contains(mixed));
  // None capped: the setting alone.
  r.points.erase(r.points.begin());
  finish_report(r);
  CHECK_THAT(bench_markdown(r), Catch::Contains("per point (median shown), 5 warm-up epoch(s) excluded;"));
  // timing.warmup_epochs swept 10, 0 (the context holds the first point's 10): the range, not
  // a cap by train.epochs.
  r.points[0].key = "timing.warmup_epochs";
  for (RunResult& run : r.points[0].runs) run.warmup_epochs = 10;
  r.points.push_back(r.points[0]);
  for (RunResult& run : r.points[1].runs) run.warmup_epochs = 0;
  r.context["warmup_epochs"] = 10;
  finish_report(r);
  CHECK_THAT(bench_markdown(r), Catch::Contains("(median shown), 0-10 warm-up epochs excluded (timing.warmup_epochs "
                                                "swept); set-up"));
}
