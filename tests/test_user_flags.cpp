// test_user_flags.cpp — what a user touches first (issue 44, items 3 and 4), through the
// built binary: the no-GPU path (what is missing, the hint, `both` running the CPU half), one
// device vocabulary and the training flags on train, bench and sweep, quiet output and help
// texts a person can read.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli_util.hpp"
#include "gpu_info.hpp"

using namespace testutil;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A machine without a usable GPU, on any machine: the CUDA build's probe honours this; a
// CPU-only build has no GPU anyway.
const char* kNoGpu = "CUDA_VISIBLE_DEVICES= NNTRAIN_FAKE_NO_GPU=1";
const char* kHint = "--device cpu runs the CPU half";
// What the runtime says for "no driver" as well as "old driver": users cannot act on it.
const char* kRuntimeWords = "CUDA driver version is insufficient";

// `nntrain info`'s reason for having no GPU ("gpu        none: REASON").
std::string info_gpu_reason(const std::string& env) {
  const auto r = run_nntrain("info", env);
  const size_t at = r.out.find("none: ");
  if (at == std::string::npos) return "";
  return r.out.substr(at + 6, r.out.find('\n', at) - at - 6);
}

size_t lines(const std::string& s) { return size_t(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST_CASE("the no-GPU reason says what is missing, not the runtime's error string", "[cli][nogpu]") {
  using nntrain::GpuProbeFailure;
  using nntrain::describe_gpu_failure;
  const std::string words = "CUDA driver version is insufficient for CUDA runtime version";
  // No libcuda.so.1 at all: the runtime reports the same error as for an old driver.
  CHECK(describe_gpu_failure(GpuProbeFailure::insufficient_driver, false, 0, 13000, nullptr, words) ==
        "no NVIDIA driver found (libcuda.so.1 not loadable)");
  // A driver for CUDA 12.2 under a CUDA 13.0 runtime: both versions, as people write them.
  CHECK_THAT(describe_gpu_failure(GpuProbeFailure::insufficient_driver, true, 12020, 13000, nullptr, words),
             Catch::StartsWith("the NVIDIA driver supports CUDA 12.2, this build needs 13.0"));
  CHECK_THAT(describe_gpu_failure(GpuProbeFailure::no_device, true, 13000, 13000, nullptr, words),
             Catch::StartsWith("no CUDA device"));
  // An empty CUDA_VISIBLE_DEVICES hides every GPU: the reason names the variable.
  CHECK_THAT(describe_gpu_failure(GpuProbeFailure::no_device, true, 13000, 13000, "", words),
             Catch::Contains("CUDA_VISIBLE_DEVICES is \"\""));
  CHECK(describe_gpu_failure(GpuProbeFailure::other, true, 13000, 13000, nullptr, "unknown error") ==
        "no usable CUDA device: unknown error");
}

TEST_CASE("train --device gpu without a usable GPU: exit 3, what is missing, the CPU hint, nothing written",
          "[cli][nogpu][errors]") {
  const std::string out = fresh_dir("flags_gpu");
  const auto r = run_nntrain("--config configs/peaks.json --device gpu --epochs 1 --out " + out, kNoGpu);
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.err, Catch::StartsWith("nntrain: error: --device gpu: "));
  CHECK_THAT(r.err, Catch::Contains(kHint));
  CHECK(lines(r.err) == 1);
  // The same words as `info` (and the bench Markdown's context): one reason everywhere.
  const std::string reason = info_gpu_reason(kNoGpu);
  REQUIRE_FALSE(reason.empty());
  CHECK_THAT(r.err, Catch::Contains(reason));
  CHECK_THAT(r.err, !Catch::Contains("no CUDA device: "));  // the registry's generic prefix
  CHECK_FALSE(fs::exists(out));
  // bench and sweep say the same.
  const auto b = run_nntrain("bench --config configs/peaks.json --device gpu --reps 1", kNoGpu);
  CHECK(b.exit_code == 3);
  CHECK_THAT(b.err, Catch::Contains("bench --device gpu: " + reason) && Catch::Contains(kHint));
  const auto s = run_nntrain("sweep --config configs/peaks.json --grid seed=1,2 --device gpu --out " + out, kNoGpu);
  CHECK(s.exit_code == 3);
  CHECK_THAT(s.err, Catch::Contains(reason) && Catch::Contains(kHint));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("the real no-driver machine: no runtime error string anywhere", "[cli][nogpu]") {
  // On a machine with the CUDA toolkit and no driver, a CUDA build's probe gets
  // cudaErrorInsufficientDriver; a CPU-only build says it has no CUDA. Neither prints the
  // runtime's words, which send users to upgrade a driver they do not have.
  const std::string reason = info_gpu_reason("");
  if (reason.empty()) {
    WARN("this machine has a usable GPU: the no-driver wording is checked through the unit case only");
    return;
  }
  CHECK_THAT(reason, !Catch::Contains(kRuntimeWords));
  const auto r = run_nntrain("--config configs/peaks.json --device gpu --epochs 1 --out " + fresh_dir("flags_real"));
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.err, !Catch::Contains(kRuntimeWords) && Catch::Contains(kHint));
}

TEST_CASE("train --device both without a usable GPU trains the CPU half after one warning, exit 0", "[cli][nogpu]") {
  for (const char* spelling : {"both", "cpu,gpu", "gpu,cpu"}) {
    INFO(spelling);
    const std::string out = fresh_dir("flags_both");
    const auto r = run_nntrain(std::string("--config configs/peaks.json --device ") + spelling +
                                   " --epochs 3 --out " + out + " data.grid=8",
                               kNoGpu);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::StartsWith("nntrain: warning: --device both: the GPU half is not run: " +
                                        info_gpu_reason(kNoGpu)));
    const json s = json::parse(slurp(out + "/summary.json"));
    REQUIRE(s["runs"].size() == 1);
    CHECK(s["runs"][0]["device"] == "cpu");
    CHECK(s["runs"][0]["epochs"] == 3);
    // What ran is what the resolved config says: rerunning it reproduces this run.
    CHECK(json::parse(slurp(out + "/config.resolved.json"))["device"] == "cpu");
    CHECK_FALSE(fs::exists(out + "/model.gpu.json"));
    fs::remove_all(out);
  }
}

TEST_CASE("bench's default devices without a usable GPU: the CPU half, marked, nothing raw pasted",
          "[cli][nogpu][bench]") {
  const std::string dir = fresh_dir("flags_bench");
  fs::create_directories(dir);
  const auto r = run_nntrain("bench --config configs/peaks.json --reps 1 --warmup 0 --epochs 2 --quiet "
                             "--export-json " + dir + "/b.json --export-markdown " + dir + "/b.md data.grid=4",
                             kNoGpu);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::StartsWith("nntrain: warning: bench --device both: the GPU half is not run: "));
  const json b = json::parse(slurp(dir + "/b.json"));
  CHECK(b["context"]["devices"] == json::array({"cpu"}));
  CHECK(b["context"]["gpu_not_run"] == info_gpu_reason(kNoGpu));
  REQUIRE(b["results"].size() == 1);
  CHECK(b["results"][0]["device"] == "cpu");
  CHECK_THAT(slurp(dir + "/b.md"), !Catch::Contains(kRuntimeWords));
  fs::remove_all(dir);
}

TEST_CASE("sweep --device both without a usable GPU plans and runs the CPU half", "[cli][nogpu][sweep]") {
  const std::string dir = fresh_dir("flags_sweep");
  const auto r = run_nntrain("sweep --config configs/peaks.json --grid seed=1,2 --device both --epochs 2 --quiet "
                             "--out " + dir + " data.grid=4 timing.warmup_epochs=0",
                             kNoGpu);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("warning: sweep --device both: the GPU half is not run: "));
  const json plan = json::parse(slurp(dir + "/plan.json"));
  for (const auto& p : plan["points"]) {
    CHECK(p["devices"] == json::array({"cpu"}));
    CHECK(p["config"]["device"] == "cpu");
  }
  fs::remove_all(dir);
}

TEST_CASE("bench takes train's training flags and --device lists", "[cli][bench]") {
  // The same flags give the same first and last loss as train's (same seed, same init).
  const std::string dir = fresh_dir("flags_bench_train");
  fs::create_directories(dir);
  const std::string flags = " --epochs 4 --lr 0.02 --seed 7 --batch-size 8 data.grid=6";
  const auto b = run_nntrain("bench --config configs/peaks.json --device cpu --reps 1 --warmup 0 --quiet "
                             "--export-json " + dir + "/b.json" + flags);
  INFO(b.err);
  REQUIRE(b.exit_code == 0);
  const auto t = run_nntrain("--config configs/peaks.json --device cpu --json --quiet --out " + dir + "/t" + flags);
  REQUIRE(t.exit_code == 0);
  const json run = json::parse(t.out)["runs"][0];
  const json res = json::parse(slurp(dir + "/b.json"))["results"][0];
  CHECK(res["epochs"] == 4);
  CHECK(run["epochs"] == 4);
  CHECK(res["initial_loss"].get<double>() == run["initial_loss"].get<double>());
  CHECK(res["final_loss"].get<double>() == run["final_loss"].get<double>());
  // The flag beats an override of the same key (precedence: ... < overrides < flags).
  const auto o = run_nntrain("bench --config configs/peaks.json --device cpu --reps 1 --warmup 0 --quiet "
                             "--export-json " + dir + "/o.json train.epochs=9" + flags);
  REQUIRE(o.exit_code == 0);
  CHECK(json::parse(slurp(dir + "/o.json"))["results"][0]["epochs"] == 4);
  fs::remove_all(dir);
}

TEST_CASE("device flags: --device and bench's old --devices: one grammar, mistakes named", "[cli][errors]") {
  for (const auto& [args, expect] : std::vector<std::pair<std::string, std::string>>{
           {"--config configs/peaks.json --device tpu", "unknown device \"tpu\""},
           {"--config configs/peaks.json --device cpu,cpu", "cpu is listed twice"},
           {"--config configs/peaks.json --device cpu,", "unknown device \"\""},
           {"bench --config configs/peaks.json --device gpu,tpu", "unknown device \"tpu\""},
           {"bench --config configs/peaks.json --devices cpu,tpu", "--devices \"cpu,tpu\": unknown device \"tpu\""},
           {"bench --config configs/peaks.json --device cpu --devices cpu", "not both"},
           {"sweep --config configs/peaks.json --grid seed=1 --device both,cpu", "unknown device \"both\""}}) {
    INFO(args);
    const auto r = run_nntrain(args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(expect));
  }
  // The old spelling still runs, with a one-line note.
  const std::string dir = fresh_dir("flags_alias");
  fs::create_directories(dir);
  const auto r = run_nntrain("bench --config configs/peaks.json --devices cpu --reps 1 --warmup 0 --epochs 1 --quiet "
                             "--export-json " + dir + "/b.json data.grid=4");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("--devices is the old spelling of --device"));
  CHECK(json::parse(slurp(dir + "/b.json"))["context"]["devices"] == json::array({"cpu"}));
  fs::remove_all(dir);
}

TEST_CASE("help names the program, lists subcommands and shared options, hides internals", "[cli][help]") {
  const auto top = run_nntrain("--help");
  CHECK(top.exit_code == 0);
  CHECK_THAT(top.out, Catch::Contains("Usage: nntrain [OPTIONS] SUBCOMMAND"));
  for (const char* sub : {"train", "bench", "sweep", "predict", "info"}) CHECK_THAT(top.out, Catch::Contains(std::string("  ") + sub));
  CHECK_THAT(top.out, Catch::Contains("--device cpu|gpu|both") && Catch::Contains("--epochs N"));
  const auto none = run_nntrain("");
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.err, Catch::Contains("Usage: nntrain "));

  for (const char* sub : {"train", "bench", "sweep", "predict"}) {
    INFO(sub);
    const auto h = run_nntrain(std::string(sub) + " --help");
    CHECK(h.exit_code == 0);
    CHECK_THAT(h.out, Catch::Contains(std::string("Usage: nntrain ") + sub));
    // Types a person reads: no "INT:INT:INT in [1 - 1000]", "TEXT:PATH" or "FLOAT:FINITE".
    CHECK_THAT(h.out, !Catch::Contains("INT:") && !Catch::Contains(":PATH") && !Catch::Contains(":FINITE") &&
                          !Catch::Contains("TEXT:{"));
  }
  const auto bench = run_nntrain("bench --help");
  for (const char* f : {"--device cpu|gpu|both", "--epochs N", "--lr X", "--seed N", "--batch-size N", "--reps N"})
    CHECK_THAT(bench.out, Catch::Contains(f));
  CHECK_THAT(bench.out, !Catch::Contains("--devices"));  // the old spelling, hidden
  CHECK_THAT(run_nntrain("sweep --help").out, !Catch::Contains("--run-point"));  // what Slurm tasks run
  // predict matches inputs by name: its help says so, not "positional".
  CHECK_THAT(run_nntrain("predict --help").out, Catch::Contains("by the names model.json records"));
}

TEST_CASE("a flag a subcommand lacks points at that subcommand's help", "[cli][help][errors]") {
  const auto r = run_nntrain("bench --config configs/peaks.json --no-such-flag 3");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--no-such-flag") && Catch::Contains("Run 'nntrain bench --help'"));
}

// Issue 44 item 4: `-q` printed the 30-line results table and the loss chart. Quiet is for
// scripts: nothing on stdout but the results folder, nothing on stderr for a clean run.
TEST_CASE("train -q prints the results folder alone", "[cli][quiet]") {
  const std::string out = fresh_dir("flags_quiet");
  const auto r = run_nntrain("--config configs/peaks.json --device cpu --epochs 3 -q --out " + out + " data.grid=6");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == out + "\n");
  CHECK(r.err.empty());
  CHECK(std::filesystem::exists(out + "/summary.json"));
  std::filesystem::remove_all(out);
}
