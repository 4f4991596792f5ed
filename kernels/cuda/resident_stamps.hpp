// resident_stamps.hpp — NNTRAIN_RESIDENT_STAMPS=FILE (a diagnostic, docs/GPU.md): the resident
// grid's exact stage runs its stamped kernel (resident_stamps.cuh), and after every train()
// call FILE holds, per block, the cycles its thread 0 spent in each phase of a step, summed
// over every step the backend has run since its set-up (warm-up epochs, repeats and the
// full-batch evaluation pass included: the steps are counted), with the step loops' cycles and
// nanoseconds to turn them into time. The timed kernel is not the stamped one: a stamped run's
// times are not the path's. A backend made for evaluation alone (BackendOptions::evaluation)
// ignores the variable.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "cuda_raii.hpp"
#include "names.hpp"
#include "resident.hpp"

namespace nntrain::cuda {

constexpr int kStampPhases = 5;  // group stage, grid.sync 1, exchange, grid.sync 2, weight copy
constexpr int kStampFields = kStampPhases + 3;  // + steps, the step loops' cycles and ns

// The file NNTRAIN_RESIDENT_STAMPS names ("" where it is unset or empty), and plan->stamps set;
// UsageError where it is set and `plan` (nullptr: not the resident path) is not the exact
// grid, whose kernel alone is stamped; `path` names the run's GPU path for that message.
std::string resident_stamps_for(ResidentPlan* plan, const std::string& path);

// Before anything runs (the preflight): where NNTRAIN_RESIDENT_STAMPS is set, why this net and
// GPU path cannot be stamped ("" where they can: the batch is checked by resident_stamps_for);
// UsageError where the file cannot be written.
std::string resident_stamps_problem(const std::vector<int>& widths, const std::vector<Activation>& acts,
                                    GpuPath gpu_path);

// The device's rows (blocks × kStampFields, as the kernel adds them up) as CSV, one line per
// block after a header line, written atomically to `file` (IoError where it cannot be).
void write_resident_stamps(const std::string& file, const DeviceBuffer<unsigned long long>& rows, cudaStream_t s);

}  // namespace nntrain::cuda
