// test_atomic.cpp — write_file_atomic under SIGKILL: whatever moment the writer dies, the
// target holds a complete old or complete new content, never a torn one; the temp files a
// killed writer leaves are removed by the next successful write of that target, and a
// live writer's temp file is not.
#include <catch2/catch.hpp>

#include <random>
#include <set>

#include "atomic_content.hpp"
#include "cli_util.hpp"
#include "fileio.hpp"
#include "proc_util.hpp"

using namespace testutil;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> temp_files(const std::string& dir, const std::string& name) {
  std::vector<std::string> v;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("." + name + ".tmp.", 0) == 0) v.push_back(e.path().string());
  return v;
}

int run_writer(const std::string& path, unsigned long long gen, unsigned long long count, double timeout_s) {
  const pid_t pid = spawn({NNTRAIN_ATOMIC_WRITER, path, "4000000", std::to_string(gen), std::to_string(count)}, "",
                          "/dev/null", "/dev/null");
  return wait_exit(pid, timeout_s);
}

}  // namespace

TEST_CASE("atomic write survives SIGKILL at random moments and cleans up dead writers' temps", "[atomic]") {
  const std::string dir = fresh_dir("atomic_kill");
  fs::create_directories(dir);
  const std::string target = dir + "/data.bin";
  REQUIRE(run_writer(target, 0, 1, 60) == 0);
  REQUIRE(atomic_generation(slurp(target)) == 0);

  std::mt19937 rng(12345);
  std::set<long long> seen;
  size_t max_leftovers = 0;
  for (int i = 1; i <= 30; ++i) {
    const std::string ready = dir + "/ready.txt";
    fs::remove(ready);  // (else the last writer's "ready" lets this kill land before this one writes)
    const pid_t pid = spawn({NNTRAIN_ATOMIC_WRITER, target, "4000000", std::to_string(1000ull * i), "0"}, "", ready,
                            "/dev/null");
    REQUIRE(pid > 0);
    // Kill at a random moment after the writer starts writing (contents are built first,
    // which under sanitizers takes longer than the kill window).
    CHECK(wait_until([&] { return slurp(ready) == "ready\n"; }, 30));
    ::usleep(useconds_t(1000 + rng() % 60000));
    ::kill(pid, SIGKILL);
    REQUIRE(wait_exit(pid, 30) == 256 + SIGKILL);
    const long long gen = atomic_generation(slurp(target));
    INFO("kill " << i);
    CHECK(gen >= 0);  // complete content of some generation, never torn
    seen.insert(gen);
    max_leftovers = std::max(max_leftovers, temp_files(dir, "data.bin").size());
  }
  // The kills landed both between and in the middle of writes: new generations replaced old
  // ones, and at least one kill left a temp file behind.
  CHECK(seen.size() >= 3);
  CHECK(max_leftovers >= 1);

  // A dead writer's temp (pid of a reaped child) goes; a live process's temp (ours) stays.
  const pid_t dead = spawn({"/bin/true"}, "", "/dev/null", "/dev/null");
  REQUIRE(wait_exit(dead, 10) == 0);
  const std::string stale = write_text(dir + "/.data.bin.tmp." + std::to_string(dead) + ".abcdef", "partial");
  const std::string live = write_text(dir + "/.data.bin.tmp." + std::to_string(::getpid()) + ".ghijkl", "busy");
  const std::string other = write_text(dir + "/.other.bin.tmp." + std::to_string(dead) + ".mnopqr", "not ours");
  REQUIRE(run_writer(target, 99, 1, 60) == 0);
  CHECK(atomic_generation(slurp(target)) == 99);
  CHECK(temp_files(dir, "data.bin") == std::vector<std::string>{live});
  fs::remove(dir + "/ready.txt");
  CHECK(fs::exists(other));
  fs::remove_all(dir);
}

TEST_CASE("atomic write errors name the path and leave no temp file", "[atomic]") {
  const std::string dir = fresh_dir("atomic_err");
  fs::create_directories(dir + "/sub");
  CHECK_THROWS_WITH(nntrain::write_file_atomic(dir + "/sub", "x"), Catch::Contains(dir + "/sub"));
  CHECK_THROWS_WITH(nntrain::write_file_atomic(dir + "/missing/f.txt", "x"), Catch::Contains("missing/f.txt"));
  CHECK(temp_files(dir, "sub").empty());
  nntrain::write_file_atomic(dir + "/f.txt", "one");
  nntrain::write_file_atomic(dir + "/f.txt", "two");
  CHECK(slurp(dir + "/f.txt") == "two");
  CHECK(fs::status(dir + "/f.txt").permissions() == (fs::perms::owner_read | fs::perms::owner_write |
                                                     fs::perms::group_read | fs::perms::others_read));
  fs::remove_all(dir);
}
