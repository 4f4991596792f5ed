// gpu_entry.cpp — placeholder entry points until the CUDA backend lands (see issue 3):
// a CUDA build that cannot yet train on the GPU says so instead of pretending.
#include "errors.hpp"
#include "gpu.hpp"

namespace nntrain {

GpuInfo query_gpu() {
  GpuInfo g;
  g.built_with_cuda = false;
  g.reason = "the CUDA backend is not implemented in this build yet";
  return g;
}

std::unique_ptr<Backend> make_gpu_backend(const Dataset&, const BackendOptions&) {
  throw DeviceUnavailable("the CUDA backend is not implemented in this build yet");
}

}  // namespace nntrain
