// cli_util.hpp — run the nntrain binary from a test and capture what it did.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace testutil {

struct RunOutput {
  int exit_code = -1;
  std::string out, err;
};

// What `print(FILE*)` writes, as text (the reports' console printers, in-process).
template <class Print>
std::string printed_by(Print print) {
  std::FILE* f = std::tmpfile();
  print(f);
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += char(c);
  std::fclose(f);
  return s;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `nntrain <args>` through /bin/sh in the source tree (so configs/ resolve). `env` is put
// before the binary (variables, or a command such as `taskset -c 0`); `binary` replaces the
// built binary (a copy that another user can reach, for example).
inline RunOutput run_nntrain(const std::string& args, const std::string& env = "",
                             const std::string& binary = NNTRAIN_BINARY) {
  static int counter = 0;
  const auto tmp = std::filesystem::temp_directory_path() / ("nntrain_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(tmp);
  const std::string o = (tmp / ("out" + std::to_string(counter))).string();
  const std::string e = (tmp / ("err" + std::to_string(counter++))).string();
  const std::string cmd = "cd '" NNTRAIN_SOURCE_DIR "' && " + env + " '" + binary + "' " + args + " >'" + o +
                          "' 2>'" + e + "' </dev/null";
  const int status = std::system(cmd.c_str());
  RunOutput r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(o);
  r.err = slurp(e);
  std::filesystem::remove(o);
  std::filesystem::remove(e);
  return r;
}

// A fresh empty temporary directory path (not created).
inline std::string fresh_dir(const std::string& name) {
  const auto d = std::filesystem::temp_directory_path() / ("nntrain_test_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(d);
  return d.string();
}

inline std::string write_text(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
  return path;
}

}  // namespace testutil
