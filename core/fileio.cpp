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
  // Read into a string sized once where the size is known (a stream's buffer grows by
  // doubling and is then copied: ~3x a large CSV at the peak); a pipe or FIFO has no size.
  std::string text;
  const auto size = fs::is_regular_file(path, ec) ? fs::file_size(path, ec) : std::uintmax_t(0);
  if (!ec && size > 0) {
    text.resize(size_t(size));
    in.read(text.data(), std::streamsize(size));
    text.resize(size_t(in.gcount()));
    if (in.bad()) throw UsageError("cannot read " + what + " " + path + ": " + std::strerror(errno));
    in.clear();  // eof if it shrank while read
  }
  std::ostringstream rest;  // what grew since, or a file without a size
  rest << in.rdbuf();
  if (in.bad()) throw UsageError("cannot read " + what + " " + path + ": " + std::strerror(errno));
  text += rest.str();
  return text;
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

// What a non-regular file is, for messages ("a character device"); "" for a regular file.
std::string kind_of(mode_t m) {
  if (S_ISREG(m)) return "";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

// "", or why `path` (followed through links) cannot be replaced by a result file.
std::string non_regular_target(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";  // absent (or a dangling link): created
  const std::string kind = kind_of(st.st_mode);
  return kind.empty() ? "" : "is " + kind + ", not a regular file";
}

// `path` as messages name it: with the file a link resolves to, when it is one.
std::string shown_target(const std::string& path, const std::string& real) {
  return real == path ? path : path + " (a link to " + real + ")";
}

}  // namespace

std::string resolve_output_path(const std::string& path) {
  fs::path p(path);
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    if (hops == 40) throw IoError("cannot write " + path + ": too many levels of symbolic links");
    std::vector<char> buf(size_t(st.st_size > 0 ? st.st_size : 4095) + 1);
    const ssize_t n = ::readlink(p.c_str(), buf.data(), buf.size());
    if (n < 0 || size_t(n) >= buf.size())
      throw IoError("cannot write " + path + ": cannot read the link " + p.string());
    const fs::path to(std::string(buf.data(), size_t(n)));
    p = to.is_absolute() ? to : (p.has_parent_path() ? p.parent_path() : fs::path(".")) / to;
  }
  // A link the kernel resolves by itself (/proc/self/fd/N: a pipe, a deleted file) names no
  // path a rename could replace: the chain must end at the very file the path opens.
  struct stat via {}, at {};
  if (::stat(path.c_str(), &via) == 0 &&
      (::stat(p.c_str(), &at) != 0 || via.st_dev != at.st_dev || via.st_ino != at.st_ino))
    throw IoError("cannot write " + path + ": it is a link (to " + p.string() + ") that names no replaceable file");
  return p.string();
}

void write_file_atomic(const std::string& path, const std::string& content) {
  if (!fs::path(path).has_filename()) throw IoError("cannot write " + path + ": not a file name");
  if (const std::string why = non_regular_target(path); !why.empty())
    throw IoError("cannot write " + path + ": " + why);
  const std::string real = resolve_output_path(path);
  const std::string what = shown_target(path, real);
  const fs::path target(real);
  if (!target.has_filename()) throw IoError("cannot write " + what + ": not a file name");
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmpl = (dir / (temp_prefix(target) + std::to_string(::getpid()) + ".XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw IoError("cannot write " + what + ": " + std::strerror(errno));
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(tmpl.c_str());
      throw IoError("cannot write " + what + ": " + std::strerror(err));
    }
    p += n;
    left -= size_t(n);
  }
  // mkstemp creates 0600; results are ordinary files.
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw IoError("cannot write " + what + ": " + std::strerror(err));
  }
  if (::rename(tmpl.c_str(), real.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw IoError("cannot write " + what + ": " + std::strerror(err));
  }
  // The rename is durable once the directory entry is on disk.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  remove_stale_temps(dir, target);
}

void write_output(const std::string& path, const std::string& content) {
  if (path != "-") return write_file_atomic(path, content);
  if (std::fwrite(content.data(), 1, content.size(), stdout) != content.size() || std::fflush(stdout) != 0)
    throw IoError(std::string("cannot write to stdout: ") + std::strerror(errno));
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

namespace {

// A name longer than a file system holds (255 bytes) fails only when it is created, after the
// run: the message names the first such part of the path, shortened.
void check_name_lengths(const std::string& path, const std::string& what) {
  for (const fs::path& part : fs::path(path)) {
    const std::string& name = part.native();
    if (name.size() > 255)
      throw UsageError(what + ": the name \"" + name.substr(0, 24) + "...\" is " + std::to_string(name.size()) +
                       " bytes, longer than a file name may be (255)");
  }
}

}  // namespace

void check_output_location(const std::string& dir) {
  check_name_lengths(dir, "output path " + dir.substr(0, 64) + (dir.size() > 64 ? "..." : ""));
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

void check_output_file(const std::string& file, const std::string& option, bool stdout_ok) {
  // Nothing creates an output file's folder (only --out's and output.dir's), so it must
  // exist now: otherwise the run would train first and fail at the end, its result lost.
  if (file.empty()) throw UsageError(option + ": the file name is empty");
  if (file == "-") {
    if (stdout_ok) return;
    throw UsageError(option + " -: this option writes a file, not stdout (./- names a file called -)");
  }
  check_name_lengths(file, option + " " + file.substr(0, 64) + (file.size() > 64 ? "..." : ""));
  const fs::path p(file);
  std::error_code ec;
  if (!p.has_filename() || fs::is_directory(p, ec))
    throw UsageError(option + " " + file + ": is a directory; give a file name inside it");
  if (const std::string why = non_regular_target(file); !why.empty())
    throw UsageError(option + " " + file + ": " + why + (stdout_ok ? " (- writes to stdout)" : ""));
  std::string real;
  try {
    real = resolve_output_path(file);
  } catch (const IoError& e) {
    throw UsageError(option + " " + std::string(e.what()).substr(std::string("cannot write ").size()));
  }
  const fs::path target(real);
  const std::string what = option + " " + shown_target(file, real);
  if (!target.has_filename()) throw UsageError(what + ": is a directory; give a file name inside it");
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec))
    throw UsageError(what + ": folder " + parent.string() +
                     (fs::exists(parent, ec) ? " is not a directory" : " does not exist"));
  if (::access(parent.c_str(), W_OK) != 0) throw UsageError(what + ": folder " + parent.string() + " is not writable");
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat x {}, y {};
  if (::stat(a.c_str(), &x) == 0 && ::stat(b.c_str(), &y) == 0) return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
  std::error_code ea, eb;
  const fs::path pa = fs::weakly_canonical(a, ea), pb = fs::weakly_canonical(b, eb);
  return !ea && !eb && pa == pb;
}

void check_output_not_input(const std::string& file, const std::string& option,
                            const std::vector<std::pair<std::string, std::string>>& inputs) {
  struct stat out {};
  if (file == "-" || ::stat(file.c_str(), &out) != 0) return;  // a new file is no input
  for (const auto& [in_option, in_path] : inputs) {
    if (same_file(file, in_path))
      throw UsageError(option + " " + file + " is the same file as " + in_option + " " + in_path +
                       ": writing it would overwrite the input; choose another output file");
  }
}

}  // namespace nntrain
