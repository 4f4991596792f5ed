// cpu_fast.cpp — the fast CPU backend: work split, thread pool, reductions, BLAS layers,
// Adam. The inner loops are the per-ISA kernels (cpu_fast_kernels.inc).
//
// How a batch is computed (and why results do not depend on the thread count):
//   - the batch's samples are cut into fixed chunks (cpu_fast_partition.hpp: up to ~256 of
//     them, of about 256 to 2048 samples), each chunk into tiles of `tile_` samples (both depend only on
//     the model and the batch size);
//   - a tile goes through the forward and the backward pass while its activations stay in
//     the thread's L1/L2 buffers (feature-major rows of tile_ floats, one lane per sample);
//     gradients accumulate in the thread's per-chunk accumulators (one per SIMD lane);
//   - at the end of a chunk the lanes are summed in a fixed order into that chunk's slot;
//   - the chunk slots are summed in chunk order (in double) and Adam (nnmath.hpp) applied.
// Each thread computes its own run of the chunks, then helps with the others' (claimed one
// at a time from per-thread counters); a chunk's result does not depend on which thread
// computed it, so 1, 2 or 128 threads give the same bits.
//
// Why ~610 lines in one file: the backend class holds the buffers every stage shares (the
// tile scratch, chunk slots, BLAS flags, accumulator offsets); its stages (set-up, the step's
// parallel region, the tile's forward and backward, the slot reduction) are each a short
// member function, and splitting the class across files would only spread that state.
#include "cpu_fast.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <thread>

#include "blas_loader.hpp"
#include "cpu_fast_kernels.hpp"
#include "cpu_fast_partition.hpp"
#include "errors.hpp"
#include "optimizer.hpp"
#include "phase_hist.hpp"
#include "sysinfo.hpp"
#include "thread_pool.hpp"


namespace nntrain {

namespace fast {
void act_forward_rows(float* Z, size_t count, int act) {
  const Activation a = static_cast<Activation>(act);
  for (size_t k = 0; k < count; ++k) Z[k] = act_forward(a, Z[k]);
}
}  // namespace fast

namespace {

using fast::Kernels;

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
// rounds) and 1.3-1.7x with 2->256->256->1 at 448 (docs/BENCHMARKS.md, "Fifth round").
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

size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

// A hint that this core is about to write the cache line at p: a line another core holds
// then moves while this one computes, instead of when the stores reach it.
inline void prefetch_write(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));  // (a no-op where unsupported)
#else
  __builtin_prefetch(p, 1, 3);
#endif
}

const Kernels& pick_kernels(std::string isa) {
  if (isa == "auto") {
    const char* env = std::getenv("NNTRAIN_FAST_ISA");
    isa = env && *env ? env : fast_cpu_isas().front();
  }
  const auto ok = fast_cpu_isas();
  if (std::find(ok.begin(), ok.end(), isa) == ok.end())
    throw UsageError("fast CPU backend: instruction set \"" + isa + "\" is not available on this CPU (available: " +
                     fmt::format("{}", fmt::join(ok, ", ")) + ")");
#if defined(__x86_64__)
  if (isa == "avx512") return fast::kernels_avx512();
  if (isa == "avx2") return fast::kernels_avx2();
#endif
  return fast::kernels_generic();
}

// Vectors of samples per register block in the fused first-layers forward (FirstForward::
// cols) of a kernel set of `lanes` floats per vector. Its inner loop keeps OUT accumulator
// chains per vector, each a multiply-add every iteration with 4 cycles of latency, and
// loads each weight as a broadcast once per block. A core with two 512-bit FMA pipes needs 8
// chains in flight, so 2 vectors (10 chains for the reference net's 5 outputs). AMD Zen 4
// (family 19h: the only one of that family with AVX-512) runs a 512-bit FMA on both of its
// 256-bit pipes, one per cycle, so 5 chains suffice; there the block of 1 vector measured ~8 %
// faster (the kernel alone, 256-sample chunks: median 1,894 against 2,051 TSC ticks;
// docs/BENCHMARKS.md). The AVX2 set (8 lanes) takes 2 on every CPU: two 256-bit pipes need 8
// chains, and a block of 1 spends more loads (8 broadcasts a row) than multiply-adds (7); on
// AMD Zen 3 (family 19h too) its forward measured ~25 % faster with 2. The baseline set
// (4 lanes) has only blocks of 1. Bits are the same either way. NNTRAIN_FAST_FWD_COLS=1|2
// overrides (for A/B runs).
int pick_forward_cols(int requested, int lanes) {
  if (requested == 1 || requested == 2) return requested;
  if (requested != 0)
    throw UsageError(fmt::format("fast CPU backend: forward block of {} vectors (1 or 2)", requested));
  if (const char* env = std::getenv("NNTRAIN_FAST_FWD_COLS"); env && *env) {
    if (std::strcmp(env, "1") == 0 || std::strcmp(env, "2") == 0) return env[0] - '0';
    throw UsageError(std::string("NNTRAIN_FAST_FWD_COLS: not 1 or 2: ") + env);
  }
  if (lanes != 16) return 2;
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163 &&  // "AuthenticAMD"
      __get_cpuid(1, &a, &b, &c, &d)) {
    const unsigned family = ((a >> 8) & 0xF) + (((a >> 8) & 0xF) == 0xF ? (a >> 20) & 0xFF : 0);
    if (family == 0x19) return 1;
  }
#endif
  return 2;
}

bool pick_gather_ahead(int requested) {
  if (requested == 0 || requested == 1) return requested == 1;
  if (requested != -1) throw UsageError(fmt::format("fast CPU backend: gather_ahead {} (0, 1 or -1)", requested));
  if (const char* env = std::getenv("NNTRAIN_FAST_GATHER_AHEAD"); env && *env) {
    if (std::strcmp(env, "0") == 0 || std::strcmp(env, "1") == 0) return env[0] == '1';
    throw UsageError(std::string("NNTRAIN_FAST_GATHER_AHEAD: not 0 or 1: ") + env);
  }
  return true;
}

// NNTRAIN_FAST_PHASES=1 (docs/CONFIG.md): a diagnostic of where the steps' time goes, per
// thread, printed to stderr when the backend is destroyed. Off (the default), each of a
// step's phase points costs one predictable branch.
bool pick_phases() {
  const char* env = std::getenv("NNTRAIN_FAST_PHASES");
  if (!env || !*env || std::strcmp(env, "0") == 0) return false;
  if (std::strcmp(env, "1") == 0) return true;
  throw UsageError(std::string("NNTRAIN_FAST_PHASES: not 0 or 1: ") + env);
}

// A cheap timestamp for the phases: the TSC where there is one (calibrated against the
// steady clock over the backend's life), else the steady clock's nanoseconds.
inline uint64_t phase_ticks() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_rdtsc();
#else
  return uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

int pick_blas_min(int requested) {
  if (requested >= 0) return requested;
  if (const char* env = std::getenv("NNTRAIN_FAST_BLAS_MIN"); env && *env) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (*end != '\0' || v < 0) throw UsageError(std::string("NNTRAIN_FAST_BLAS_MIN: not a width: ") + env);
    return int(v);
  }
  return kFastBlasMinWidth;
}

// One thread's buffers: a tile's activations, two delta buffers, gathered inputs/targets,
// and the current chunk's gradient accumulators.
struct Scratch {
  AlignedFloats act;    // rows of every layer's output, tile_ each
  AlignedFloats delta;  // 2 × max_width rows
  AlignedFloats x;      // gathered tile (mini-batch): input rows, then target rows
  AlignedFloats grad;   // per layer: lanes-wide (SIMD layer) or scalar (BLAS layer) sums,
                        // then the loss (lanes wide)
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
  CpuFastBackend(const Dataset& data, const BackendOptions& opt, const FastCpuTuning& tuning)
      : data_(data), opt_(opt), spec_(opt.spec), plan_(make_batch_plan(data.n, opt.batch_size, opt.shuffle)),
        optim_(opt.optimizer, opt.spec.param_count()) {
    const auto t0 = std::chrono::steady_clock::now();
    k_ = &pick_kernels(tuning.isa);
    threads_ = opt.threads > 0 ? opt.threads : hardware_threads();
    absent_worker_ = tuning.absent_worker;
    late_worker_ = tuning.late_worker;
    const bool ahead = pick_gather_ahead(tuning.gather_ahead);  // (checked whatever the batches)
    wait_for_ahead_ = tuning.wait_for_ahead;
    phases_ = pick_phases();
    phase_clock0_ = std::chrono::steady_clock::now();
    phase_tick0_ = phase_ticks();
    tiles_ahead_used_ = tuning.tiles_ahead_used;
    const int L = spec_.layers();
    blas_min_ = pick_blas_min(tuning.blas_min_width);
    const int cols = pick_forward_cols(tuning.forward_cols, k_->lanes);  // (checked whatever the kernel set)
    fwd_cols_ = k_->lanes >= 8 ? cols : 1;
    blas_.assign(size_t(L), false);
    bool any_blas = false;
    for (int l = 0; l < L; ++l)
      any_blas = any_blas || std::min(spec_.in(l), spec_.out(l)) >= blas_min_;
    if (any_blas) {
      blas_lib_ = load_openblas();  // sets OpenBLAS to one thread (see blas_loader.hpp)
      if (!blas_lib_) {
        any_blas = false;
        no_blas_reason_ = blas_unavailable_reason();
      }
    }
    for (int l = 0; l < L; ++l)
      blas_[size_t(l)] = any_blas && std::min(spec_.in(l), spec_.out(l)) >= blas_min_;
    // A mini-batch smaller than the tile gets a tile of its size (in whole quanta): the
    // kernels compute every column of a tile, padding included.
    tile_ = int(std::min<size_t>(size_t(any_blas ? kTileBlas : kTileSmall),
                                 round_up(size_t(std::max(plan_.batch, 1)), size_t(fast::kTileQuantum))));
    // Gradient accumulator layout (per thread) and the chunk slots.
    const size_t lanes = size_t(k_->lanes);
    for (int l = 0; l < L; ++l) {  // (ModelSpec computes them by a loop over the layers)
      w_off_.push_back(spec_.weight_offset(l));
      b_off_.push_back(spec_.bias_offset(l));
    }
    acc_off_.resize(size_t(L));
    size_t acc = 0;
    for (int l = 0; l < L; ++l) {
      acc_off_[size_t(l)] = acc;
      const size_t n = size_t(spec_.in(l)) * spec_.out(l) + spec_.out(l);
      acc += round_up(blas_[size_t(l)] ? n : n * lanes, 16);  // 64-byte aligned rows for the kernels
    }
    loss_off_ = acc;
    // The last run's lane sums may read kLaneReduceSlack accumulators past it: zeros here
    // (runs before a BLAS layer read that layer's sums: finite, and dropped).
    acc_size_ = acc + lanes + size_t(fast::kLaneReduceSlack) * lanes;
    P_ = spec_.param_count();
    // A chunk's slot: its gradient in the flat parameter layout, then its loss at P_; rows
    // padded to whole 64-byte vectors (reduce_adam reads whole vectors).
    slot_stride_ = round_up(P_ + 1, 16);
    // The lane sums at the end of a chunk, as runs of accumulators that are contiguous both
    // in the accumulators and in the slot (one lane_reduce call per run: a 2->20->5->1 net
    // and its loss are one run of 172 accumulators instead of four calls with ragged tails).
    for (int l = 0; l <= L; ++l) {
      const bool loss = l == L;
      const bool blas = !loss && blas_[size_t(l)];
      const size_t n = loss ? 1 : size_t(spec_.in(l)) * spec_.out(l) + spec_.out(l);
      const size_t a = loss ? loss_off_ : acc_off_[size_t(l)], d = loss ? P_ : w_off_[size_t(l)];
      if (!runs_.empty()) {
        LaneRun& r = runs_.back();
        if (!blas && !r.blas && r.acc + r.n * lanes == a && r.slot + r.n == d) {
          r.n += n;
          continue;
        }
      }
      runs_.push_back(LaneRun{a, d, n, blas});
    }
    // Chunks: a function of the batch size and the model only (never of the thread count).
    // The last batch of an epoch may be short, with its own chunk count.
    max_chunks_ = 1;
    for (int b : {0, plan_.batches - 1}) max_chunks_ = std::max(max_chunks_, chunks_for(plan_.size(b)));
    slots_ = AlignedFloats(size_t(max_chunks_) * slot_stride_);
    grad_ = AlignedFloats(P_);
    pw_[0] = AlignedFloats(P_);
    pw_[1] = AlignedFloats(P_);
    sum_.assign(P_, 0.0);

    // The data once in the layout its tiles are read from. Full and unshuffled batches:
    // feature-major rows, padded with zeros past the last sample by at least one tile quantum
    // (a tile of T samples starting anywhere before n ends before ld_). Shuffled batches: one
    // record per sample (inputs, then targets), so that a sample's values share a cache line.
    const int nf = data.inputs + data.outputs;
    rec_stride_ = uint32_t(nf <= 4 ? 4 : round_up(size_t(nf), 16));
    if (plan_.shuffle) {
      rec_ = AlignedFloats(size_t(data.n) * rec_stride_);
      for (int s = 0; s < data.n; ++s) {
        float* r = rec_.p + size_t(s) * rec_stride_;
        std::copy_n(data.x.data() + size_t(s) * data.inputs, data.inputs, r);
        std::copy_n(data.y.data() + size_t(s) * data.outputs, data.outputs, r + data.inputs);
      }
    } else {
      ld_ = round_up(size_t(data.n) + fast::kTileQuantum, 16);
      xs_ = AlignedFloats(size_t(data.inputs) * ld_);
      ys_ = AlignedFloats(size_t(data.outputs) * ld_);
      for (int s = 0; s < data.n; ++s) {
        for (int f = 0; f < data.inputs; ++f) xs_.p[size_t(f) * ld_ + s] = data.x[size_t(s) * data.inputs + f];
        for (int f = 0; f < data.outputs; ++f) ys_.p[size_t(f) * ld_ + s] = data.y[size_t(s) * data.outputs + f];
      }
    }

    size_t act_rows = 0;
    for (int l = 1; l <= L; ++l) act_rows += size_t(spec_.widths[size_t(l)]);
    scratch_.resize(size_t(threads_));
    for (auto& s : scratch_) {
      s.act = AlignedFloats(act_rows * tile_);
      s.delta = AlignedFloats(2 * size_t(spec_.max_width()) * tile_);
      // Gathered inputs, then targets (one gather_rows call fills both: rows tile_ apart).
      s.x = AlignedFloats(size_t(nf) * tile_);
      s.grad = AlignedFloats(acc_size_);
      s.rows.assign(size_t(tile_), 0);
    }
    // Shuffled batches of one chunk: one thread computes a step, so a second gathers the
    // next batch's tile meanwhile (step()). Two buffers: the step's own tile and the next.
    gather_ahead_ = ahead && plan_.shuffle && threads_ >= 2 && plan_.batches > 1 && chunks_for(plan_.batch) == 1;
    if (gather_ahead_)
      for (TileAhead& t : ahead_) {
        t.x = AlignedFloats(size_t(nf) * tile_);
        t.rows.assign(size_t(tile_), 0);
      }
    claims_.reset(new ClaimCounter[size_t(threads_)]);
    if (phases_) phase_.reset(new PhaseSums[size_t(threads_)]);
    done_.reset(new ClaimCounter[size_t(threads_)]);
    step_fn_ = [this](int tid) { step_body(tid); };
    // The pool holds the threads a step can use and no more. A worker that no step needs
    // still spins on the pool's line between steps, and every hand-off between the step's own
    // threads then costs more: on a 16-core Xeon (2026-11-27, docs/BENCHMARKS.md), shuffled
    // batches of 256 (one chunk, a worker gathering ahead) took 4.30 us per step on a pool of
    // 2 threads and 5.38 on a pool of 16. A batch of one chunk uses 1 thread, or 2 when a
    // worker gathers ahead; larger batches keep every thread (on that machine batches of 4
    // chunks ran no slower beside idle workers: 96.6 ms on a pool of 16, 103.9 on a pool of 4).
    pool_ = std::make_unique<ThreadPool>(chunks_for(plan_.batch) == 1 ? (gather_ahead_ ? 2 : 1) : threads_);
    // Touch every thread once so stacks, scratch pages and the spin loop are live.
    pool_->run([](int) {});
    setup_.alloc_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  Device device() const override { return Device::cpu; }
  std::string name() const override { return "cpu-fast"; }
  std::string details() const override {
    std::string blas_layers;
    for (int l = 0; l < spec_.layers(); ++l)
      if (blas_[size_t(l)]) blas_layers += (blas_layers.empty() ? "" : ",") + std::to_string(l + 1);
    const std::string blocks =
        k_->lanes >= 8 ? fmt::format(", forward blocks of {} vector{}", fwd_cols_, fwd_cols_ > 1 ? "s" : "") : "";
    return fmt::format("{} ({} lanes{}{}), {} threads{}, tile {} samples, {} chunk(s) of <= {} samples per batch, {}",
                       k_->isa, k_->lanes, k_->fma ? ", FMA" : "", blocks, threads_, thread_rule(), tile_,
                       chunks_for(plan_.batch), chunk_samples_max(plan_.batch),
                       blas_layers.empty()
                           ? (no_blas_reason_.empty() ? std::string("no BLAS layer") : no_blas_reason_)
                           : fmt::format("OpenBLAS sgemm for layer(s) {}", blas_layers));
  }
  int threads() const override { return threads_; }

  void load(const Params& p) override {
    if (p.values.size() != P_)  // (the trainer checks a loaded model against the config first)
      throw std::logic_error(fmt::format("fast CPU backend: {} parameters loaded into a net of {}", p.values.size(), P_));
    std::copy(p.values.begin(), p.values.end(), pw_[pin_].p);
    optim_.reset();
    epoch_ = 0;
  }
  ~CpuFastBackend() override {
    if (phases_) report_phases();
  }

  Params params() override { return Params{spec_, std::vector<float>(pw_[pin_].p, pw_[pin_].p + P_)}; }

  double train(int epochs, float* losses) override {
    const auto t0 = std::chrono::steady_clock::now();
    for (int e = 0; e < epochs; ++e, ++epoch_) {
      const ShuffleKey key = make_shuffle_key(uint32_t(plan_.n), opt_.seed, uint64_t(epoch_));
      // (The next epoch's key: the last step gathers the next epoch's first tile ahead.)
      const ShuffleKey next_key =
          gather_ahead_ ? make_shuffle_key(uint32_t(plan_.n), opt_.seed, uint64_t(epoch_ + 1)) : key;
      double sum = 0;
      for (int b = 0; b < plan_.batches; ++b) sum += step(b, key, next_key);
      losses[e] = float(sum / plan_.batches);
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

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

  // One batch: loss and gradient over its chunks, then one optimiser step. Returns the loss.
  //
  // One parallel region per step. Its parameters are written to cur_ (two cache lines the
  // workers read through `this`, instead of a chain of references into this thread's stack:
  // each link would be one more transfer between cores before a worker's first chunk). The
  // chunks are claimed as cpu_fast_partition.hpp describes (each thread its own run, from its
  // own counter, then the others'); each thread writes how many it computed to its own line
  // of done_ once (a shared counter would be one more read-modify-write per thread on one
  // line: on 16 cores those queue at ~350 ns each).
  // Then the chunk-slot reduction and the optimiser update: for a small reduction (a few
  // chunks of a small net: well under a microsecond) thread 0 alone, once done_ counts every
  // chunk, while the workers leave; for a bigger one every thread, in parameter blocks
  // claimed as the chunks are. Each parameter's sum runs over the chunks in order whoever
  // computes it, so the bits do not depend on the thread count, and no serial part is left
  // between two regions.
  double step(int b, const ShuffleKey& key, const ShuffleKey& next_key) {
    StepArgs& a = cur_;
    a.seq = ++step_seq_;
    a.b = b;
    a.count = plan_.size(b);
    a.chunks = chunks_for(a.count);
    a.key = key;
    // A tile gathered ahead for this batch (by the step before, or by the last step of the
    // previous train() call: the tile depends on the seed, the epoch and b only); and the
    // next batch's, if this step and that batch are one chunk each.
    a.use = a.fill = -1;
    if (gather_ahead_) {
      for (int i = 0; i < 2; ++i)
        if (ahead_[i].epoch == epoch_ && ahead_[i].b == b) a.use = i;
      const bool last = b + 1 == plan_.batches;
      a.next_b = last ? 0 : b + 1;
      a.next_epoch = last ? epoch_ + 1 : epoch_;
      a.next_key = last ? next_key : key;
      if (a.chunks == 1 && chunks_for(plan_.size(a.next_b)) == 1) {
        a.fill = a.use == 0 ? 1 : 0;
        ahead_[a.fill].epoch = -1;  // (set again once its worker has gathered the tile)
        ahead_joined_.store(false, std::memory_order_relaxed);
      }
    }
    a.as = optim_.advance();
    const AdamHyper& hy = optim_.hyper();
    a.ah = fast::AdamScalars{float(hy.beta1),        float(1.0 - hy.beta1), float(hy.beta2),
                             float(1.0 - hy.beta2), float(hy.eps),         a.as.bias2_sqrt,
                             a.as.step_size};
    // Threads taking part: no more than the chunks, unless the update alone is worth sharing
    // (a big net's batch of two or more chunks; one chunk: the calling thread alone).
    a.threads = a.chunks == 1 ? 1 : P_ >= kParallelUpdate ? threads_ : std::min(threads_, a.chunks);
    a.shared_reduce = a.threads > 1 && size_t(a.chunks) * P_ > kSoloReduce;
    // Parameter blocks of a shared reduction: about two per thread, of 16 to 64 parameters
    // (a block's sums run side by side: 64 parameters cost half as much per parameter as 16
    // on one thread; reduce_adam microbenchmark) or 4096 for big nets. Which thread sums a
    // block does not change any sum, so the blocks may depend on the thread count. Thread 0
    // alone: one block of every parameter.
    a.per = !a.shared_reduce ? P_
            : P_ >= kParallelUpdate
                ? 4096
                : std::clamp<size_t>(round_up((P_ + 2 * a.threads - 1) / (2 * a.threads), 16), 16, 64);
    a.blocks = (P_ + a.per - 1) / a.per;
    a.w = pw_[pin_].p;
    a.w_next = a.threads > 1 ? pw_[pin_ ^ 1].p : pw_[pin_].p;
    if (phases_) a.t0 = phase_ticks();
    if (a.threads > 1) {
      pool_->run(step_fn_, a.threads);
      pin_ ^= 1;
    } else if (a.fill >= 0) {
      pool_->run(step_fn_, 2);  // thread 0 the step (w_next is w), worker 1 the next tile
    } else {
      step_body(0);  // one thread for this step (a small batch: waking the pool would only add latency)
    }
    if (phases_) {
      const uint64_t t = phase_ticks();
      PhaseSums& ph = phase_[0];
      ph.tail += t - ph.last;
      ph.total += t - a.t0;
      ph.h_tail.add(t - ph.last);
      ph.h_total.add(t - a.t0);
    }
    double loss = 0;
    for (int c = 0; c < a.chunks; ++c) loss += double(slots_.p[size_t(c) * slot_stride_ + P_]);
    return loss / (double(a.count) * double(spec_.widths.back()));
  }

  // A thread's part of a step (cur_): its own chunks, then any left in the others' runs,
  // then its part of the reduction and update.
  void step_body(int tid) {
    if (tid > 0 && tid == absent_worker_) return;  // (tests: FastCpuTuning::absent_worker)
    if (tid > 0 && tid == late_worker_)  // (tests: FastCpuTuning::late_worker)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    const StepArgs& a = cur_;
    Scratch& s = scratch_[size_t(tid)];
    const uint64_t t_enter = phases_ ? phase_ticks() : 0;
    if (tid >= a.threads) {  // the worker gathering ahead (a one-chunk step: a.threads is 1)
      if (a.fill < 0) return;
      if (wait_for_ahead_) ahead_joined_.store(true, std::memory_order_release);
      TileAhead& t = ahead_[a.fill];
      t.count = plan_.size(a.next_b);
      t.T = int(std::min<size_t>(size_t(tile_), round_up(size_t(t.count), size_t(fast::kTileQuantum))));
      gather(t.rows.data(), t.x.p, a.next_b, a.next_key, 0, t.count, t.T);
      t.b = a.next_b;
      t.epoch = a.next_epoch;  // (read by step() after the region: the pool's join orders it)
      return;
    }
    // The update's output (thread 0, reducing alone): lines the workers read in the step
    // before. Asked for now, they move into this core's cache while its chunks run, instead
    // of on the step's serial path after them. (A prefetch, not a copy: stores leave the
    // store buffer in order, and a dozen waiting for other cores' lines stalled the kernels'
    // stores behind them.)
    if (tid == 0 && a.w_next != a.w && !a.shared_reduce) {
      const char* w = reinterpret_cast<const char*>(a.w_next);
      for (size_t off = 0; off < std::min<size_t>(P_ * sizeof(float), 2048); off += 64) prefetch_write(w + off);
    }
    int mine = 0;
    for (int k = 0; k < a.threads; ++k) {
      const int owner = (tid + k) % a.threads;
      for (int64_t c; (c = claim(owner, 2 * a.seq, a.chunks, a.threads)) >= 0; ++mine)
        run_chunk(s, a.b, a.key, a.count, a.chunks, int(c));
    }
    if (mine > 0) done_[size_t(tid)].v.store((a.seq << kClaimShift) | uint64_t(mine), std::memory_order_release);
    const uint64_t t_chunks = phases_ ? phase_ticks() : 0;
    if (phases_) {
      PhaseSums& ph = phase_[size_t(tid)];
      ++ph.steps;
      ph.enter += t_enter - a.t0;
      ph.chunks += t_chunks - t_enter;
      ph.last = t_chunks;
      ph.h_enter.add(t_enter - a.t0);
      ph.h_chunks.add(t_chunks - t_enter);
    }
    if (!a.shared_reduce && tid != 0) return;
    // Every chunk was claimed by a thread inside the region, which finishes it without
    // waiting for anyone, so this wait ends.
    for (unsigned spins = 0; chunks_done(a) < a.chunks; ++spins) wait_a_little(spins);
    const uint64_t t_wait = phases_ ? phase_ticks() : 0;
    // The parameter blocks, claimed as the chunks were (the same counters, the next tag).
    const int reducers = a.shared_reduce ? a.threads : 1;
    for (int k = 0; k < reducers; ++k) {
      const int owner = (tid + k) % reducers;
      for (int64_t blk; (blk = claim(owner, 2 * a.seq + 1, int64_t(a.blocks), reducers)) >= 0;)
        reduce_update(a, size_t(blk) * a.per, std::min(P_, size_t(blk + 1) * a.per));
    }
    if (phases_) {
      PhaseSums& ph = phase_[size_t(tid)];
      ph.last = phase_ticks();
      ph.wait += t_wait - t_chunks;
      ph.reduce += ph.last - t_wait;
      ph.h_wait.add(t_wait - t_chunks);
      ph.h_reduce.add(ph.last - t_wait);
    }
    // (Tests: the region stays open until the worker gathering ahead has joined it.)
    if (tid == 0 && a.fill >= 0 && wait_for_ahead_ && absent_worker_ != a.threads)
      for (unsigned spins = 0; !ahead_joined_.load(std::memory_order_acquire); ++spins) wait_a_little(spins);
  }

  // NNTRAIN_FAST_PHASES: each phase per step, in microseconds, to stderr: its mean and its
  // median (phase_hist.hpp: the mean alone misleads on a shared machine), and the step's 90th
  // percentile.
  void report_phases() const {
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - phase_clock0_).count();
    const double per_us = us > 0 ? double(phase_ticks() - phase_tick0_) / us : 1.0;
    const PhaseSums& p0 = phase_[0];
    if (p0.steps == 0) return;
    auto mean = [&](uint64_t sum, uint64_t n) { return n ? double(sum) / per_us / double(n) : 0.0; };
    // The mean per step the thread took part in (0 for a phase it skipped: a worker that
    // does not share the reduction), and the median over the steps that had the phase.
    auto both = [&](uint64_t sum, uint64_t steps, const fast::PhaseHist& h) {
      return fmt::format("{:.3f} / {:.3f}", mean(sum, steps), h.quantile(0.5) / per_us);
    };
    std::string out = fmt::format(
        "nntrain: fast backend phases (NNTRAIN_FAST_PHASES=1), us per step, mean / median over {} steps on up to {} "
        "threads: step {} (90th percentile {:.3f}); thread 0 after its reduction until the region's end {}\n",
        p0.steps, threads_, both(p0.total, p0.steps, p0.h_total), p0.h_total.quantile(0.9) / per_us,
        both(p0.tail, p0.steps, p0.h_tail));
    for (int t = 0; t < threads_; ++t) {
      const PhaseSums& p = phase_[size_t(t)];
      if (p.steps == 0) continue;
      out += fmt::format("  thread {:2}: {} steps; start {}, chunks {}, wait for the last chunk {}, "
                         "reduction and update {}\n",
                         t, p.steps, both(p.enter, p.steps, p.h_enter), both(p.chunks, p.steps, p.h_chunks),
                         both(p.wait, p.steps, p.h_wait), both(p.reduce, p.steps, p.h_reduce));
    }
    std::fputs(out.c_str(), stderr);
  }

  // The chunks computed so far in the current step: the threads' done_ lines that carry its
  // number (a line with an older one is from an earlier step: that thread computed none yet).
  int64_t chunks_done(const StepArgs& a) const {
    int64_t n = 0;
    for (int t = 0; t < a.threads; ++t) {
      const uint64_t v = done_[size_t(t)].v.load(std::memory_order_acquire);
      if ((v >> kClaimShift) == a.seq) n += int64_t(v & kClaimMask);
    }
    return n;
  }

  // The next unclaimed item of `owner`'s run of `items` split over `threads`, claimed; -1
  // when none is left. A counter holds (tag << kClaimShift | items of the run claimed so
  // far), the tag being 2 x the step's number for its chunks and that + 1 for its parameter
  // blocks. Tags only grow: a smaller one is left from an earlier phase and reads as none
  // claimed (so counters are never reset), a bigger one means this phase is over (the blocks
  // start only once every chunk is done; a thread that computed no chunk may still be
  // looking for one then, and must not take a chunk again).
  int64_t claim(int owner, uint64_t tag, int64_t items, int threads) {
    std::atomic<uint64_t>& counter = claims_[size_t(owner)].v;
    const int64_t first = fast::owned_begin(items, threads, owner);
    const uint64_t run = uint64_t(fast::owned_begin(items, threads, owner + 1) - first);
    uint64_t v = counter.load(std::memory_order_relaxed);
    for (;;) {
      if ((v >> kClaimShift) > tag) return -1;
      const uint64_t taken = (v >> kClaimShift) == tag ? (v & kClaimMask) : 0;
      if (taken >= run) return -1;
      if (counter.compare_exchange_weak(v, (tag << kClaimShift) | (taken + 1), std::memory_order_relaxed))
        return first + int64_t(taken);
    }
  }

  // The chunk slots summed in chunk order and the optimiser step, for parameters begin … end.
  void reduce_update(const StepArgs& a, size_t begin, size_t end) {
    if (a.w_next != a.w) std::memcpy(a.w_next + begin, a.w + begin, (end - begin) * sizeof(float));
    if (optim_.is_adam()) {
      k_->reduce_adam(slots_.p, slot_stride_, a.chunks, begin, end, a.w_next, optim_.adam_m(),
                      optim_.adam_v(), a.ah);
      return;
    }
    // Each parameter's sum runs over the chunks in order (from 0.0). The chunk loop is
    // outside so that the parameters' sums are independent (vectorised) instead of one
    // dependent chain of double adds per parameter (measured ~11 us of a 180 us epoch).
    double* sum = sum_.data();
    for (size_t k = begin; k < end; ++k) sum[k] = 0.0;
    for (int c = 0; c < a.chunks; ++c) {
      const float* slot = slots_.p + size_t(c) * slot_stride_;
      for (size_t k = begin; k < end; ++k) sum[k] += double(slot[k]);
    }
    for (size_t k = begin; k < end; ++k) grad_.p[k] = float(sum[k]);
    optim_.update_range(a.w_next, grad_.p, a.as, begin, end);
  }

  int chunks_for(int count) const { return fast::chunk_count(count, P_); }
  int chunk_samples_max(int count) const {
    const int chunks = chunks_for(count);
    int most = 0;
    for (int c = 0; c < chunks; ++c)
      most = std::max(most, fast::chunk_begin(count, chunks, c + 1) - fast::chunk_begin(count, chunks, c));
    return most;
  }
  // The detail line's note when the batches leave threads idle: a step runs on no more
  // threads than its batch has chunks (see step()).
  std::string thread_rule() const {
    const int chunks = chunks_for(plan_.batch);
    if (threads_ == 1 || chunks >= threads_ || (chunks > 1 && P_ >= kParallelUpdate)) return "";
    if (chunks == 1 && gather_ahead_)
      return fmt::format(" (batches of {} samples are one chunk: 1 thread, and 1 gathering the next batch's samples)",
                         plan_.batch);
    return chunks == 1 ? fmt::format(" (batches of {} samples are one chunk: 1 thread)", plan_.batch)
                       : fmt::format(" (batches of {} samples are {} chunks: {} threads)", plan_.batch, chunks, chunks);
  }

  // One tile's layer inputs and outputs: ins[l] (rows ldins[l] apart) -> outs[l] (rows T apart).
  struct TileLayers {
    int T = 0, tcount = 0;  // tile width (whole quanta) and its real samples
    const float* Y = nullptr;
    size_t ldy = 0;
    float* outs[64];
    const float* ins[64];
    size_t ldins[64];
  };

  // Sums the chunk's gradient and loss over its tiles into the chunk's slot.
  void run_chunk(Scratch& s, int b, const ShuffleKey& key, int count, int chunks, int c) {
    // The SIMD layers' accumulators start from zero in the chunk's first tile (`fresh`);
    // the BLAS layers' (sgemm accumulates into them) are zeroed here.
    for (int l = 0; l < spec_.layers(); ++l)
      if (blas_[size_t(l)])
        std::memset(s.grad.p + acc_off_[size_t(l)], 0,
                    (size_t(spec_.in(l)) * spec_.out(l) + spec_.out(l)) * sizeof(float));
    std::memset(s.grad.p + loss_off_, 0, size_t(k_->lanes) * sizeof(float));
    const float two_over_count = 2.0f / (float(count) * float(data_.outputs));
    const int end = fast::chunk_begin(count, chunks, c + 1);
    TileLayers t;
    const int begin = fast::chunk_begin(count, chunks, c);
    for (int s0 = begin; s0 < end; s0 += t.T) {
      // A chunk's last tile is only as wide as its samples (in whole quanta).
      t.T = int(std::min<size_t>(size_t(tile_), round_up(size_t(end - s0), size_t(fast::kTileQuantum))));
      t.tcount = std::min(t.T, end - s0);
      tile_input(s, b, key, s0, t);
      const bool tail = forward_tile(s, t, two_over_count, s0 == begin);
      backward_tile(s, t, two_over_count, s0 == begin, tail);
    }
    chunk_to_slot(s, c);
  }

  // The tile's inputs and targets: the feature-major data itself where the tile lies there
  // whole (full batch; unshuffled mini-batches at aligned positions), else copied or
  // gathered rows, zero past the tile's real samples.
  void tile_input(Scratch& s, int b, const ShuffleKey& key, int s0, TileLayers& t) {
    const size_t pos0 = size_t(b) * size_t(plan_.batch) + size_t(s0);
    if (!plan_.shuffle && (plan_.batches == 1 || (t.tcount == t.T && pos0 % 16 == 0))) {
      // (A mini-batch's short last tile is copied instead: its padding lanes would otherwise
      // hold the next batch's samples.)
      t.ins[0] = xs_.p + pos0;
      t.Y = ys_.p + pos0;
      t.ldins[0] = t.ldy = ld_;
      return;
    }
    const float* x = s.x.p;
    if (cur_.use >= 0 && s0 == 0 && ahead_[cur_.use].T == t.T && ahead_[cur_.use].count == t.tcount) {
      x = ahead_[cur_.use].x.p;  // gathered during the step before
      if (tiles_ahead_used_) ++*tiles_ahead_used_;
    } else
      gather(s.rows.data(), s.x.p, b, key, s0, t.tcount, t.T);
    t.ins[0] = x;
    t.Y = x + size_t(data_.inputs) * t.T;
    t.ldins[0] = t.ldy = size_t(t.T);
  }

  // Forward: act(l) = f(W_l act(l-1) + b_l), rows of T samples, into the scratch's act rows.
  // Returns whether the fused forward did the tail too (forward_first_layers).
  bool forward_tile(Scratch& s, TileLayers& t, float two_over_count, bool fresh) {
    const int L = spec_.layers(), T = t.T;
    const float* P = cur_.w;
    float* a = s.act.p;
    for (int l = 0; l < L; ++l) {
      if (l > 0) {
        t.ins[l] = t.outs[l - 1];
        t.ldins[l] = size_t(T);
      }
      t.outs[l] = a;
      a += size_t(spec_.out(l)) * T;
      const float* W = P + w_off_[size_t(l)];
      const float* bias = P + b_off_[size_t(l)];
      const int act = int(spec_.activation(l));
      if (l == 0 && L >= 2 && !blas_[0] && !blas_[1]) {
        bool tail = false;
        const int done = forward_first_layers(s, t, a, two_over_count, fresh, tail);
        if (tail) return true;
        if (done >= 2) {
          l += done - 1;
          continue;
        }
      }
      if (blas_[size_t(l)]) {
        blas_forward(W, bias, spec_.in(l), spec_.out(l), t.ins[l], t.ldins[l], t.outs[l], T);
        k_->activate(t.outs[l], spec_.out(l), T, act, t.tcount);
      } else {
        k_->forward(W, bias, spec_.in(l), spec_.out(l), t.ins[l], t.ldins[l], t.outs[l], T, act, t.tcount);
      }
    }
    return false;
  }

  // The first two layers in one pass when the first has <= 2 inputs, and the third when it has
  // one output and the identity (same bits as layer-by-layer). `a` is the next free act row
  // (after layer 0's), advanced past what was done. Returns the layers done: 0, 2 or 3.
  // When the third layer is the last (a net of three layers), the same pass does its
  // backward too (FirstForward's tail: the loss, the third layer's gradient and the second
  // layer's delta, into the first delta buffer), and `tail` is set.
  int forward_first_layers(Scratch& s, TileLayers& t, float*& a, float two_over_count, bool fresh, bool& tail) {
    const int L = spec_.layers(), T = t.T;
    const float* P = cur_.w;
    t.outs[1] = a;
    t.ins[1] = t.outs[0];
    t.ldins[1] = size_t(T);
    const bool third = L >= 3 && !blas_[2];
    float* out2 = a + size_t(spec_.out(1)) * T;
    fast::FirstForward f{};
    f.W0 = P + w_off_[size_t(0)];
    f.b0 = P + b_off_[size_t(0)];
    f.nx = spec_.in(0);
    f.X0 = t.ins[0];
    f.ldx = t.ldins[0];
    f.K = spec_.out(0);
    f.act0 = int(spec_.activation(0));
    f.H = t.outs[0];
    f.W1 = P + w_off_[size_t(1)];
    f.b1 = P + b_off_[size_t(1)];
    f.out = spec_.out(1);
    f.Z = t.outs[1];
    f.T = T;
    f.act1 = int(spec_.activation(1));
    f.valid = t.tcount;
    f.W2 = third ? P + w_off_[size_t(2)] : nullptr;
    f.b2 = third ? P + b_off_[size_t(2)] : nullptr;
    f.out2 = third ? spec_.out(2) : 0;
    f.Z2 = out2;
    f.act2 = third ? int(spec_.activation(2)) : 0;
    f.cols = fwd_cols_;
    if (third && L == 3) {
      f.Y = t.Y;
      f.two_over_count = two_over_count;
      f.loss = s.grad.p + loss_off_;
      f.gW2 = s.grad.p + acc_off_[2];
      f.gb2 = f.gW2 + size_t(spec_.in(2)) * spec_.out(2) * size_t(k_->lanes);
      f.D = s.delta.p;
      f.fresh = fresh;
    }
    const int done = k_->forward_first(f);
    tail = done == 3 && f.D;
    if (done >= 2) {
      a = out2;
      if (done == 3) {
        t.outs[2] = out2;
        t.ins[2] = t.outs[1];
        t.ldins[2] = size_t(T);
        a += size_t(spec_.out(2)) * T;
      }
    }
    return done;
  }

  // Output delta and loss, then backward: the gradients of layer l from D and its input (into
  // the chunk's lane accumulators), then D for layer l-1. After the forward's tail (a net of
  // three layers), from layer 1 with its delta in the first buffer.
  void backward_tile(Scratch& s, const TileLayers& t, float two_over_count, bool fresh, bool tail) {
    const int L = spec_.layers(), T = t.T;
    const float* P = cur_.w;
    float* D = s.delta.p;
    float* Dn = s.delta.p + size_t(spec_.max_width()) * T;
    if (!tail)
      k_->output_delta(t.outs[L - 1], t.Y, t.ldy, data_.outputs, t.tcount, T, two_over_count,
                       int(spec_.activation(L - 1)), D, s.grad.p + loss_off_);
    for (int l = tail ? 1 : L - 1; l >= 0; --l) {
      const int in = spec_.in(l), out = spec_.out(l);
      const float* W = P + w_off_[size_t(l)];
      float* gW = s.grad.p + acc_off_[size_t(l)];
      if (!blas_[size_t(l)] && l > 0) {
        // Weight gradient and D for layer l-1 in one kernel call (fused for narrow layers).
        float* gb = gW + size_t(in) * out * size_t(k_->lanes);
        if (l == 1 && !blas_[0]) {
          // With the first layer's gradient too (fused when it has <= 2 inputs): done.
          float* gW0 = s.grad.p + acc_off_[0];
          float* gb0 = gW0 + size_t(spec_.in(0)) * spec_.out(0) * size_t(k_->lanes);
          k_->grad_backprop_first({W, D, t.ins[1], in, out, T, int(spec_.activation(0)), gW, gb, Dn, t.ins[0],
                                   t.ldins[0], spec_.in(0), gW0, gb0, fresh});
          break;
        }
        k_->grad_backprop(W, D, t.ins[l], in, out, T, int(spec_.activation(l - 1)), gW, gb, Dn, fresh);
        std::swap(D, Dn);
        continue;
      }
      if (blas_[size_t(l)]) {
        blas_grad(D, t.ins[l], t.ldins[l], in, out, T, gW);
        k_->bias_grad(D, out, T, gW + size_t(in) * out, fresh);
      } else {
        k_->grad_lanes(D, t.ins[l], t.ldins[l], in, out, T, gW, gW + size_t(in) * out * size_t(k_->lanes), fresh);
      }
      if (l > 0) {
        const int act_prev = int(spec_.activation(l - 1));
        if (blas_[size_t(l)]) {
          blas_backprop(W, D, in, out, T, Dn);
          k_->scale_by_derivative(Dn, t.outs[l - 1], in, T, act_prev);
        } else {
          k_->backprop(W, D, in, out, T, t.outs[l - 1], act_prev, Dn);
        }
        std::swap(D, Dn);
      }
    }
  }

  // Lanes -> chunk c's slot: the gradient in the flat parameter layout, then the loss.
  void chunk_to_slot(Scratch& s, int c) {
    float* slot = slots_.p + size_t(c) * slot_stride_;
    for (const LaneRun& r : runs_) {
      if (r.blas)
        std::memcpy(slot + r.slot, s.grad.p + r.acc, r.n * sizeof(float));
      else
        k_->lane_reduce(s.grad.p + r.acc, r.n, slot + r.slot);
    }
  }

  // The tile's samples of batch b, feature-major, zero beyond tcount: shuffled positions
  // from the vectorised permutation kernel, their rows gathered from the feature-major data
  // (vector gathers: the scalar copy from the sample-major data was ~10 % of a shuffled step
  // at batch 1024), or an unshuffled run of positions copied row by row.
  // Into x (inputs, then targets, rows T apart), with `rows` for the shuffled positions.
  void gather(uint32_t* rows, float* x, int b, const ShuffleKey& key, int s0, int tcount, int T) {
    const uint32_t pos0 = uint32_t(b) * uint32_t(plan_.batch) + uint32_t(s0);
    if (plan_.shuffle) {
      const fast::ShuffleArgs args{key.n, key.half_bits, {key.k[0], key.k[1], key.k[2], key.k[3]}};
      k_->shuffle_rows(args, pos0, tcount, rows);
      if (uint64_t(data_.n) * rec_stride_ < (uint64_t(1) << 31)) {
        k_->gather_rows(rec_.p, rec_stride_, data_.inputs + data_.outputs, rows, tcount, T, x);
      } else {  // too many records for 32-bit vector indices
        for (int f = 0; f < data_.inputs + data_.outputs; ++f) {
          float* dst = x + size_t(f) * T;
          for (int j = 0; j < tcount; ++j) dst[j] = rec_.p[size_t(rows[j]) * rec_stride_ + size_t(f)];
          std::fill(dst + tcount, dst + T, 0.0f);
        }
      }
      return;
    }
    auto copy = [&](const float* src, int n, float* dst) {
      for (int f = 0; f < n; ++f, src += ld_, dst += T) {
        std::memcpy(dst, src + pos0, size_t(tcount) * sizeof(float));
        std::fill(dst + tcount, dst + T, 0.0f);
      }
    };
    copy(xs_.p, data_.inputs, x);
    copy(ys_.p, data_.outputs, x + size_t(data_.inputs) * T);
  }

  // CBLAS enum values (cblas.h): RowMajor 101, NoTrans 111, Trans 112.
  static constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
  // Z (out × T) = b 1^T + W (out × in) A (in × T)
  void blas_forward(const float* W, const float* b, int in, int out, const float* A, size_t lda, float* Z,
                    int T) const {
    for (int o = 0; o < out; ++o) std::fill(Z + size_t(o) * T, Z + size_t(o + 1) * T, b[o]);
    blas_lib_->sgemm(kRowMajor, kNoTrans, kNoTrans, out, T, in, 1.0f, W, in, A, int(lda), 1.0f, Z, T);
  }
  // gW (out × in) += D (out × T) A^T (T × in)
  void blas_grad(const float* D, const float* A, size_t lda, int in, int out, int T, float* gW) const {
    blas_lib_->sgemm(kRowMajor, kNoTrans, kTrans, out, in, T, 1.0f, D, T, A, int(lda), 1.0f, gW, in);
  }
  // Dn (in × T) = W^T (in × out) D (out × T)
  void blas_backprop(const float* W, const float* D, int in, int out, int T, float* Dn) const {
    blas_lib_->sgemm(kRowMajor, kTrans, kNoTrans, in, T, out, 1.0f, W, in, D, T, 0.0f, Dn, T);
  }

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
};

}  // namespace

std::vector<std::string> fast_cpu_isas() {
  std::vector<std::string> v;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    v.push_back("avx512");
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) v.push_back("avx2");
#endif
  v.push_back("generic");
  return v;
}

bool fast_cpu_has_blas() { return load_openblas() != nullptr; }

std::unique_ptr<Backend> make_cpu_fast_backend(const Dataset& data, const BackendOptions& opt,
                                               const FastCpuTuning& tuning) {
  if (opt.spec.layers() > 64) throw UsageError("fast CPU backend: at most 64 layers");
  return std::make_unique<CpuFastBackend>(data, opt, tuning);
}

}  // namespace nntrain
