// sysinfo.cpp — see sysinfo.hpp.
#include "sysinfo.hpp"

#include <fmt/format.h>

#include <ctime>
#include <fstream>
#ifdef __linux__
#include <sched.h>
#endif
#include <thread>

#include "build_info.hpp"
#include "gpu_info.hpp"

namespace nntrain {

const BuildInfo& build_info() {
  static const BuildInfo b = [] {
    BuildInfo i;
    i.version = NNTRAIN_VERSION;
    i.git_revision = nntrain_git_revision();
    i.build_type = NNTRAIN_BUILD_TYPE;
#if defined(__OPTIMIZE__)
    i.optimized = true;
#else
    i.optimized = false;
#endif
#if defined(__clang__)
    i.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
    i.compiler = "gcc " __VERSION__;
#else
    i.compiler = "unknown";
#endif
    i.cuda = NNTRAIN_CUDA_DESCRIPTION;
    i.blas = NNTRAIN_BLAS_DESCRIPTION;
    return i;
  }();
  return b;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto c = line.find(':');
      if (c != std::string::npos) return line.substr(line.find_first_not_of(" \t", c + 1));
    }
  }
  return "unknown CPU";
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

int hardware_threads() {
#ifdef __linux__
  // The CPUs this process may run on (taskset, cgroup cpusets), not all the machine has:
  // a spinning pool with more threads than usable cores loses most of its time.
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
  const unsigned n = std::thread::hardware_concurrency();
  return n ? int(n) : 1;
}

std::string cpu_simd() {
  std::string s;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) s += "avx512f ";
  if (__builtin_cpu_supports("avx2")) s += "avx2 ";
  if (__builtin_cpu_supports("fma")) s += "fma ";
  if (__builtin_cpu_supports("sse4.2")) s += "sse4.2 ";
#endif
  if (!s.empty()) s.pop_back();
  return s.empty() ? "none detected" : s;
}

double load_average() {
  std::ifstream f("/proc/loadavg");
  double load = -1;
  if (!(f >> load)) return -1;
  return load;
}

std::string load_average_note(double load) {
  return load >= 0 ? fmt::format(", load average {:.2f}", load) : std::string();
}

std::string cuda_version_string(int v) {
  return v ? fmt::format("{}.{}", v / 1000, (v % 1000) / 10) : std::string("-");
}

std::string cublas_version_string(int v) {
  return v ? fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100) : std::string("-");
}

nlohmann::json context_json(const GpuInfo* gpu) {
  const BuildInfo& b = build_info();
  nlohmann::json j;
  j["nntrain_version"] = b.version;
  j["git_revision"] = b.git_revision;
  j["build_type"] = b.build_type;
  j["optimized"] = b.optimized;
  j["compiler"] = b.compiler;
  j["cuda_build"] = b.cuda;
  j["blas"] = b.blas;
  j["precision"] = "fp32";
  j["cpu_model"] = cpu_model();
  j["hardware_threads"] = hardware_threads();
  j["cpu_simd"] = cpu_simd();
  if (const double load = load_average(); load >= 0) j["load_average_1min"] = load;
  if (gpu) {
    const GpuInfo& g = *gpu;
    nlohmann::json gj;
    gj["available"] = g.available;
    if (!g.available) gj["reason"] = g.reason;
    if (g.available) {
      gj["name"] = g.name;
      gj["memory_bytes"] = g.total_memory;
      gj["compute_capability"] = std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor);
      gj["sm_count"] = g.sm_count;
      gj["simulated"] = g.simulated;
    }
    if (g.driver_version) gj["driver_version"] = g.driver_version;
    if (g.runtime_version) gj["runtime_version"] = g.runtime_version;
    if (g.cublas_version) gj["cublas_version"] = g.cublas_version;
    if (!g.compiled_archs.empty()) gj["compiled_archs"] = g.compiled_archs;
    j["gpu"] = gj;
  }
  return j;
}

}  // namespace nntrain
