// test_predict.cpp — `train --write-surface` and `nntrain predict` end to end.
#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <cmath>
#include <sstream>

#include "cli_util.hpp"
#include "commands.hpp"
#include "dataset.hpp"
#include "errors.hpp"
#include "trainer.hpp"

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
  // predict on surface.csv itself (x1, x2 and two columns more): its columns kept, then the
  // prediction, which is the surface's own y_pred.
  const auto s = run_nntrain("predict --model " + dir + "/model.json --input " + dir + "/surface.cpu.csv --output " +
                             dir + "/pred_s.csv");
  INFO(s.err);
  REQUIRE(s.exit_code == 0);
  const auto ps = csv_rows(slurp(dir + "/pred_s.csv"));
  REQUIRE(ps.size() == 26);
  CHECK(ps[0] == std::vector<std::string>{"x1", "x2", "y_true", "y_pred", "prediction0"});
  for (size_t i = 1; i < ps.size(); ++i) CHECK(ps[i][4] == rows[i][3]);
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

namespace {

// The hand model with the names model.json records: its inputs are x1, x2 in that order.
std::string named_hand_model() {
  std::string m = kHandModel;
  m.insert(1, R"("inputs": ["x1", "x2"], "outputs": ["y"], )");
  return m;
}

struct Pred {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

Pred predict_file(const std::string& dir, const std::string& model, const std::string& csv, const std::string& extra,
                  std::string* err = nullptr) {
  const std::string in = write_text(dir + "/in.csv", csv);
  fs::remove(dir + "/pred.csv");
  const auto r = run_nntrain("predict --model " + model + " --input " + in + " --output " + dir + "/pred.csv" + extra);
  INFO(csv << extra << "\n" << r.err);
  REQUIRE(r.exit_code == 0);
  if (err) *err = r.err;
  auto rows = csv_rows(slurp(dir + "/pred.csv"));
  Pred p{rows.front(), {rows.begin() + 1, rows.end()}};
  return p;
}

// Points, one per row: (x1, x2), with predictions far apart so a swap of x1 and x2 shows.
const std::vector<std::pair<double, double>> kPoints = {{0.5, 1.0}, {-1.0, 0.25}, {1.5, -0.75}, {-0.5, -1.25}};

}  // namespace

TEST_CASE("predict finds the inputs by the names model.json records: shuffled columns and an id column",
          "[cli][predict]") {
  const std::string dir = fresh_dir("predict_names");
  fs::create_directories(dir);
  const std::string model = write_text(dir + "/named.json", named_hand_model());
  std::string plain = "x1,x2\n", shuffled = "id,x2,note,x1\n";
  for (size_t i = 0; i < kPoints.size(); ++i) {
    const auto [x1, x2] = kPoints[i];
    plain += fmt::format("{},{}\n", x1, x2);
    shuffled += fmt::format("r{},{},n{},{}\n", i + 17, x2, i, x1);
  }
  const Pred a = predict_file(dir, model, plain, "");
  const Pred b = predict_file(dir, model, shuffled, "");
  CHECK(a.header == std::vector<std::string>{"x1", "x2", "prediction0"});
  // Every column of the input, in its order, then the prediction: the id joins back.
  CHECK(b.header == std::vector<std::string>{"id", "x2", "note", "x1", "prediction0"});
  REQUIRE(a.rows.size() == kPoints.size());
  REQUIRE(b.rows.size() == kPoints.size());
  for (size_t i = 0; i < kPoints.size(); ++i) {
    const auto [x1, x2] = kPoints[i];
    INFO("row " << i);
    CHECK(b.rows[i][0] == "r" + std::to_string(i + 17));
    CHECK(b.rows[i][2] == "n" + std::to_string(i));
    CHECK(std::stod(a.rows[i][2]) == Approx(hand_forward(x1, x2)).epsilon(1e-5).margin(1e-6));
    CHECK(b.rows[i][4] == a.rows[i][2]);  // the same prediction, whatever the column order
  }
  CHECK(hand_forward(0.5, 1.0) != Approx(hand_forward(1.0, 0.5)).margin(1e-3));  // a swap would show
  fs::remove_all(dir);
}

TEST_CASE("predict on CSVs wider than the model: trailing and leading extra columns, with and without --inputs",
          "[cli][predict]") {
  const std::string dir = fresh_dir("predict_wide");
  fs::create_directories(dir);
  const std::string named = write_text(dir + "/named.json", named_hand_model());
  const std::string old = write_text(dir + "/old.json", kHandModel);  // no names: written before they were recorded
  std::string trailing = "x1,x2,y\n", leading = "y,x1,x2\n";
  for (const auto& [x1, x2] : kPoints) {
    trailing += fmt::format("{},{},{}\n", x1, x2, nntrain::peaks(x1, x2));
    leading += fmt::format("{},{},{}\n", nntrain::peaks(x1, x2), x1, x2);
  }
  struct Case {
    std::string model, csv, extra;
    size_t pred_col;
    bool note;  // the old model's one-line note that columns are taken by position
  };
  for (const Case& c : std::vector<Case>{{named, trailing, "", 3, false},
                                         {named, trailing, " --inputs x1 x2", 3, false},
                                         {named, leading, "", 3, false},
                                         {named, leading, " --inputs x1 x2", 3, false},
                                         {old, trailing, "", 3, true},
                                         {old, leading, " --inputs x1 x2", 3, false}}) {
    INFO(c.model << "\n" << c.csv << c.extra);
    std::string err;
    const Pred p = predict_file(dir, c.model, c.csv, c.extra, &err);
    CHECK(p.header.size() == 4);
    CHECK(p.header.back() == "prediction0");
    CHECK((err.find("records no input names") != std::string::npos) == c.note);
    REQUIRE(p.rows.size() == kPoints.size());
    for (size_t i = 0; i < kPoints.size(); ++i)
      CHECK(std::stod(p.rows[i][c.pred_col]) ==
            Approx(hand_forward(kPoints[i].first, kPoints[i].second)).epsilon(1e-5).margin(1e-6));
  }
  // The old model on the leading column takes y, x1 by position, as it always did, and says so.
  std::string err;
  const Pred p = predict_file(dir, old, leading, "", &err);
  CHECK_THAT(err, Catch::Contains("old.json") && Catch::Contains("by position: y, x1"));
  CHECK(std::stod(p.rows[0][3]) == Approx(hand_forward(nntrain::peaks(0.5, 1.0), 0.5)).epsilon(1e-5).margin(1e-6));
  fs::remove_all(dir);
}

TEST_CASE("predict refuses a CSV that lacks a named input, or has a prediction column already",
          "[cli][predict][errors]") {
  const std::string dir = fresh_dir("predict_missing");
  fs::create_directories(dir);
  const std::string named = write_text(dir + "/named.json", named_hand_model());
  const std::string in = write_text(dir + "/in.csv", "x1,z\n1,2\n");
  auto r = run_nntrain("predict --model " + named + " --input " + in + " --output " + dir + "/out.csv");
  CHECK(r.exit_code == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, Catch::Contains("in.csv") && Catch::Contains("\"x2\"") && Catch::Contains("--inputs"));
  CHECK_FALSE(fs::exists(dir + "/out.csv"));
  // Asked by --inputs, the columns are taken as named, whatever the model records.
  r = run_nntrain("predict --model " + named + " --input " + in + " --output " + dir + "/out.csv --inputs x1 z");
  CHECK(r.exit_code == 0);
  // A comma-separated list is one name (a CSV name may hold a comma): said so.
  r = run_nntrain("predict --model " + named + " --input " + in + " --output " + dir + "/out1.csv --inputs x1,z");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("takes 2 inputs but 1 input columns were found/given (--inputs \"x1,z\" is one "
                                    "column name; give each as its own argument"));
  write_text(in, "x1,x2,prediction0\n1,2,3\n");
  r = run_nntrain("predict --model " + named + " --input " + in + " --output " + dir + "/out2.csv");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("prediction0"));
  CHECK_FALSE(fs::exists(dir + "/out2.csv"));
  // A model whose names do not fit its widths is refused with the JSON path.
  std::string bad = kHandModel;
  bad.insert(1, R"("inputs": ["x1"], )");
  r = run_nntrain("predict --model " + write_text(dir + "/bad.json", bad) + " --input " + in + " --output " + dir +
                  "/out3.csv");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("bad.json") && Catch::Contains("/inputs"));
  fs::remove_all(dir);
}

TEST_CASE("train records the data's column names in model.json, and predict uses them", "[cli][predict]") {
  const std::string dir = fresh_dir("predict_recorded");
  fs::create_directories(dir);
  const std::string hand = write_text(dir + "/hand.json", kHandModel);
  // A CSV whose columns are not in the model's order; the config names the inputs a, b.
  std::string csv = "t,b,id,a\n";
  for (size_t i = 0; i < kPoints.size(); ++i)
    csv += fmt::format("{},{},{},{}\n", 0.1 * double(i), kPoints[i].second, i, kPoints[i].first);
  write_text(dir + "/data.csv", csv);
  write_text(dir + "/c.json", R"({"data": {"csv": "data.csv", "inputs": ["a", "b"], "targets": ["t"]},
                                  "model": {"layers": [2, 3, 1]}})");
  auto r = run_nntrain("--config " + dir + "/c.json --epochs 0 --quiet --init-model " + hand + " --save-model " + dir +
                       "/saved.json --out " + dir + "/run");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* f : {"/saved.json", "/run/model.json"}) {
    const json m = json::parse(slurp(dir + f));
    CHECK(m["inputs"] == json({"a", "b"}));
    CHECK(m["outputs"] == json({"t"}));
    CHECK(m["layers"].size() == 2);  // PyTorch's layout, the names only added beside it
  }
  const auto peaks = run_nntrain("--config configs/peaks.json --epochs 0 --quiet --out " + dir + "/peaks data.grid=4");
  REQUIRE(peaks.exit_code == 0);
  CHECK(json::parse(slurp(dir + "/peaks/model.json"))["inputs"] == json({"x1", "x2"}));
  // predict on the training data itself: a, b by name, t and id passed through.
  const Pred p = predict_file(dir, dir + "/saved.json", csv, "");
  CHECK(p.header == std::vector<std::string>{"t", "b", "id", "a", "prediction0"});
  for (size_t i = 0; i < kPoints.size(); ++i) {
    CHECK(p.rows[i][2] == std::to_string(i));
    CHECK(std::stod(p.rows[i][4]) ==
          Approx(hand_forward(kPoints[i].first, kPoints[i].second)).epsilon(1e-5).margin(1e-6));
  }
  fs::remove_all(dir);
}

TEST_CASE("predict copies each input line as it was: quoted names and ids, commas and spaces inside", "[cli][predict]") {
  const std::string dir = fresh_dir("predict_quoted");
  fs::create_directories(dir);
  const std::string model = write_text(dir + "/named.json", named_hand_model());
  // As R's write.csv writes it (every name quoted), with an id holding a comma and spaces.
  std::string csv = "\"id\",\"x2\",\"x1\"\r\n", plain = "x1,x2\n";
  for (size_t i = 0; i < kPoints.size(); ++i) {
    const auto [x1, x2] = kPoints[i];
    csv += fmt::format("\" r{}, b \",{},\"{}\"\r\n", i, x2, x1);
    plain += fmt::format("{},{}\n", x1, x2);
  }
  const Pred ref = predict_file(dir, model, plain, "");  // the same points, unquoted
  const std::string in = write_text(dir + "/quoted.csv", csv);
  const auto r = run_nntrain("predict --model " + model + " --input " + in + " --output " + dir + "/pred.csv");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::istringstream out(slurp(dir + "/pred.csv"));
  std::string line;
  std::getline(out, line);
  CHECK(line == "\"id\",\"x2\",\"x1\",prediction0");
  for (size_t i = 0; i < kPoints.size(); ++i) {
    const auto [x1, x2] = kPoints[i];
    REQUIRE(std::getline(out, line));
    CHECK(line == fmt::format("\" r{}, b \",{},\"{}\",{}", i, x2, x1, ref.rows[i][2]));
  }
  fs::remove_all(dir);
}

TEST_CASE("predict: finite inputs that overflow inside the model are written as they come and warned of",
          "[cli][predict]") {
  const std::string dir = fresh_dir("predict_overflow");
  fs::create_directories(dir);
  const std::string model = write_text(dir + "/named.json", named_hand_model());
  std::string err;
  // Row 2's inputs are float32 but their products with the weights are not.
  const Pred p = predict_file(dir, model, "x1,x2\n0.5,1\n3e38,-3e38\n-1,0.25\n", "", &err);
  REQUIRE(p.rows.size() == 3);
  CHECK(std::isfinite(std::stod(p.rows[0][2])));
  CHECK_FALSE(std::isfinite(std::stod(p.rows[1][2])));
  CHECK(std::isfinite(std::stod(p.rows[2][2])));
  CHECK_THAT(err, Catch::Contains("warning: 1 prediction(s) are not finite (NaN or inf), the first in data row 2"));
  // None: no warning.
  predict_file(dir, model, "x1,x2\n0.5,1\n", "", &err);
  CHECK_THAT(err, !Catch::Contains("warning"));
  fs::remove_all(dir);
}

TEST_CASE("predict: a stop before the write leaves the output as it was and exits 130", "[predict][signals]") {
  const std::string dir = fresh_dir("predict_stop");
  fs::create_directories(dir);
  nntrain::PredictArgs a;
  a.model = write_text(dir + "/named.json", named_hand_model());
  a.input = write_text(dir + "/in.csv", "x1,x2\n0.5,1\n-1,0.25\n");
  a.output = write_text(dir + "/out.csv", "keep\n");  // an older file the user still wants
  nntrain::request_stop();  // as the first SIGINT/SIGTERM's handler does
  const int code = nntrain::cmd_predict(a);
  nntrain::clear_stop();
  CHECK(code == nntrain::kExitInterrupted);
  CHECK(slurp(a.output) == "keep\n");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 3);  // no temporary left
  // Without a stop the same call writes it.
  CHECK(nntrain::cmd_predict(a) == nntrain::kExitOk);
  CHECK_THAT(slurp(a.output), Catch::StartsWith("x1,x2,prediction0\n0.5,1,"));
  fs::remove_all(dir);
}
