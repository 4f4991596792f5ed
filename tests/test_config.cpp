// test_config.cpp — config parsing, precedence and validation (in process).
#include <catch2/catch.hpp>

#include "config.hpp"
#include "json_reader.hpp"
#include "errors.hpp"

using namespace nntrain;
using nlohmann::json;

namespace {

Config from(const std::string& text) { return config_from_json(parse_json_text(text, "test.json"), ""); }

// The error message of a config that must fail.
std::string error_of(const std::string& text) {
  try {
    from(text);
  } catch (const UsageError& e) {
    return e.what();
  }
  FAIL("expected a UsageError for " << text);
  return "";
}

}  // namespace

TEST_CASE("defaults are the reference experiment", "[config]") {
  const Config c = from("{}");
  CHECK(c.model.layers == std::vector<int>{2, 20, 5, 1});
  CHECK(c.optimizer.lr == 0.08);
  CHECK(c.train.epochs == 2000);
  CHECK(c.train.batch_size == 0);
  CHECK(c.data.grid_x1 == 200);
  CHECK(c.data.grid_x2 == 200);
  CHECK(c.timing.warmup_epochs == 5);
  CHECK(std::string(to_string(c.device)) == "cpu");
}

TEST_CASE("grid shorthand and full form", "[config]") {
  CHECK(from(R"({"data": {"grid": 50}})").data.grid_x2 == 50);
  const Config c = from(R"({"data": {"grid": [30, 40]}})");
  CHECK(c.data.grid_x1 == 30);
  CHECK(c.data.grid_x2 == 40);
}

TEST_CASE("precedence: file < overrides < flags", "[config]") {
  json j = parse_json_text(R"({"optimizer": {"lr": 0.5}, "train": {"epochs": 7}})", "t");
  apply_override(j, "optimizer.lr=0.25");
  apply_override(j, "model.activation=tanh");
  apply_override(j, "model.layers=[2,8,1]");
  merge_json(j, json{{"optimizer", {{"lr", 0.125}}}});
  const Config c = config_from_json(j, "");
  CHECK(c.optimizer.lr == 0.125);
  CHECK(c.train.epochs == 7);
  CHECK(c.model.activation == Activation::tanh);
  CHECK(c.model.layers == std::vector<int>{2, 8, 1});
}

TEST_CASE("config errors name the JSON path", "[config]") {
  CHECK_THAT(error_of(R"({"optimizer": {"lr": -0.1}})"), Catch::Contains("/optimizer/lr"));
  CHECK_THAT(error_of(R"({"optimizer": {"lr": "fast"}})"), Catch::Contains("/optimizer/lr") && Catch::Contains("expected a number"));
  CHECK_THAT(error_of(R"({"optimizer": {"lrr": 0.1}})"),
             Catch::Contains("/optimizer/lrr") && Catch::Contains("did you mean \"lr\""));
  CHECK_THAT(error_of(R"({"modle": {}})"), Catch::Contains("did you mean \"model\""));
  CHECK_THAT(error_of(R"({"model": {"layers": [2, 0, 1]}})"), Catch::Contains("/model/layers/1"));
  CHECK_THAT(error_of(R"({"model": {"layers": [3, 5, 1]}})"),
             Catch::Contains("/model/layers/0") && Catch::Contains("2 inputs"));
  CHECK_THAT(error_of(R"({"model": {"layers": [2, 5, 2]}})"), Catch::Contains("/model/layers/2"));
  CHECK_THAT(error_of(R"({"model": {"activation": "relu6"}})"),
             Catch::Contains("/model/activation") && Catch::Contains("relu"));
  CHECK_THAT(error_of(R"({"train": {"epochs": 2.5}})"), Catch::Contains("/train/epochs") && Catch::Contains("integer"));
  CHECK_THAT(error_of(R"({"train": {"epochs": -1}})"), Catch::Contains("/train/epochs"));
  CHECK_THAT(error_of(R"({"train": {"shuffle": 1}})"), Catch::Contains("/train/shuffle"));
  CHECK_THAT(error_of(R"({"device": "tpu"})"), Catch::Contains("/device"));
  CHECK_THAT(error_of(R"({"data": {"grid": [1, 2, 3]}})"), Catch::Contains("/data/grid"));
  CHECK_THAT(error_of(R"({"data": {"range": [3, -3]}})"), Catch::Contains("/data/range"));
  CHECK_THAT(error_of(R"({"data": {"csv": "a.csv", "generator": "peaks"}})"), Catch::Contains("/data"));
  CHECK_THAT(error_of(R"({"data": {"csv": "a.csv", "inputs": ["a"]}})"), Catch::Contains("/data/targets"));
  CHECK_THAT(error_of(R"({"optimizer": {"beta1": 1.0}})"), Catch::Contains("/optimizer/beta1"));
  CHECK_THAT(error_of(R"([1, 2])"), Catch::Contains("expected an object"));
}

TEST_CASE("malformed JSON reports line and column", "[config]") {
  try {
    parse_json_text("{\n  \"seed\": 1,\n  \"name\": \n}", "bad.json");
    FAIL("expected an error");
  } catch (const UsageError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("bad.json") && Catch::Contains("line 4"));
  }
}

TEST_CASE("overrides: syntax errors and non-object paths", "[config]") {
  json j = json::object();
  CHECK_THROWS_AS(apply_override(j, "noequals"), UsageError);
  CHECK_THROWS_AS(apply_override(j, "=5"), UsageError);
  apply_override(j, "train.epochs=5");
  CHECK_THROWS_AS(apply_override(j, "train.epochs.x=5"), UsageError);
}

TEST_CASE("resolved config round-trips through config_from_json", "[config]") {
  const Config a = from(R"({"name": "x", "data": {"grid": [10, 20]}, "model": {"layers": [2, 7, 1],
                            "activation": "sigmoid"}, "train": {"batch_size": 32}})");
  const Config b = config_from_json(config_to_json(a), "");
  CHECK(config_to_json(a) == config_to_json(b));
  CHECK(b.model.activation == Activation::sigmoid);
  CHECK(b.train.batch_size == 32);
}

TEST_CASE("edit distance", "[config]") {
  CHECK(edit_distance("lr", "lrr") == 1);
  CHECK(edit_distance("model", "modle") == 2);
  CHECK(edit_distance("", "abc") == 3);
}
