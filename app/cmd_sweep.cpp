// cmd_sweep.cpp — `nntrain sweep`: its options, and the plan: every point of the grid built
// and validated with train's own checks before anything is written (a bad point is exit 2
// naming it), then plan.json and one folder per point with the point's resolved config.
// A rerun of the same sweep into the same --out finds plan.json and resumes.
#include "cmd_sweep.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "backend_registry.hpp"
#include "commands.hpp"
#include "errors.hpp"
#include "fileio.hpp"
#include "mlp.hpp"
#include "surface.hpp"
#include "sweep_plan.hpp"

namespace nntrain {

namespace fs = std::filesystem;
using nlohmann::json;

CLI::App* add_sweep_command(CLI::App& app, SweepArgs& a, ConfigFlagValues& flags) {
  auto* s = app.add_subcommand("sweep", "run a grid of train runs here or as a Slurm job array; collect the table");
  s->add_option("--config,-c", a.config, "experiment config (JSON): the base of every point")
      ->check(kNonEmptyPath)
      ->type_name("FILE");
  s->add_option("--grid", a.grids, "key.path=v1,v2,... (one axis; repeat for the Cartesian product)")
      ->allow_extra_args(false)
      ->type_name("KEY=V1,V2");
  add_config_flags(*s, kForTrain, flags);
  s->add_option("--out", a.out, "sweep folder (default: a new numbered folder under <output.dir>/sweeps)")
      ->check(kNonEmptyPath)
      ->type_name("DIR");
  s->add_option("--launcher", a.launcher, "local (default) or slurm")
      ->check(CLI::IsMember({"local", "slurm"}).description(""))
      ->type_name("local|slurm");
  s->add_option("--jobs,-j", a.jobs, "points at once, 1 to 100000 (local: default 1, CPU threads divided; slurm: the array's %M)")
      ->check(CLI::Range(1, 100000).description(""))
      ->type_name("N");
  s->add_option("--slurm-arg", a.slurm_args, "one sbatch option for every task, e.g. --slurm-arg=--gres=gpu:1")
      ->allow_extra_args(false)
      ->type_name("OPT");
  s->add_flag("--dry-run", a.dry_run, "write the plan (and the batch script) but run or submit nothing");
  s->add_option("--init-model", a.init_model, "start every point from this model.json's weights")->type_name("FILE");
  s->add_option("--write-surface", a.write_surface, "each point also writes surface.<device>.csv (N x N, 2 to 4096)")
      ->check(CLI::Range(2, 4096).description(""))
      ->type_name("N");
  // Internal: what each Slurm array task (and the local launcher's child) runs; not in help.
  s->add_option("--run-point", a.run_point, "DIR I: run point I of the sweep in DIR")->expected(2)->group("");
  s->add_option("--collect", a.collect, "DIR: write DIR/results.csv and results.json and print the table")
      ->check(kNonEmptyPath)
      ->type_name("DIR");
  s->add_flag("--quiet,-q", a.quiet, "no progress lines");
  s->add_option("overrides", a.overrides, "key.path=value config overrides (every point)")->type_name("KEY=VALUE");
  return s;
}

std::string SweepPlan::point_dir(size_t i) const {
  return (fs::path(dir) / this->point(i).at("dir").get<std::string>()).string();
}

SweepPlan read_plan(const std::string& dir) {
  const std::string file = (fs::path(dir) / "plan.json").string();
  if (!fs::exists(file)) throw UsageError(dir + ": no plan.json: not a sweep folder");
  SweepPlan p;
  p.dir = fs::absolute(dir).lexically_normal().string();
  try {
    p.json = json::parse(read_file(file, "sweep plan"));
    if (p.json.value("format", "") != "nntrain-sweep-plan" || !p.json.at("points").is_array())
      throw UsageError(file + ": not an nntrain sweep plan");
  } catch (const json::exception& e) {
    throw UsageError(file + ": unreadable sweep plan: " + e.what());
  }
  return p;
}

json read_json_or_null(const std::string& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return nullptr;
  try {
    return json::parse(read_file(file, "file"));
  } catch (const std::exception&) {
    return nullptr;
  }
}

json read_point_summary(const SweepPlan& plan, size_t i) { return read_json_or_null(plan.point_dir(i) + "/summary.json"); }

std::vector<size_t> unfinished_points(const SweepPlan& plan) {
  std::vector<size_t> out;
  for (size_t i = 0; i < plan.size(); ++i) {
    const json s = read_point_summary(plan, i);
    if (!point_finished(s.is_null() ? nullptr : &s, plan.point(i).value("devices", json::array()).size()))
      out.push_back(i);
  }
  return out;
}

std::string self_executable() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw IoError("cannot find this program's path (/proc/self/exe): " + ec.message());
  return p.string();
}

namespace {

std::string absolute_or_empty(const std::string& p) { return p.empty() ? p : fs::absolute(p).lexically_normal().string(); }

void check_grid_vs_flags(const std::vector<SweepSpec>& axes, const std::vector<std::string>& flag_keys) {
  for (const auto& k : flag_keys)
    for (const auto& ax : axes)
      if (config_keys_overlap(k, ax.key))
        throw UsageError("--grid " + ax.key + ": this key is also set by a flag (" + k +
                         "), which would win over every grid value; drop the flag or the grid");
}

// Every point: config (file, overrides, grid value, flags), data, initial weights, surface
// request and GPU path, with train's checks. Exit 2 names the point.
// A local sweep's point that asks for both devices where the GPU cannot run trains the CPU
// half (train's rule, preflight.cpp): its config says cpu, and `gpu_not_run` why.
json plan_points(const SweepArgs& a, const std::vector<SweepSpec>& axes, std::vector<Config>& configs,
                 std::string& gpu_not_run) {
  const auto at = grid_points(axes);
  json points = json::array();
  for (size_t i = 0; i < at.size(); ++i) {
    std::vector<std::string> o = a.overrides;
    const auto grid_o = point_overrides(axes, at[i]);
    o.insert(o.end(), grid_o.begin(), grid_o.end());
    o.insert(o.end(), a.flag_overrides.begin(), a.flag_overrides.end());
    const std::string label = point_label(axes, at[i]);
    try {
      configs.push_back(load_config(a.config, o));
      (void)prepare_run(configs.back(), a.init_model);
      if (a.write_surface) check_surface_request(configs.back(), a.write_surface);
      check_gpu_path(backend_registry(), configs.back());
      if (a.launcher == "local")
        if (std::string why = drop_missing_gpu(backend_registry(), configs.back()); !why.empty()) gpu_not_run = why;
    } catch (const EnvError& e) {
      throw EnvError(fmt::format("{} (met at --grid point {} of {}: {})", e.what(), i + 1, at.size(), label));
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("--grid: point {} of {} ({}) is invalid: {}", i + 1, at.size(), label,
                                   blame_flag(e, a.flag_keys)));
    }
    json values = json::array(), devices = json::array();
    for (size_t k = 0; k < axes.size(); ++k) values.push_back(axes[k].values[at[i][k]]);
    for (const Device d : configs.back().devices()) devices.push_back(to_string(d));
    points.push_back({{"index", i},
                      {"dir", point_dir(i, at.size())},
                      {"label", label},
                      {"values", values},
                      {"overrides", grid_o},
                      {"devices", devices},
                      {"config", portable_config_json(configs.back())}});  // read on a cluster's node too
  }
  if (const auto same = first_same_configs(configs))
    throw UsageError(fmt::format("--grid: points {} and {} ({} and {}) give the same config: the two would be the "
                                 "same run",
                                 same->first + 1, same->second + 1, points[same->first]["label"].get<std::string>(),
                                 points[same->second]["label"].get<std::string>()));
  return points;
}

// An existing plan.json must describe the same sweep (then this is a resume); anything
// else in --out is refused rather than mixed with this sweep's results.
void check_existing(const std::string& dir, const json& plan) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  if (!fs::exists(fs::path(dir) / "plan.json", ec)) {
    if (fs::is_directory(dir, ec) && !fs::is_empty(dir, ec))
      throw UsageError("--out " + dir + ": folder is not empty and holds no sweep (plan.json); use a new folder");
    return;
  }
  const json old = read_plan(dir).json;
  for (const char* key : {"grid", "init_model", "write_surface"})
    if (old.value(key, json()) != plan.at(key))
      throw UsageError(fmt::format("--out {} holds a different sweep (its plan.json has another {}); use another "
                                   "--out, or delete that folder", dir, key));
  const json& op = old.at("points");
  const json& np = plan.at("points");
  for (size_t i = 0; i < std::max(op.size(), np.size()); ++i)
    if (i >= op.size() || i >= np.size() || op[i].at("config") != np[i].at("config"))
      throw UsageError(fmt::format("--out {} holds a different sweep (point {} differs); use another --out, or "
                                   "delete that folder", dir, i + 1));
}

// Each point is a run folder and a line of plan.json: a typo in a `seq` (1000 x 300 values)
// once planned 300,000 folders, 2.8 GB, for 4 minutes, without a word.
constexpr double kMaxSweepPoints = 10000;

void check_grid_size(const std::vector<SweepSpec>& axes) {
  double points = 1;
  std::string sizes;
  for (const SweepSpec& ax : axes) {
    points *= double(ax.values.size());
    sizes += (sizes.empty() ? "" : " x ") + std::to_string(ax.values.size());
  }
  if (points > kMaxSweepPoints)
    throw UsageError(fmt::format("--grid: {:.0f} points ({}) is more than one sweep plans ({:.0f}): each is a run "
                                 "folder; split the grid into several sweeps",
                                 points, sizes, kMaxSweepPoints));
}

void check_slurm_args(const SweepArgs& a) {
  if (a.launcher != "slurm" && !a.slurm_args.empty())
    throw UsageError("--slurm-arg is for --launcher slurm");
  for (const auto& s : a.slurm_args) {
    if (s.size() < 2 || s[0] != '-' || s.find_first_of("\n\r") != std::string::npos)
      throw UsageError("--slurm-arg \"" + s + "\": expected one sbatch option, e.g. --slurm-arg=--partition=gpu");
    // sbatch takes any unambiguous start of a long option (--arr, --out, --err), and -a/-o/-e
    // short. The error file too: each point's train.log holds its stderr, which --collect
    // reads for a failed point's reason.
    const size_t eq = s.find('=');
    const std::string name = s.rfind("--", 0) == 0 ? s.substr(2, eq == std::string::npos ? eq : eq - 2) : "";
    const bool long_banned = name.size() >= 2 && (std::string("array").rfind(name, 0) == 0 ||
                                                  std::string("output").rfind(name, 0) == 0 ||
                                                  std::string("error").rfind(name, 0) == 0);
    const bool short_banned = s.rfind("--", 0) != 0 && (s.rfind("-a", 0) == 0 || s.rfind("-o", 0) == 0 ||
                                                        s.rfind("-e", 0) == 0);
    if (long_banned || short_banned)
      throw UsageError("--slurm-arg " + s + ": nntrain sets the array and its output and error files itself (--jobs "
                       "sets %M)");
  }
}

// Validates everything, then writes plan.json and each point's config.json.
SweepPlan plan_sweep(const SweepArgs& a) {
  if (a.config.empty()) throw UsageError("sweep: --config FILE is required (or --collect DIR, or --run-point DIR I)");
  const std::vector<SweepSpec> axes = parse_grid(a.grids);
  check_grid_vs_flags(axes, a.flag_keys);
  for (const SweepSpec& ax : axes) check_axis_vs_overrides(ax, a.overrides, "--grid");
  check_grid_size(axes);
  // A missing or broken --init-model is no point's fault: said once, before the points (a
  // net that does not match one point's layers still names that point).
  if (!a.init_model.empty()) (void)load_model(a.init_model);
  check_slurm_args(a);
  std::vector<Config> configs;
  SweepPlan plan;
  plan.json = {{"format", "nntrain-sweep-plan"}, {"version", 1}};
  std::string gpu_not_run;
  plan.json["points"] = plan_points(a, axes, configs, gpu_not_run);
  if (!gpu_not_run.empty()) warn_gpu_not_run("sweep --device both", gpu_not_run);
  // A local sweep needs its devices here; a Slurm sweep needs them on the nodes (each task
  // checks its own, a missing GPU there is that point's "failed" with the reason).
  if (a.launcher == "local")
    for (const Config& cfg : configs) require_devices(backend_registry(), cfg, "sweep --device " + std::string(to_string(cfg.device)));
  json grid = json::array();
  for (const auto& ax : axes) grid.push_back({{"key", ax.key}, {"values", ax.texts}});
  plan.json["name"] = configs.front().name;
  plan.json["config_file"] = absolute_or_empty(a.config);
  plan.json["overrides"] = a.overrides;
  plan.json["flag_overrides"] = a.flag_overrides;
  plan.json["grid"] = grid;
  plan.json["init_model"] = absolute_or_empty(a.init_model);
  plan.json["write_surface"] = a.write_surface;

  const std::string out = a.out.empty() ? configs.front().output_dir + "/sweeps" : a.out;
  check_output_location(out);
  if (!a.out.empty()) check_existing(a.out, plan.json);
  if (a.launcher == "slurm") {
    // (without --out the sweep gets a numbered folder under `out`: digits only)
    check_slurm_dir(fs::absolute(out).lexically_normal().string());
    if (!a.dry_run) require_sbatch();  // before anything is written: exit 3 leaves nothing
  }
  const std::string dir = a.out.empty() ? make_numbered_run_dir(out) : (ensure_directory(a.out), a.out);
  plan.dir = fs::absolute(dir).lexically_normal().string();
  for (size_t i = 0; i < plan.size(); ++i) {
    ensure_directory(plan.point_dir(i));
    write_file_atomic(plan.point_dir(i) + "/config.json", plan.point(i).at("config").dump(2) + "\n");
  }
  write_file_atomic(plan.dir + "/plan.json", plan.json.dump(2) + "\n");
  return plan;
}

}  // namespace

int cmd_sweep(const SweepArgs& a) {
  const bool planning = !a.config.empty() || !a.grids.empty();
  if (!a.collect.empty()) {
    if (planning || !a.run_point.empty()) throw UsageError("sweep --collect DIR takes no --config, --grid or --run-point");
    return collect_sweep(a.collect);
  }
  if (!a.run_point.empty()) {
    if (planning) throw UsageError("sweep --run-point DIR I takes no --config or --grid (the plan is in DIR)");
    return run_point(a.run_point.at(0), a.run_point.at(1), a.jobs, a.jobs_set);
  }
  const SweepPlan plan = plan_sweep(a);
  return a.launcher == "slurm" ? run_slurm(plan, a) : run_local(plan, a);
}

}  // namespace nntrain
