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

// Throws DeviceUnavailable ("no CUDA device: <reason>", "this binary was built without CUDA").
std::unique_ptr<Backend> make_gpu_backend(const Dataset& data, const BackendOptions& opt);

}  // namespace nntrain
