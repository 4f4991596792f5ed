// backend.cpp — finding and asking a backend in the registry, and the batch plan every backend shares.
#include "backend.hpp"

#include <cstring>

#include "errors.hpp"

namespace nntrain {

int batch_samples(int batch_size, int n) { return batch_size <= 0 || batch_size >= n ? n : batch_size; }

BatchPlan make_batch_plan(int n, int batch_size, bool shuffle) {
  BatchPlan p;
  p.n = n;
  p.batch = batch_samples(batch_size, n);
  p.batches = (n + p.batch - 1) / p.batch;
  // A full batch needs no shuffle: the gradient is the same sum in any order.
  p.shuffle = shuffle && p.batches > 1;
  return p;
}

const BackendEntry& find_backend(const BackendRegistry& registry, Device device, CpuBackendKind cpu_backend) {
  for (const auto& e : registry)
    if (e.device == device && (device == Device::gpu || std::strcmp(e.name, to_string(cpu_backend)) == 0)) return e;
  throw UsageError(std::string("no ") + to_string(device) + " backend" +
                   (device == Device::cpu ? std::string(" named \"") + to_string(cpu_backend) + "\"" : std::string()) +
                   " in this build");
}

BackendProbe probe_backend(const BackendEntry& entry) { return entry.probe ? entry.probe() : BackendProbe{}; }

std::string backend_fit_problem(const BackendEntry& entry, const BackendOptions& opt) {
  return entry.fits ? entry.fits(opt) : std::string();
}

double backend_host_bytes(const BackendEntry& entry, const BackendOptions& opt, int samples) {
  return entry.host_bytes ? entry.host_bytes(opt, samples) : 0.0;
}

std::unique_ptr<Backend> make_backend(const BackendRegistry& registry, Device device, CpuBackendKind cpu_backend,
                                      const Dataset& data, const BackendOptions& opt) {
  return find_backend(registry, device, cpu_backend).make(data, opt);
}

}  // namespace nntrain
