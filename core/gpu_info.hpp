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

// What the CUDA probe saw when no device could be used, as plain data, so the wording of
// the reason is decided here (and tested in a CPU-only build too).
enum class GpuProbeFailure {
  insufficient_driver,  // cudaErrorInsufficientDriver: no driver at all, or one too old
  no_device,            // cudaErrorNoDevice, or a device count of 0
  other,                // any other error: the driver's own words are all there is
};

// The reason in the user's words: what is missing, not the runtime's error string.
// `libcuda_loadable`: dlopen("libcuda.so.1") succeeds; versions as cudaDriverGetVersion
// (0 when there is no driver) and cudaRuntimeGetVersion; `visible` the value of
// CUDA_VISIBLE_DEVICES (nullptr when unset); `driver_words` cudaGetErrorString's text.
inline std::string describe_gpu_failure(GpuProbeFailure failure, bool libcuda_loadable, int driver_version,
                                        int runtime_version, const char* visible, const std::string& driver_words) {
  const auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  switch (failure) {
    case GpuProbeFailure::insufficient_driver:
      if (!libcuda_loadable) return "no NVIDIA driver found (libcuda.so.1 not loadable)";
      if (driver_version > 0 && runtime_version > 0)
        return "the NVIDIA driver supports CUDA " + version(driver_version) + ", this build needs " +
               version(runtime_version) + " (update the driver, or rebuild with an older CUDA toolkit)";
      return "the NVIDIA driver is too old for this build's CUDA runtime";
    case GpuProbeFailure::no_device:
      if (visible != nullptr)
        return "no CUDA device (CUDA_VISIBLE_DEVICES is \"" + std::string(visible) + "\", which may hide them)";
      return "no CUDA device (the NVIDIA driver is loaded but finds no GPU)";
    case GpuProbeFailure::other: break;
  }
  return "no usable CUDA device: " + driver_words;
}

// GPGPU-Sim names its device "GPGPU-Sim_v<version>" (cudaGetDeviceProperties).
inline bool is_simulator_name(const std::string& device_name) { return device_name.rfind("GPGPU-Sim", 0) == 0; }

}  // namespace nntrain
