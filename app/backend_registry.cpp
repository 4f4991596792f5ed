// backend_registry.cpp — see backend_registry.hpp.
#include "backend_registry.hpp"

#include "cpu_fast.hpp"
#include "cpu_reference.hpp"
#include "gpu_backend.hpp"

namespace nntrain {

namespace {
std::unique_ptr<Backend> make_fast(const Dataset& data, const BackendOptions& opt) {
  return make_cpu_fast_backend(data, opt);
}
}  // namespace

const BackendRegistry& backend_registry() {
  static const BackendRegistry kRegistry = {
      {Device::cpu, to_string(CpuBackendKind::fast), make_fast},
      {Device::cpu, to_string(CpuBackendKind::reference), make_cpu_reference_backend},
      {Device::gpu, "cuda", make_gpu_backend},
  };
  return kRegistry;
}

}  // namespace nntrain
