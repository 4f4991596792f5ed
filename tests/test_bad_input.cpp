// test_bad_input.cpp — the bad-input matrix: every way a sweep script can hand nntrain a bad
// config, override, flag, data file, initial model or output path. Each case runs the binary
// and must give exit 2, a one-line error that names the place (JSON path, file, line), and
// write nothing: no --out folder, no numbered run folder, no --save-model file.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_util.hpp"
#include "memcheck.hpp"

using namespace testutil;
namespace fs = std::filesystem;

namespace {

struct Case {
  std::string name;
  std::string config;  // config file text; "" = configs/peaks.json (or whatever `args` names)
  std::string args;    // extra arguments; {D} is replaced by the case folder
  std::vector<std::string> expect;  // substrings that must all be on one line of stderr
};

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
  return s;
}

// The line of `err` that holds every expected substring, or "" when none does.
bool one_line_has_all(const std::string& err, const std::vector<std::string>& expect) {
  std::istringstream in(err);
  std::string line;
  while (std::getline(in, line)) {
    bool all = true;
    for (const auto& e : expect) all = all && line.find(e) != std::string::npos;
    if (all) return true;
  }
  return false;
}

std::string model_json(const std::string& layers) {
  return R"({"format": "nntrain-mlp", "version": 1, "layers": )" + layers + "}";
}

// A valid 2-3-1 model's layers, for --init-model cases.
const std::string kLayer0 = R"({"in": 2, "out": 3, "activation": "relu", "W": [[1,2],[3,4],[5,6]], "b": [0,0,0]})";
const std::string kLayer1 = R"({"in": 3, "out": 1, "activation": "identity", "W": [[1,2,3]], "b": [0]})";

// How a case runs the binary: directly, or as another user (see unprivileged()).
struct Runner {
  std::string prefix;                   // command put before the binary
  std::string binary = NNTRAIN_BINARY;  // the binary to run
};

// A runner for which file permissions apply. As root (CI containers run as root) chmod 000
// blocks nothing, so the binary runs as nobody (uid and gid 65534, no supplementary groups)
// through setpriv (util-linux), from a copy in `root`, which that user can reach where the
// checkout may not be. `root` and the case folders are made writable for that user: only
// the file meant to be unreadable is not accessible.
Runner unprivileged(const std::string& root, const std::vector<std::string>& case_dirs) {
  if (::geteuid() != 0) return {};
  REQUIRE(std::system("command -v setpriv >/dev/null 2>&1") == 0);  // util-linux: on every Debian
  const auto all = fs::perms::all;
  fs::create_directories(root);
  fs::permissions(root, all);
  for (const auto& d : case_dirs) {
    fs::create_directories(root + "/" + d);
    fs::permissions(root + "/" + d, all);
  }
  Runner r;
  r.binary = root + "/nntrain";
  fs::copy_file(NNTRAIN_BINARY, r.binary, fs::copy_options::overwrite_existing);
  fs::permissions(r.binary, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
  r.prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups";
  // The runner works: as that user the copy runs.
  const auto ok = run_nntrain("info", r.prefix, r.binary);
  INFO("running " << r.binary << " as uid 65534: " << ok.err);
  REQUIRE(ok.exit_code == 0);
  return r;
}

void run_cases(const std::vector<Case>& cases, const std::string& root, const Runner& runner = {}) {
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::string dir = root + "/" + c.name;
    fs::create_directories(dir);
    std::string args;
    if (!c.config.empty()) args = "--config '" + write_text(dir + "/config.json", c.config) + "'";
    else if (c.args.find("--config") == std::string::npos) args = "--config configs/peaks.json";
    args += " " + replace_all(c.args, "{D}", dir);
    // Half the cases name --out, half let nntrain number a run folder under output.dir.
    const std::string out = dir + "/out", numbered = dir + "/numbered", saved = dir + "/saved.json";
    if (c.args.find("--out") == std::string::npos) args += i % 2 ? " --out '" + out + "'" : "";
    if (c.args.find("--save-model") == std::string::npos) args += " --save-model '" + saved + "'";
    args += " --quiet";
    if (c.args.find("output.dir=") == std::string::npos) args += " output.dir='" + numbered + "'";
    const auto r = run_nntrain(args, runner.prefix, runner.binary);
    INFO("case " << c.name << "\n  args: " << args << "\n  stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(one_line_has_all(r.err, c.expect));
    // EXIT_CODES.md: the error line starts "nntrain: error: ", a flag CLI11 refused too.
    CHECK(one_line_has_all(r.err, {"nntrain: error: "}));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') <= 2);  // CLI11's errors add a --help hint
    CHECK(r.out.empty());
    CHECK_FALSE(fs::exists(out));
    CHECK_FALSE(fs::exists(numbered));
    CHECK_FALSE(fs::exists(saved));
  }
}

}  // namespace

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

TEST_CASE("bad input matrix: CSV data files", "[bad_input][csv]") {
  const std::string root = fresh_dir("bad_csv");
  fs::create_directories(root);
  auto cfg = [&](const std::string& file, const std::string& text) {
    if (!text.empty() || file == "empty.csv") write_text(root + "/" + file, text);
    return R"({"data": {"csv": ")" + root + "/" + file +
           R"(", "inputs": ["x1", "x2"], "targets": ["y"]}, "model": {"layers": [2, 4, 1]}})";
  };
  fs::create_directories(root + "/dir.csv");
  std::vector<Case> cases = {
      {"missing_column", cfg("missing.csv", "x1,y\n1,2\n"), "", {"missing.csv", "line 1", "no input column \"x2\""}},
      {"missing_target", cfg("notarget.csv", "x1,x2,z\n1,2,3\n"), "", {"notarget.csv", "no target column \"y\""}},
      {"ragged_short", cfg("short.csv", "x1,x2,y\n1,2,3\n4,5\n"), "", {"short.csv", "line 3", "expected 3 fields", "got 2"}},
      {"ragged_long", cfg("long.csv", "x1,x2,y\n1,2,3,4\n"), "", {"long.csv", "line 2", "got 4"}},
      {"not_a_number", cfg("word.csv", "x1,x2,y\n1,2,3\n1,abc,3\n"), "",
       {"word.csv", "line 3, column 2", "\"x2\"", "not a finite number"}},
      {"trailing_junk", cfg("junk.csv", "x1,x2,y\n1,2,3x\n"), "", {"junk.csv", "line 2, column 3"}},
      {"empty_field", cfg("hole.csv", "x1,x2,y\n1,,3\n"), "", {"hole.csv", "line 2, column 2"}},
      {"nan", cfg("nan.csv", "x1,x2,y\n1,2,3\n1,2,nan\n"), "", {"nan.csv", "line 3, column 3", "not a finite"}},
      {"inf", cfg("inf.csv", "x1,x2,y\n-inf,2,3\n"), "", {"inf.csv", "line 2, column 1"}},
      // Finite numbers that float32 cannot hold: said so, not "not a finite number".
      {"float_overflow", cfg("big.csv", "x1,x2,y\n1,1e39,3\n"), "", {"big.csv", "line 2, column 2", "beyond float32"}},
      {"float_overflow_by_rounding", cfg("edge.csv", "x1,x2,y\n1,3.4028236e38,3\n"), "",
       {"edge.csv", "line 2, column 2", "beyond float32"}},
      {"double_overflow", cfg("huge.csv", "x1,x2,y\n1,1e999,3\n"), "", {"huge.csv", "line 2, column 2", "beyond float32"}},
      // Control bytes are shown escaped: a NUL no longer ends the message, an ESC starts no
      // terminal sequence. A huge cell is cut, with its size.
      {"nul_in_cell", cfg("nul.csv", std::string("x1,x2,y\n1,2,3\0\n", 15)), "",
       {"nul.csv", "line 2, column 3", "\"3\\x00\" is not a finite number"}},
      {"escape_in_cell", cfg("esc.csv", "x1,x2,y\n1,2,\x1b[31mred\n"), "", {"esc.csv", "\"\\x1b[31mred\" is not"}},
      {"huge_cell", cfg("wide.csv", "x1,x2,y\n1,2," + std::string(100000, '7') + "\n"), "",
       {"wide.csv", "line 2, column 3", "(100000 bytes)", "beyond float32"}},
      // Quoted fields are read (test_data.cpp); one line is one record, so a quote left open
      // (a field holding a line break) is an error, as is text after a closing quote.
      {"unclosed_quote", cfg("open.csv", "x1,x2,y\n1,\"2,3\n4\",5\n"), "", {"open.csv", "line 2", "no closing quote"}},
      {"after_quote", cfg("after.csv", "x1,\"x2\"z,y\n1,2,3\n"), "", {"after.csv", "line 1", "after a quoted field"}},
      {"hexadecimal", cfg("hex.csv", "x1,x2,y\n0x10,2,3\n"), "", {"hex.csv", "line 2, column 1", "plain decimal"}},
      {"empty_file", cfg("empty.csv", ""), "", {"empty.csv", "empty CSV file"}},
      {"blank_lines_only", cfg("blank.csv", "\n  \n\r\n"), "", {"blank.csv", "empty CSV file"}},
      {"header_only", cfg("header.csv", "x1,x2,y\n"), "", {"header.csv", "no data rows"}},
      {"duplicate_header", cfg("dup.csv", "x1,x2,x1,y\n1,2,3,4\n"), "", {"dup.csv", "\"x1\" appears twice"}},
      {"binary", cfg("bin.csv", std::string("x1,x2,y\n\x01\x02,\0,3\n", 16)), "", {"bin.csv", "line 2, column 1"}},
      {"not_found", cfg("nope.csv", ""), "", {"CSV data file not found", "nope.csv"}},
      {"is_directory", cfg("dir.csv", ""), "", {"dir.csv", "is a directory"}},
  };
  run_cases(cases, root);
  // A CSV file without read permission, read by a user it does not allow (see unprivileged()).
  const Runner nobody = unprivileged(root, {"unreadable"});
  const std::string locked = write_text(root + "/locked.csv", "x1,x2,y\n1,2,3\n");
  ::chmod(locked.c_str(), 0);
  run_cases({{"unreadable", cfg("locked.csv", ""), "", {"cannot read", "locked.csv"}}}, root, nobody);
  ::chmod(locked.c_str(), 0644);
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

TEST_CASE("bad input matrix: init-model files", "[bad_input][model]") {
  const std::string root = fresh_dir("bad_model");
  fs::create_directories(root);
  auto model = [&](const std::string& name, const std::string& text) {
    return "model.layers=[2,3,1] --init-model '" + write_text(root + "/" + name + ".model.json", text) + "'";
  };
  const std::string good_w1 = R"({"in": 3, "out": 1, "activation": "identity", "W": [[1,2,3]], "b": [0]})";
  run_cases({
                {"model_missing", "", "model.layers=[2,3,1] --init-model {D}/none.json", {"model file not found"}},
                {"model_malformed", "", model("malformed", "{\"format\": "), {"malformed.model.json", "malformed JSON"}},
                {"model_empty", "", model("empty", ""), {"empty.model.json", "malformed JSON"}},
                {"model_array", "", model("array", "[]"), {"array.model.json", "expected an object"}},
                {"model_format", "", model("format", R"({"format": "onnx", "version": 1, "layers": []})"),
                 {"format.model.json", "/format", "nntrain-mlp"}},
                {"model_version", "", model("version", R"({"format": "nntrain-mlp", "version": 2, "layers": []})"),
                 {"version.model.json", "/version"}},
                {"model_no_layers", "", model("nolayers", model_json("[]")), {"nolayers.model.json", "/layers"}},
                {"model_shape_vs_config", "", "--init-model '" + write_text(root + "/shape.model.json", model_json("[" + kLayer0 + "," + kLayer1 + "]")) + "'",
                 {"shape.model.json", "[2,3,1]", "do not match config /model/layers", "[2,20,5,1]"}},
                {"model_rows", "", model("rows", model_json(R"([{"in": 2, "out": 3, "activation": "relu", "W": [[1,2],[3,4]], "b": [0,0,0]}, )" + kLayer1 + "]")),
                 {"rows.model.json", "/layers/0/W", "expected 3 rows", "got 2"}},
                {"model_row_length", "", model("cols", model_json(R"([{"in": 2, "out": 3, "activation": "relu", "W": [[1,2],[3,4],[5]], "b": [0,0,0]}, )" + kLayer1 + "]")),
                 {"cols.model.json", "/layers/0/W/2", "expected 2 values"}},
                {"model_bias", "", model("bias", model_json(R"([{"in": 2, "out": 3, "activation": "relu", "W": [[1,2],[3,4],[5,6]], "b": [0]}, )" + kLayer1 + "]")),
                 {"bias.model.json", "/layers/0/b", "expected 3 values"}},
                {"model_claims_huge", "", model("huge", model_json(R"([{"in": 1048576, "out": 1048576, "activation": "relu", "W": [[1]], "b": [0]}])")),
                 {"huge.model.json", "/layers/0/W", "expected 1048576 rows", "got 1"}},
                {"model_in_beyond_2p63", "", model("in2p63", model_json(R"([{"in": 9223372036854775808, "out": 1, "activation": "relu", "W": [[1]], "b": [0]}])")),
                 {"in2p63.model.json", "/layers/0/in", "positive integer"}},
                {"model_chain", "", model("chain", model_json("[" + kLayer0 + R"(, {"in": 4, "out": 1, "activation": "identity", "W": [[1,2,3,4]], "b": [0]}])")),
                 {"chain.model.json", "/layers/1/in", "previous layer has 3"}},
                {"model_string_weight", "", model("strw", model_json(R"([{"in": 2, "out": 3, "activation": "relu", "W": [[1,2],[3,"x"],[5,6]], "b": [0,0,0]}, )" + good_w1 + "]")),
                 {"strw.model.json", "/layers/0/W/1/1", "expected a number"}},
                {"model_float_overflow", "", model("f32", model_json(R"([{"in": 2, "out": 3, "activation": "relu", "W": [[1,2],[3,1e39],[5,6]], "b": [0,0,0]}, )" + good_w1 + "]")),
                 {"f32.model.json", "/layers/0/W/1/1", "finite float32"}},
                {"model_activation", "", model("act", model_json(R"([{"in": 2, "out": 3, "activation": "swish", "W": [[1,2],[3,4],[5,6]], "b": [0,0,0]}, )" + good_w1 + "]")),
                 {"act.model.json", "/layers/0/activation"}},
                {"model_activation_vs_config", "", model("actcfg", model_json(R"([{"in": 2, "out": 3, "activation": "tanh", "W": [[1,2],[3,4],[5,6]], "b": [0,0,0]}, )" + good_w1 + "]")),
                 {"actcfg.model.json", "hidden activation tanh", "/model/activation relu"}},
                {"model_missing_key", "", model("nokey", model_json(R"([{"in": 2, "out": 3, "activation": "relu", "W": [[1,2],[3,4],[5,6]]}, )" + good_w1 + "]")),
                 {"nokey.model.json", "/layers/0", "missing \"b\""}},
                // model.json goes through the config files' reader: unknown keys are refused.
                {"model_unknown_layer_key", "", model("extra", model_json(R"([{"in": 2, "out": 3, "activation": "relu", "W": [[1,2],[3,4],[5,6]], "b": [0,0,0], "dropout": 0.5}, )" + good_w1 + "]")),
                 {"extra.model.json", "/layers/0/dropout", "unknown key"}},
                {"model_misspelt_root_key", "", model("layerz", R"({"format": "nntrain-mlp", "version": 1, "layerz": []})"),
                 {"layerz.model.json", "/layerz", "did you mean \"layers\""}},
            },
            root);
  fs::remove_all(root);
}

TEST_CASE("bad input matrix: unwritable outputs", "[bad_input][output]") {
  const std::string root = fresh_dir("bad_out");
  fs::create_directories(root + "/existing_dir");
  write_text(root + "/a_file", "x");
  run_cases({
                {"out_under_file", "", "--out " + root + "/a_file/run", {"output path", "a_file", "not a directory"}},
                {"out_is_file", "", "--out " + root + "/a_file", {"output path", "a_file", "not a directory"}},
                {"outdir_under_file", "", "output.dir=" + root + "/a_file/runs", {"a_file", "not a directory"}},
                {"save_model_directory", "", "--save-model " + root + "/existing_dir", {"--save-model", "existing_dir", "is a directory"}},
                {"save_model_trailing_slash", "", "--save-model " + root + "/new_dir/", {"--save-model", "new_dir/", "is a directory"}},
                {"save_model_under_file", "", "--save-model " + root + "/a_file/m.json", {"a_file", "not a directory"}},
                // Nothing creates a model file's folder: refused before training, not after it.
                {"save_model_missing_folder", "", "--save-model " + root + "/no_such_dir/m.json",
                 {"--save-model", "folder", "no_such_dir", "does not exist"}},
                // An empty path (an unset shell variable) is not "the default".
                {"out_empty", "", "--out ''", {"--out", "the path is empty"}},
                {"save_model_empty", "", "--save-model ''", {"--save-model", "the path is empty"}},
            },
            root);
  // The files that were there are untouched.
  CHECK(slurp(root + "/a_file") == "x");
  CHECK(fs::is_empty(root + "/existing_dir"));
  fs::remove_all(root);
}

TEST_CASE("bad input matrix: predict", "[bad_input][predict]") {
  const std::string root = fresh_dir("bad_predict");
  fs::create_directories(root);
  const std::string m = write_text(root + "/m.json", model_json("[" + kLayer0 + "," + kLayer1 + "]"));
  const std::string in_ok = write_text(root + "/in.csv", "x1,x2\n1,2\n");
  const std::string in_bad = write_text(root + "/bad.csv", "x1,x2\n1,two\n");
  struct P {
    std::string args;
    std::vector<std::string> expect;
  };
  const std::string out = root + "/pred.csv";
  fs::create_directories(root + "/outdir");
  for (const P& p : std::vector<P>{
           {"--model " + m + " --input " + in_ok + " --output " + root + "/outdir", {"--output", "is a directory"}},
           {"--model " + m + " --input " + in_ok + " --output " + root + "/no_such_dir/p.csv",
            {"--output", "no_such_dir", "does not exist"}},
           {"--model " + m + " --input " + in_ok + " --output ''", {"--output", "the path is empty"}},
           {"--model " + m + " --input " + in_ok + " --inputs x1 x1", {"in.csv", "\"x1\" is named twice"}},
           {"--model " + root + "/none.json --input " + in_ok, {"model file not found"}},
           {"--model " + in_ok + " --input " + in_ok, {"in.csv", "malformed JSON"}},
           {"--model " + m + " --input " + in_bad, {"bad.csv", "line 2, column 2"}},
           {"--model " + m + " --input " + root + "/none.csv", {"none.csv", "not found"}},
       }) {
    const auto r = run_nntrain("predict " + p.args + (p.args.find("--output") == std::string::npos ? " --output " + out : ""));
    INFO(p.args << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK(one_line_has_all(r.err, p.expect));
    CHECK_FALSE(fs::exists(out));
  }
  CHECK(fs::is_empty(root + "/outdir"));
  // The same model and input do predict: the cases above fail for the reason they name.
  const auto ok = run_nntrain("predict --model " + m + " --input " + in_ok + " --output " + out);
  CHECK(ok.exit_code == 0);
  CHECK(slurp(out).rfind("x1,x2,prediction0\n", 0) == 0);
  fs::remove_all(root);
}
