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

struct TrainArgs {
  std::string config;
  std::string out, init_model, save_model;
  bool quiet = false, json = false;
  int write_surface = 0;  // N > 0: write surface.<device>.csv, an N × N prediction grid
  // The user's key.path=value overrides, then the flag table's (app/cli_flags.hpp).
  std::vector<std::string> overrides;
};

struct BenchArgs {
  std::string config;
  bool device_set = false;  // --device given (it is in flag_overrides); else both, below the overrides
  std::string devices_alias;  // --devices LIST: --device's old spelling, still taken (with a note)
  bool devices_alias_set = false;
  std::string sweep;
  std::string export_json, export_markdown;
  std::string price, currency;  // --price cpu=X,gpu=Y (per hour), --currency LABEL
  bool price_given = false, currency_given = false;
  bool quiet = false;
  bool reps_set = false;  // --reps given: else bench's default of 5 repeats sits below the overrides
  std::vector<std::string> overrides;       // the user's key.path=value
  std::vector<std::string> flag_overrides;  // the flag table's, applied after the sweep value
  std::vector<std::string> flag_keys;       // config keys set by flags (a sweep must not collide)
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
  ModelNames init_names;  // the columns --init-model's file was trained on (none in older files)
};
Prepared prepare_run(const Config& cfg, const std::string& init_model);
// The devices' check, the same for train and bench, before anything runs, asked of the
// registry's entries: a `gpu.path` the network can never take is UsageError (the fits
// check); an unusable device is DeviceUnavailable (the probe), its message starting with
// `what` (e.g. "--device gpu").
void require_devices(const BackendRegistry& registry, const Config& cfg, const std::string& what);
// What every "the GPU cannot run here" error ends with.
inline constexpr const char* kCpuHalfHint = "--device cpu runs the CPU half";
// `device both` where the GPU cannot train (no driver, a driver too old, no device, a
// CPU-only build): sets cfg.device to cpu and returns why, after check_gpu_path (a network
// no GPU path takes stays exit 2 on any machine). "" and cfg unchanged otherwise.
std::string drop_missing_gpu(const BackendRegistry& registry, Config& cfg);
// The one warning line for a dropped GPU half: "nntrain: warning: WHAT: the GPU half is not
// run: REASON; the CPU half runs alone".
void warn_gpu_not_run(const std::string& what, const std::string& reason);
// The first half of require_devices: UsageError when the config trains a GPU on a path its
// network can never take (no device needed).
void check_gpu_path(const BackendRegistry& registry, const Config& cfg);
// A reused --out folder (train's, a sweep point's): exit 2 before anything is written when
// a file the run writes there is no regular file (a folder, a link to a device), is one of
// the run's inputs (config, data, initial model) or is --save-model's file.
void check_run_folder(const TrainArgs& a, const Config& cfg);
// config_to_json with a CSV path made absolute: the file reads the same data from any folder
// (a config resolves relative paths against its own folder, and this one is written elsewhere).
nlohmann::json portable_config_json(const Config& cfg);
// portable_config_json plus the nntrain version, build type and git revision (a config file
// reads that block back as a record, not a setting: rerunning it reproduces the run).
nlohmann::json resolved_config_json(const Config& cfg);

int cmd_train(const TrainArgs& a);
// cmd_train with the backends `registry` names (tests inject a failing backend through it).
int run_train_command(const TrainArgs& a, const BackendRegistry& registry);
int cmd_bench(const BenchArgs& a);
int cmd_predict(const PredictArgs& a);
int cmd_info();

// Runs `body`, turning exceptions into a one-line "nntrain: error: ..." on stderr and the
// documented exit code (docs/DESIGN.md §5). A config error about a key that a flag in
// `flag_keys` set names the flag (blame_flag, app/cli_flags.hpp).
int guarded(const std::function<int()>& body, const std::vector<std::string>& flag_keys = {});

std::string nntrain_version_string();

}  // namespace nntrain
