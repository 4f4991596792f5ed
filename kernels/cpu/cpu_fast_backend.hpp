// cpu_fast_backend.hpp — the fast CPU backend's class (cpu_fast.hpp's "cpu-fast"), shared by
// the files that define its stages:
//   cpu_fast.cpp         the backend face: set-up (plan, allocate, start the pool), details, train;
//   cpu_fast_step.cpp    a step: its parallel region, the chunk claims, the reduction and update;
//   cpu_fast_tile.cpp    a chunk's tiles: inputs (copied, gathered), forward, backward, BLAS layers;
//   cpu_fast_tuning.cpp  the knobs (FastCpuTuning, NNTRAIN_FAST_*), resolved once.
// The class holds the buffers every stage shares (the tile scratch, chunk slots, BLAS flags,
// accumulator offsets), so it is declared once here; only those files include this header.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "blas_loader.hpp"
#include "cpu_fast.hpp"
#include "cpu_fast_kernels.hpp"
#include "cpu_fast_partition.hpp"
#include "cpu_fast_tuning.hpp"
#include "optimizer.hpp"
#include "phase_hist.hpp"
#include "thread_pool.hpp"

namespace nntrain::fast {

// Tile sizes. 256 samples: a small net's tile (activations of every layer plus two delta
// rows) is ~67 KB for 2→20→5→1, a little over a 48 KB L1, but each kernel call's
// fixed cost (address set-up, loading and storing the gradient accumulators) is spread over
// 16 vectors instead of 8: measured 8–10% faster per epoch than 128 (512: no better, 1024:
// slower). Nets with a BLAS layer use 256 as well: sgemm's packing cost is amortised over
// more columns, and the tile is still in L2.
constexpr int kTileSmall = 256;
constexpr int kTileBlas = 256;
// Chunks (the unit of work and of the fixed reduction order) and their schedule:
// cpu_fast_partition.hpp.
// A step runs on at most as many threads as its batch has chunks: a batch of one chunk (up
// to 256 samples) on the calling thread alone, without waking the pool. Two chunks already
// pay on a second thread: measured 2026-11-25 (2-core AMD EPYC), 272 to 448 samples ran
// 1.17-1.44x faster on 2 threads than on 1 with 2->20->5->1 (medians of 6 alternating
// rounds) and 1.3-1.7x with 2->256->256->1 at 448
// (docs/journal/2026-11-issue14-cpu-minibatch.md, "Fifth round").
// Until then batches under 512 samples were held to one thread, on the guess that a short
// second chunk could not pay for the wake-up and the barrier (~0.7 us).
// Parameter counts above this reduce and update in parallel; below, threads cost more.
constexpr size_t kParallelUpdate = 16384;
// Reductions of at most this many slot floats (chunks x parameters) are done by thread 0
// alone: 4,096 floats are ~0.5 us on one core (16 chunks of the 2->20->5->1 net, batch
// 4096), about what sharing them costs in transfers between cores (the workers' wait for
// the last chunk, the slots and the Adam state moving between caches). Measured at batch
// 1024 on 2 threads: 5.37 us per step alone against 6.05 shared (docs/BENCHMARKS.md). The
// reference experiment's full batch (157 chunks, ~3 us) is shared.
constexpr size_t kSoloReduce = 4096;

struct AlignedFloats {
  float* p = nullptr;
  size_t n = 0;
  AlignedFloats() = default;
  explicit AlignedFloats(size_t count) : n(count) {
    const size_t bytes = std::max<size_t>(64, (count * sizeof(float) + 63) / 64 * 64);
    p = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (!p) throw std::bad_alloc();
    std::memset(p, 0, bytes);
  }
  AlignedFloats(AlignedFloats&& o) noexcept : p(o.p), n(o.n) { o.p = nullptr; o.n = 0; }
  AlignedFloats& operator=(AlignedFloats&& o) noexcept {
    std::swap(p, o.p);
    std::swap(n, o.n);
    return *this;
  }
  AlignedFloats(const AlignedFloats&) = delete;
  ~AlignedFloats() { std::free(p); }
};

inline size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

// A cheap timestamp for the phases: the TSC where there is one (calibrated against the
// steady clock over the backend's life), else the steady clock's nanoseconds.
inline uint64_t phase_ticks() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_rdtsc();
#else
  return uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

// One thread's buffers: a tile's activations, two delta buffers, gathered inputs/targets,
// and the current chunk's gradient accumulators.
struct Scratch {
  AlignedFloats act;    // rows of every layer's output, tile_ each
  AlignedFloats delta;  // 2 × max_width rows
  AlignedFloats x;      // gathered tile (mini-batch): input rows, then target rows
  AlignedFloats grad;   // per layer: kAccLanes-wide (SIMD layer) or scalar (BLAS layer) sums,
                        // then the loss (kAccLanes wide)
  std::vector<uint32_t> rows;  // the tile's data rows (mini-batch)
};

// A shuffled one-chunk batch's tile gathered ahead (CpuFastBackend::gather_ahead_): inputs
// then targets, rows T apart, as Scratch::x; for batch b of epoch `epoch` (-1: none).
struct TileAhead {
  AlignedFloats x;
  std::vector<uint32_t> rows;
  long long epoch = -1;
  int b = -1, T = 0, count = 0;
};

class CpuFastBackend final : public Backend {
 public:
  CpuFastBackend(const Dataset& data, const BackendOptions& opt, const FastCpuTuning& tuning);
  ~CpuFastBackend() override;

  Device device() const override { return Device::cpu; }
  std::string name() const override { return "cpu-fast"; }
  std::string details() const override;
  int threads() const override;
  void load(const Params& p) override;
  Params params() override { return Params{spec_, std::vector<float>(pw_[pin_].p, pw_[pin_].p + P_)}; }
  double train(int epochs, float* losses) override;
  SetupReport setup() const override { return setup_; }

 private:
  // The current step's parameters (step()), read by every thread of its region.
  struct StepArgs {
    uint64_t seq;  // the step's number, from 1
    const float* w;  // the parameters the step's chunks read
    float* w_next;   // where the update writes them (w itself on one thread)
    int b, count, chunks, threads;
    bool shared_reduce;
    size_t per, blocks;  // the reduction's parameter blocks
    ShuffleKey key;
    AdamStep as;
    fast::AdamScalars ah;
    // Gathering ahead (gather_ahead_): the step's tile is ahead_[use] (-1: gather it), and
    // the worker after the step's threads gathers batch next_b of epoch next_epoch (key
    // next_key) into ahead_[fill] (-1: none).
    int use, fill, next_b;
    long long next_epoch;
    ShuffleKey next_key;
    uint64_t t0;  // phase_ticks() at the step's start (NNTRAIN_FAST_PHASES only)
  };

  // Set-up (cpu_fast.cpp), in this order: which layers go through BLAS and the tile; the
  // accumulators' and slots' layout; the buffers; the pool.
  void plan_layers();
  void plan_accumulators();
  void allocate();
  void lay_out_data();
  void start_pool();
  int chunk_samples_max(int count) const;
  std::string thread_rule() const;

  // A step (cpu_fast_step.cpp). The functions marked inline are called only in their own
  // file, and inline there as they were when the class was defined in one file.
  double step(int b, const ShuffleKey& key, const ShuffleKey& next_key);
  void step_body(int tid);
  void report_phases() const;
  inline int64_t chunks_done(const StepArgs& a) const;
  inline int64_t claim(int owner, uint64_t tag, int64_t items, int threads);
  inline void reduce_update(const StepArgs& a, size_t begin, size_t end);
  int chunks_for(int count) const { return fast::chunk_count(count, P_); }

  // One tile's layer inputs and outputs: ins[l] (rows ldins[l] apart) -> outs[l] (rows T apart).
  struct TileLayers {
    int T = 0, tcount = 0;  // tile width (whole quanta) and its real samples
    const float* Y = nullptr;
    size_t ldy = 0;
    float* outs[kFastMaxLayers];
    const float* ins[kFastMaxLayers];
    size_t ldins[kFastMaxLayers];
  };

  // A chunk's tiles (cpu_fast_tile.cpp).
  void run_chunk(Scratch& s, int b, const ShuffleKey& key, int count, int chunks, int c);
  inline void tile_input(Scratch& s, int b, const ShuffleKey& key, int s0, TileLayers& t);
  inline bool forward_tile(Scratch& s, TileLayers& t, float two_over_count, bool fresh);
  inline int forward_first_layers(Scratch& s, TileLayers& t, float*& a, float two_over_count, bool fresh, bool& tail);
  inline void backward_tile(Scratch& s, const TileLayers& t, float two_over_count, bool fresh, bool tail);
  inline void chunk_to_slot(Scratch& s, int c);
  void gather(uint32_t* rows, float* x, int b, const ShuffleKey& key, int s0, int tcount, int T);
  inline void blas_forward(const float* W, const float* b, int in, int out, const float* A, size_t lda, float* Z,
                           int T) const;
  inline void blas_grad(const float* D, const float* A, size_t lda, int in, int out, int T, float* gW) const;
  inline void blas_backprop(const float* W, const float* D, int in, int out, int T, float* Dn) const;

  const Dataset& data_;
  BackendOptions opt_;
  ModelSpec spec_;
  BatchPlan plan_;
  HostOptimizer optim_;
  // The parameters, twice: a step on several threads reads one and writes the other
  // (StepArgs::w, w_next), pin_ being the current one.
  AlignedFloats pw_[2];
  int pin_ = 0;
  const Kernels* k_ = nullptr;
  int threads_ = 1;
  int absent_worker_ = 0, late_worker_ = 0;
  bool wait_for_ahead_ = false;              // (tests: FastCpuTuning::wait_for_ahead)
  long long* tiles_ahead_used_ = nullptr;    // (tests: FastCpuTuning::tiles_ahead_used)
  alignas(64) std::atomic<bool> ahead_joined_{false};  // (tests: set by the worker gathering ahead)
  int blas_min_ = 0;
  std::vector<bool> blas_;
  const Blas* blas_lib_ = nullptr;
  std::string no_blas_reason_;  // why wide layers run in the SIMD kernels, if they do
  int tile_ = kTileSmall, max_chunks_ = 1;
  int fwd_cols_ = 1;  // FirstForward::cols (pick_forward_cols)
  std::vector<size_t> acc_off_, w_off_, b_off_;
  size_t acc_size_ = 0, P_ = 0;
  AlignedFloats slots_, grad_, xs_, ys_, rec_;
  uint32_t rec_stride_ = 4;
  size_t slot_stride_ = 0, loss_off_ = 0;
  // A run of accumulators reduced by one lane_reduce call (or copied: a BLAS layer's).
  struct LaneRun {
    size_t acc, slot, n;
    bool blas;
  };
  std::vector<LaneRun> runs_;
  std::vector<double> sum_;  // the chunk-slot reduction's running sums
  size_t ld_ = 0;
  std::vector<Scratch> scratch_;
  // Tiles gathered ahead (step()): on where gather_ahead_.
  bool gather_ahead_ = false;
  TileAhead ahead_[2];
  alignas(64) StepArgs cur_{};
  uint64_t step_seq_ = 0;
  // NNTRAIN_FAST_PHASES: per thread, in its own lines, sums of ticks over the steps it took
  // part in, and their histograms (for the medians): from the step's start to its part's
  // start (a worker's wake-up), its chunks, its wait for the last chunk, its share of the
  // reduction and update; thread 0 also from its reduction's end to the region's end (the
  // workers' leaving) and the whole step. Allocated only when on.
  bool phases_ = false;
  struct alignas(64) PhaseSums {
    uint64_t steps = 0, enter = 0, chunks = 0, wait = 0, reduce = 0, tail = 0, total = 0, last = 0;
    fast::PhaseHist h_enter, h_chunks, h_wait, h_reduce, h_tail, h_total;
  };
  std::unique_ptr<PhaseSums[]> phase_;
  std::chrono::steady_clock::time_point phase_clock0_;
  uint64_t phase_tick0_ = 0;
  // One claim counter per thread (claim()), each in its own cache line.
  static constexpr int kClaimShift = 24;  // chunks per batch < 2^24 (chunk_count: <= 2^20)
  static constexpr uint64_t kClaimMask = (uint64_t(1) << kClaimShift) - 1;
  struct alignas(64) ClaimCounter {
    std::atomic<uint64_t> v{0};
  };
  std::unique_ptr<ClaimCounter[]> claims_;
  // Per thread, in its own line: step number << kClaimShift | chunks that thread computed in it.
  std::unique_ptr<ClaimCounter[]> done_;
  std::function<void(int)> step_fn_;  // step_body, built once (no allocation per step)
  std::unique_ptr<ThreadPool> pool_;
  SetupReport setup_;
  long long epoch_ = 0;
  FastSettings settings_;  // (details() shows them)
};

}  // namespace nntrain::fast
