// test_config.cpp — config parsing, precedence and validation (in process).
#include <catch2/catch.hpp>

#include "config.hpp"
#include "json_reader.hpp"
#include "errors.hpp"
#include "trainer.hpp"

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

TEST_CASE("overrides: an object merges into its section (RFC 7386), keeping the keys it does not name",
          "[config]") {
  // configs/csv_example.json's optimizer has lr 0.01 (the default is 0.08), its train a
  // batch of 64 and log_every 50 (defaults 0 and 100).
  const Config c = load_config(NNTRAIN_SOURCE_DIR "/configs/csv_example.json", {R"(optimizer={"type":"sgd"})", R"(train={"epochs":3})"});
  CHECK(c.optimizer.type == "sgd");
  CHECK(c.optimizer.lr == 0.01);
  CHECK(c.train.epochs == 3);
  CHECK(c.train.batch_size == 64);
  CHECK(c.train.log_every == 50);
  // A null inside removes a key: a peaks config switched to a CSV in one override.
  const Config csv = load_config(
      NNTRAIN_SOURCE_DIR "/configs/peaks.json",
      {R"(data={"generator":null,"grid":null,"range":null,"csv":"../data/sine2d.csv","inputs":["x1","x2"],)"
       R"("targets":["y"]})"});
  CHECK(csv.data.csv == "../data/sine2d.csv");
  // A nested object merges again; a non-object replaces.
  json j = parse_json_text(R"({"a": {"b": {"c": 1, "d": 2}, "e": [1, 2]}})", "t");
  apply_override(j, R"(a={"b":{"c":5},"e":[3]})");
  CHECK(j == json::parse(R"({"a": {"b": {"c": 5, "d": 2}, "e": [3]}})"));
  apply_override(j, "a=7");
  CHECK(j == json::parse(R"({"a": 7})"));
  // A null inside a section the file lacks is removed too (RFC 7386), not kept as a value.
  const Config t = load_config(NNTRAIN_SOURCE_DIR "/configs/csv_example.json", {R"(timing={"repeats":3,"warmup_epochs":null})"});
  CHECK(t.timing.repeats == 3);
  CHECK(t.timing.warmup_epochs == Config().timing.warmup_epochs);
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

// Every field with a value that is not its default, checked against hand-written values at
// each step a setting takes: the file -> Config, Config -> config.resolved.json, Config ->
// the backend's options. (A round trip through config_to_json alone cannot see a field that
// is dropped or written under the wrong key: it reads back as its default both times.)
TEST_CASE("every config field reaches the Config, the resolved JSON and the backend's options", "[config]") {
  const char* text = R"({"name": "every", "seed": 77,
    "data": {"generator": "peaks", "grid": [11, 13], "range": [-2.5, 4], "validation_fraction": 0.125,
             "validation_every": 6},
    "model": {"layers": [2, 9, 3, 1], "activation": "tanh", "output_activation": "sigmoid", "init": "he_uniform"},
    "loss": "mse",
    "optimizer": {"type": "sgd", "lr": 0.25, "beta1": 0.8, "beta2": 0.95, "eps": 0.001},
    "train": {"epochs": 321, "batch_size": 64, "shuffle": false, "log_every": 7, "target_loss": 0.125},
    "device": "both",
    "timing": {"warmup_epochs": 3, "repeats": 4},
    "cpu": {"backend": "reference", "threads": 3},
    "gpu": {"path": "cublas", "chunk_epochs": 9},
    "output": {"dir": "somewhere/else"}})";
  const Config c = from(text);
  CHECK(c.name == "every");
  CHECK(c.seed == 77);
  CHECK(c.data.generator == "peaks");
  CHECK(c.data.grid_x1 == 11);
  CHECK(c.data.grid_x2 == 13);
  CHECK(c.data.range_lo == -2.5);
  CHECK(c.data.range_hi == 4.0);
  CHECK(c.data.validation_fraction == 0.125);
  CHECK(c.data.validation_every == 6);
  CHECK(c.model.layers == std::vector<int>{2, 9, 3, 1});
  CHECK(c.model.activation == Activation::tanh);
  CHECK(c.model.output_activation == Activation::sigmoid);
  CHECK(c.model.init == Init::he_uniform);
  CHECK(c.optimizer.type == "sgd");
  CHECK(c.optimizer.lr == 0.25);
  CHECK(c.optimizer.beta1 == 0.8);
  CHECK(c.optimizer.beta2 == 0.95);
  CHECK(c.optimizer.eps == 0.001);
  CHECK(c.train.epochs == 321);
  CHECK(c.train.batch_size == 64);
  CHECK_FALSE(c.train.shuffle);
  CHECK(c.train.log_every == 7);
  REQUIRE(c.train.target_loss.has_value());
  CHECK(*c.train.target_loss == 0.125);
  CHECK(c.device == DeviceChoice::both);
  CHECK(c.timing.warmup_epochs == 3);
  CHECK(c.timing.repeats == 4);
  CHECK(c.cpu.backend == CpuBackendKind::reference);
  CHECK(c.cpu.threads == 3);
  CHECK(c.gpu.path == GpuPath::cublas);
  CHECK(c.gpu.chunk_epochs == 9);
  CHECK(c.output_dir == "somewhere/else");

  // Every key of the resolved JSON, hand-written: the input itself (4 and 4.0 compare equal).
  CHECK(config_to_json(c) == json::parse(text));

  const BackendOptions cpu = backend_options(c, Device::cpu);
  CHECK(cpu.spec.widths == std::vector<int>{2, 9, 3, 1});
  CHECK(cpu.spec.hidden == Activation::tanh);
  CHECK(cpu.spec.output == Activation::sigmoid);
  CHECK(cpu.optimizer.type == "sgd");
  CHECK(cpu.optimizer.lr == 0.25);
  CHECK(cpu.optimizer.beta1 == 0.8);
  CHECK(cpu.optimizer.beta2 == 0.95);
  CHECK(cpu.optimizer.eps == 0.001);
  CHECK(cpu.batch_size == 64);
  CHECK_FALSE(cpu.shuffle);
  CHECK(cpu.seed == 77);
  CHECK(cpu.threads == 3);
  CHECK(cpu.gpu_path == GpuPath::cublas);
  CHECK(cpu.chunk_epochs == 7);  // the CPU reports every log_every epochs
  CHECK(backend_options(c, Device::gpu).chunk_epochs == 9);
}
