// test_bad_input.cpp — the bad-input matrix: every way a sweep script can hand nntrain a bad
// config, override or flag (data files, initial models, outputs and predict:
// test_bad_input_files.cpp; the runner and what each case must give: bad_input_util.hpp).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bad_input_util.hpp"
#include "memcheck.hpp"

using namespace badinput;

TEST_CASE("bad input matrix: malformed and truncated JSON", "[bad_input]") {
  const std::string root = fresh_dir("bad_json");
  run_cases({
                {"syntax", "{\"seed\": 1,, }", "", {"config.json", "malformed JSON at line 1, column 12: syntax error"}},
                {"truncated", "{\n \"model\": {\"layers\": [2, 20", "", {"config.json", "malformed JSON at line 2"}},
                {"empty_file", "  \n", "", {"config.json", "malformed JSON"}},
                {"trailing_garbage", "{} {}", "", {"config.json", "malformed JSON at line 1"}},
                {"comment", "// peaks\n{}", "", {"config.json", "malformed JSON at line 1"}},
                {"not_utf8", "{\"name\": \"caf\xe9\"}", "", {"config.json", "malformed JSON", "UTF-8"}},
                {"top_level_array", "[1, 2]", "", {"config.json", "expected a JSON object"}},
                {"top_level_string", "\"peaks\"", "", {"config.json", "expected a JSON object"}},
                {"nul_byte", std::string("{\"seed\": 1\0}", 12), "", {"config.json", "malformed JSON"}},
                // A repeated key: the parser would keep the last silently, dropping a whole block.
                {"duplicate_section", R"({"train": {"epochs": 2}, "train": {"log_every": 7}})", "",
                 {"config.json", "key \"train\" appears twice in /"}},
                {"duplicate_nested", R"({"model": {"activation": "relu", "layers": [2, 4, 1], "activation": "tanh"}})",
                 "", {"config.json", "key \"activation\" appears twice in /model"}},
                {"duplicate_in_array_element", R"({"x": [1, {"a": 1}, {"a": 1, "a": 2}]})", "",
                 {"config.json", "key \"a\" appears twice in /x/2"}},
                {"duplicate_in_override", "", R"('model={"layers":[2,4,1],"layers":[2,5,1]}')",
                 {"override 'model=", "key \"layers\" appears twice"}},
            },
            root);
  fs::remove_all(root);
}

TEST_CASE("bad input matrix: wrong types at every level", "[bad_input]") {
  const std::string root = fresh_dir("bad_types");
  run_cases({
                {"name_number", R"({"name": 5})", "", {"/name", "expected a string"}},
                {"seed_string", R"({"seed": "1"})", "", {"/seed", "expected an integer"}},
                {"seed_null", R"({"seed": null})", "", {"/seed", "null"}},
                {"data_number", R"({"data": 5})", "", {"/data", "expected an object"}},
                {"grid_string", R"({"data": {"grid": "big"}})", "", {"/data/grid", "expected an integer"}},
                {"grid_elem", R"({"data": {"grid": [10, "x"]}})", "", {"/data/grid/1"}},
                {"grid_float", R"({"data": {"grid": 10.5}})", "", {"/data/grid", "integer"}},
                {"range_elem", R"({"data": {"range": [0, "3"]}})", "", {"/data/range"}},
                {"inputs_string", R"({"data": {"csv": "d.csv", "inputs": "x1", "targets": ["y"]}})", "",
                 {"/data/inputs", "array of column names"}},
                {"model_array", R"({"model": []})", "", {"/model", "expected an object"}},
                {"layers_string", R"({"model": {"layers": "2,20,1"}})", "", {"/model/layers", "array"}},
                {"layer_float", R"({"model": {"layers": [2, 20.5, 1]}})", "", {"/model/layers/1", "integer"}},
                {"layer_bool", R"({"model": {"layers": [2, true, 1]}})", "", {"/model/layers/1", "boolean"}},
                {"activation_number", R"({"model": {"activation": 3}})", "", {"/model/activation", "string"}},
                {"loss_object", R"({"loss": {}})", "", {"/loss", "expected a string"}},
                {"lr_string", R"({"optimizer": {"lr": "fast"}})", "", {"/optimizer/lr", "expected a number"}},
                {"lr_bool", R"({"optimizer": {"lr": true}})", "", {"/optimizer/lr", "expected a number"}},
                {"optimizer_list", R"({"optimizer": ["adam"]})", "", {"/optimizer", "expected an object"}},
                {"epochs_string", R"({"train": {"epochs": "10"}})", "", {"/train/epochs", "integer"}},
                {"shuffle_string", R"({"train": {"shuffle": "yes"}})", "", {"/train/shuffle", "true or false"}},
                {"batch_null", R"({"train": {"batch_size": null}})", "", {"/train/batch_size", "null"}},
                {"device_array", R"({"device": ["cpu"]})", "", {"/device", "expected a string"}},
                {"timing_bool", R"({"timing": true})", "", {"/timing", "expected an object"}},
                {"threads_float", R"({"cpu": {"threads": 1.5}})", "", {"/cpu/threads", "integer"}},
                {"gpu_path_number", R"({"gpu": {"path": 1}})", "", {"/gpu/path", "string"}},
                // retired values: one line naming the value, the date and what to use instead
                {"gpu_path_retired", R"({"gpu": {"path": "fused-v1"}})", "",
                 {"/gpu/path", "\"fused-v1\" was retired on 2026-11-29", "use \"fused\" or \"auto\""}},
                {"gpu_path_retired_flag", "", "--gpu-path fused-v1",
                 {"--gpu-path", "\"fused-v1\" was retired on 2026-11-29", "use \"fused\" or \"auto\""}},
                {"gpu_path_retired_override", "", "gpu.path=fused-v1", {"/gpu/path", "was retired on 2026-11-29"}},
                {"output_dir_number", R"({"output": {"dir": 5}})", "output.dir=6", {"/output/dir", "string"}},
                // The OS reads a path up to a NUL: "a\u0000b.csv" would train on a.csv.
                {"csv_nul", R"({"data": {"csv": "d.csv\u0000x.csv", "inputs": ["a"], "targets": ["b"]}})", "",
                 {"/data/csv", "NUL character"}},
                {"output_dir_nul", R"({"output": {"dir": "runs\u0000/x"}})", "", {"/output/dir", "NUL character"}},
                {"config_is_model", model_json("[" + kLayer0 + "," + kLayer1 + "]"), "",
                 {"config.json", "\"nntrain-mlp\" file, not an experiment config", "--init-model"}},
            },
            root);
  fs::remove_all(root);
}

TEST_CASE("bad input matrix: unknown and misspelt keys", "[bad_input]") {
  const std::string root = fresh_dir("bad_keys");
  run_cases({
                {"root_misspelt", R"({"optimiser": {}})", "", {"/optimiser", "did you mean \"optimizer\""}},
                {"nested_misspelt", R"({"train": {"epoch": 5}})", "", {"/train/epoch", "did you mean \"epochs\""}},
                {"model_misspelt", R"({"model": {"layer": [2, 1]}})", "", {"/model/layer", "did you mean \"layers\""}},
                {"unknown_root", R"({"colour": "red"})", "", {"/colour", "unknown key"}},
                {"unknown_far", R"({"data": {"zzzzzzzz": 1}})", "", {"/data/zzzzzzzz", "valid keys here"}},
                // Each valid key listed once (the reader asks for "csv" and "generator" twice).
                // A peaks config made a CSV one keeps its grid: a key of generated data, not an unknown one.
                {"csv_with_grid", R"({"data": {"csv": "d.csv", "inputs": ["a"], "targets": ["b"], "grid": 10}})", "",
                 {"/data/grid: applies to generated data, not to a CSV file"}},
                {"unknown_far_csv", R"({"data": {"csv": "d.csv", "inputs": ["a"], "targets": ["b"], "zzzzzzzz": 1}})",
                 "", {"/data/zzzzzzzz", "(valid keys here: csv, generator, inputs, targets, validation_fraction, validation_every)"}},
                {"unknown_override", "", "optimizer.momentum=0.9", {"/optimizer/momentum", "unknown key"}},
                {"case_matters", R"({"Seed": 1})", "", {"/Seed", "did you mean \"seed\""}},
            },
            root);
  fs::remove_all(root);
}

TEST_CASE("bad input matrix: out-of-range values", "[bad_input]") {
  const std::string root = fresh_dir("bad_range");
  // A grid whose data alone exceeds what this machine allows (half its memory, or the
  // 2^31-1 sample limit on a big machine): refused before allocating, with the size.
  const double mem = nntrain::memory_limit_bytes();
  const long long side = std::min<long long>(1 << 20, (long long)std::ceil(std::sqrt(0.5 * mem / 24.0)) + 16);
  const std::string wide(40 * 7, ' ');
  std::string huge_layers = "[2";
  for (int i = 0; i < 40; ++i) huge_layers += ", 65536";
  huge_layers += ", 1]";
  std::string deep_layers = "[2";
  for (int i = 0; i < 64; ++i) deep_layers += ", 3";
  deep_layers += ", 1]";
  run_cases({
                {"epochs_negative", R"({"train": {"epochs": -1}})", "", {"/train/epochs", "out of range"}},
                {"epochs_huge", R"({"train": {"epochs": 10000000000}})", "", {"/train/epochs", "out of range"}},
                {"epochs_beyond_2p64", R"({"train": {"epochs": 100000000000000000000}})", "",
                 {"/train/epochs", "out of range"}},
                {"lr_zero", R"({"optimizer": {"lr": 0}})", "", {"/optimizer/lr", "out of range"}},
                {"lr_negative", R"({"optimizer": {"lr": -0.01}})", "", {"/optimizer/lr", "out of range"}},
                {"lr_huge", R"({"optimizer": {"lr": 1e300}})", "", {"/optimizer/lr", "out of range"}},
                {"lr_overflow", "{\n  \"optimizer\": {\"lr\": 1e400}}", "", {"config.json", "line 2, column 23", "1e400", "not finite"}},
                // The number, not a string that spells it earlier in the file.
                {"overflow_after_name", "{\n  \"name\": \"1e400\",\n  \"seed\": 1e400\n}", "", {"config.json", "line 3, column 11"}},
                {"lr_overflow_override", "", "optimizer.lr=-1e400", {"optimizer.lr=-1e400", "not finite"}},
                {"beta1_one", R"({"optimizer": {"beta1": 1.0}})", "", {"/optimizer/beta1"}},
                {"eps_zero", R"({"optimizer": {"eps": 0}})", "", {"/optimizer/eps"}},
                {"batch_larger_than_data", R"({"data": {"grid": 10}, "train": {"batch_size": 101}})", "",
                 {"/train/batch_size", "101", "100 samples"}},
                // 0 in fp32: Adam's 0 / (0 + eps) is NaN where a gradient is 0 (a dead relu).
                {"eps_zero_in_fp32", R"({"optimizer": {"eps": 1e-50}})", "",
                 {"/optimizer/eps", "1e-50", "below float32's smallest normal"}},
                // 400 samples, 200 held out: a batch is drawn from the 200 trained on.
                {"batch_larger_than_training_set",
                 R"({"data": {"grid": 20, "validation_fraction": 0.5}, "train": {"batch_size": 201}})", "",
                 {"/train/batch_size", "201", "training set (200 samples: 400 less 200 held out"}},
                {"batch_negative", R"({"train": {"batch_size": -5}})", "", {"/train/batch_size"}},
                {"width_zero", R"({"model": {"layers": [2, 0, 1]}})", "", {"/model/layers/1", "out of range"}},
                {"width_absurd", R"({"model": {"layers": [2, 1000000000, 1]}})", "", {"/model/layers/1", "out of range"}},
                {"one_layer", R"({"model": {"layers": [2]}})", "", {"/model/layers", "at least 2"}},
                // The fast CPU backend's per-layer tables hold 64 layers: exit 2 before the run
                // folder, not after it (the reference backend takes any depth).
                {"fast_too_deep", R"({"data": {"grid": 5}, "model": {"layers": )" + deep_layers + "}}", "",
                 {"/model/layers", "at most 64 layers", "this model has 65", "cpu.backend=reference"}},
                {"network_too_big", R"({"data": {"grid": 4}, "model": {"layers": )" + huge_layers + "}}", "",
                 {"/model/layers", "parameters", "would need", "GiB"}},
                {"grid_side_limit", R"({"data": {"grid": 2000000}})", "", {"/data/grid", "out of range"}},
                {"grid_too_big_for_memory",
                 R"({"data": {"grid": [)" + std::to_string(side) + ", " + std::to_string(side) + "]}}", "",
                 {"/data/grid", "would need", "GiB"}},
                {"grid_zero", R"({"data": {"grid": [0, 10]}})", "", {"/data/grid/0"}},
                {"range_reversed", R"({"data": {"range": [3, -3]}})", "", {"/data/range", "low < high"}},
                // Finite doubles, but hi - lo overflows and no grid point is a float: exit 2,
                // not a run that "diverges" at epoch 1 on NaN data.
                {"range_huge", R"({"data": {"range": [-1e308, 1e308]}})", "", {"/data/range", "within +-1e30"}},
                {"range_infinite", R"({"data": {"range": [-1e400, 3]}})", "", {"config.json", "-1e400", "not finite"}},
                {"seed_negative", R"({"seed": -1})", "", {"/seed", "out of range"}},
                {"seed_2p63", R"({"seed": 9223372036854775808})", "", {"/seed", "out of range"}},
                {"seed_2p63_float", R"({"seed": 9223372036854775808.0})", "", {"/seed", "out of range"}},
                {"seed_2p64", R"({"seed": 18446744073709551616})", "", {"/seed", "out of range"}},
                {"repeats_zero", R"({"timing": {"repeats": 0}})", "", {"/timing/repeats"}},
                {"threads_negative", R"({"cpu": {"threads": -1}})", "", {"/cpu/threads"}},
                {"name_empty", R"({"name": ""})", "", {"/name", "must not be empty"}},
                {"bad_choice", R"({"model": {"activation": "rleu"}})", "", {"/model/activation", "did you mean \"relu\""}},
                {"loss_unknown", R"({"loss": "mae"})", "", {"/loss", "mse"}},
                {"device_unknown", R"({"device": "tpu"})", "", {"/device", "cpu, gpu, both"}},
            },
            root);
  fs::remove_all(root);
}

TEST_CASE("bad input matrix: mismatched input and output widths", "[bad_input]") {
  const std::string root = fresh_dir("bad_widths");
  fs::create_directories(root);
  write_text(root + "/d.csv", "a,b,c,y\n1,2,3,4\n5,6,7,8\n");
  const std::string csv = root + "/d.csv";
  run_cases({
                {"peaks_inputs", R"({"model": {"layers": [3, 20, 1]}})", "", {"/model/layers/0", "2 inputs"}},
                {"peaks_outputs", R"({"model": {"layers": [2, 20, 2]}})", "", {"/model/layers/2", "1 target"}},
                {"csv_inputs",
                 R"({"data": {"csv": ")" + csv + R"(", "inputs": ["a", "b", "c"], "targets": ["y"]}, "model": {"layers": [2, 4, 1]}})",
                 "", {"/model/layers/0", "3 inputs"}},
                {"csv_targets",
                 R"({"data": {"csv": ")" + csv + R"(", "inputs": ["a", "b"], "targets": ["c", "y"]}, "model": {"layers": [2, 4, 1]}})",
                 "", {"/model/layers/2", "2 targets"}},
                {"csv_target_is_input",
                 R"({"data": {"csv": ")" + csv + R"(", "inputs": ["a", "y"], "targets": ["y"]}})", "",
                 {"/data/targets", "both an input and a target"}},
                {"override_layers", "", "model.layers=[2,8,3]", {"/model/layers/2"}},
            },
            root);
  fs::remove_all(root);
}

TEST_CASE("bad input matrix: config file path, overrides and flags", "[bad_input]") {
  const std::string root = fresh_dir("bad_args");
  fs::create_directories(root + "/confdir");
  std::vector<Case> cases = {
      {"config_missing", "", "--config does/not/exist.json", {"config file not found", "does/not/exist.json"}},
      {"config_directory", "", "--config {D}/../confdir", {"config file", "is a directory", "confdir"}},
      {"override_not_a_number", "", "optimizer.lr=abc", {"/optimizer/lr", "string \"abc\""}},
      {"override_not_utf8", "", "'name=caf\xe9'", {"override", "not valid UTF-8", "byte 9"}},
      {"override_key_not_utf8", "", "'\xff\xfe=1'", {"override", "not valid UTF-8", "byte 1"}},
      {"override_beyond_2p64", "", "train.epochs=99999999999999999999", {"/train/epochs", "out of range"}},
      {"override_seed_2p64", "", "seed=18446744073709551615", {"/seed", "out of range"}},
      {"override_no_equals", "", "train.epochs", {"train.epochs", "key.path=value"}},
      {"override_empty_key", "", "=5", {"key.path=value"}},
      {"override_empty_component", "", "train..epochs=5", {"empty component"}},
      {"override_through_number", "", "train.epochs=5 train.epochs.x=1", {"/train/epochs", "not an object"}},
      {"override_null", "", "optimizer.lr=null", {"/optimizer/lr", "null"}},
      {"flag_epochs_negative", "", "--epochs -5", {"--epochs (config /train/epochs)", "-5"}},
      {"flag_epochs_word", "", "--epochs many", {"--epochs"}},
      // The value as typed, not as CLI11 would convert it (-1 wrapped to 2^64 - 1, 1e20 clamped).
      {"flag_seed_negative", "", "--seed -1", {"--seed", "value -1 is out of range"}},
      {"flag_epochs_beyond_2p64", "", "--epochs 99999999999999999999", {"--epochs", "99999999999999999999", "out of range"}},
      {"flag_epochs_fraction", "", "--epochs 2.5", {"--epochs", "2.5", "not an integer"}},
      {"flag_batch_beyond_int", "", "--batch-size 99999999999", {"/train/batch_size", "out of range"}},
      {"flag_lr_zero", "", "--lr 0", {"--lr (config /optimizer/lr)"}},
      // > 0, but 0 in the fp32 update (1e-50), or flushed to 0 there (1e-40, subnormal).
      {"flag_lr_zero_in_fp32", "", "--lr 1e-50", {"/optimizer/lr", "1e-50", "below float32's smallest normal"}},
      {"flag_lr_subnormal", "", "--lr 1e-40", {"/optimizer/lr", "1e-40", "below float32's smallest normal"}},
      {"flag_device", "", "--device tpu", {"--device", "tpu"}},
      // A config error on a key a flag set names the flag the user typed, then the key; the
      // same error from an override names the key alone.
      {"flag_threads", "", "--threads 5000", {"error: --threads (config /cpu/threads): value 5000 is out of range"}},
      {"flag_threads_over_override", "", "cpu.threads=4 --threads 5000", {"error: --threads (config /cpu/threads)", "5000"}},
      {"override_threads", "", "cpu.threads=5000 --epochs 3", {"error: config /cpu/threads: value 5000"}},
      {"flag_batch_vs_data", "", "--batch-size 50000", {"error: --batch-size (config /train/batch_size): 50000 is larger"}},
      // The file's own bad value is the file's, whatever the flag sets it to.
      {"file_value_under_flag", R"({"cpu": {"threads": 5000}})", "--threads 4",
       {"error: config /cpu/threads: value 5000 is out of range", "as written, before overrides"}},
      {"flag_unknown", "", "--epochz 5", {"--epochz"}},
  };
  run_cases(cases, root);
  // A config file without read permission, read by a user it does not allow (see unprivileged()).
  const Runner nobody = unprivileged(root, {"config_unreadable"});
  const std::string locked = write_text(root + "/locked.json", "{}");
  ::chmod(locked.c_str(), 0);
  run_cases({{"config_unreadable", "", "--config " + locked, {"cannot read config file", "locked.json"}}}, root,
            nobody);
  ::chmod(locked.c_str(), 0644);
  fs::remove_all(root);
}

