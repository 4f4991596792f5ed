// fileio.cpp — see fileio.hpp.
#include "fileio.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "errors.hpp"

namespace nntrain {

namespace fs = std::filesystem;

std::string read_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw UsageError(what + " not found: " + path);
  if (fs::is_directory(path, ec)) throw UsageError(what + " is a directory, not a file: " + path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read " + what + " " + path + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw UsageError("cannot read " + what + " " + path + ": " + std::strerror(errno));
  return ss.str();
}

namespace {

// The temporary file of `target` written by process `pid`: hidden, next to the target (a
// rename is atomic only within one file system), and named after its writer so that a later
// write can tell a live writer's temp file from one a killed process left behind.
std::string temp_prefix(const fs::path& target) { return "." + target.filename().string() + ".tmp."; }

// Removes temp files of `target` whose writing process no longer exists (SIGKILL, power
// loss, OOM kill). A temp file of a live process — another nntrain writing the same target
// right now — is left alone; if a dead writer's pid has been reused we keep its file, which
// errs on the safe side. Best effort: failures are ignored.
void remove_stale_temps(const fs::path& dir, const fs::path& target) {
  const std::string prefix = temp_prefix(target);
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = name.substr(prefix.size());  // "<pid>.XXXXXX"
    const size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string::npos || rest.find_first_not_of("0123456789") != dot || dot > 9) continue;
    const long pid = std::strtol(rest.substr(0, dot).c_str(), nullptr, 10);
    if (pid <= 0 || pid == long(::getpid())) continue;
    if (::kill(pid_t(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code rm;
    fs::remove(it->path(), rm);
  }
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& content) {
  const fs::path target(path);
  if (!target.has_filename()) throw IoError("cannot write " + path + ": not a file name");
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmpl = (dir / (temp_prefix(target) + std::to_string(::getpid()) + ".XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw IoError("cannot write " + path + ": " + std::strerror(errno));
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(tmpl.c_str());
      throw IoError("cannot write " + path + ": " + std::strerror(err));
    }
    p += n;
    left -= size_t(n);
  }
  // mkstemp creates 0600; results are ordinary files.
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw IoError("cannot write " + path + ": " + std::strerror(err));
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw IoError("cannot write " + path + ": " + std::strerror(err));
  }
  // The rename is durable once the directory entry is on disk.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  remove_stale_temps(dir, target);
}

void ensure_directory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError("cannot create output directory " + dir + ": " + ec.message());
  if (!fs::is_directory(dir)) throw IoError("output path is not a directory: " + dir);
  if (::access(dir.c_str(), W_OK) != 0)
    throw IoError("output directory is not writable: " + dir + ": " + std::strerror(errno));
}

std::string make_numbered_run_dir(const std::string& parent) {
  ensure_directory(parent);
  for (int i = 1; i < 1000000; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "%03d", i);
    const std::string d = (fs::path(parent) / name).string();
    if (::mkdir(d.c_str(), 0755) == 0) return d;
    if (errno != EEXIST) throw IoError("cannot create run directory " + d + ": " + std::strerror(errno));
  }
  throw IoError("no free run number under " + parent);
}

void check_output_location(const std::string& dir) {
  // Walk up to the first existing ancestor; it must be a writable directory.
  fs::path p = fs::absolute(dir);
  std::error_code ec;
  while (!fs::exists(p, ec)) {
    if (!p.has_parent_path() || p.parent_path() == p) break;
    p = p.parent_path();
  }
  if (!fs::is_directory(p, ec))
    throw UsageError("output path " + dir + ": " + p.string() + " exists and is not a directory");
  if (::access(p.c_str(), W_OK) != 0)
    throw UsageError("output path " + dir + ": " + p.string() + " is not writable");
}

}  // namespace nntrain

namespace nntrain {

void check_output_file(const std::string& file, const std::string& option) {
  // Nothing creates an output file's folder (only --out's and output.dir's), so it must
  // exist now: otherwise the run would train first and fail at the end, its result lost.
  if (file.empty()) throw UsageError(option + ": the file name is empty");
  const fs::path p(file);
  std::error_code ec;
  if (!p.has_filename() || fs::is_directory(p, ec))
    throw UsageError(option + " " + file + ": is a directory; give a file name inside it");
  if (fs::exists(p, ec) && !fs::is_regular_file(p, ec))
    throw UsageError(option + " " + file + ": exists and is not a regular file");
  const fs::path parent = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec))
    throw UsageError(option + " " + file + ": folder " + parent.string() +
                     (fs::exists(parent, ec) ? " is not a directory" : " does not exist"));
  if (::access(parent.c_str(), W_OK) != 0)
    throw UsageError(option + " " + file + ": folder " + parent.string() + " is not writable");
}

}  // namespace nntrain
