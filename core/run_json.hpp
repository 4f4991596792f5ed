// run_json.hpp — one RunResult as JSON, the same fields in summary.json and in bench's
// export (docs/DESIGN.md §4, docs/BENCH.md): written once, so the two cannot drift.
#pragma once

#include <nlohmann/json.hpp>

#include "trainer.hpp"

namespace nntrain {

// device, backend, details, threads, status, epochs, epochs_requested, samples,
// initial/final loss (null when not finite; final = the last epoch's, before its update),
// model_loss (the trained weights' loss, one more pass after the last update; null when not
// evaluated, model_loss_note says why), best_loss/best_epoch, validation {samples, every,
// model_loss, best_loss, best_epoch} with a held-out split, eval_seconds, warm-up, set-up and
// transfer seconds, train_seconds (median over repeats), seconds_per_epoch,
// samples_per_second, nondeterministic, simulated (a simulated GPU: times are not
// measurements), diverged_epoch and divergence (loss_nonfinite, weights_nonfinite or
// loss_exploded, with explode_threshold) when diverged, and target (below) when
// train.target_loss is set.
nlohmann::json run_result_json(const RunResult& r);

// {"loss", "reached", "epoch" (null if not reached), "seconds" (null if not reached)} — the
// fields other tools rely on (docs/DESIGN.md §4) — and, when reached, "seconds_kind"
// ("measured" or "interpolated"), "measured_seconds" (the clock readings at the crossing
// epoch, one per repeat that had one) and "chunk" (the first repeat's chunk holding the
// crossing epoch: from_epoch, to_epoch and the measured seconds at both ends).
nlohmann::json target_json(const TargetResult& t);

// A loss as a JSON number, or null for NaN/Inf (JSON has no NaN).
nlohmann::json finite_or_null(double v);

}  // namespace nntrain
