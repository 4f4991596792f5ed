// gpu_info.cpp — query_gpu(): what `nntrain info` and `--device gpu` need to know about the
// GPU, never throwing. An unusable GPU comes back with what is missing (core/gpu_info.hpp
// describe_gpu_failure), not the runtime's "CUDA driver version is insufficient for CUDA
// runtime version", which is also what a machine with no driver at all gets.
#include <cublas_api.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "gpu_backend.hpp"

namespace nntrain {

namespace {

int cublas_version_number() {
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS) return 0;
  if (cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS) return 0;
  if (cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS) return 0;
  return major * 10000 + minor * 100 + patch;  // cublasGetVersion's encoding
}

// The runtime loads the driver library itself; asking the loader the same tells "no driver
// installed" from "a driver too old" (both are cudaErrorInsufficientDriver).
bool libcuda_loadable() {
  void* h = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (h == nullptr) return false;
  ::dlclose(h);
  return true;
}

std::string failure_reason(cudaError_t e, const GpuInfo& g) {
  const GpuProbeFailure f = e == cudaErrorInsufficientDriver ? GpuProbeFailure::insufficient_driver
                            : e == cudaErrorNoDevice         ? GpuProbeFailure::no_device
                                                             : GpuProbeFailure::other;
  return describe_gpu_failure(f, f == GpuProbeFailure::insufficient_driver && libcuda_loadable(), g.driver_version,
                              g.runtime_version, std::getenv("CUDA_VISIBLE_DEVICES"), cudaGetErrorString(e));
}

}  // namespace

GpuInfo query_gpu() {
  GpuInfo g;
  g.built_with_cuda = true;
  g.compiled_archs = NNTRAIN_CUDA_ARCHS;
  g.cublas_version = cublas_version_number();
  if (cudaRuntimeGetVersion(&g.runtime_version) != cudaSuccess) g.runtime_version = 0;
  if (cudaDriverGetVersion(&g.driver_version) != cudaSuccess) g.driver_version = 0;

  // For tests of the no-GPU paths on a machine that has one.
  const char* fake = std::getenv("NNTRAIN_FAKE_NO_GPU");
  if (fake && std::strcmp(fake, "1") == 0) {
    g.reason = "NNTRAIN_FAKE_NO_GPU=1 is set (treating the machine as having no GPU)";
    return g;
  }

  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    g.reason = failure_reason(e == cudaSuccess ? cudaErrorNoDevice : e, g);
    (void)cudaGetLastError();
    return g;
  }
  cudaDeviceProp prop;
  const cudaError_t pe = cudaGetDeviceProperties(&prop, 0);
  if (pe != cudaSuccess) {
    g.reason = cudaGetErrorString(pe);
    (void)cudaGetLastError();
    return g;
  }
  g.name = prop.name;
  // GPGPU-Sim's name ends in a space ("GPGPU-Sim_v… Version 4.2.0 "): not part of the name.
  while (!g.name.empty() && g.name.back() == ' ') g.name.pop_back();
  g.simulated = is_simulator_name(g.name);
  g.total_memory = prop.totalGlobalMem;
  g.cc_major = prop.major;
  g.cc_minor = prop.minor;
  g.sm_count = prop.multiProcessorCount;
  // The build embeds machine code and PTX for NNTRAIN_CUDA_ARCHS; the driver can JIT the PTX
  // for newer GPUs but nothing runs on one older than the oldest arch.
  if (prop.major * 10 + prop.minor < NNTRAIN_CUDA_MIN_ARCH) {
    g.reason = std::string(prop.name) + " has compute capability " + std::to_string(prop.major) + "." +
               std::to_string(prop.minor) + ", older than this build's oldest architecture (" +
               std::to_string(NNTRAIN_CUDA_MIN_ARCH) + ")";
    return g;
  }
  g.available = true;
  return g;
}

}  // namespace nntrain
