// gpu_absent.cpp — the GPU entry points of a CPU-only build: they say so, honestly.
#include "errors.hpp"
#include "gpu.hpp"

namespace nntrain {

GpuInfo query_gpu() {
  GpuInfo g;
  g.reason = "this binary was built without CUDA";
  return g;
}

std::string gpu_path_problem(const ModelSpec&, const std::string&) { return ""; }

std::unique_ptr<Backend> make_gpu_backend(const Dataset&, const BackendOptions&) {
  throw DeviceUnavailable("this binary was built without CUDA (rebuild with nvcc on PATH)");
}

}  // namespace nntrain
