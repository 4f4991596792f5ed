// backend_registry.cpp — see backend_registry.hpp. Each entry adapts its backend's public
// face in kernels/ (cpu_fast.hpp, gpu_backend.hpp) to the registry's probe / fits / make.
#include "backend_registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu_fast.hpp"
#include "cpu_reference.hpp"
#include "gpu_backend.hpp"
#include "report.hpp"
#include "sysinfo.hpp"

namespace nntrain {

namespace {

std::unique_ptr<Backend> make_fast(const Dataset& data, const BackendOptions& opt) {
  return make_cpu_fast_backend(data, opt);
}

BackendProbe probe_fast() {
  BackendProbe p;
  p.reason = fast_cpu_isa_problem();
  p.available = p.reason.empty();
  const std::vector<std::string> isas = fast_cpu_isas();
  p.info.emplace_back("cpu-fast", fmt::format("kernels {} (this CPU can run: {}), {}", isas.front(),
                                              fmt::join(isas, ", "),
                                              fast_cpu_has_blas()
                                                  ? fmt::format("OpenBLAS for layers >= {} wide", kFastBlasMinWidth)
                                                  : std::string("no BLAS (built without OpenBLAS)")));
  return p;
}

BackendProbe probe_gpu() {
  BackendProbe p;
  const GpuInfo g = query_gpu();
  p.gpu = g;
  p.available = g.available;
  p.simulated = g.simulated;
  // A CPU-only build's reason says so itself; a CUDA build's is the driver's words.
  if (!g.available) p.reason = g.built_with_cuda ? "no CUDA device: " + g.reason : g.reason;
  if (g.available)
    p.info.emplace_back("gpu", fmt::format("{}, {:.1f} GiB, compute capability {}.{}, {} SMs{}", g.name,
                                           double(g.total_memory) / (1 << 30), g.cc_major, g.cc_minor, g.sm_count,
                                           g.simulated ? std::string(" — SIMULATED: ") + kSimulatedNote
                                                       : std::string()));
  else
    p.info.emplace_back("gpu", "none: " + g.reason);
  if (g.built_with_cuda) {
    p.info.emplace_back("driver", "CUDA " + cuda_version_string(g.driver_version));
    p.info.emplace_back("runtime", "CUDA " + cuda_version_string(g.runtime_version));
    p.info.emplace_back("cublas", cublas_version_string(g.cublas_version));
    p.info.emplace_back("archs", g.compiled_archs);
  }
  return p;
}

std::string gpu_fits(const BackendOptions& opt) { return gpu_path_problem(opt.spec, opt.gpu_path); }

std::string fast_fits(const BackendOptions& opt) {
  const std::string env = fast_cpu_env_problem();
  return env.empty() ? fast_cpu_layers_problem(opt.spec) : env;
}

}  // namespace

const BackendRegistry& backend_registry() {
  static const BackendRegistry kRegistry = {
      {Device::cpu, to_string(CpuBackendKind::fast), make_fast, probe_fast, fast_fits, fast_cpu_host_bytes},
      {Device::cpu, to_string(CpuBackendKind::reference), make_cpu_reference_backend},
      {Device::gpu, "cuda", make_gpu_backend, probe_gpu, gpu_fits},
  };
  return kRegistry;
}

BackendProbe probe_device(const BackendRegistry& registry, Device device, CpuBackendKind cpu_backend) {
  return probe_backend(find_backend(registry, device, cpu_backend));
}

GpuInfo registry_gpu_info(const BackendRegistry& registry) {
  for (const auto& e : registry)
    if (e.device == Device::gpu) return probe_backend(e).gpu;
  GpuInfo g;
  g.reason = "no gpu backend in this build";
  return g;
}

std::vector<std::pair<std::string, std::string>> backend_info_lines(const BackendRegistry& registry) {
  std::vector<std::pair<std::string, std::string>> lines;
  for (const auto& e : registry) {
    const BackendProbe p = probe_backend(e);
    lines.insert(lines.end(), p.info.begin(), p.info.end());
  }
  return lines;
}

}  // namespace nntrain
