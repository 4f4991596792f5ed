// memcheck.hpp — refuse work that cannot fit in memory, before allocating it.
//
// A sweep script that asks for a 10^6 × 10^6 grid or a 65536-wide, 100-layer network must get
// exit 2 and the size it would have needed, not an OOM kill half an hour later. The budget is
// half of the memory this process may use: physical memory, or the cgroup's limit when the
// process runs in a container with a lower one.
#pragma once

#include <string>

#include "mlp.hpp"

namespace nntrain {

// Bytes this process may use: min(physical memory, cgroup v2 memory.max / v1 limit, the
// address-space rlimit).
// 0 when unknown (then nothing is refused for memory).
double memory_limit_bytes();

// Throws UsageError("<what> would need X GiB ...; this machine allows Y GiB") when `bytes`
// exceeds half of memory_limit_bytes().
void check_fits_in_memory(double bytes, const std::string& what);

// Host bytes a training run of `spec` needs besides the data set: parameter copies (initial,
// live, final, gradient, fp64 gradient sums, Adam moments), per-batch activations and deltas,
// and the loss curve with its metrics.csv text. An estimate that errs high.
double training_bytes(const ModelSpec& spec, double batch_samples, double epochs);

}  // namespace nntrain
