// test_predict.cpp — `train --write-surface` and `nntrain predict` end to end.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <sstream>

#include "cli_util.hpp"
#include "dataset.hpp"

using namespace testutil;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::istringstream ls(line);
    std::string c;
    while (std::getline(ls, c, ',')) f.push_back(c);
    rows.push_back(f);
  }
  return rows;
}
}  // namespace

TEST_CASE("write-surface writes the prediction grid that predict reproduces", "[cli][predict]") {
  const std::string dir = fresh_dir("surface");
  const auto r = run_nntrain("--config configs/peaks.json --epochs 20 --quiet --write-surface 5 --out " + dir +
                             " data.grid=10 data.range=[-2,3]");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto rows = csv_rows(slurp(dir + "/surface.cpu.csv"));
  REQUIRE(rows.size() == 26);
  CHECK(rows[0] == std::vector<std::string>{"x1", "x2", "y_true", "y_pred"});
  // x1 fastest over linspace(-2, 3, 5); y_true is the peaks function.
  CHECK(std::stod(rows[1][0]) == -2.0);
  CHECK(std::stod(rows[2][0]) == Approx(-0.75));
  CHECK(std::stod(rows[2][1]) == -2.0);
  CHECK(std::stod(rows[25][0]) == 3.0);
  CHECK(std::stod(rows[25][1]) == 3.0);
  for (size_t i = 1; i < rows.size(); ++i)
    CHECK(std::stod(rows[i][2]) == Approx(nntrain::peaks(std::stod(rows[i][0]), std::stod(rows[i][1]))).epsilon(1e-6));

  // predict on the same inputs with the saved model gives the same predictions.
  std::string in = "x1,x2\n";
  for (size_t i = 1; i < rows.size(); ++i) in += rows[i][0] + "," + rows[i][1] + "\n";
  write_text(dir + "/in.csv", in);
  const auto p = run_nntrain("predict --model " + dir + "/model.json --input " + dir + "/in.csv --output " + dir +
                             "/pred.csv");
  INFO(p.err);
  REQUIRE(p.exit_code == 0);
  const auto pred = csv_rows(slurp(dir + "/pred.csv"));
  REQUIRE(pred.size() == 26);
  CHECK(pred[0] == std::vector<std::string>{"x1", "x2", "prediction0"});
  for (size_t i = 1; i < rows.size(); ++i) CHECK(std::stof(pred[i][2]) == std::stof(rows[i][3]));
  // The predictions are not all the same value (the model learnt something of the surface).
  CHECK(pred[1][2] != pred[13][2]);
  fs::remove_all(dir);
}

TEST_CASE("write-surface refuses a CSV data config before anything is written", "[cli][predict][errors]") {
  const std::string dir = fresh_dir("surface_csv");
  const auto r = run_nntrain("--config configs/csv_example.json --epochs 1 --quiet --write-surface 5 --out " + dir);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--write-surface"));
  CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("predict errors exit 2 naming the file and line and write nothing", "[cli][predict][errors]") {
  const std::string dir = fresh_dir("predict_bad");
  fs::create_directories(dir);
  const auto m = run_nntrain("--config configs/peaks.json --epochs 0 --quiet --save-model " + dir +
                             "/m.json --out " + dir + "/run data.grid=4");
  REQUIRE(m.exit_code == 0);
  write_text(dir + "/bad.csv", "x1,x2\n0.5,1\n0.25,zz\n");
  write_text(dir + "/one_col.csv", "x1\n0.5\n");
  write_text(dir + "/bad_model.json", "{\"format\": \"nntrain-mlp\", \"version\": 1, \"layers\": 3}");
  struct Case {
    std::string args, expect;
  };
  const std::string model = " --model " + dir + "/m.json";
  for (const Case& c : std::vector<Case>{
           {model + " --input " + dir + "/bad.csv", "bad.csv: line 3"},
           {model + " --input " + dir + "/missing.csv", "missing.csv"},
           {model + " --input " + dir + "/one_col.csv", "one_col.csv"},
           {" --model " + dir + "/bad_model.json --input " + dir + "/bad.csv", "bad_model.json"},
           {" --model " + dir + "/nope.json --input " + dir + "/bad.csv", "nope.json"}}) {
    INFO(c.args);
    const auto r = run_nntrain("predict" + c.args + " --output " + dir + "/out.csv");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(c.expect));
    CHECK_FALSE(fs::exists(dir + "/out.csv"));
  }
  write_text(dir + "/good.csv", "x1,x2\n0.5,1\n");
  const auto r = run_nntrain("predict" + model + " --input " + dir + "/good.csv --output " + dir + "/no/dir/out.csv");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("no/dir"));
  fs::remove_all(dir);
}

namespace {

// A hand-made 2-3-1 relu/identity model whose output is negative over part of the domain,
// and its forward pass written out here in double (independent of reference_forward).
const char* kHandModel = R"({"format": "nntrain-mlp", "version": 1, "layers": [
  {"in": 2, "out": 3, "activation": "relu", "W": [[1.0, 0.5], [-0.7, 1.2], [0.3, -0.9]], "b": [0.1, -0.2, 0.05]},
  {"in": 3, "out": 1, "activation": "identity", "W": [[0.8, -1.1, 0.6]], "b": [-0.3]}]})";

double hand_forward(double x1, double x2) {
  const double h0 = std::max(0.0, 1.0 * x1 + 0.5 * x2 + 0.1);
  const double h1 = std::max(0.0, -0.7 * x1 + 1.2 * x2 - 0.2);
  const double h2 = std::max(0.0, 0.3 * x1 - 0.9 * x2 + 0.05);
  return 0.8 * h0 - 1.1 * h1 + 0.6 * h2 - 0.3;  // identity output: may be negative
}

}  // namespace

TEST_CASE("write-surface and predict agree with a forward pass written out by hand", "[cli][predict]") {
  const std::string dir = fresh_dir("surface_hand");
  fs::create_directories(dir);
  const std::string model = write_text(dir + "/hand.json", kHandModel);
  // 0 epochs: the surface is the hand model's. The training grid is the surface grid, so the
  // run's loss of that model is the surface's mean squared error.
  const auto r = run_nntrain("--config configs/peaks.json --epochs 0 --quiet --write-surface 7 --init-model " + model +
                             " --out " + dir + "/run model.layers=[2,3,1] data.grid=7 data.range=[-2.5,2]");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto rows = csv_rows(slurp(dir + "/run/surface.cpu.csv"));
  REQUIRE(rows.size() == 50);
  int negative = 0;
  double sse = 0;
  std::string in = "x1,x2";  // the same points for predict, without a trailing newline
  for (size_t i = 1; i < rows.size(); ++i) {
    const double x1 = std::stod(rows[i][0]), x2 = std::stod(rows[i][1]);
    const double want = hand_forward(x1, x2), got = std::stod(rows[i][3]);
    INFO("surface row " << i << " (" << x1 << ", " << x2 << ")");
    // fp32 arithmetic on O(1) weights and inputs, printed with 9 digits: ~1e-7 relative.
    CHECK(got == Approx(want).epsilon(1e-5).margin(1e-6));
    negative += want < -0.05;
    sse += (got - std::stod(rows[i][2])) * (got - std::stod(rows[i][2]));
    in += "\n" + rows[i][0] + "," + rows[i][1];
  }
  CHECK(negative >= 5);  // an output activation wrongly applied (relu) would clip these
  // The surface's MSE is the loss the reference loss function gives the same model on the same
  // grid (train --backend reference --epochs 1 reports the loss before its first step).
  const auto l = run_nntrain("--config configs/peaks.json --epochs 1 --json --backend reference --init-model " + model +
                             " --out " + dir + "/loss model.layers=[2,3,1] data.grid=7 data.range=[-2.5,2]");
  REQUIRE(l.exit_code == 0);
  const json s = json::parse(l.out);
  CHECK(sse / 49 == Approx(s["runs"][0]["initial_loss"].get<double>()).epsilon(1e-5));

  write_text(dir + "/in.csv", in);
  const auto p = run_nntrain("predict --model " + model + " --input " + dir + "/in.csv --output " + dir + "/pred.csv");
  INFO(p.err);
  REQUIRE(p.exit_code == 0);
  const auto pred = csv_rows(slurp(dir + "/pred.csv"));
  REQUIRE(pred.size() == 50);  // the last input line, without a newline, is predicted too
  for (size_t i = 1; i < pred.size(); ++i) {
    INFO("predict row " << i);
    CHECK(std::stod(pred[i][2]) == Approx(hand_forward(std::stod(pred[i][0]), std::stod(pred[i][1])))
                                       .epsilon(1e-5)
                                       .margin(1e-6));
  }
  fs::remove_all(dir);
}
