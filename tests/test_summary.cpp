// test_summary.cpp — what the training summary says (issue 44, item 6), checked against
// independent computations through the built binary: the trained model's loss against
// `nntrain predict` on the training data with the MSE computed here in double; the best epoch
// against metrics.csv; the held-out split (deterministic by seed, disjoint, the same whatever
// the thread count or backend) against a reference forward pass of the initial and the saved
// weights on the rows it holds out; a loss that explodes and stays finite; the warm-up capped
// by the run's epochs; and SIGTERM inside a long epoch ending the run promptly with what
// finished written.
#include <catch2/catch.hpp>

#include <csignal>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <sstream>

#include "cli_util.hpp"
#include "commands.hpp"
#include "cpu_reference.hpp"
#include "dataset.hpp"
#include "errors.hpp"
#include "mlp.hpp"
#include "proc_util.hpp"
#include "reference_math.hpp"

using namespace testutil;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Rows of a CSV file as numbers, keyed by the header's names ("" cells as NaN).
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<double>> rows;
  size_t col(const std::string& name) const {
    for (size_t c = 0; c < header.size(); ++c)
      if (header[c] == name) return c;
    FAIL("no column " << name);
    return 0;
  }
};

Table read_table(const std::string& path) {
  std::istringstream in(slurp(path));
  std::string line;
  Table t;
  REQUIRE(std::getline(in, line));
  t.header = nntrain::split_csv_line(line);
  while (std::getline(in, line)) {
    std::vector<double> row;
    for (const auto& f : nntrain::split_csv_line(line))
      row.push_back(f.empty() ? std::nan("") : (f == "cpu" || f == "gpu") ? 0.0 : std::stod(f));
    REQUIRE(row.size() == t.header.size());
    t.rows.push_back(row);
  }
  return t;
}

// A CSV data set of `n` rows, y = sin(2 x1) + x2^2 / 3 (any smooth function does), and a
// config training a small net on it.
std::string write_case(const std::string& dir, int n, const std::string& extra_json) {
  fs::create_directories(dir);
  std::string csv = "x1,x2,y\n";
  for (int i = 0; i < n; ++i) {
    const double x1 = -2.0 + 4.0 * (i % 13) / 12.0, x2 = -1.5 + 3.0 * (i / 13) / double(n / 13 + 1);
    char buf[128];
    std::snprintf(buf, sizeof buf, "%.6f,%.6f,%.6f\n", x1, x2, std::sin(2 * x1) + x2 * x2 / 3);
    csv += buf;
  }
  write_text(dir + "/data.csv", csv);
  write_text(dir + "/c.json", R"({"name": "summary-test", "data": {"csv": "data.csv", "inputs": ["x1", "x2"],
    "targets": ["y"])" + extra_json + R"(}, "model": {"layers": [2, 16, 1], "activation": "tanh"},
    "optimizer": {"lr": 0.05}, "train": {"epochs": 60, "log_every": 7}, "timing": {"warmup_epochs": 2}})");
  return dir + "/c.json";
}

// MSE in double of `pred` (n × 1) against column y of the data rows `rows` (all if empty).
double mse(const std::vector<double>& pred, const std::vector<double>& y) {
  REQUIRE(pred.size() == y.size());
  double s = 0;
  for (size_t i = 0; i < y.size(); ++i) s += (pred[i] - y[i]) * (pred[i] - y[i]);
  return s / double(y.size());
}

// The reference forward pass of `p` over rows of a data set, in float as nntrain trains.
std::vector<double> forward(const nntrain::Params& p, const nntrain::Dataset& d) {
  std::vector<float> out(size_t(d.n));
  nntrain::reference_forward(p, d.x.data(), d.n, out.data());
  return std::vector<double>(out.begin(), out.end());
}

// Relative closeness for a float32 forward pass summed in another order (the fast backend's
// SIMD and threads against predict's plain loops), over ~100 samples: a few ulp per
// activation, well under 1e-4 of the loss.
bool close(double a, double b, double rel = 1e-4) { return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b)); }

// The reference backend, except that a full batch is refused as a device short of memory
// would: mini-batch training works, the full-batch model-loss pass cannot be set up.
std::unique_ptr<nntrain::Backend> make_no_full_batch(const nntrain::Dataset& d, const nntrain::BackendOptions& o) {
  if (o.batch_size == 0) throw nntrain::DeviceUnavailable("out of device memory for a full batch (injected)");
  return nntrain::make_cpu_reference_backend(d, o);
}

}  // namespace

TEST_CASE("the trained model's loss is predict's MSE of model.json on the training data", "[summary]") {
  for (const int batch : {0, 16}) {  // full batch reuses the training backend; mini-batch a full-batch one
    INFO("batch_size " << batch);
    const std::string dir = fresh_dir("model_loss_" + std::to_string(batch));
    const std::string cfg = write_case(dir, 104, "");
    const auto r = run_nntrain("--config " + cfg + " --quiet --out " + dir + "/run train.batch_size=" +
                               std::to_string(batch));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto p = run_nntrain("predict --model " + dir + "/run/model.json --input " + dir + "/data.csv --output " +
                               dir + "/pred.csv");
    INFO(p.err);
    REQUIRE(p.exit_code == 0);
    const Table pred = read_table(dir + "/pred.csv");
    std::vector<double> yhat, y;
    for (const auto& row : pred.rows) {
      yhat.push_back(row.back());  // predict appends the prediction column
      y.push_back(row[pred.col("y")]);
    }
    const double independent = mse(yhat, y);
    const json run = json::parse(slurp(dir + "/run/summary.json"))["runs"][0];
    CHECK(close(run["model_loss"].get<double>(), independent));
    // The last epoch's loss is the one before the last update: another number.
    CHECK_FALSE(close(run["final_loss"].get<double>(), independent, 1e-3));
    // The best epoch is metrics.csv's lowest loss.
    const Table m = read_table(dir + "/run/metrics.csv");
    size_t best = 0;
    for (size_t i = 0; i < m.rows.size(); ++i)
      if (m.rows[i][2] < m.rows[best][2]) best = i;
    CHECK(run["best_epoch"].get<int>() == int(m.rows[best][1]));
    CHECK(close(run["best_loss"].get<double>(), m.rows[best][2], 1e-6));
    fs::remove_all(dir);
  }
}

TEST_CASE("a model-loss pass that cannot be set up leaves the run ok, the loss null and why", "[summary]") {
  using namespace nntrain;
  const std::string out = fresh_dir("no_full_batch");
  TrainArgs a;
  a.config = std::string(NNTRAIN_SOURCE_DIR) + "/configs/peaks.json";
  a.out = out;
  a.quiet = true;
  a.json = true;
  a.overrides = {"data.grid=6", "train.epochs=12", "train.batch_size=8", "timing.warmup_epochs=1"};
  const BackendRegistry reg = {{Device::cpu, "fast", make_no_full_batch}};
  CHECK(run_train_command(a, reg) == kExitOk);
  const json run = json::parse(slurp(out + "/summary.json"))["runs"][0];
  CHECK(run["status"] == "ok");
  CHECK(run["model_loss"].is_null());
  CHECK_THAT(run["model_loss_note"].get<std::string>(), Catch::Contains("out of device memory for a full batch"));
  CHECK(run["epochs"] == 12);
  CHECK(fs::exists(out + "/model.json"));
  fs::remove_all(out);
}

TEST_CASE("the terminal summary names the model loss, the last epoch's and the best epoch's", "[summary]") {
  const std::string dir = fresh_dir("model_loss_text");
  const std::string cfg = write_case(dir, 52, "");
  const auto r = run_nntrain("--config " + cfg + " --out " + dir + "/run");
  REQUIRE(r.exit_code == 0);
  const json run = json::parse(slurp(dir + "/run/summary.json"))["runs"][0];
  char model[64];
  std::snprintf(model, sizeof model, "model loss %.6g", run["model_loss"].get<double>());
  CHECK_THAT(r.out, Catch::Contains(model) && Catch::Contains("last epoch's loss") &&
                        Catch::Contains("best epoch " + std::to_string(run["best_epoch"].get<int>()) + ":"));
  fs::remove_all(dir);
}

TEST_CASE("the validation split is fixed by the seed, disjoint and covers the data", "[summary][data]") {
  const nntrain::Dataset d = nntrain::make_peaks(17, 9, -3, 3);  // 153 samples
  const auto a = nntrain::split_validation(d, 0.2, 7);
  const auto b = nntrain::split_validation(d, 0.2, 7);
  const auto c = nntrain::split_validation(d, 0.2, 8);
  CHECK(a.validation.n == 31);  // round(0.2 * 153)
  CHECK(a.train.n == 153 - 31);
  CHECK(a.validation_rows == b.validation_rows);
  CHECK(a.validation_rows != c.validation_rows);
  // Disjoint and covering: each sample's (x, y) is in exactly one part, in the data's order.
  std::vector<int> in_train;
  size_t v = 0, t = 0;
  for (int i = 0; i < d.n; ++i) {
    const bool held = v < a.validation_rows.size() && a.validation_rows[v] == i;
    const nntrain::Dataset& part = held ? a.validation : a.train;
    const size_t k = held ? v++ : t++;
    CHECK(part.x[2 * k] == d.x[2 * size_t(i)]);
    CHECK(part.x[2 * k + 1] == d.x[2 * size_t(i) + 1]);
    CHECK(part.y[k] == d.y[size_t(i)]);
  }
  CHECK(v == a.validation_rows.size());
  CHECK(t == size_t(a.train.n));
  // Not a block: the held-out rows spread over the grid.
  CHECK(a.validation_rows.front() < 40);
  CHECK(a.validation_rows.back() > 113);
  CHECK(nntrain::split_validation(d, 0.0, 7).validation.n == 0);
  CHECK(nntrain::validation_samples(1000, 0.0001) == 1);  // at least one sample held out
  CHECK_THROWS(nntrain::validation_samples(1, 0.5));      // nothing left to train on
}

TEST_CASE("validation loss: per epoch in metrics.csv, the same for any thread count, checked by a reference pass",
          "[summary]") {
  const std::string dir = fresh_dir("validation");
  const std::string cfg = write_case(dir, 130, R"(, "validation_fraction": 0.25, "validation_every": 3)");
  const auto r1 = run_nntrain("--config " + cfg + " --quiet --threads 1 --out " + dir + "/t1 --save-model " + dir +
                              "/t1.json");
  const auto r2 = run_nntrain("--config " + cfg + " --quiet --threads 2 --out " + dir + "/t2");
  const auto ref = run_nntrain("--config " + cfg + " --quiet --backend reference --out " + dir + "/ref");
  const auto init = run_nntrain("--config " + cfg + " --quiet --epochs 0 --out " + dir + "/init");
  INFO(r1.err << r2.err << ref.err << init.err);
  REQUIRE(r1.exit_code == 0);
  REQUIRE(r2.exit_code == 0);
  REQUIRE(ref.exit_code == 0);
  REQUIRE(init.exit_code == 0);
  const Table m1 = read_table(dir + "/t1/metrics.csv"), m2 = read_table(dir + "/t2/metrics.csv");
  const Table mr = read_table(dir + "/ref/metrics.csv");
  REQUIRE(m1.header == std::vector<std::string>{"device", "epoch", "loss", "val_loss"});
  REQUIRE(m1.rows.size() == 60);
  for (size_t e = 0; e < m1.rows.size(); ++e) {
    INFO("epoch " << e + 1);
    CHECK(std::isnan(m1.rows[e][3]) == (e % 3 != 0));  // evaluated every 3 epochs, from epoch 1
    if (e % 3 == 0) CHECK(m1.rows[e][3] == m2.rows[e][3]);  // bit-identical for any thread count
  }
  // Another backend, same split: the first epochs' validation losses agree (a different
  // split of these 130 rows would give a visibly different loss).
  CHECK(close(mr.rows[0][3], m1.rows[0][3]));
  CHECK(close(mr.rows[3][3], m1.rows[3][3], 1e-3));

  // Independently: the rows the seed holds out, and the reference forward pass on them.
  const nntrain::Dataset data = nntrain::load_csv(dir + "/data.csv", {"x1", "x2"}, {"y"});
  const auto split = nntrain::split_validation(data, 0.25, 1);  // the config's default seed
  const std::vector<double> yv(split.validation.y.begin(), split.validation.y.end());
  const std::vector<double> yt(split.train.y.begin(), split.train.y.end());
  const nntrain::Params p0 = nntrain::load_model(dir + "/init/model.json");
  CHECK(close(mse(forward(p0, split.validation), yv), m1.rows[0][3]));
  const nntrain::Params pt = nntrain::load_model(dir + "/t1.json");
  const json run = json::parse(slurp(dir + "/t1/summary.json"))["runs"][0];
  CHECK(run["samples"] == 130 - 33);
  CHECK(run["validation"]["samples"] == 33);
  CHECK(close(run["validation"]["model_loss"].get<double>(), mse(forward(pt, split.validation), yv)));
  CHECK(close(run["model_loss"].get<double>(), mse(forward(pt, split.train), yt)));
  fs::remove_all(dir);
}

TEST_CASE("bad validation settings: one line, exit 2, nothing written", "[summary][bad_input]") {
  const std::string dir = fresh_dir("validation_bad");
  const std::string cfg = write_case(dir, 26, "");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"data.validation_fraction=1", "config /data/validation_fraction: value 1 is out of range"},
      {"data.validation_fraction=-0.1", "config /data/validation_fraction: value -0.1 is out of range"},
      {"data.validation_fraction=\\\"x\\\"", "config /data/validation_fraction: expected a number"},
      {"data.validation_every=0", "config /data/validation_every: value 0 is out of range"},
  };
  for (const auto& [arg, msg] : cases) {
    INFO(arg);
    const auto r = run_nntrain("--config " + cfg + " --quiet --out " + dir + "/run " + arg);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(msg));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(dir + "/run"));
  }
  const auto r = run_nntrain("--config configs/peaks.json --quiet --out " + dir + "/run data.grid=1 "
                             "data.validation_fraction=0.5");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("/data/validation_fraction") && Catch::Contains("nothing to train on"));
  CHECK_FALSE(fs::exists(dir + "/run"));
  fs::remove_all(dir);
}

TEST_CASE("a loss that explodes and stays finite is divergence: exit 4, no model", "[summary][faults]") {
  const std::string out = fresh_dir("explode");
  // Adam at lr 20 on a tanh net: the output weights grow by ~lr a step, the loss by orders of
  // magnitude within a few epochs, all finite.
  const auto r = run_nntrain("--config configs/peaks.json --epochs 300 --lr 20 --quiet --out " + out +
                             " data.grid=10 model.layers=[2,8,1] model.activation=tanh train.log_every=10");
  INFO(r.err);
  REQUIRE(r.exit_code == 4);
  const json run = json::parse(slurp(out + "/summary.json"))["runs"][0];
  CHECK(run["status"] == "diverged");
  CHECK(run["divergence"] == "loss_exploded");
  const int epoch = run["diverged_epoch"].get<int>();
  const Table m = read_table(out + "/metrics.csv");
  REQUIRE(m.rows.size() == size_t(epoch));
  // The threshold from the first loss and the targets' variance, computed here in double.
  const nntrain::Dataset d = nntrain::make_peaks(10, 10, -3, 3);
  double mean = 0, var = 0;
  for (float y : d.y) mean += y / double(d.n);
  for (float y : d.y) var += (y - mean) * (y - mean) / double(d.n);
  const double threshold = 1e3 * std::max(m.rows[0][2], var);
  CHECK(close(run["explode_threshold"].get<double>(), threshold, 1e-6));
  CHECK(std::isfinite(m.rows.back()[2]));
  CHECK(m.rows.back()[2] > threshold);
  for (size_t e = 0; e + 1 < m.rows.size(); ++e) CHECK(m.rows[e][2] <= threshold);
  CHECK_THAT(r.err, Catch::Contains("exploded") && Catch::Contains("at epoch " + std::to_string(epoch)));
  CHECK_FALSE(fs::exists(out + "/model.json"));
  fs::remove_all(out);
}

TEST_CASE("warm-up epochs are capped by the run's epochs and shown", "[summary]") {
  for (const auto& [epochs, expected] : std::vector<std::pair<int, int>>{{1, 1}, {0, 0}, {3, 3}, {9, 5}}) {
    INFO("epochs " << epochs);
    const std::string out = fresh_dir("warmup");
    const auto r = run_nntrain("--config configs/peaks.json --epochs " + std::to_string(epochs) + " --out " + out +
                               " data.grid=8 timing.warmup_epochs=5");
    REQUIRE(r.exit_code == 0);
    const json run = json::parse(slurp(out + "/summary.json"))["runs"][0];
    CHECK(run["warmup_epochs"] == expected);
    if (expected > 0) CHECK_THAT(r.err, Catch::Contains("warm-up ran " + std::to_string(expected) + " epoch(s) in"));
    else CHECK_THAT(r.err, !Catch::Contains("warm-up"));
    CHECK_THAT(r.out, Catch::Contains(std::to_string(expected) + " warm-up epoch(s) excluded"));
    fs::remove_all(out);
  }
}

namespace {

// Starts 1000 epochs of 2-2048-2048-1 on 3600 samples (one full-batch epoch is seconds on
// this 2-core machine) after `warmup` warm-up epochs, into `out` (its stdout and stderr
// beside it), and waits for `line` on its stderr (not a terminal: a plain line per chunk).
// The pid, or -1 (the run SIGKILLed) when the line never came.
pid_t start_wide_run(const std::string& out, int warmup, const std::string& line) {
  const pid_t pid = spawn({NNTRAIN_BINARY, "--config", "configs/peaks.json", "--epochs", "1000", "--lr", "0.001",
                           "--out", out, "model.layers=[2,2048,2048,1]", "data.grid=60", "train.log_every=1",
                           "timing.warmup_epochs=" + std::to_string(warmup)},
                          NNTRAIN_SOURCE_DIR, out + ".stdout", out + ".stderr");
  if (pid <= 0) return -1;
  if (wait_until([&] { return slurp(out + ".stderr").find(line) != std::string::npos; }, 300)) return pid;
  ::kill(pid, SIGKILL);
  return -1;
}

}  // namespace

TEST_CASE("SIGTERM inside a long epoch ends the run in seconds, not at the run's end, with the finished epochs written",
          "[summary][signal]") {
  const std::string out = fresh_dir("long_epoch");
  const std::string log_out = out + ".stdout", log_err = out + ".stderr";
  KillOnExit guard{out};
  const pid_t pid = start_wide_run(out, 0, "epoch 1/1000");  // the progress line of epoch 1
  REQUIRE(pid > 0);
  ::usleep(100 * 1000);  // inside epoch 2
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(pid, SIGTERM);
  const int code = wait_exit(pid, 30);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string err = slurp(log_err);
  INFO(err);
  CHECK(code == 130);
  // The bound tells "stopped" from "ran on" (998 more epochs: minutes), not the 0.5 s grace
  // itself: under ASan, with ctest's other job on the second core, the writing and the exit
  // took 1.5 s (2.05 s in all, CI of 0929db2). A timed unit test is kept loose on purpose.
  CHECK(took < 8.0);
  REQUIRE(fs::exists(out + "/summary.json"));
  const json s = json::parse(slurp(out + "/summary.json"));
  CHECK(s["status"] == "interrupted");
  const json& run = s["runs"][0];
  CHECK(run["status"] == "interrupted");
  const int epochs = run["epochs"].get<int>();
  CHECK(epochs >= 1);
  const Table m = read_table(out + "/metrics.csv");
  CHECK(m.rows.size() == size_t(epochs));
  CHECK(json::parse(slurp(out + "/config.resolved.json"))["model"]["layers"] == json::array({2, 2048, 2048, 1}));
  // The epoch in flight had not returned: the watchdog wrote, and says so (on a machine
  // where an epoch of this net takes under 0.5 s the run stops at the chunk as before).
  if (err.find("did not return") != std::string::npos) {
    CHECK(s.contains("interrupted_note"));
    CHECK_FALSE(fs::exists(out + "/model.json"));
  } else {
    WARN("epochs of the wide net returned within 0.5 s of SIGTERM: the watchdog was not needed here");
  }
  fs::remove_all(out);
  fs::remove(log_out);
  fs::remove(log_err);
}

TEST_CASE("SIGTERM inside a long warm-up ends the run in seconds and says it was the warm-up", "[summary][signal]") {
  const std::string out = fresh_dir("long_warmup");
  const std::string log_out = out + ".stdout", log_err = out + ".stderr";
  KillOnExit guard{out};
  const pid_t pid = start_wide_run(out, 1000, "warm-up: 1000 epoch(s)");  // 1000 warm-up epochs of seconds each
  REQUIRE(pid > 0);
  ::usleep(100 * 1000);
  ::kill(pid, SIGTERM);
  const int code = wait_exit(pid, 30);
  const std::string err = slurp(log_err);
  INFO(err);
  CHECK(code == 130);
  REQUIRE(fs::exists(out + "/summary.json"));
  const json s = json::parse(slurp(out + "/summary.json"));
  const json& run = s["runs"][0];
  CHECK(run["status"] == "interrupted");
  CHECK(run["epochs"] == 0);
  CHECK(run["model_loss_note"] == "the run was interrupted");
  CHECK(read_table(out + "/metrics.csv").rows.empty());
  // Either the watchdog wrote (the warm-up's chunk in flight outlasted the grace) or the
  // chunk returned in time: both name the warm-up, neither an epoch.
  if (err.find("did not return") != std::string::npos) {
    CHECK_THAT(err, Catch::Contains("during its warm-up (it did not return"));
    CHECK_THAT(s["interrupted_note"].get<std::string>(), Catch::Contains("inside its warm-up") &&
                                                              Catch::Contains("no epoch had trained"));
  } else {
    CHECK_THAT(err, Catch::Contains("during the warm-up, before any epoch trained"));
  }
  CHECK_THAT(err, !Catch::Contains("epoch 1 ("));
  fs::remove_all(out);
  fs::remove(log_out);
  fs::remove(log_err);
}
