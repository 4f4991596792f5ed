// test_faults.cpp — what a run leaves behind when it does not finish normally: divergence
// (exit 4), SIGINT/SIGTERM (exit 130), and exceptions from a backend (exit 1).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <nlohmann/json.hpp>
#include <new>
#include <stdexcept>

#include "cli_util.hpp"
#include "commands.hpp"
#include "cpu_reference.hpp"
#include "errors.hpp"
#include "mlp.hpp"
#include "proc_util.hpp"

using namespace testutil;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

size_t count_lines(const std::string& s) { return size_t(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST_CASE("divergence: exit 4 naming the epoch, curve up to it, summary diverged, no NaN model", "[faults]") {
  const std::string out = fresh_dir("diverge_files");
  const std::string saved = out + "_saved.json";
  // A model.json from an earlier run in the same --out folder must not survive next to a
  // summary that says this run diverged.
  fs::create_directories(out);
  write_text(out + "/model.json", "stale");
  write_text(out + "/surface.cpu.csv", "stale");
  // SGD at lr 1e6 through three hidden layers: the second epoch's loss overflows to inf at
  // once (a slower blow-up passes through finite losses and is caught as an explosion first:
  // test_summary.cpp).
  const auto r = run_nntrain("--config configs/peaks.json --epochs 200 --lr 1e6 --quiet --out " + out +
                             " --save-model " + saved +
                             " --write-surface 4 data.grid=10 optimizer.type=sgd train.log_every=10"
                             " model.layers=[2,20,20,20,1]");
  REQUIRE(r.exit_code == 4);
  const json s = json::parse(slurp(out + "/summary.json"));
  const json& run = s["runs"][0];
  CHECK(run["status"] == "diverged");
  CHECK(run["divergence"] == "loss_nonfinite");
  const int epoch = run["diverged_epoch"].get<int>();
  CHECK(epoch >= 1);
  CHECK(epoch < 200);
  CHECK(run["epochs"] == epoch);
  CHECK_THAT(r.err, Catch::Contains("diverged") && Catch::Contains("at epoch " + std::to_string(epoch)));
  // metrics.csv: header + one row per epoch up to and including the diverged one.
  const std::string csv = slurp(out + "/metrics.csv");
  CHECK(count_lines(csv) == size_t(epoch) + 1);
  const std::string last = csv.substr(csv.rfind("cpu,"));
  CHECK(last.rfind("cpu," + std::to_string(epoch) + ",", 0) == 0);
  CHECK((last.find("nan") != std::string::npos || last.find("inf") != std::string::npos));
  CHECK(fs::exists(out + "/config.resolved.json"));
  CHECK_FALSE(fs::exists(out + "/model.json"));
  CHECK_FALSE(fs::exists(out + "/surface.cpu.csv"));
  CHECK_FALSE(fs::exists(saved));
  CHECK_THAT(r.err, Catch::Contains("--save-model") && Catch::Contains("not written"));
  fs::remove_all(out);
}

TEST_CASE("a model with the largest finite floats reads back as saved", "[faults]") {
  // FLT_MAX's 9-digit text (3.40282347e+38) is just above FLT_MAX as a double: it must read
  // as FLT_MAX, not as "not a finite float32 number" (a file nntrain wrote, refused).
  nntrain::ModelSpec spec;
  spec.widths = {2, 3, 1};
  nntrain::Params p = nntrain::init_params(spec, nntrain::Init::glorot_uniform, 1);
  p.values[0] = std::numeric_limits<float>::max();
  p.values[4] = -std::numeric_limits<float>::max();
  p.values[5] = std::numeric_limits<float>::denorm_min();
  const std::string f = fresh_dir("max_model") + ".json";
  nntrain::save_model(p, f);
  const nntrain::Params q = nntrain::load_model(f);
  CHECK(q.values == p.values);
  // Half-way to 2^128 and beyond rounds to infinity as a float: still refused.
  std::string text = slurp(f);
  const size_t at = text.find("3.40282347e+38");
  REQUIRE(at != std::string::npos);
  text.replace(at, 14, "3.40282357e+38");
  write_text(f, text);
  CHECK_THROWS_WITH(nntrain::load_model(f), Catch::Contains("not a finite float32 number"));
  fs::remove(f);
}

TEST_CASE("model.json widths written as 2.0 read as 2, as a config's integers do", "[faults]") {
  const std::string f = write_text(fresh_dir("float_widths") + ".json",
                                   R"({"format": "nntrain-mlp", "version": 1.0, "layers": [{"in": 2.0, "out": 1.0,
                                   "activation": "identity", "W": [[0.5, -1]], "b": [0.25]}]})");
  const nntrain::Params p = nntrain::load_model(f);
  CHECK(p.spec.widths == std::vector<int>{2, 1});
  CHECK(p.values == std::vector<float>{0.5f, -1.0f, 0.25f});
  fs::remove(f);
}

TEST_CASE("save_model refuses non-finite weights", "[faults]") {
  nntrain::ModelSpec spec;
  spec.widths = {2, 3, 1};
  nntrain::Params p = nntrain::init_params(spec, nntrain::Init::glorot_uniform, 1);
  const std::string f = fresh_dir("nan_model") + ".json";
  nntrain::save_model(p, f);
  CHECK(fs::exists(f));
  fs::remove(f);
  p.values[4] = std::numeric_limits<float>::quiet_NaN();
  CHECK_FALSE(nntrain::all_finite(p));
  CHECK_THROWS_AS(nntrain::save_model(p, f), nntrain::IoError);
  CHECK_FALSE(fs::exists(f));
}

namespace {

// Starts a long training run, waits until it has written its resolved config (the run has
// begun; the handlers are installed before that), sends `sig`, and checks the result.
void interrupt_run(int sig, const std::string& tag) {
  const std::string out = fresh_dir("signal_" + tag);
  const std::string log_out = out + ".stdout", log_err = out + ".stderr";
  const pid_t pid = spawn({NNTRAIN_BINARY, "--config", "configs/peaks.json", "--epochs", "10000000", "--quiet",
                          "--out", out, "--save-model", out + "_saved.json", "data.grid=30", "train.log_every=1",
                          "timing.warmup_epochs=0"},
                         NNTRAIN_SOURCE_DIR, log_out, log_err);
  REQUIRE(pid > 0);
  const bool started = wait_until([&] { return fs::exists(out + "/config.resolved.json"); }, 60);
  if (!started) ::kill(pid, SIGKILL);
  REQUIRE(started);
  ::usleep(200 * 1000);  // let a few chunks finish
  ::kill(pid, sig);
  const int code = wait_exit(pid, 60);
  INFO(slurp(log_err));
  CHECK(code == 130);
  CHECK_THAT(slurp(log_err), Catch::Contains("interrupted"));
  REQUIRE(fs::exists(out + "/summary.json"));
  const json s = json::parse(slurp(out + "/summary.json"));
  const json& run = s["runs"][0];
  CHECK(run["status"] == "interrupted");
  const int epochs = run["epochs"].get<int>();
  CHECK(epochs >= 1);
  CHECK(epochs < 10000000);
  CHECK(run["epochs_requested"] == 10000000);
  CHECK(count_lines(slurp(out + "/metrics.csv")) == size_t(epochs) + 1);
  // The weights reached are finite and loadable; --save-model (what a sweep picks up next)
  // is only written for a finished run.
  CHECK(nntrain::load_model(out + "/model.json").spec.widths == std::vector<int>{2, 20, 5, 1});
  CHECK_FALSE(fs::exists(out + "_saved.json"));
  fs::remove_all(out);
  fs::remove(log_out);
  fs::remove(log_err);
}

}  // namespace

TEST_CASE("SIGINT stops at the next chunk, writes the curve so far and exits 130", "[faults][signal]") {
  interrupt_run(SIGINT, "int");
}

TEST_CASE("SIGTERM stops at the next chunk, writes the curve so far and exits 130", "[faults][signal]") {
  interrupt_run(SIGTERM, "term");
}

TEST_CASE("a stop while the data loads writes nothing: an earlier run in --out is left as it was", "[faults][signal]") {
  // The data is a FIFO: the run blocks reading it until the test writes it, so the signal
  // surely comes while the data loads (a large CSV takes seconds).
  const std::string dir = fresh_dir("stop_loading");
  fs::create_directories(dir + "/out");
  write_text(dir + "/out/model.json", "earlier");
  write_text(dir + "/out/summary.json", "earlier");
  const std::string fifo = dir + "/d.csv";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string cfg = write_text(dir + "/c.json", R"({"data": {"csv": ")" + fifo +
                                                          R"(", "inputs": ["x1", "x2"], "targets": ["y"]},
                                                          "model": {"layers": [2, 4, 1]}, "train": {"epochs": 5}})");
  const pid_t pid = spawn({NNTRAIN_BINARY, "--config", cfg, "--out", dir + "/out", "--quiet"}, NNTRAIN_SOURCE_DIR,
                          dir + "/stdout", dir + "/stderr");
  REQUIRE(pid > 0);
  const int fd = ::open(fifo.c_str(), O_WRONLY);  // returns once nntrain has opened it to read
  REQUIRE(fd >= 0);
  ::kill(pid, SIGTERM);
  ::usleep(100 * 1000);
  const std::string data = "x1,x2,y\n1,2,3\n4,5,6\n";
  REQUIRE(::write(fd, data.data(), data.size()) == ssize_t(data.size()));
  ::close(fd);
  const int code = wait_exit(pid, 60);
  INFO(slurp(dir + "/stderr"));
  CHECK(code == 130);
  CHECK_THAT(slurp(dir + "/stderr"), Catch::Contains("interrupted before training started; nothing written"));
  CHECK(slurp(dir + "/out/model.json") == "earlier");
  CHECK(slurp(dir + "/out/summary.json") == "earlier");
  CHECK_FALSE(fs::exists(dir + "/out/config.resolved.json"));
  CHECK_FALSE(fs::exists(dir + "/out/metrics.csv"));
  fs::remove_all(dir);
}

TEST_CASE("constant targets: a near-perfect start is not \"diverged\" by rounding", "[faults]") {
  // The targets' variance is 0: 1000 x it is no threshold, and the first epoch's 1e-10 loss
  // made a second epoch's 7e-5 an "explosion" (exit 4). Their mean square (0.25) stands in.
  const std::string dir = fresh_dir("constant_targets");
  const std::string csv = write_text(dir + "/c.csv", "x1,x2,y\n1,2,0.5\n3,4,0.5\n5,6,0.5\n");
  const std::string model = write_text(
      dir + "/m.json", R"({"format": "nntrain-mlp", "version": 1, "layers": [{"in": 2, "out": 1, "activation":
      "identity", "W": [[0, 0]], "b": [0.50001]}]})");
  const std::string cfg = write_text(dir + "/c.json", R"({"data": {"csv": ")" + csv +
                                                          R"(", "inputs": ["x1", "x2"], "targets": ["y"]},
                                                          "model": {"layers": [2, 1]}, "train": {"epochs": 5},
                                                          "timing": {"warmup_epochs": 0}})");
  const auto r = run_nntrain("--config " + cfg + " --init-model " + model + " --lr 0.001 --quiet --out " + dir + "/o");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(json::parse(slurp(dir + "/o/summary.json"))["runs"][0]["status"] == "ok");
  // A real explosion on the same data is still one: lr 1e4 from the same start.
  const auto bad = run_nntrain("--config " + cfg + " --init-model " + model + " --lr 10000 --quiet --out " + dir + "/b");
  CHECK(bad.exit_code == 4);
  fs::remove_all(dir);
}

TEST_CASE("exceptions map to the documented exit codes", "[faults]") {
  using namespace nntrain;
  CHECK(guarded([] { return 0; }) == 0);
  CHECK(guarded([]() -> int { throw UsageError("bad"); }) == 2);
  CHECK(guarded([]() -> int { throw DeviceUnavailable("no gpu"); }) == 3);
  CHECK(guarded([]() -> int { throw IoError("disk full"); }) == 1);
  // What a CUDA error surfaces as (CUDA_CHECK throws std::runtime_error with the call and file:line).
  CHECK(guarded([]() -> int { throw std::runtime_error("cudaMemcpy failed: an illegal memory access"); }) == 1);
  CHECK(guarded([]() -> int { throw std::bad_alloc(); }) == 1);
  CHECK(guarded([]() -> int { throw 42; }) == 1);
}

namespace {

// The reference backend under a test's own train(): the backends below count its calls and
// change what one of them does.
class WrappedReference : public nntrain::Backend {
 public:
  WrappedReference(const nntrain::Dataset& d, const nntrain::BackendOptions& o)
      : inner_(nntrain::make_cpu_reference_backend(d, o)) {}
  nntrain::Device device() const override { return nntrain::Device::cpu; }
  void load(const nntrain::Params& p) override { inner_->load(p); }
  nntrain::Params params() override { return inner_->params(); }
  nntrain::SetupReport setup() const override { return {}; }

 protected:
  std::unique_ptr<nntrain::Backend> inner_;
  int calls_ = 0;
};

// The reference backend, but its second chunk fails the way a CUDA error would surface
// (CUDA_CHECK throws std::runtime_error).
class FailingBackend final : public WrappedReference {
 public:
  using WrappedReference::WrappedReference;
  std::string name() const override { return "cpu-failing"; }
  std::string details() const override { return "fails in its second chunk"; }
  double train(int epochs, float* losses) override {
    if (++calls_ == 3)  // 1: warm-up, 2: first chunk, 3: second chunk
      throw std::runtime_error("injected fault: cudaMemcpy failed: an illegal memory access");
    return inner_->train(epochs, losses);
  }
};

std::unique_ptr<nntrain::Backend> make_failing(const nntrain::Dataset& d, const nntrain::BackendOptions& o) {
  return std::make_unique<FailingBackend>(d, o);
}

}  // namespace

TEST_CASE("a backend failing mid-run leaves summary.json with status failed and the reason", "[faults]") {
  using namespace nntrain;
  const std::string out = fresh_dir("failed_run");
  TrainArgs a;
  a.config = std::string(NNTRAIN_SOURCE_DIR) + "/configs/peaks.json";
  a.out = out;
  a.quiet = true;
  a.json = true;  // nothing on stdout would be printed before the failure anyway
  a.overrides = {"data.grid=5", "train.epochs=20", "train.log_every=5", "timing.warmup_epochs=1"};
  const BackendRegistry failing = {{Device::cpu, "fast", make_failing}};
  std::string message;
  const int code = guarded([&] { return run_train_command(a, failing); });
  CHECK(code == kExitInternal);
  try {
    run_train_command(a, failing);
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  CHECK_THAT(message, Catch::Contains("injected fault"));
  CHECK_THAT(message, Catch::Contains(out));
  REQUIRE(fs::exists(out + "/summary.json"));
  const json s = json::parse(slurp(out + "/summary.json"));
  CHECK(s["status"] == "failed");
  CHECK(s["failed_device"] == "cpu");
  CHECK_THAT(s["error"].get<std::string>(), Catch::Contains("illegal memory access"));
  CHECK(fs::exists(out + "/config.resolved.json"));
  CHECK(slurp(out + "/metrics.csv") == "device,epoch,loss\n");  // no run finished
  CHECK_FALSE(fs::exists(out + "/model.json"));
  fs::remove_all(out);
}

namespace {

// A CPU backend whose probe refuses this machine, as the fast one's does for an
// NNTRAIN_FAST_ISA naming an instruction set the CPU lacks (not testable on a CPU that has
// them all).
nntrain::BackendProbe probe_refusing() {
  nntrain::BackendProbe p;
  p.available = false;
  p.reason = "NNTRAIN_FAST_ISA=avx512: this CPU cannot run that instruction set (it can: avx2, generic)";
  return p;
}

}  // namespace

TEST_CASE("a CPU backend its probe refuses is exit 2 before the run folder exists", "[faults]") {
  using namespace nntrain;
  const std::string out = fresh_dir("refused_cpu");
  TrainArgs a;
  a.config = std::string(NNTRAIN_SOURCE_DIR) + "/configs/peaks.json";
  a.out = out;
  a.quiet = true;
  a.overrides = {"data.grid=5", "train.epochs=2"};
  const BackendRegistry refusing = {{Device::cpu, "fast", make_failing, probe_refusing}};
  const int code = guarded([&] { return run_train_command(a, refusing); });
  CHECK(code == kExitUsage);  // a setting, not a missing device (exit 3)
  CHECK_FALSE(fs::exists(out));
  CHECK_THROWS_WITH(run_train_command(a, refusing), Catch::Contains("NNTRAIN_FAST_ISA=avx512: this CPU cannot run"));
}

namespace {

int g_epochs_run = 0;  // by every StoppingBackend call, warm-up included

// The reference backend, but each chunk reports 1 ms per epoch (times to check by hand),
// and a stop is requested during its call number `stop_at` (1: the warm-up).
class StoppingBackend final : public WrappedReference {
 public:
  StoppingBackend(const nntrain::Dataset& d, const nntrain::BackendOptions& o, int stop_at)
      : WrappedReference(d, o), stop_at_(stop_at) {}
  std::string name() const override { return "cpu-stopping"; }
  std::string details() const override { return "asks to stop in one call"; }
  double train(int epochs, float* losses) override {
    inner_->train(epochs, losses);
    g_epochs_run += epochs;
    if (++calls_ == stop_at_) nntrain::request_stop();
    return 0.001 * epochs;
  }

 private:
  int stop_at_ = 0;
};

int g_stop_at = 0;  // a BackendFactory is a plain function
std::unique_ptr<nntrain::Backend> make_stopping(const nntrain::Dataset& d, const nntrain::BackendOptions& o) {
  return std::make_unique<StoppingBackend>(d, o, g_stop_at);
}

// Runs 20 epochs in chunks of 5 after a 10-epoch warm-up in the same chunks (calls 1-2), 2
// timed repeats (calls 3-6: the first, 7-10: the second), a stop requested in call
// `stop_at`; returns the exit code, with the run's summary and stderr.
int stopped_run(int stop_at, const std::string& out, json& summary, std::string& err) {
  using namespace nntrain;
  TrainArgs a;
  a.config = std::string(NNTRAIN_SOURCE_DIR) + "/configs/peaks.json";
  a.out = out;
  a.quiet = true;
  a.json = false;
  a.overrides = {"data.grid=5", "train.epochs=20", "train.log_every=5", "timing.warmup_epochs=10",
                 "timing.repeats=2"};
  g_stop_at = stop_at;
  g_epochs_run = 0;
  const BackendRegistry reg = {{Device::cpu, "fast", make_stopping}};
  const std::string err_path = out + ".stderr";
  std::fflush(stderr);
  const int saved = ::dup(2), fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(fd, 2);
  ::close(fd);
  const int code = guarded([&] { return run_train_command(a, reg); });
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  clear_stop();
  err = slurp(err_path);
  fs::remove(err_path);
  summary = json::parse(slurp(out + "/summary.json"));
  return code;
}

}  // namespace

TEST_CASE("a stop in the warm-up or a later timed repeat says where and leaves a partial repeat out of the times", "[faults]") {
  const std::string out = fresh_dir("stopped_repeat");
  json s;
  std::string err;
  SECTION("inside the second repeat: training finished, one repeat timed") {
    CHECK(stopped_run(7, out, s, err) == 130);
    const json& run = s["runs"][0];
    CHECK(s["status"] == "interrupted");
    CHECK(run["epochs"] == 20);
    CHECK(run["interrupted_repeat"] == 2);
    // 4 chunks of 5 epochs at 1 ms an epoch: 20 ms; the second repeat's 5 ms left out (with
    // it, the median of two readings would be 12.5 ms).
    CHECK(run["train_seconds"].get<double>() == Approx(0.020).epsilon(1e-12));
    CHECK(run["seconds_per_epoch"].get<double>() == Approx(0.001).epsilon(1e-12));
    CHECK_FALSE(run.contains("train_seconds_repeats"));
    CHECK_THAT(err, Catch::Contains("before timing repeat 2 finished, after all 20 epochs had trained"));
    CHECK(fs::exists(out + "/model.json"));
  }
  SECTION("in the first repeat's last chunk: the second does not start") {
    CHECK(stopped_run(6, out, s, err) == 130);
    const json& run = s["runs"][0];
    CHECK(run["epochs"] == 20);
    CHECK(run["interrupted_repeat"] == 2);
    CHECK(run["train_seconds"].get<double>() == Approx(0.020).epsilon(1e-12));
    CHECK(g_epochs_run == 30);  // the warm-up's 10 and the first repeat's 20
  }
  SECTION("inside the first repeat: the epochs so far, no repeat left out") {
    CHECK(stopped_run(4, out, s, err) == 130);
    const json& run = s["runs"][0];
    CHECK(run["epochs"] == 10);
    CHECK_FALSE(run.contains("interrupted_repeat"));
    CHECK(run["train_seconds"].get<double>() == Approx(0.010).epsilon(1e-12));
    CHECK_THAT(err, Catch::Contains("interrupted on cpu after epoch 10"));
  }
  SECTION("inside the warm-up: it stops after its chunk in flight, nothing trained") {
    CHECK(stopped_run(1, out, s, err) == 130);
    const json& run = s["runs"][0];
    CHECK(run["epochs"] == 0);
    CHECK(run["status"] == "interrupted");
    CHECK(run["model_loss_note"] == "the run was interrupted");
    CHECK(g_epochs_run == 5);  // the warm-up's first chunk of 5, not its 10 in one call
    CHECK(run["warmup_epochs"] == 5);
    CHECK_THAT(err, Catch::Contains("interrupted on cpu during the warm-up, before any epoch trained"));
  }
  fs::remove_all(out);
}

TEST_CASE("a loss not finite at epoch 1 of a full batch is put down to the data, not to training", "[faults]") {
  const std::string dir = fresh_dir("overflow_data");
  fs::create_directories(dir);
  // Targets of 1e30 are float32, their squares are not: the first loss, before any update, is inf.
  write_text(dir + "/big.csv", "x1,x2,y\n0.5,1,1e30\n-1,0.25,-1e30\n1.5,-0.75,1e30\n");
  write_text(dir + "/c.json", R"({"data": {"csv": "big.csv", "inputs": ["x1", "x2"], "targets": ["y"]}})");
  auto r = run_nntrain("--config " + dir + "/c.json --epochs 5 --quiet --out " + dir + "/full");
  CHECK(r.exit_code == 4);
  CHECK_THAT(r.err, Catch::Contains("the initial weights' loss is not finite in float32") &&
                        Catch::Contains("at epoch 1") && Catch::Contains("scale the inputs and targets"));
  // In batches of 1, epoch 1's loss comes after updates: not said to be the initial weights'.
  r = run_nntrain("--config " + dir + "/c.json --epochs 5 --quiet --batch-size 1 --out " + dir + "/mini");
  CHECK(r.exit_code == 4);
  CHECK_THAT(r.err, Catch::Contains("loss is not finite at epoch 1") && !Catch::Contains("initial weights"));
  fs::remove_all(dir);
}
