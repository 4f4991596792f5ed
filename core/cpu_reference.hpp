// cpu_reference.hpp — the CPU reference backend: plain loops, one thread, the oracle.
#pragma once

#include <memory>

#include "backend.hpp"

namespace nntrain {

std::unique_ptr<Backend> make_cpu_reference_backend(const Dataset& data, const BackendOptions& opt);

}  // namespace nntrain
