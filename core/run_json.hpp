// run_json.hpp — one RunResult as JSON, the same fields in summary.json and in bench's
// export (docs/DESIGN.md §4, docs/BENCH.md): written once, so the two cannot drift.
#pragma once

#include <nlohmann/json.hpp>

#include "trainer.hpp"

namespace nntrain {

// device, backend, details, threads, status, epochs, epochs_requested, samples,
// initial/final loss (null when not finite), warm-up, set-up and transfer seconds,
// train_seconds (median over repeats), seconds_per_epoch, samples_per_second,
// nondeterministic, simulated (a simulated GPU: times are not measurements), and
// diverged_epoch when diverged.
nlohmann::json run_result_json(const RunResult& r);

// A loss as a JSON number, or null for NaN/Inf (JSON has no NaN).
nlohmann::json finite_or_null(double v);

}  // namespace nntrain
