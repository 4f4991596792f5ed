// test_outputs.cpp — the one output writer never clobbers what it should not: a symbolic link
// is followed (the link stays, its target gets the content; a dangling link's target is
// created), a device or FIFO is refused and left as it was, an output that is an input is
// refused before anything is written, and `-` is stdout where one file is written. The
// command-line cases run the built binary as the current user and, as root, also as uid
// 65534 (nobody), for whom permissions apply. No case writes to the real /dev/stdout or
// /dev/null as root: a broken writer would replace them (issue 44) — FIFOs and links made in
// a temp folder stand in for them.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_util.hpp"
#include "errors.hpp"
#include "fileio.hpp"

using namespace testutil;
namespace fs = std::filesystem;

namespace {

bool is_fifo(const std::string& p) { return fs::is_fifo(fs::symlink_status(p)); }
bool is_link(const std::string& p) { return fs::is_symlink(fs::symlink_status(p)); }

// One line on stderr (CLI11's own errors add a --help line; ours do not).
bool one_line(const std::string& err) { return std::count(err.begin(), err.end(), '\n') == 1; }

struct Runner {
  std::string name, prefix, binary = NNTRAIN_BINARY;
};

// Whom the command-line cases run as: this user; as root also nobody (uid/gid 65534, no
// groups, through util-linux's setpriv) from a copy of the binary in `root`, which that user
// can reach. Folders it must write are made writable for everyone by the caller.
std::vector<Runner> runners(const std::string& root) {
  std::vector<Runner> v{{::geteuid() == 0 ? "root" : "this user", "", NNTRAIN_BINARY}};
  if (::geteuid() != 0) return v;
  REQUIRE(std::system("command -v setpriv >/dev/null 2>&1") == 0);
  fs::create_directories(root);
  fs::permissions(root, fs::perms::all);
  Runner r{"uid 65534", "setpriv --reuid=65534 --regid=65534 --clear-groups", root + "/nntrain"};
  fs::copy_file(NNTRAIN_BINARY, r.binary, fs::copy_options::overwrite_existing);
  fs::permissions(r.binary, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
  const auto ok = run_nntrain("info", r.prefix, r.binary);
  INFO("running " << r.binary << " as uid 65534: " << ok.err);
  REQUIRE(ok.exit_code == 0);
  v.push_back(r);
  return v;
}

// A folder every user may write, with a model (2 inputs) and an input CSV in it.
std::string case_dir(const std::string& root, const std::string& name, const std::string& model) {
  const std::string d = root + "/" + name;
  fs::create_directories(d);
  fs::permissions(d, fs::perms::all);
  fs::copy_file(model, d + "/m.json", fs::copy_options::overwrite_existing);
  write_text(d + "/in.csv", "x1,x2\n0.5,1\n-1,0.25\n");
  return d;
}

std::string model_file(const std::string& root) {
  const std::string m = root + "/m.json";
  const auto r = run_nntrain("--config configs/peaks.json --epochs 0 --quiet --save-model " + m + " --out " + root +
                             "/run data.grid=4");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return m;
}

}  // namespace

TEST_CASE("the writer follows links, the link stays and its target gets the content", "[outputs]") {
  const std::string dir = fresh_dir("out_links");
  fs::create_directories(dir + "/real");
  write_text(dir + "/real/target.txt", "old");
  fs::create_symlink("real/target.txt", dir + "/link.txt");  // relative to the link's folder
  fs::create_symlink(dir + "/link.txt", dir + "/link2.txt");  // a chain
  nntrain::write_file_atomic(dir + "/link2.txt", "new");
  CHECK(is_link(dir + "/link.txt"));
  CHECK(is_link(dir + "/link2.txt"));
  CHECK(slurp(dir + "/real/target.txt") == "new");
  CHECK(nntrain::resolve_output_path(dir + "/link2.txt") == dir + "/real/target.txt");

  // A dangling link: the file it names is created, the link then resolves.
  fs::create_symlink("real/made.txt", dir + "/dangling.txt");
  nntrain::write_file_atomic(dir + "/dangling.txt", "made");
  CHECK(is_link(dir + "/dangling.txt"));
  CHECK(slurp(dir + "/real/made.txt") == "made");
  // ... unless its folder does not exist: an error naming the link and where it points.
  fs::create_symlink("nowhere/x.txt", dir + "/lost.txt");
  CHECK_THROWS_WITH(nntrain::write_file_atomic(dir + "/lost.txt", "x"), Catch::Contains("lost.txt") &&
                                                                            Catch::Contains("nowhere/x.txt"));
  CHECK_THROWS_WITH(nntrain::check_output_file(dir + "/lost.txt", "--output"),
                    Catch::Contains("--output") && Catch::Contains("does not exist"));
  CHECK(is_link(dir + "/lost.txt"));
  // A loop is an error, not a hang.
  fs::create_symlink("loop_b", dir + "/loop_a");
  fs::create_symlink("loop_a", dir + "/loop_b");
  CHECK_THROWS_WITH(nntrain::write_file_atomic(dir + "/loop_a", "x"), Catch::Contains("symbolic links"));
  CHECK_THROWS_AS(nntrain::check_output_file(dir + "/loop_a", "--output"), nntrain::UsageError);
  fs::remove_all(dir);
}

TEST_CASE("the writer refuses a FIFO or a device and leaves it as it was", "[outputs]") {
  const std::string dir = fresh_dir("out_fifo");
  fs::create_directories(dir);
  const std::string fifo = dir + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0666) == 0);
  fs::create_symlink(fifo, dir + "/stdout_like");  // /dev/stdout's shape: a link to a pipe
  for (const std::string& p : {fifo, dir + "/stdout_like"}) {
    INFO(p);
    CHECK_THROWS_WITH(nntrain::write_file_atomic(p, "x"), Catch::Contains("FIFO"));
    CHECK_THROWS_WITH(nntrain::check_output_file(p, "--output", true),
                      Catch::Contains("FIFO") && Catch::Contains("- writes to stdout"));
  }
  CHECK(is_fifo(fifo));
  CHECK(is_link(dir + "/stdout_like"));
  // A character device of our own (root may make one; /dev/null's numbers), never /dev's.
  const std::string dev = dir + "/null_like";
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    CHECK_THROWS_WITH(nntrain::write_file_atomic(dev, "x"), Catch::Contains("character device"));
    CHECK(fs::is_character_file(fs::symlink_status(dev)));
  }
  // "-" is stdout only where an option says so.
  CHECK_THROWS_WITH(nntrain::check_output_file("-", "--save-model"), Catch::Contains("not stdout"));
  CHECK_NOTHROW(nntrain::check_output_file("-", "--output", true));
  fs::remove_all(dir);
}

TEST_CASE("an output that is an input is refused however it is spelt", "[outputs]") {
  const std::string dir = fresh_dir("out_same");
  fs::create_directories(dir + "/sub");
  const std::string in = write_text(dir + "/in.csv", "x1,x2\n1,2\n");
  fs::create_symlink(in, dir + "/link.csv");
  fs::create_hard_link(in, dir + "/hard.csv");
  for (const std::string& out : {in, dir + "/sub/../in.csv", dir + "/link.csv", dir + "/hard.csv"}) {
    INFO(out);
    CHECK_THROWS_WITH(nntrain::check_output_not_input(out, "--output", {{"--input", in}}),
                      Catch::Contains("same file as --input"));
  }
  CHECK_NOTHROW(nntrain::check_output_not_input(dir + "/new.csv", "--output", {{"--input", in}}));
  CHECK_NOTHROW(nntrain::check_output_not_input("-", "--output", {{"--input", in}}));
  fs::remove_all(dir);
}

TEST_CASE("predict --output through links, onto FIFOs and devices, onto its input, as root and nobody",
          "[outputs][cli][predict]") {
  const std::string root = fresh_dir("out_cli");
  fs::create_directories(root);
  const std::string model = model_file(root);
  const std::vector<Runner> users = runners(root + "/bin");
  for (const Runner& run : users) {
    INFO("as " << run.name);
    const std::string d = case_dir(root, run.name == "uid 65534" ? "nobody" : "self", model);
    auto predict = [&](const std::string& out) {
      return run_nntrain("predict --model " + d + "/m.json --input " + d + "/in.csv --output " + out, run.prefix,
                         run.binary);
    };
    // The reproduction: link.csv -> target.csv.
    write_text(d + "/target.csv", "old\n");
    fs::create_symlink("target.csv", d + "/link.csv");
    auto r = predict(d + "/link.csv");
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(is_link(d + "/link.csv"));
    CHECK(slurp(d + "/target.csv").rfind("x1,x2,prediction0\n", 0) == 0);
    // A dangling link: its target is made.
    fs::create_symlink("made.csv", d + "/dangling.csv");
    CHECK(predict(d + "/dangling.csv").exit_code == 0);
    CHECK(is_link(d + "/dangling.csv"));
    CHECK(slurp(d + "/made.csv").rfind("x1,x2,prediction0\n", 0) == 0);
    // A FIFO, directly and behind a link (the shape of /dev/stdout -> a pipe): refused, untouched.
    const std::string fifo = d + "/fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0666) == 0);
    fs::create_symlink(fifo, d + "/stdout_like");
    for (const std::string& out : {fifo, d + "/stdout_like"}) {
      r = predict(out);
      INFO(out << ": " << r.err);
      CHECK(r.exit_code == 2);
      CHECK(one_line(r.err));
      CHECK_THAT(r.err, Catch::Contains("FIFO") && Catch::Contains("--output"));
    }
    CHECK(is_fifo(fifo));
    CHECK(is_link(d + "/stdout_like"));
    // The real /dev/null only where a broken writer could not replace it.
    if (!run.prefix.empty() || ::geteuid() != 0) {
      r = predict("/dev/null");
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Catch::Contains("character device"));
      CHECK(fs::is_character_file(fs::symlink_status("/dev/null")));
    }
    // The output is the input (itself, another spelling, a link to it): refused, input intact.
    fs::create_symlink("in.csv", d + "/in_link.csv");
    for (const std::string& out : {d + "/in.csv", d + "/../" + fs::path(d).filename().string() + "/in.csv",
                                   d + "/in_link.csv", d + "/m.json"}) {
      r = predict(out);
      INFO(out << ": " << r.err);
      CHECK(r.exit_code == 2);
      CHECK(one_line(r.err));
      CHECK_THAT(r.err, Catch::Contains("same file as"));
    }
    CHECK(slurp(d + "/in.csv") == "x1,x2\n0.5,1\n-1,0.25\n");
    CHECK(is_link(d + "/in_link.csv"));
    // "-": the CSV on stdout, no file called "-".
    r = predict("-");
    CHECK(r.exit_code == 0);
    CHECK(r.out.rfind("x1,x2,prediction0\n0.5,1,", 0) == 0);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 3);
    CHECK_FALSE(fs::exists(fs::path(NNTRAIN_SOURCE_DIR) / "-"));
  }
  // As nobody, a dangling link into a folder nobody may write is refused before the work.
  if (::geteuid() == 0) {
    const std::string d = root + "/nobody";
    fs::create_directories(root + "/locked");
    fs::permissions(root + "/locked", fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
    fs::create_symlink(root + "/locked/x.csv", d + "/locked_link.csv");
    const Runner& nobody = users.back();
    const auto r = run_nntrain("predict --model " + d + "/m.json --input " + d + "/in.csv --output " + d +
                                   "/locked_link.csv", nobody.prefix, nobody.binary);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("locked") && Catch::Contains("not writable"));
    CHECK_FALSE(fs::exists(root + "/locked/x.csv"));
  }
  fs::remove_all(root);
}

TEST_CASE("bench --export-json - writes the JSON alone on stdout, and an export onto the config is refused",
          "[outputs][cli][bench]") {
  const std::string dir = fresh_dir("out_bench");
  fs::create_directories(dir);
  const auto r = run_nntrain("bench --config configs/peaks.json --devices cpu --reps 1 --warmup 0 --quiet "
                             "--export-json - train.epochs=2 data.grid=4");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["schema_version"] == 2);  // the table went to stderr
  CHECK_FALSE(fs::exists(fs::path(NNTRAIN_SOURCE_DIR) / "-"));
  const std::string cfg = dir + "/c.json";
  fs::copy_file(std::string(NNTRAIN_SOURCE_DIR) + "/configs/peaks.json", cfg);
  const std::string before = slurp(cfg);
  const auto same = run_nntrain("bench --config " + cfg + " --devices cpu --reps 1 --export-markdown " + cfg);
  CHECK(same.exit_code == 2);
  CHECK_THAT(same.err, Catch::Contains("same file as --config"));
  CHECK(slurp(cfg) == before);
  fs::remove_all(dir);
}

TEST_CASE("train --save-model onto its config or data, or to -, is refused before the run", "[outputs][cli]") {
  const std::string dir = fresh_dir("out_train");
  fs::create_directories(dir);
  const std::string cfg = dir + "/c.json";
  fs::copy_file(std::string(NNTRAIN_SOURCE_DIR) + "/configs/peaks.json", cfg);
  const std::string before = slurp(cfg);
  fs::create_symlink(cfg, dir + "/cfg_link.json");
  for (const std::string& save : {cfg, dir + "/cfg_link.json", std::string("-")}) {
    const auto r = run_nntrain("--config " + cfg + " --epochs 1 --quiet --out " + dir + "/run --save-model " + save);
    INFO(save << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--save-model"));
    CHECK_FALSE(fs::exists(dir + "/run"));
  }
  CHECK(slurp(cfg) == before);
  CHECK_FALSE(fs::exists(fs::path(NNTRAIN_SOURCE_DIR) / "-"));
  fs::remove_all(dir);
}

TEST_CASE("train --save-model onto its --init-model is refused before the run, the model kept", "[outputs][cli]") {
  const std::string dir = fresh_dir("out_init");
  fs::create_directories(dir);
  const std::string init = dir + "/m.json";
  auto r = run_nntrain("--config configs/peaks.json --epochs 0 --quiet data.grid=5 --out " + dir + "/first --save-model " + init);
  REQUIRE(r.exit_code == 0);
  const std::string before = slurp(init);
  fs::create_symlink(init, dir + "/m_link.json");
  for (const std::string& save : {init, dir + "/m_link.json"}) {
    r = run_nntrain("--config configs/peaks.json --epochs 3 --quiet data.grid=5 --out " + dir + "/run --init-model " + init +
                    " --save-model " + save);
    INFO(save << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--save-model") && Catch::Contains("is the same file as --init-model"));
    CHECK_FALSE(fs::exists(dir + "/run"));
  }
  CHECK(slurp(init) == before);
  fs::remove_all(dir);
}

TEST_CASE("a reused --out whose files would be an input, --save-model's file or no regular file is refused before "
          "the run",
          "[outputs][cli]") {
  const std::string dir = fresh_dir("out_reused");
  const std::string run = dir + "/run";
  const std::string common = "--config configs/peaks.json --epochs 2 --quiet --device cpu data.grid=5 --out " + run;
  REQUIRE(run_nntrain(common).exit_code == 0);
  const std::string model = slurp(run + "/model.json"), summary = slurp(run + "/summary.json");
  // The run's own model as its initial one, its summary as --save-model's file.
  for (const std::string& extra : {" --init-model " + run + "/model.json", " --save-model " + run + "/./summary.json",
                                   " --save-model " + run + "/model.gpu.json"}) {
    const auto r = run_nntrain(common + extra);
    INFO(extra << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(one_line(r.err));
    CHECK_THAT(r.err, Catch::Contains("--out " + run) || Catch::Contains("is the run's own"));
  }
  CHECK(slurp(run + "/model.json") == model);
  CHECK(slurp(run + "/summary.json") == summary);
  CHECK_FALSE(fs::exists(run + "/model.gpu.json"));
  // A data CSV that sits in the folder under a name the run writes.
  fs::copy_file(std::string(NNTRAIN_SOURCE_DIR) + "/data/sine2d.csv", run + "/metrics.csv",
                fs::copy_options::overwrite_existing);
  const std::string data = slurp(run + "/metrics.csv");
  auto r = run_nntrain("--config configs/csv_example.json --epochs 1 --quiet --device cpu --out " + run + " data.csv=" +
                       fs::absolute(run + "/metrics.csv").string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("metrics.csv is data.csv"));
  CHECK(slurp(run + "/metrics.csv") == data);
  // A folder where the run writes its summary: refused before training, nothing written.
  fs::remove(run + "/metrics.csv");
  fs::remove(run + "/summary.json");
  fs::create_directory(run + "/summary.json");
  r = run_nntrain(common);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("summary.json is not a regular file"));
  CHECK_FALSE(fs::exists(run + "/metrics.csv"));
  fs::remove_all(dir);
}

TEST_CASE("a reused --out keeps no model or surface of a device this run did not train", "[outputs][cli]") {
  const std::string dir = fresh_dir("out_stale");
  fs::create_directories(dir);
  for (const char* f : {"model.gpu.json", "surface.gpu.csv", "model.cpu.json"}) std::ofstream(dir + "/" + f) << "stale\n";
  const auto r = run_nntrain("--config configs/peaks.json --epochs 2 --quiet --device cpu data.grid=5 --write-surface 3 "
                             "--out " + dir);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(dir + "/model.json"));
  CHECK(fs::exists(dir + "/surface.cpu.csv"));
  for (const char* f : {"model.gpu.json", "surface.gpu.csv", "model.cpu.json"}) {
    INFO(f);
    CHECK_FALSE(fs::exists(dir + "/" + f));
  }
  fs::remove_all(dir);
}

TEST_CASE("a run's config.resolved.json reruns as it is, its CSV found from any folder", "[outputs][cli]") {
  const std::string dir = fresh_dir("out_rerun");
  const std::string common = " --quiet --device cpu train.epochs=3 timing.warmup_epochs=0 --out ";
  auto r = run_nntrain("--config configs/csv_example.json" + common + dir + "/a");
  REQUIRE(r.exit_code == 0);
  const auto resolved = nlohmann::json::parse(slurp(dir + "/a/config.resolved.json"));
  CHECK(resolved["nntrain"].is_object());
  CHECK(fs::path(resolved["data"]["csv"].get<std::string>()).is_absolute());
  r = run_nntrain("--config " + dir + "/a/config.resolved.json" + common + dir + "/b");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(dir + "/a/metrics.csv") == slurp(dir + "/b/metrics.csv"));
  r = run_nntrain("--config configs/peaks.json --epochs 1 --quiet nntrain=3 --out " + dir + "/c");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("config /nntrain: must be an object"));
  fs::remove_all(dir);
}

TEST_CASE("an output name longer than a file system holds is exit 2 before the run, not exit 1 after it",
          "[outputs][cli]") {
  const std::string dir = fresh_dir("out_long");
  fs::create_directories(dir);
  const std::string common = "--config configs/peaks.json --epochs 1 --quiet --device cpu data.grid=5 --out ";
  const std::string long_name(300, 'x');
  auto r = run_nntrain(common + dir + "/" + long_name);
  CHECK(r.exit_code == 2);
  CHECK(one_line(r.err));
  CHECK_THAT(r.err, Catch::Contains("is 300 bytes, longer than a file name may be (255)"));
  r = run_nntrain(common + dir + "/run --save-model " + dir + "/" + long_name + ".json");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("nntrain: error: --save-model") && Catch::Contains("is 305 bytes"));
  CHECK_FALSE(fs::exists(dir + "/run"));
  fs::remove_all(dir);
}
