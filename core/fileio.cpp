// fileio.cpp — see fileio.hpp.
#include "fileio.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
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

void write_file_atomic(const std::string& path, const std::string& content) {
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
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
