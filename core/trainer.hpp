// trainer.hpp — the training loop around a backend: set-up, warm-up, timed chunks, curves.
//
// Timing rules (docs/DESIGN.md §7): set-up (backend construction, data transfer) and warm-up are
// measured and reported apart; warm-up runs on the real state and the initial weights are
// then re-loaded, so it never changes the trajectory; the timed epochs run in chunks and
// only the backend's own clock for those chunks counts.
#pragma once

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"
#include "config.hpp"
#include "dataset.hpp"
#include "mlp.hpp"

namespace nntrain {

// Time to a target loss (train.target_loss; docs/DESIGN.md §7). The crossing epoch is the
// first epoch whose recorded loss is <= `loss` (the first repeat's curve). Its time is the
// device seconds of epochs 1..epoch, read at chunk boundaries:
// - measured: a chunk ended exactly at the crossing epoch, so the time is a reading of the
//   device's clock (the sum of the chunks' times). From the second repeat on the trainer
//   splits the chunk that holds the crossing epoch there; the first repeat's reading counts
//   too when the epoch fell on a boundary anyway. `seconds` is the median of these readings.
// - interpolated: no repeat had a boundary there (one repeat only): linear in epochs between
//   the two measured boundaries around it (`bracket_*`), and labelled as such.
struct TargetResult {
  double loss = 0;
  bool reached = false;
  int epoch = 0;                  // 1-based; 0 when not reached
  double seconds = -1;            // < 0 when not reached
  bool measured = false;          // false: `seconds` is interpolated
  std::vector<double> readings;   // the measured readings, one per repeat that had one
  // The first repeat's chunk holding the crossing epoch: epochs bracket_from+1 .. bracket_to,
  // and the measured device seconds at its two ends.
  int bracket_from = 0, bracket_to = 0;
  double bracket_from_seconds = 0, bracket_to_seconds = 0;
};

struct RunResult {
  Device device = Device::cpu;
  std::string backend;  // backend name
  std::string details;
  int threads = 1;
  int samples = 0;
  int epochs_requested = 0;
  int epochs_done = 0;  // epochs with a loss in `losses`
  // Epochs the train seconds cover: epochs_done, or more when the run diverged inside a
  // chunk (the backend ran the chunk's later epochs too, on NaN/Inf). Rates divide by this.
  int epochs_timed = 0;
  int warmup_epochs = 0;
  std::vector<float> losses;  // one per epoch done, first repeat
  std::vector<double> train_seconds_per_repeat;
  double train_seconds = 0;  // median over repeats
  double warmup_seconds = 0;
  double setup_seconds = 0;  // wall time to construct the backend and load the weights
  SetupReport setup;         // the backend's own breakdown
  Params final_params;
  int diverged_epoch = 0;    // 1-based epoch of the first NaN/Inf or exploded loss; 0 if none
  bool weights_nonfinite = false;  // diverged because the last update made weights NaN/Inf
  // Diverged because a finite loss exceeded `explode_threshold` (kExplodeFactor times the
  // larger of the first epoch's loss and the targets' variance).
  bool exploded = false;
  double explode_threshold = 0;
  // The trained model (the weights after the last update, as model.json holds them): its MSE
  // on the training samples, from one more forward pass through the backend after training.
  // NaN when not evaluated (`model_loss_note` says why). `losses.back()` is the loss before
  // the last update, so the two differ.
  double model_loss = std::numeric_limits<double>::quiet_NaN();
  std::string model_loss_note;
  // Held-out validation (data.validation_fraction): samples held out, the epochs between
  // evaluations, and per epoch done the validation loss of the weights that epoch started
  // from (the weights whose training loss `losses` records, full batch), NaN on the epochs
  // not evaluated (row e is evaluated when (e - 1) % validation_every == 0).
  int validation_samples = 0;
  int validation_every = 0;
  std::vector<float> val_losses;
  double model_validation_loss = std::numeric_limits<double>::quiet_NaN();  // the trained model's
  double eval_seconds = 0;  // validation and model-loss passes: not in train_seconds
  bool interrupted = false;
  // The timed repeat (1-based) a stop cut short, or kept from starting, after the first
  // repeat had trained every epoch; 0: none. A partial time is not a repeat's time: it is
  // left out of train_seconds_per_repeat and so of train_seconds.
  int interrupted_repeat = 0;
  bool nondeterministic = false;  // a repeat's curve differed from the first
  bool simulated = false;         // trained on a simulated GPU: the times are not measurements
  std::optional<TargetResult> target;  // only when train.target_loss is set
  std::string status() const {
    return diverged_epoch ? "diverged" : interrupted ? "interrupted" : "ok";
  }
  double samples_per_second() const {
    return train_seconds > 0 ? double(samples) * epochs_timed / train_seconds : 0.0;
  }
  double seconds_per_epoch() const { return epochs_timed ? train_seconds / epochs_timed : 0.0; }
};

// Called after every chunk of the first repeat: epochs done, total, last loss.
using ProgressFn = std::function<void(int done, int total, float loss)>;

// Divergence by explosion: a finite epoch loss above this many times the larger of the first
// epoch's loss and the targets' variance (the loss of predicting their mean; their mean square
// where they are constant) is divergence, as a NaN/Inf loss is (docs/CONFIG.md).
inline constexpr double kExplodeFactor = 1e3;

// What the first repeat has finished so far, after every chunk (and once with 0 epochs when
// the backend is ready): for a writer that must not wait for the run (cmd_train's interrupt
// watchdog). `run` has the run's identity and settings but empty curves; the curves are
// `losses[0..done)` and, with validation, `val_losses[0..done)` (else nullptr); epochs
// `from..done` are new since the last call; `seconds` is the training time so far.
struct ChunkReport {
  const RunResult* run = nullptr;
  const float* losses = nullptr;
  const float* val_losses = nullptr;
  int from = 0, done = 0;
  double seconds = 0;
};

// Everything a caller may watch during a run, and whether the run evaluates its models.
struct TrainHooks {
  // The trained model's loss pass and, with a held-out split, the validation evaluations
  // (train sets it; bench does not: it times training alone, in its own chunks).
  bool evaluate = false;
  ProgressFn progress;
  std::function<void(int epochs)> warmup_begin;
  std::function<void(int epochs, double seconds)> warmup_end;
  std::function<void(const ChunkReport&)> chunk_done;
};

// Options of one training run, resolved from the Config (and the device).
BackendOptions backend_options(const Config& cfg, Device device);
// The options of a run's evaluation backend (the held-out set, the model's loss): `train`'s,
// for one full-batch pass in order.
BackendOptions evaluation_options(BackendOptions train);

// Trains one device from `init` with the backend `registry` names for it. Throws
// DeviceUnavailable / UsageError from the backend.
RunResult run_training(const BackendRegistry& registry, const Config& cfg, const Dataset& data, const Params& init,
                       Device device, const ProgressFn& progress = {});
// The same with every hook. `data` is the whole data set: the validation split is made here
// (the overload above trains on the same split and evaluates nothing).
RunResult run_training(const BackendRegistry& registry, const Config& cfg, const Dataset& data, const Params& init,
                       Device device, const TrainHooks& hooks);

// Warm-up epochs a run does: timing.warmup_epochs, at most train.epochs.
int warmup_epochs_of(const Config& cfg);

// The lowest finite loss of a curve and its 1-based epoch; epoch 0 when none is finite.
struct BestEpoch {
  int epoch = 0;
  double loss = std::numeric_limits<double>::quiet_NaN();
};
BestEpoch best_epoch(const std::vector<float>& losses);

// Asynchronous-signal-safe stop request (SIGINT/SIGTERM): training stops after the chunk
// in flight, and the run is marked interrupted.
void request_stop();
bool stop_requested();
// Forgets a stop request: for a process that goes on after one run has stopped (the tests).
void clear_stop();

// The largest relative gap between two loss curves and the epoch (1-based) up to which
// they agree within `rel_tol`.
struct CurveComparison {
  int agree_until_epoch = 0;
  double max_abs_diff = 0;
  double max_rel_diff = 0;
  int compared_epochs = 0;
};
// The first epoch (1-based) of `losses` whose loss is <= `target`, or 0 when none is.
int first_epoch_at_or_below(const std::vector<float>& losses, double target);

CurveComparison compare_curves(const std::vector<float>& a, const std::vector<float>& b, double rel_tol = 1e-4);

}  // namespace nntrain
