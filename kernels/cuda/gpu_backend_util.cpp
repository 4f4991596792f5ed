// gpu_backend_util.cpp — see gpu_backend_util.hpp.
#include "gpu_backend_util.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "errors.hpp"
#include "fused_v2.hpp"

namespace nntrain::cuda {

ResidentPlan plan_resident_for(const ModelSpec& spec, int batch, int chunk_epochs, int steps_per_epoch, bool knobs) {
  ResidentPlan plan = plan_resident(spec.widths, activations_of(spec), batch, shared_optin(),
                                    knobs ? resident_grid_blocks_from_env() : 0);
  if (knobs && plan.grid && plan.exact) plan.force_threads = resident_grid_threads_from_env();
  const size_t chunk_steps = size_t(std::max(1, chunk_epochs)) * size_t(steps_per_epoch);
  if (plan.fits && chunk_steps > size_t(std::numeric_limits<int>::max())) {
    plan.fits = false;
    plan.why = "a chunk of " + std::to_string(chunk_epochs) + " epochs is " + std::to_string(chunk_steps) +
               " steps, more than one launch counts (2147483647); lower gpu.chunk_epochs";
  }
  return plan;
}

std::vector<Activation> activations_of(const ModelSpec& spec) {
  std::vector<Activation> acts;
  for (int l = 0; l < spec.layers(); ++l) acts.push_back(spec.activation(l));
  return acts;
}

size_t shared_optin() {
  int optin = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  return size_t(optin);
}

int exact_threads_from_env() {
  const char* e = std::getenv("NNTRAIN_FUSED_V2_THREADS");
  if (e == nullptr || *e == '\0') return kV2ExactThreadsDefault;
  const std::string v = e;
  if (v == "2" || v == "4") return std::stoi(v);
  throw UsageError("NNTRAIN_FUSED_V2_THREADS: expected 2 or 4, got '" + v + "'");
}

bool pdl_from_env() {
  const char* e = std::getenv("NNTRAIN_GPU_PDL");
  if (e == nullptr || *e == '\0') return true;
  const std::string v = e;
  if (v == "0" || v == "1") return v == "1";
  throw UsageError("NNTRAIN_GPU_PDL: expected 0 or 1, got '" + v + "'");
}

// cuGraphGetNodes and cuGraphNodeGetType are looked up at run time in the already loaded
// libcuda, so that nothing breaks where it is absent.
long count_kernel_nodes(cudaGraph_t g) {
  using GetNodes = int (*)(void*, void**, size_t*);
  using GetType = int (*)(void*, int*);
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) return -1;
  auto get_nodes = reinterpret_cast<GetNodes>(dlsym(lib, "cuGraphGetNodes"));
  auto get_type = reinterpret_cast<GetType>(dlsym(lib, "cuGraphNodeGetType"));
  long kernels = -1;
  size_t n = 0;
  if (get_nodes && get_type && get_nodes(g, nullptr, &n) == 0) {
    std::vector<void*> nodes(n);
    if (get_nodes(g, nodes.data(), &n) == 0) {
      kernels = 0;
      for (void* node : nodes) {
        int type = -1;
        if (get_type(node, &type) == 0 && type == 0) ++kernels;  // CU_GRAPH_NODE_TYPE_KERNEL
      }
    }
  }
  dlclose(lib);
  return kernels;
}

}  // namespace nntrain::cuda
