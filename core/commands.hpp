// commands.hpp — the subcommands behind the CLI: each takes plain options, builds a Config
// through load_config (so precedence and validation are the same everywhere) and returns
// the process exit code. app/main.cpp only parses the command line into these structs.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "trainer.hpp"

namespace nntrain {

// Which of the shared flags were given explicitly (they override the config and overrides).
struct FlagsSet {
  bool device = false, epochs = false, lr = false, seed = false, batch_size = false, threads = false,
       cpu_backend = false, gpu_path = false;
};

struct TrainArgs {
  std::string config;
  std::string device = "cpu";
  long long epochs = 0;
  double lr = 0;
  unsigned long long seed = 0;
  long long batch_size = 0;
  long long threads = 0;
  std::string cpu_backend, gpu_path;
  std::string out, init_model, save_model;
  bool quiet = false, json = false;
  int write_surface = 0;  // N > 0: write surface.<device>.csv, an N × N prediction grid
  std::vector<std::string> overrides;
  FlagsSet set_flags;
};

struct BenchArgs {
  std::string config;
  std::string devices = "cpu,gpu";
  int reps = 5;
  int warmup = 5;
  std::string sweep;
  long long threads = 0;
  std::string cpu_backend, gpu_path;
  std::string export_json, export_markdown;
  bool quiet = false;
  bool reps_set = false, warmup_set = false;
  std::vector<std::string> overrides;
  FlagsSet set_flags;
};

struct PredictArgs {
  std::string model, input, output;
  std::vector<std::string> input_columns;
};

// Everything `train` and `bench` check before they run: data, batch size, initial weights
// (from `init_model` if given, else the seeded init). Throws UsageError.
struct Prepared {
  Dataset data;
  Params init;
};
Prepared prepare_run(const Config& cfg, const std::string& init_model);
// Throws DeviceUnavailable if a requested device cannot be used.
void require_devices(const Config& cfg);
// config_to_json plus the nntrain version, build type and git revision.
nlohmann::json resolved_config_json(const Config& cfg);

int cmd_train(const TrainArgs& a);
int cmd_bench(const BenchArgs& a);
int cmd_predict(const PredictArgs& a);
int cmd_info();

// Runs `body`, turning exceptions into a one-line "nntrain: error: ..." on stderr and the
// documented exit code (DESIGN §5).
int guarded(const std::function<int()>& body);

std::string nntrain_version_string();

// The explicit flags as a JSON object to merge over the config (highest precedence).
nlohmann::json flags_json(const FlagsSet& set, const std::string& device, long long epochs, double lr,
                          unsigned long long seed, long long batch_size, long long threads,
                          const std::string& cpu_backend, const std::string& gpu_path);

}  // namespace nntrain
