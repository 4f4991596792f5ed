// proc_util.hpp — start a program without a shell, signal it, wait for it with a time limit.
// For the tests that interrupt or kill nntrain (and the atomic-write helper) mid-run.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace testutil {

// fork + execv of argv[0] in `cwd`, stdout/stderr to the given files, stdin from /dev/null.
// Signal dispositions are reset to the default in the child: a test run from a background
// shell job inherits SIGINT ignored, and exec would keep that.
inline pid_t spawn(const std::vector<std::string>& argv, const std::string& cwd, const std::string& out_file,
                   const std::string& err_file) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;  // parent (or -1)
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGHUP, SIG_DFL);  // (nohup)
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
  const int in = ::open("/dev/null", O_RDONLY);
  const int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in < 0 || out < 0 || err < 0) ::_exit(126);
  ::dup2(in, 0);
  ::dup2(out, 1);
  ::dup2(err, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execv(args[0], args.data());
  ::_exit(127);
}

// The exit status, 256 + the signal number when a signal killed it (so a process that
// died of SIGINT is not mistaken for one that exited 130), or -1 if it was still running
// after `timeout_s` (it is then SIGKILLed and reaped).
inline int wait_exit(pid_t pid, double timeout_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (true) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 256 + WTERMSIG(status);
    if (r < 0) return -2;
    if (std::chrono::steady_clock::now() > until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// SIGKILLs every process whose command line mentions `text` (a test's unique folder): a test that starts processes that may outlive it (a sweep's
// points, orphaned when the bug under test kills their launcher) leaves none running.
inline void kill_processes_mentioning(const std::string& text) {
  DIR* proc = ::opendir("/proc");
  if (!proc) return;
  while (const dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == long(::getpid())) continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmd.find(text) != std::string::npos) ::kill(pid_t(pid), SIGKILL);
  }
  ::closedir(proc);
}

// Calls kill_processes_mentioning(text) when it leaves scope, a failed REQUIRE included.
struct KillOnExit {
  std::string text;
  ~KillOnExit() { kill_processes_mentioning(text); }
};

// Polls `pred` every 10 ms for up to `timeout_s`; true once it holds.
template <class Pred>
bool wait_until(Pred pred, double timeout_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

}  // namespace testutil
