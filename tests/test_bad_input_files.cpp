// test_bad_input_files.cpp — the bad-input matrix's files: data CSVs, initial models, output
// paths and predict's inputs (the runner and its promise: bad_input_util.hpp).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include "bad_input_util.hpp"

using namespace badinput;

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
      // Excel's "Unicode text" and PowerShell's Out-File write UTF-16: said so, not a header of NULs.
      {"utf16", cfg("utf16.csv", std::string("\xFF\xFEx\0001\0,\0x\0002\0,\0y\0\n\0", 18)), "",
       {"utf16.csv", "the file is UTF-16", "CSV UTF-8"}},
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
                 {"in2p63.model.json", "/layers/0/in", "out of range", "1 to 1048576"}},
                {"model_chain", "", model("chain", model_json("[" + kLayer0 + R"(, {"in": 4, "out": 1, "activation": "identity", "W": [[1,2,3,4]], "b": [0]}])")),
                 {"chain.model.json", "/layers/1/in", "previous layer has 3"}},
                {"model_string_weight", "", model("strw", model_json(R"([{"in": 2, "out": 3, "activation": "relu", "W": [[1,2],[3,"x"],[5,6]], "b": [0,0,0]}, )" + good_w1 + "]")),
                 {"strw.model.json", "/layers/0/W/1/1", "expected a number"}},
                {"model_float_overflow", "", model("f32", model_json(R"([{"in": 2, "out": 3, "activation": "relu", "W": [[1,2],[3,1e39],[5,6]], "b": [0,0,0]}, )" + good_w1 + "]")),
                 {"f32.model.json", "/layers/0/W/1/1", "finite float32"}},
                {"model_activation", "", model("act", model_json(R"([{"in": 2, "out": 3, "activation": "swish", "W": [[1,2],[3,4],[5,6]], "b": [0,0,0]}, )" + good_w1 + "]")),
                 {"act.model.json", "/layers/0/activation", "unknown value \"swish\"", "leaky_relu"}},
                {"model_activation_case", "", model("actcase", model_json(R"([{"in": 2, "out": 3, "activation": "ReLU", "W": [[1,2],[3,4],[5,6]], "b": [0,0,0]}, )" + good_w1 + "]")),
                 {"actcase.model.json", "/layers/0/activation", "did you mean \"relu\""}},
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
  const std::string named = write_text(root + "/named.json", R"({"format": "nntrain-mlp", "version": 1, "inputs": ["x1", "x2"], "outputs": ["y"], "layers": [)" + kLayer0 + "," + kLayer1 + "]}");
  const std::string esc = write_text(root + "/esc.csv", "x1,\x1b[31mred\n1,2\n");
  const std::string utf16 = write_text(root + "/utf16.csv", std::string("\xFF\xFEx\0001\0\n\0", 8));
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
           // A header's control bytes are escaped in the message (an ESC starts no terminal sequence).
           {"--model " + named + " --input " + esc, {"esc.csv", "no column \"x2\"", "\\x1b[31mred"}},
           {"--model " + m + " --input " + utf16, {"utf16.csv", "the file is UTF-16"}},
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
