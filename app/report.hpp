// report.hpp — what a run tells its user: console tables and chart, metrics.csv,
// summary.json, and the progress display.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config.hpp"
#include "dataset.hpp"
#include "gpu_info.hpp"
#include "trainer.hpp"

namespace nntrain {

// What every report says of a simulated GPU (GPGPU-Sim) in place of its speed.
inline constexpr const char* kSimulatedNote =
    "the GPU is a simulator (GPGPU-Sim): its results are checked, its times are not measurements";

// device,epoch,loss — one row per epoch done, epochs from 1; with a held-out split a fourth
// column, val_loss (empty on the epochs not evaluated).
std::string metrics_csv(const std::vector<RunResult>& runs);

// The run's context (core/sysinfo's machine and build, `gpu` when one trains) and its date,
// taken before the first run: the load average then is other work's, not the run's own.
nlohmann::json run_context(const GpuInfo* gpu);

// {"runs": [...], "speedup": ..., "comparison": {...}, "context": context} (docs/DESIGN.md §4);
// an empty `context` is taken now. No speed-up (null, and `speedup_note` says why) unless
// both runs finished on real hardware: a partial time covers fewer epochs than the other's.
nlohmann::json summary_json(const Config& cfg, const std::vector<RunResult>& runs,
                            const nlohmann::json& context = nlohmann::json::object());

// Console output. `color` enables ANSI bold for headings.
// `gpu`: the GPU that will train (nullptr when none does); a simulated one is said so.
// `context`: run_context's, whose CPU, load and date the header shows.
void print_header(std::FILE* out, const Config& cfg, const Dataset& data, const GpuInfo* gpu,
                  const nlohmann::json& context, bool color);
void print_results(std::FILE* out, const Config& cfg, const std::vector<RunResult>& runs, bool color);

// A text chart of loss (log scale) against epoch, one symbol per curve.
std::string loss_chart(const std::vector<const RunResult*>& runs, int width = 64, int height = 14);

// Progress on stderr: a bar redrawn in place on a terminal, a plain line per chunk
// otherwise (at most every `min_interval` seconds), nothing when quiet.
class Progress {
 public:
  Progress(bool quiet, bool tty);
  void begin(const std::string& label, int total);
  void update(int done, int total, float loss);
  // A line before and after the warm-up (its epochs and time), so a long one is not silent.
  void warmup_begin(int epochs);
  void warmup_end(int epochs, double seconds);
  void end();

 private:
  bool quiet_, tty_;
  std::string label_;
  double last_print_ = -1;
  double start_ = 0;
};

// True when stdout/stderr colour is wanted: a terminal and NO_COLOR unset.
bool want_color(std::FILE* f);

}  // namespace nntrain
