// backend_registry.hpp — which implementation trains which device: the one place above
// core that names the backends in kernels/ (scripts/check_registry.sh keeps it so). The rest
// of app/ reaches a device only through this table: its probe (usable here? why not? what
// `info` shows), its fits check (can it train this network on this path?) and its factory
// (core/backend.hpp); the trainer receives the same table.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "backend.hpp"

namespace nntrain {

// {cpu, "fast"}, {cpu, "reference"}, {gpu, "cuda"} (the last refuses with the reason in a
// build or on a machine without CUDA).
const BackendRegistry& backend_registry();

// The probe of the entry that trains `device` (on the CPU the one named `cpu_backend`).
// Throws UsageError when the registry has none (find_backend).
BackendProbe probe_device(const BackendRegistry& registry, Device device,
                          CpuBackendKind cpu_backend = CpuBackendKind::fast);

// The GPU as the registry's GPU entry describes it (never throws; a registry without a GPU
// entry gives an unavailable GpuInfo).
GpuInfo registry_gpu_info(const BackendRegistry& registry);

// `nntrain info`'s lines of every entry, in registry order: label, text.
std::vector<std::pair<std::string, std::string>> backend_info_lines(const BackendRegistry& registry);

}  // namespace nntrain
