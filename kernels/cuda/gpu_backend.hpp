// gpu_backend.hpp — the CUDA backend's public face, with no CUDA types: what app/ needs to
// query the GPU and to register the backend.
//
// Implemented by gpu_info.cpp and gpu_backend.cpp when the build has CUDA, and by
// gpu_absent.cpp otherwise (which reports "this binary was built without CUDA").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend.hpp"
#include "gpu_info.hpp"

namespace nntrain {

// Never throws: an unusable GPU comes back with available = false and the reason.
GpuInfo query_gpu();

// Why `gpu_path` cannot train `spec` on this machine's GPU, or "" when it can: lets `train`
// and `bench` refuse `--gpu-path fused` for a net too large for the fused kernel before
// anything runs or is written.
std::string gpu_path_problem(const ModelSpec& spec, GpuPath gpu_path);

// Epochs of at most this many steps are replayed from CUDA graphs; longer ones (small
// mini-batches of big data) are launched step by step.
constexpr int kMaxGraphSteps = 256;

// Throws DeviceUnavailable ("no CUDA device: <reason>", "this binary was built without CUDA").
std::unique_ptr<Backend> make_gpu_backend(const Dataset& data, const BackendOptions& opt);
// The same with another graph limit, for the [gpu] tests: 0 launches every step without a
// graph, so graph replay can be compared with direct launches on the same trajectory.
std::unique_ptr<Backend> make_gpu_backend(const Dataset& data, const BackendOptions& opt, int max_graph_steps);

}  // namespace nntrain
