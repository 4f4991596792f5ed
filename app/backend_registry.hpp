// backend_registry.hpp — which implementation trains which device: the one place above
// core that names the backends in kernels/ (the trainer receives the table).
#pragma once

#include "backend.hpp"

namespace nntrain {

// {cpu, "fast"}, {cpu, "reference"}, {gpu, "cuda"} (the last refuses with the reason in a
// build or on a machine without CUDA).
const BackendRegistry& backend_registry();

}  // namespace nntrain
