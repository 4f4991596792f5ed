// test_predict.cpp — `train --write-surface` and `nntrain predict` end to end.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
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
