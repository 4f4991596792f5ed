// bad_input_util.hpp — the bad-input matrix's runner, shared by test_bad_input.cpp (configs,
// overrides, flags) and test_bad_input_files.cpp (data files, initial models, outputs, predict).
// Each case runs the binary and must give exit 2, a one-line error that names the place (JSON
// path, file, line), and write nothing: no --out folder, no numbered run folder, no
// --save-model file.
#pragma once

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.hpp"

namespace badinput {

using namespace testutil;
namespace fs = std::filesystem;

struct Case {
  std::string name;
  std::string config;  // config file text; "" = configs/peaks.json (or whatever `args` names)
  std::string args;    // extra arguments; {D} is replaced by the case folder
  std::vector<std::string> expect;  // substrings that must all be on one line of stderr
};

inline std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
  return s;
}

// The line of `err` that holds every expected substring, or "" when none does.
inline bool one_line_has_all(const std::string& err, const std::vector<std::string>& expect) {
  std::istringstream in(err);
  std::string line;
  while (std::getline(in, line)) {
    bool all = true;
    for (const auto& e : expect) all = all && line.find(e) != std::string::npos;
    if (all) return true;
  }
  return false;
}

inline std::string model_json(const std::string& layers) {
  return R"({"format": "nntrain-mlp", "version": 1, "layers": )" + layers + "}";
}

// A valid 2-3-1 model's layers, for --init-model cases.
inline const std::string kLayer0 = R"({"in": 2, "out": 3, "activation": "relu", "W": [[1,2],[3,4],[5,6]], "b": [0,0,0]})";
inline const std::string kLayer1 = R"({"in": 3, "out": 1, "activation": "identity", "W": [[1,2,3]], "b": [0]})";

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
inline Runner unprivileged(const std::string& root, const std::vector<std::string>& case_dirs) {
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

inline void run_cases(const std::vector<Case>& cases, const std::string& root, const Runner& runner = {}) {
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

}  // namespace badinput
