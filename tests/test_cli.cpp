// test_cli.cpp — the nntrain binary end to end: files, fields, flags, exit codes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli_util.hpp"
#include "mlp.hpp"

using namespace testutil;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("train writes the four files with the documented fields", "[cli]") {
  const std::string out = fresh_dir("four_files");
  const auto r = run_nntrain("--config configs/peaks.json --device cpu --epochs 12 --out " + out +
                             " data.grid=40 train.log_every=4");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* f : {"config.resolved.json", "metrics.csv", "summary.json", "model.json"})
    CHECK(fs::exists(out + "/" + f));
  const json cfg = json::parse(slurp(out + "/config.resolved.json"));
  CHECK(cfg["train"]["epochs"] == 12);
  CHECK(cfg["data"]["grid"] == json::array({40, 40}));
  CHECK(cfg["nntrain"].contains("git_revision"));
  const json s = json::parse(slurp(out + "/summary.json"));
  REQUIRE(s["runs"].size() == 1);
  const json& run = s["runs"][0];
  for (const char* k : {"device", "train_seconds", "epochs", "samples", "initial_loss", "final_loss",
                        "warmup_epochs", "setup_seconds", "transfer_seconds", "samples_per_second"})
    CHECK(run.contains(k));
  CHECK(run["epochs"] == 12);
  CHECK(run["samples"] == 1600);
  CHECK(run["final_loss"].get<double>() < run["initial_loss"].get<double>());
  // How busy the machine was is part of every measurement's context (where the OS says).
  if (fs::exists("/proc/loadavg")) CHECK(s["context"]["load_average_1min"].get<double>() >= 0);
  const std::string csv = slurp(out + "/metrics.csv");
  CHECK(csv.rfind("device,epoch,loss\ncpu,1,", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 13);
  const json m = json::parse(slurp(out + "/model.json"));
  CHECK(m["format"] == "nntrain-mlp");
  CHECK(m["layers"].size() == 3);
  CHECK(m["layers"][0]["W"].size() == 20);     // out rows
  CHECK(m["layers"][0]["W"][0].size() == 2);   // of in values
  // Console ends with the timing table and the loss curve.
  CHECK_THAT(r.out, Catch::Contains("Timing") && Catch::Contains("Loss") && Catch::Contains("log scale"));
  fs::remove_all(out);
}

TEST_CASE("train is the default subcommand and --json prints only JSON", "[cli]") {
  const std::string out = fresh_dir("json");
  const auto r = run_nntrain("--config configs/peaks.json --epochs 3 --json --quiet --out " + out + " data.grid=10");
  REQUIRE(r.exit_code == 0);
  const json s = json::parse(r.out);  // throws if anything else is on stdout
  CHECK(s["runs"][0]["epochs"] == 3);
  fs::remove_all(out);
}

TEST_CASE("explicit flags beat key.path overrides, which beat the file", "[cli]") {
  const std::string out = fresh_dir("prec");
  const auto r = run_nntrain("--config configs/peaks.json --epochs 2 --lr 0.01 --quiet --out " + out +
                             " optimizer.lr=0.5 train.epochs=9 data.grid=10 model.layers=[2,3,1]");
  REQUIRE(r.exit_code == 0);
  const json cfg = json::parse(slurp(out + "/config.resolved.json"));
  CHECK(cfg["optimizer"]["lr"] == 0.01);
  CHECK(cfg["train"]["epochs"] == 2);
  CHECK(cfg["model"]["layers"] == json::array({2, 3, 1}));
  fs::remove_all(out);
}

TEST_CASE("epochs 0 with save-model saves the initial weights and init-model reproduces the run", "[cli]") {
  const std::string out = fresh_dir("init0"), out2 = fresh_dir("init1"), out3 = fresh_dir("init2");
  const std::string model = out + "_model.json";
  auto r = run_nntrain("--config configs/peaks.json --epochs 0 --quiet --out " + out + " --save-model " + model);
  REQUIRE(r.exit_code == 0);
  const nntrain::Params saved = nntrain::load_model(model);
  nntrain::ModelSpec spec;
  spec.widths = {2, 20, 5, 1};
  const nntrain::Params init = nntrain::init_params(spec, nntrain::Init::glorot_uniform, 1);
  REQUIRE(saved.values.size() == init.values.size());
  CHECK(std::memcmp(saved.values.data(), init.values.data(), init.values.size() * sizeof(float)) == 0);
  // Same curve from the seed and from the saved file; a different seed gives another curve.
  r = run_nntrain("--config configs/peaks.json --epochs 5 --quiet --out " + out2 + " data.grid=30");
  REQUIRE(r.exit_code == 0);
  r = run_nntrain("--config configs/peaks.json --epochs 5 --quiet --seed 99 --init-model " + model + " --out " + out3 +
                  " data.grid=30");
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(out2 + "/metrics.csv") == slurp(out3 + "/metrics.csv"));
  CHECK_THAT(r.err, !Catch::Contains("warning"));  // the same columns: nothing to say
  // Weights from other columns (a,b -> y): used by position, and said once.
  fs::remove_all(out3);
  std::string other = slurp(model);
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"\"x1\"", "\"a\""}, {"\"x2\"", "\"b\""}})
    other.replace(other.find(from), from.size(), to);
  write_text(out + "_other.json", other);
  r = run_nntrain("--config configs/peaks.json --epochs 5 --quiet --seed 99 --init-model " + out + "_other.json --out " +
                  out3 + " data.grid=30");
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(out2 + "/metrics.csv") == slurp(out3 + "/metrics.csv"));
  CHECK_THAT(r.err, Catch::Contains("warning: --init-model " + out + "_other.json was trained on columns a, b -> y; "
                                    "this data's are x1, x2 -> y (its weights are used by position)"));
  for (const auto& d : {out, out2, out3}) fs::remove_all(d);
  fs::remove(model);
  fs::remove(out + "_other.json");
}

// model.init and model.output_activation from a config reach the saved model: the weights'
// bound is the named scheme's (checked by its formula, not by calling init_params) and the
// last layer's activation is the one asked for.
TEST_CASE("model.init and model.output_activation reach the initial weights and model.json", "[cli][init]") {
  const std::string out = fresh_dir("init_he");
  const std::string model = out + "_model.json";
  const auto r = run_nntrain("--config configs/peaks.json --epochs 0 --quiet --out " + out + " --save-model " + model +
                             " model.init=he_uniform model.output_activation=sigmoid");
  REQUIRE(r.exit_code == 0);
  const json m = json::parse(slurp(model));
  const json& first = m["layers"][0];  // 2 -> 20: he_uniform's bound sqrt(6/2) = 1.73, glorot's sqrt(6/22) = 0.52
  double most = 0;
  for (const auto& row : first["W"])
    for (const auto& w : row) most = std::max(most, std::abs(w.get<double>()));
  CHECK(most > std::sqrt(6.0 / 22.0));  // 40 draws all within 0.52 of 0 from U(-1.73, 1.73): p = 0.3^40
  CHECK(most <= std::sqrt(3.0));
  CHECK(m["layers"][0]["activation"] == "relu");
  CHECK(m["layers"].back()["activation"] == "sigmoid");
  fs::remove_all(out);
  fs::remove(model);
}

TEST_CASE("without --out every run gets a new numbered folder", "[cli]") {
  const std::string parent = fresh_dir("numbered");
  for (int i = 0; i < 2; ++i)
    REQUIRE(run_nntrain("--config configs/peaks.json --epochs 1 --quiet data.grid=5 output.dir=" + parent).exit_code ==
            0);
  CHECK(fs::exists(parent + "/001/summary.json"));
  CHECK(fs::exists(parent + "/002/summary.json"));
  fs::remove_all(parent);
}

TEST_CASE("bad input: exit 2, a message naming it, and no result files", "[cli][errors]") {
  const std::string dir = fresh_dir("bad_inputs");
  fs::create_directories(dir);
  const std::string good = slurp(NNTRAIN_SOURCE_DIR "/configs/peaks.json");
  struct Case {
    const char* name;
    std::string config_text;  // written to dir/<name>.json ("" = use configs/peaks.json)
    std::string extra;        // extra arguments
    const char* expect;       // substring of the error message
  };
  const std::vector<Case> cases = {
      {"malformed", "{\"seed\": 1,, }", "", "malformed JSON at line 1"},
      {"misspelt", R"({"optimizer": {"learning_rate": 0.1}})", "", "/optimizer/learning_rate"},
      {"misspelt_suggest", R"({"trian": {}})", "", "did you mean \"train\""},
      {"negative_lr", R"({"optimizer": {"lr": -0.01}})", "", "/optimizer/lr"},
      {"zero_width", R"({"model": {"layers": [2, 0, 1]}})", "", "/model/layers/1"},
      {"first_layer", R"({"model": {"layers": [3, 20, 1]}})", "", "/model/layers/0"},
      {"activation", R"({"model": {"activation": "swish"}})", "", "/model/activation"},
      {"string_number", R"({"optimizer": {"lr": "fast"}})", "", "/optimizer/lr"},
      {"missing_csv", R"({"data": {"csv": "nope.csv", "inputs": ["x1","x2"], "targets": ["y"]}})", "",
       "CSV data file not found"},
      {"malformed_csv", R"({"data": {"csv": "bad.csv", "inputs": ["x1","x2"], "targets": ["y"]}})", "", "line 3"},
      {"missing_config", "", "--config does/not/exist.json", "config file not found"},
      {"batch_too_big", R"({"data": {"grid": 10}, "train": {"batch_size": 101}})", "", "/train/batch_size"},
      {"bad_override", "", "optimizer.lr=abc", "/optimizer/lr"},
  };
  write_text(dir + "/bad.csv", "x1,x2,y\n1,2,3\n1,oops,3\n");
  for (const auto& c : cases) {
    INFO("case " << c.name);
    std::string args;
    if (!c.config_text.empty()) args = "--config " + write_text(dir + "/" + c.name + ".json", c.config_text);
    else if (c.extra.rfind("--config", 0) != 0) args = "--config configs/peaks.json";
    const std::string out = dir + "/out_" + c.name;
    const auto r = run_nntrain(args + " " + c.extra + " --epochs 1 --out " + out);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(c.expect));
    CHECK_FALSE(fs::exists(out));
  }
  fs::remove_all(dir);
}

TEST_CASE("a mistyped command exits 2 naming it, not with train's missing --config", "[cli][errors]") {
  const auto r = run_nntrain("predcit --model m.json --input in.csv --output out.csv");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("nntrain: error: unknown command \"predcit\" (did you mean \"predict\"?)"));
  CHECK_THAT(r.err, !Catch::Contains("--config is required"));
  CHECK_FALSE(fs::exists("out.csv"));
  const auto bare = run_nntrain("configs/peaks.json --epochs 1");
  CHECK(bare.exit_code == 2);
  CHECK_THAT(bare.err, Catch::Contains("(a config file is given as --config configs/peaks.json)"));
  // Train stays the default: a first word that is an override is not a command.
  const std::string out = fresh_dir("override_first");
  const auto ok = run_nntrain("seed=3 --config configs/peaks.json --epochs 1 --quiet --out " + out);
  CHECK(ok.exit_code == 0);
  fs::remove_all(out);
}

TEST_CASE("a bad fast-backend environment knob exits 2 naming the variable, before anything is written", "[cli][errors]") {
  // docs/CONFIG.md's NNTRAIN_FAST_* variables: anything but their documented values is an
  // error, checked with the config (the registry's fits check), so exit 2 leaves no run
  // folder (docs/EXIT_CODES.md: 2 writes nothing). Until 2026-11-30 the backend refused them
  // when it was made, after the run folder and a "failed" summary.json had been written.
  const std::pair<const char*, const char*> knobs[] = {{"NNTRAIN_FAST_GATHER_AHEAD=2", "NNTRAIN_FAST_GATHER_AHEAD"},
                                                       {"NNTRAIN_FAST_FWD_COLS=3", "NNTRAIN_FAST_FWD_COLS"},
                                                       {"NNTRAIN_FAST_BLAS_MIN=x", "NNTRAIN_FAST_BLAS_MIN"},
                                                       {"NNTRAIN_FAST_PHASES=2", "NNTRAIN_FAST_PHASES"},
                                                       {"NNTRAIN_FAST_ISA=sse9", "NNTRAIN_FAST_ISA: not avx512, avx2 or generic: sse9"}};
  for (const auto& [env, names] : knobs) {
    INFO(env);
    const std::string out = fresh_dir("knob");
    const auto r = run_nntrain("--config configs/peaks.json --device cpu --backend fast --epochs 1 --quiet --out " + out,
                               env);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::StartsWith(std::string("nntrain: error: ") + names));
    CHECK_FALSE(fs::exists(out));
    // bench refuses it before its first point (nothing timed, no export), a local sweep before
    // its folder; the reference backend does not read them.
    const auto b = run_nntrain("bench --config configs/peaks.json --device cpu --epochs 1 --reps 1 --quiet "
                               "--export-json " + out + ".json", env);
    CHECK(b.exit_code == 2);
    CHECK_THAT(b.err, Catch::Contains(names));
    CHECK(b.out.empty());
    CHECK_FALSE(fs::exists(out + ".json"));
    const auto sw = run_nntrain("sweep --config configs/peaks.json --device cpu --epochs 1 --quiet --grid seed=1,2 "
                                "--out " + out, env);
    CHECK(sw.exit_code == 2);
    // The variable first: the point only says where it was met (until 2026-11-30 the message
    // began "--grid: point 1 of 2 (seed=1) is invalid", as if the point were wrong).
    CHECK_THAT(sw.err, Catch::StartsWith(std::string("nntrain: error: ") + names));
    CHECK_THAT(sw.err, Catch::Contains("(met at --grid point 1 of 2: seed=1)"));
    CHECK_FALSE(fs::exists(out));
    const auto bs = run_nntrain("bench --config configs/peaks.json --device cpu --epochs 1 --reps 1 --quiet "
                                "--sweep seed=1,2", env);
    CHECK(bs.exit_code == 2);
    CHECK_THAT(bs.err, Catch::StartsWith(std::string("nntrain: error: ") + names));
    CHECK_THAT(bs.err, Catch::Contains("(met at --sweep seed value 1 of 2: \"1\")"));
    CHECK(bs.out.empty());
    const auto ref = run_nntrain("--config configs/peaks.json --device cpu --backend reference --epochs 1 --quiet "
                                 "data.grid=[5,5] --out " + out, env);
    CHECK(ref.exit_code == 0);
    fs::remove_all(out);
  }
}

TEST_CASE("NNTRAIN_FAST_PHASES=1 reports each thread's phases and changes no result", "[cli]") {
  // The diagnostic (docs/CONFIG.md) only reads clocks: the model must be the same bits as
  // without it, on 2 threads with a shared reduction (full batch) and with thread 0 reducing
  // alone (batches of 1024).
  for (const char* batch : {"train.batch_size=0", "train.batch_size=1024"}) {
    INFO(batch);
    const std::string plain = fresh_dir("phases_off"), timed = fresh_dir("phases_on");
    const std::string args = std::string("--config configs/peaks.json --device cpu --backend fast --threads 2 ") +
                             "--epochs 3 --quiet " + batch + " --out ";
    const auto a = run_nntrain(args + plain);
    const auto b = run_nntrain(args + timed, "NNTRAIN_FAST_PHASES=1");
    REQUIRE(a.exit_code == 0);
    REQUIRE(b.exit_code == 0);
    CHECK(slurp(plain + "/model.json") == slurp(timed + "/model.json"));
    CHECK_THAT(a.err, !Catch::Contains("phases"));
    CHECK_THAT(b.err, Catch::Contains("fast backend phases (NNTRAIN_FAST_PHASES=1)"));
    CHECK_THAT(b.err, Catch::Contains("thread  0:"));
    CHECK_THAT(b.err, Catch::Contains("reduction and update"));
    CHECK_THAT(b.err, Catch::Contains("mean / median over"));
    CHECK_THAT(b.err, Catch::Contains("90th percentile"));
    fs::remove_all(plain);
    fs::remove_all(timed);
  }
}

TEST_CASE("device gpu without a usable GPU gives exit 3, the reason, no files", "[cli][errors]") {
  const std::string out = fresh_dir("nogpu");
  const auto r = run_nntrain("--config configs/peaks.json --device gpu --epochs 1 --out " + out,
                             "CUDA_VISIBLE_DEVICES= NNTRAIN_FAKE_NO_GPU=1");
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.err, Catch::Contains("--device gpu"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("a diverging run exits 4 naming the epoch and keeps what finished", "[cli][errors]") {
  const std::string out = fresh_dir("diverge");
  const auto r = run_nntrain("--config configs/peaks.json --epochs 200 --lr 1e5 --quiet --out " + out +
                             " data.grid=10 optimizer.type=sgd train.log_every=10");
  CHECK(r.exit_code == 4);
  CHECK_THAT(r.err, Catch::Contains("diverged") && Catch::Contains("epoch"));
  const json s = json::parse(slurp(out + "/summary.json"));
  CHECK(s["runs"][0]["status"] == "diverged");
  CHECK(s["runs"][0]["diverged_epoch"].get<int>() >= 1);
  fs::remove_all(out);
}

TEST_CASE("info runs and names the build", "[cli]") {
  const auto r = run_nntrain("info");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("cpu") && Catch::Contains("cuda"));
}

TEST_CASE("the default thread count follows the CPU affinity mask", "[cli]") {
  if (std::system("command -v taskset >/dev/null 2>&1") != 0) {
    WARN("taskset not installed: affinity case not checked");
    return;
  }
  // Pinned to one CPU (taskset), the fast backend must not start a second spinning thread.
  const auto r = run_nntrain("--config configs/peaks.json --device cpu --epochs 2 --json --out " +
                                 fresh_dir("affinity") + " data.grid=20",
                             "taskset -c 0");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json s = json::parse(r.out);
  CHECK(s["runs"][0]["threads"] == 1);
  CHECK(s["context"]["hardware_threads"] == 1);
}

TEST_CASE("a config file is validated as written: a bad value is exit 2 even when a flag or override replaces it",
          "[cli][config][errors]") {
  const std::string dir = fresh_dir("as_written");
  fs::create_directories(dir);
  const std::string cfg = write_text(dir + "/bad.json", R"({"train": {"epochs": "many"}, "data": {"grid": 5}})");
  for (const std::string fix : {"--epochs 3", "train.epochs=3"}) {
    INFO(fix);
    const auto r = run_nntrain("--config " + cfg + " " + fix + " --quiet --out " + dir + "/run");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("/train/epochs"));
    CHECK_THAT(r.err, Catch::Contains("bad.json as written"));
    CHECK_FALSE(fs::exists(dir + "/run"));
  }
  // A good file with a bad override: the override's error, without the "as written" note.
  const std::string good = write_text(dir + "/good.json", R"({"data": {"grid": 5}})");
  const auto o = run_nntrain("--config " + good + " train.epochs=many --quiet --out " + dir + "/run");
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.err, Catch::Contains("/train/epochs"));
  CHECK_THAT(o.err, !Catch::Contains("as written"));
  fs::remove_all(dir);
}

TEST_CASE("the surface of --write-surface is checked against memory before training", "[cli][surface][errors]") {
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NNTRAIN_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(NNTRAIN_TEST_SANITIZED)
  // A sanitizer reserves terabytes of address space: an address-space limit kills it at start.
  WARN("skipped under a sanitizer: the test limits the address space");
  return;
#endif
  // 4096 x 4096 points need ~2.25 GiB for the surface; a 3 GB address-space limit allows
  // half of that. Refused (exit 2) before the run folder exists, not after training.
  const std::string dir = fresh_dir("surface_mem");
  const auto r = run_nntrain("--config configs/peaks.json --epochs 2 --quiet --write-surface 4096 --out " + dir +
                                 " data.grid=5",
                             "prlimit --as=3000000000");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--write-surface 4096"));
  CHECK_THAT(r.err, Catch::Contains("would need"));
  CHECK_FALSE(fs::exists(dir));
  // The same limit leaves room for a small surface.
  const auto ok = run_nntrain("--config configs/peaks.json --epochs 2 --quiet --write-surface 50 --out " + dir +
                                  " data.grid=5",
                              "prlimit --as=3000000000");
  CHECK(ok.exit_code == 0);
  CHECK(fs::exists(dir + "/surface.cpu.csv"));
  fs::remove_all(dir);
}

TEST_CASE("the memory check counts what the fast CPU backend adds: its chunk copies of the gradient",
          "[cli][errors]") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(NNTRAIN_TEST_SANITIZED)
  WARN("skipped under a sanitizer: the test limits the address space");
  return;
#endif
  // 2-3000-3000-1 (9.0M parameters) on 4096 samples: ~0.5 GiB by the count every backend
  // shares, ~1.3 GiB with the fast backend's 16 chunk slots (16 x 9.0M floats), scratch and
  // copies. A 2 GB address-space limit allows ~0.93 GiB: the fast backend is refused before
  // the run folder exists (it died of bad_alloc after it, exit 1), the reference one is not.
  const std::string dir = fresh_dir("fast_mem");
  const std::string args = "--config configs/peaks.json --epochs 0 --quiet data.grid=64 model.layers=[2,3000,3000,1]";
  const auto r = run_nntrain(args + " --out " + dir + "/fast", "prlimit --as=2000000000");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("9015001 parameters") && Catch::Contains("would need"));
  CHECK_FALSE(fs::exists(dir + "/fast"));
  const auto ok = run_nntrain(args + " cpu.backend=reference --out " + dir + "/ref", "prlimit --as=2000000000");
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  fs::remove_all(dir);
}

TEST_CASE("epochs run in chunks of log_every give the same curve as one chunk, remainder included",
          "[cli][chunks]") {
  // train.log_every sets the chunk of epochs between progress reports (and interrupt
  // checks): 10 epochs in chunks of 4 (4 + 4 + 2) must be the 10 epochs of one chunk, with
  // the shuffle and Adam's step count carried across the calls.
  const std::string dir = fresh_dir("chunks");
  const std::string common = "--config configs/peaks.json --epochs 10 --batch-size 30 --quiet data.grid=10 "
                             "model.layers=[2,6,1] timing.warmup_epochs=0";
  const auto a = run_nntrain(common + " train.log_every=4 --out " + dir + "/four");
  const auto b = run_nntrain(common + " train.log_every=10 --out " + dir + "/ten");
  INFO(a.err << b.err);
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  const std::string curve = slurp(dir + "/four/metrics.csv");
  CHECK(std::count(curve.begin(), curve.end(), '\n') == 11);
  CHECK(curve == slurp(dir + "/ten/metrics.csv"));
  CHECK(slurp(dir + "/four/model.json") == slurp(dir + "/ten/model.json"));
  CHECK(json::parse(slurp(dir + "/four/summary.json"))["runs"][0]["epochs"] == 10);
  fs::remove_all(dir);
}
