// gpu.hpp — what core needs from the CUDA backend, with no CUDA types.
//
// Implemented in kernels/ when the build has CUDA, and by core/gpu_absent.cpp otherwise
// (which reports "this binary was built without CUDA").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend.hpp"

namespace nntrain {

struct GpuInfo {
  bool built_with_cuda = false;
  bool available = false;
  std::string reason;  // why not available (the driver's words)
  std::string name;
  size_t total_memory = 0;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int driver_version = 0;   // as cudaDriverGetVersion: 1000*major + 10*minor
  int runtime_version = 0;  // as cudaRuntimeGetVersion
  int cublas_version = 0;   // as cublasGetVersion
  std::string compiled_archs;  // e.g. "75;90"
};

// Never throws: an unusable GPU comes back with available = false and the reason.
GpuInfo query_gpu();

// Why `gpu_path` ("auto", "fused", "cublas") cannot train `spec` on this machine's GPU, or ""
// when it can: lets `train` refuse `--gpu-path fused` for a net too large for the fused
// kernel before it writes anything. Call only when query_gpu() says available.
std::string gpu_path_problem(const ModelSpec& spec, const std::string& gpu_path);

// Throws DeviceUnavailable ("no CUDA device: <reason>", "this binary was built without CUDA").
std::unique_ptr<Backend> make_gpu_backend(const Dataset& data, const BackendOptions& opt);

}  // namespace nntrain
