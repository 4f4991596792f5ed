// gpu_backend_util.hpp — the GPU backend's small host helpers: its diagnostic environment
// variables, the resident path's plan and the driver's count of a graph's kernel nodes.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "mlp.hpp"
#include "resident.hpp"

namespace nntrain::cuda {

// NNTRAIN_FUSED_V2_THREADS=2 or 4 (default 4): threads per sample of the exact-shape v2
// kernel, a diagnostic for comparing the two on a GPU (docs/GPU.md). Anything else: UsageError.
int exact_threads_from_env();

// NNTRAIN_GPU_PDL=0 turns programmatic dependent launch off (default on where the device has
// it, compute capability 9.0 and later): a diagnostic, for timing the two side by side.
bool pdl_from_env();

// Each layer's activation, in order (the launchers' plans take them as a list).
std::vector<Activation> activations_of(const ModelSpec& spec);

// Device 0's opt-in shared memory per block (bytes).
size_t shared_optin();

// The resident path's plan on device 0 for batches of `batch` and chunks of `chunk_epochs`
// epochs of `steps_per_epoch` steps. `knobs` (the path asked for by name) applies its test
// knobs; auto plans it as it is, so a bad knob fails only the path it would change. A chunk
// of more steps than its kernels count (int) does not fit.
ResidentPlan plan_resident_for(const ModelSpec& spec, int batch, int chunk_epochs, int steps_per_epoch, bool knobs);

// Kernel nodes of a captured graph, counted by the driver; -1 where the driver API is not
// there (GPGPU-Sim).
long count_kernel_nodes(cudaGraph_t g);

}  // namespace nntrain::cuda
