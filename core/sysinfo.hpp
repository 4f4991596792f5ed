// sysinfo.hpp — what machine and what build produced a number (for every report).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace nntrain {

struct BuildInfo {
  std::string version;     // nntrain version
  std::string git_revision;  // at build time; "-dirty" if the tree had changes
  std::string build_type;  // CMAKE_BUILD_TYPE
  bool optimized;          // built with optimisation
  std::string compiler;
  std::string cuda;        // "CUDA 13.0, archs 75;90" or "without CUDA"
  std::string blas;        // BLAS used by the fast CPU backend, or "none"
};
const BuildInfo& build_info();

std::string cpu_model();
// Hardware threads this process may use (its CPU affinity mask: taskset, cpusets).
int hardware_threads();
std::string cpu_simd();
// The 1-minute load average (/proc/loadavg) when asked, or -1 where unknown. Recorded with
// every measurement: other work on the machine inflates CPU timings (a spinning thread pool
// that shares a core with another process loses most), and a reader should see that.
double load_average();
// Now, UTC, as "2026-11-24T19:16:20Z" (dates in exports and sweep records).
std::string utc_now();
// ", load average 1.23" for a report line, or "" where unknown.
std::string load_average_note(double load);  // e.g. "avx512f avx2 fma"

// Version numbers as the CUDA APIs encode them, for people: cudaDriverGetVersion /
// cudaRuntimeGetVersion give 1000·major + 10·minor ("13.0"), cublasGetVersion gives
// 10000·major + 100·minor + patch ("13.1.0"); 0 (unknown) gives "-".
std::string cuda_version_string(int v);
std::string cublas_version_string(int v);

// Context of a measurement: machine, build and, when given, the GPU (the caller queried it:
// core links no CUDA).
struct GpuInfo;
nlohmann::json context_json(const GpuInfo* gpu);

}  // namespace nntrain
