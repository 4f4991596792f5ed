// gpu_info.hpp — what is known about the machine's GPU, as plain data (no CUDA types).
//
// Filled by the CUDA backend's query_gpu() (kernels/cuda/gpu_backend.hpp); core only
// receives it (reports, context), so core links no CUDA.
#pragma once

#include <cstddef>
#include <string>

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
  // The device is GPGPU-Sim (docs/GPU.md): results are checked there, but its times are a
  // simulator's, never a measurement; reports say so and bench refuses to time it.
  bool simulated = false;
};

// GPGPU-Sim names its device "GPGPU-Sim_v<version>" (cudaGetDeviceProperties).
inline bool is_simulator_name(const std::string& device_name) { return device_name.rfind("GPGPU-Sim", 0) == 0; }

}  // namespace nntrain
