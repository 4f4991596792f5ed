// backend.cpp — choosing a backend for a device, and the batch plan every backend shares.
#include "backend.hpp"

#include "cpu_fast.hpp"
#include "cpu_reference.hpp"
#include "errors.hpp"
#include "gpu.hpp"

namespace nntrain {

BatchPlan make_batch_plan(int n, int batch_size, bool shuffle) {
  BatchPlan p;
  p.n = n;
  p.batch = batch_size <= 0 || batch_size >= n ? n : batch_size;
  p.batches = (n + p.batch - 1) / p.batch;
  // A full batch needs no shuffle: the gradient is the same sum in any order.
  p.shuffle = shuffle && p.batches > 1;
  return p;
}

std::unique_ptr<Backend> make_backend(const std::string& device, const std::string& cpu_backend,
                                      const Dataset& data, const BackendOptions& opt) {
  if (device == "gpu") return make_gpu_backend(data, opt);
  if (device != "cpu") throw UsageError("unknown device \"" + device + "\"");
  if (cpu_backend == "reference") return make_cpu_reference_backend(data, opt);
  if (cpu_backend == "fast") return make_cpu_fast_backend(data, opt);
  throw UsageError("unknown CPU backend \"" + cpu_backend + "\" (fast or reference)");
}

}  // namespace nntrain
