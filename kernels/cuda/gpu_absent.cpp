// gpu_absent.cpp — the GPU entry points of a CPU-only build: they say so, honestly.
#include "errors.hpp"
#include "fused_limits.hpp"
#include "gpu_backend.hpp"

namespace nntrain {

GpuInfo query_gpu() {
  GpuInfo g;
  g.reason = "this binary was built without CUDA";
  return g;
}

// The fused kernel's shape limits hold in every build, so a CPU-only build refuses the same
// configs as a CUDA one (before it would refuse the device).
std::string gpu_path_problem(const ModelSpec& spec, GpuPath gpu_path) {
  if (gpu_path != GpuPath::fused) return "";
  const std::string why = cuda::fused_shape_problem(spec.widths);
  return why.empty() ? "" : "this network does not fit the fused kernel: " + why;
}

std::unique_ptr<Backend> make_gpu_backend(const Dataset&, const BackendOptions&) {
  throw DeviceUnavailable("this binary was built without CUDA (rebuild with nvcc on PATH)");
}

std::unique_ptr<Backend> make_gpu_backend(const Dataset& data, const BackendOptions& opt, int) {
  return make_gpu_backend(data, opt);
}

}  // namespace nntrain
