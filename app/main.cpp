// main.cpp — the command line: CLI11 wiring only. Flags come from one table (cli_flags.hpp) and
// become config overrides; the subcommands (cmd_*.cpp) do the rest.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstring>
#include <signal.h>
#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "backend_registry.hpp"
#include "cli_flags.hpp"
#include "cmd_sweep.hpp"
#include "commands.hpp"
#include "errors.hpp"
#include "json_reader.hpp"

namespace {

// `train` is the default subcommand: `nntrain --config x.json` means `nntrain train --config x.json`.
const std::vector<std::string> kCommands = {"train", "bench", "sweep", "predict", "info"};

std::vector<std::string> with_default_subcommand(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool has_sub = !args.empty() && std::find(kCommands.begin(), kCommands.end(), args[0]) != kCommands.end();
  const bool wants_help = !args.empty() && (args[0] == "-h" || args[0] == "--help" || args[0] == "--version");
  if (!has_sub && !wants_help && !args.empty()) args.insert(args.begin(), "train");
  return args;
}

// First SIGINT/SIGTERM: finish the chunk in flight, write what finished, exit 130 (predict:
// write nothing). The handler is one-shot (SA_RESETHAND), so a second signal terminates at once.
const char* g_stop_message = "\nnntrain: stopping after the current chunk (signal again to abort now)\n";
void on_signal(int) {
  nntrain::request_stop();
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, g_stop_message, std::strlen(g_stop_message));
}

void install_stop_handler(int sig) {
  // A shell starts background jobs with SIGINT ignored (so Ctrl-C at the terminal spares
  // them); keep it that way. SIGTERM is always handled.
  struct sigaction old {};
  if (sig == SIGINT && ::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) return;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  ::sigaction(sig, &sa, nullptr);
}

// The top-level usage line names the program and says a subcommand comes next (CLI11's own
// reads "Usage: [OPTIONS] [SUBCOMMAND]"); a subcommand's is CLI11's ("nntrain bench [OPTIONS] ...").
class UsageFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    if (app->get_parent() != nullptr) return CLI::Formatter::make_usage(app, std::move(name));
    return "Usage: nntrain [OPTIONS] SUBCOMMAND [SUBCOMMAND OPTIONS]\n";
  }
};

// Under the top-level help. No line starts with two spaces and a letter: README's synopsis
// test reads those as the subcommand list.
const char* const kTopFooter =
    "train is the default: 'nntrain --config FILE' means 'nntrain train --config FILE'.\n"
    "train, bench and sweep share --config FILE, --device cpu|gpu|both, --epochs N, --lr X,\n"
    "--seed N, --batch-size N, --threads N, --backend, --gpu-path, --target-loss X, --quiet\n"
    "and key.path=value overrides (docs/CONFIG.md).\n"
    "Run 'nntrain SUBCOMMAND --help' for its options; exit codes: docs/EXIT_CODES.md.";

// Each subcommand's flags, as `nntrain SUB --help` lists them (README's synopsis follows them).
CLI::App* add_train_command(CLI::App& app, nntrain::TrainArgs& ta, nntrain::ConfigFlagValues& flags) {
  using namespace nntrain;
  auto* train = app.add_subcommand("train", "train a model (the default subcommand)");
  train->add_option("--config,-c", ta.config, "experiment config (JSON)")
      ->required()
      ->check(kNonEmptyPath)
      ->type_name("FILE");
  add_config_flags(*train, kForTrain, flags);
  train->add_option("--out", ta.out, "output directory (default: a new numbered folder under output.dir)")
      ->check(kNonEmptyPath)
      ->type_name("DIR");
  train->add_option("--init-model", ta.init_model, "start from this model.json's weights")
      ->check(kNonEmptyPath)
      ->type_name("FILE");
  train->add_option("--save-model", ta.save_model, "also write the trained model.json here")
      ->check(kNonEmptyPath)
      ->type_name("FILE");
  train->add_flag("--quiet,-q", ta.quiet, "no progress and no report: only the results folder's path (--json: the summary alone)");
  train->add_flag("--json", ta.json, "print only the summary JSON on stdout");
  train->add_option("--write-surface", ta.write_surface,
                    "write surface.<device>.csv: the prediction on an N x N grid, 2 to 4096 (peaks data)")
      ->check(CLI::Range(2, 4096).description(""))
      ->type_name("N");
  train->add_option("overrides", ta.overrides, "key.path=value config overrides")->type_name("KEY=VALUE");
  return train;
}

CLI::App* add_bench_command(CLI::App& app, nntrain::BenchArgs& ba, nntrain::ConfigFlagValues& flags) {
  using namespace nntrain;
  auto* bench = app.add_subcommand("bench", "time devices over repeats and a sweep");
  bench->add_option("--config,-c", ba.config, "experiment config (JSON)")
      ->required()
      ->check(kNonEmptyPath)
      ->type_name("FILE");
  add_config_flags(*bench, kForBench, flags);  // --device (default both), --epochs, --reps, ...
  // The old spelling of --device, kept for scripts; hidden from help (docs/BENCH.md).
  bench->add_option("--devices", ba.devices_alias)->group("");
  bench->add_option("--sweep", ba.sweep, "key.path=v1,v2,... (one key)")->type_name("KEY=V1,V2,...");
  bench->add_option("--export-json", ba.export_json, "write results as JSON (schema_version 2); - for stdout")
      ->check(kNonEmptyPath)
      ->type_name("FILE");
  bench->add_option("--price", ba.price, "price per hour of each device, e.g. cpu=0.2,gpu=1.1: adds costs")
      ->type_name("cpu=X,gpu=Y");
  bench->add_option("--currency", ba.currency, "label for --price amounts, e.g. EUR (converts nothing)")
      ->type_name("LABEL");
  bench->add_option("--export-markdown", ba.export_markdown, "write a Markdown table; - for stdout")
      ->check(kNonEmptyPath)
      ->type_name("FILE");
  bench->add_flag("--quiet,-q", ba.quiet, "no progress output (the results table still prints)");
  bench->add_option("overrides", ba.overrides, "key.path=value config overrides")->type_name("KEY=VALUE");
  return bench;
}

CLI::App* add_predict_command(CLI::App& app, nntrain::PredictArgs& pa) {
  using namespace nntrain;
  auto* predict = app.add_subcommand("predict", "run a saved model on a CSV of inputs");
  predict->add_option("--model", pa.model, "model.json")->required()->check(kNonEmptyPath)->type_name("FILE");
  predict->add_option("--input", pa.input,
                      "CSV with a header; the model's inputs are found by the names model.json records, in any "
                      "order (other columns are kept)")
      ->required()
      ->check(kNonEmptyPath)
      ->type_name("CSV");
  predict->add_option("--output", pa.output, "CSV to write (the input's columns, then predictions); - for stdout")
      ->required()
      ->check(kNonEmptyPath)
      ->type_name("CSV");
  predict->add_option("--inputs", pa.input_columns,
                      "the input columns by name, in the model's input order (default: model.json's names; "
                      "a model without names takes the first columns)")
      ->type_name("NAME");
  return predict;
}

// A first word that is no command, flag or key.path=value override is a mistyped command
// ("nntrain predcit ..."): say so, instead of train's "--config is required". False then.
bool first_word_ok(int argc, char** argv) {
  using namespace nntrain;
  const std::vector<std::string>& commands = kCommands;
  if (argc <= 1 || argv[1][0] == '-' || std::string(argv[1]).find('=') != std::string::npos ||
      std::find(commands.begin(), commands.end(), argv[1]) != commands.end())
    return true;
  const std::string word = argv[1];
  std::string hint;
  if (const auto near = nearest(word, commands)) hint = " (did you mean \"" + *near + "\"?)";
  if (word.size() > 5 && word.compare(word.size() - 5, 5, ".json") == 0)
    hint = " (a config file is given as --config " + word + ")";
  fmt::print(stderr, "nntrain: error: unknown command \"{}\"{}; the commands are train (the default), bench, sweep, "
                     "predict and info\nRun 'nntrain --help' for usage.\n",
             argv[1], hint);
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace nntrain;
  CLI::App app{"nntrain: train the same seeded MLP on CPU and GPU and measure which is faster, honestly", "nntrain"};
  app.formatter(std::make_shared<UsageFormatter>());  // before the subcommands: they inherit it
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", nntrain_version_string());

  TrainArgs ta;
  BenchArgs ba;
  PredictArgs pa;
  SweepArgs sa;
  ConfigFlagValues train_flags, bench_flags, sweep_flags;
  add_train_command(app, ta, train_flags);
  auto* bench = add_bench_command(app, ba, bench_flags);
  auto* predict = add_predict_command(app, pa);
  auto* info = app.add_subcommand("info", "show the CPU, GPU and build");
  auto* sweep = add_sweep_command(app, sa, sweep_flags);
  app.footer(kTopFooter);  // the top level's only: set after the subcommands, which copy it
  const std::vector<std::string> args = with_default_subcommand(argc, argv);
  if (!first_word_ok(argc, argv)) return kExitUsage;
  try {
    std::vector<std::string> rev(args.rbegin(), args.rend());
    app.parse(rev);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Point at the subcommand's own help: the flag list the user needs is there.
    const bool sub = !args.empty() && std::find(kCommands.begin(), kCommands.end(), args[0]) != kCommands.end();
    fmt::print(stderr, "nntrain: error: {}\nRun 'nntrain {}--help' for usage.\n", e.what(), sub ? args[0] + " " : "");
    return kExitUsage;
  }
  if (args.empty()) {
    fmt::print(stderr, "{}", app.help());
    return kExitUsage;
  }

  if (*predict) g_stop_message = "\nnntrain: stopping predict (signal again to abort now)\n";
  if (*sweep && sa.launcher == "local" && sa.run_point.empty() && sa.collect.empty()) {
    // The local launcher's own handlers from here on (cmd_sweep_local.cpp): with the one-shot
    // one below, the copy of a stop signal that `timeout` or `kill` sends to the whole process
    // group would kill the launcher before cmd_sweep replaced it.
    install_launcher_signals();
  } else {
    install_stop_handler(SIGINT);
    install_stop_handler(SIGTERM);
  }

  // Flags are overrides applied after the user's (precedence: ... < overrides < flags).
  for (auto& o : config_flag_overrides(train_flags)) ta.overrides.push_back(std::move(o));
  ba.flag_overrides = config_flag_overrides(bench_flags);
  ba.flag_keys = config_flag_keys(bench_flags);
  ba.reps_set = bench->count("--reps") > 0;
  ba.device_set = bench->count("--device") > 0;
  ba.devices_alias_set = bench->count("--devices") > 0;
  ba.price_given = bench->count("--price") > 0;  // --price "" is an error, not "no prices"
  ba.currency_given = bench->count("--currency") > 0;
  sa.flag_overrides = config_flag_overrides(sweep_flags);
  sa.flag_keys = config_flag_keys(sweep_flags);
  sa.jobs_set = sweep->count("--jobs") > 0;

  const std::vector<std::string> flag_keys =
      *bench ? ba.flag_keys : *sweep ? sa.flag_keys : config_flag_keys(train_flags);
  return guarded(
      [&] {
        if (*info) return cmd_info();
        if (*predict) return cmd_predict(pa);
        if (*bench) return cmd_bench(ba);
        if (*sweep) return cmd_sweep(sa);
        return cmd_train(ta);
      },
      flag_keys);
}
