// run_json.cpp — see run_json.hpp.
#include "run_json.hpp"

#include <fmt/format.h>

#include <cmath>

namespace nntrain {

using nlohmann::json;

json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json run_result_json(const RunResult& r) {
  json o;
  o["device"] = to_string(r.device);
  o["backend"] = r.backend;
  o["details"] = r.details;
  o["threads"] = r.threads;
  o["status"] = r.status();
  o["train_seconds"] = r.train_seconds;
  o["epochs"] = r.epochs_done;
  o["epochs_requested"] = r.epochs_requested;
  o["samples"] = r.samples;
  o["initial_loss"] = r.losses.empty() ? json(nullptr) : finite_or_null(r.losses.front());
  o["final_loss"] = r.losses.empty() ? json(nullptr) : finite_or_null(r.losses.back());
  // final_loss is the last epoch's recorded loss, before its update; model_loss is the loss of
  // the weights model.json holds (docs/DESIGN.md §4).
  o["model_loss"] = finite_or_null(r.model_loss);
  if (!r.model_loss_note.empty() && !std::isfinite(r.model_loss)) o["model_loss_note"] = r.model_loss_note;
  const BestEpoch best = best_epoch(r.losses);
  o["best_loss"] = finite_or_null(best.loss);
  o["best_epoch"] = best.epoch ? json(best.epoch) : json(nullptr);
  if (r.validation_samples > 0) {
    const BestEpoch vbest = best_epoch(r.val_losses);
    o["validation"] = {{"samples", r.validation_samples},
                       {"every", r.validation_every},
                       {"model_loss", finite_or_null(r.model_validation_loss)},
                       {"best_loss", finite_or_null(vbest.loss)},
                       {"best_epoch", vbest.epoch ? json(vbest.epoch) : json(nullptr)}};
  }
  o["eval_seconds"] = r.eval_seconds;
  o["warmup_epochs"] = r.warmup_epochs;
  o["warmup_seconds"] = r.warmup_seconds;
  o["setup_seconds"] = r.setup_seconds;
  o["transfer_seconds"] = r.setup.transfer_seconds;
  o["samples_per_second"] = r.samples_per_second();
  o["seconds_per_epoch"] = r.seconds_per_epoch();
  o["nondeterministic"] = r.nondeterministic;
  o["simulated"] = r.simulated;
  if (r.diverged_epoch) {
    o["diverged_epoch"] = r.diverged_epoch;
    o["divergence"] = r.exploded ? "loss_exploded" : r.weights_nonfinite ? "weights_nonfinite" : "loss_nonfinite";
    if (r.exploded) o["explode_threshold"] = r.explode_threshold;
  }
  if (r.interrupted_repeat) {
    o["interrupted_repeat"] = r.interrupted_repeat;
    o["interrupted_note"] = fmt::format(
        "the stop came before timing repeat {} finished, after every epoch had trained: that repeat is left out, "
        "train_seconds is the median of the {} repeat(s) that finished",
        r.interrupted_repeat, r.train_seconds_per_repeat.size());
  }
  if (r.target) o["target"] = target_json(*r.target);
  return o;
}

json target_json(const TargetResult& t) {
  json o;
  o["loss"] = t.loss;
  o["reached"] = t.reached;
  o["epoch"] = t.reached ? json(t.epoch) : json(nullptr);
  o["seconds"] = t.reached ? json(t.seconds) : json(nullptr);
  if (!t.reached) return o;
  o["seconds_kind"] = t.measured ? "measured" : "interpolated";
  o["measured_seconds"] = t.readings;
  o["chunk"] = {{"from_epoch", t.bracket_from},
                {"to_epoch", t.bracket_to},
                {"from_seconds", t.bracket_from_seconds},
                {"to_seconds", t.bracket_to_seconds}};
  return o;
}

}  // namespace nntrain
