// cpu_fast.cpp — the fast CPU backend's face: set-up, details, train; how its work is split,
// reduced and updated (Adam). The inner loops are the per-ISA kernels (cpu_fast_kernels.inc).
//
// How a batch is computed (and why results do not depend on the thread count):
//   - the batch's samples are cut into fixed chunks (cpu_fast_partition.hpp: up to ~256 of
//     them, of about 256 to 2048 samples), each chunk into tiles of `tile_` samples (both depend only on
//     the model and the batch size);
//   - a tile goes through the forward and the backward pass while its activations stay in
//     the thread's L1/L2 buffers (feature-major rows of tile_ floats, one lane per sample);
//     gradients accumulate in the thread's per-chunk accumulators (16 lanes on every ISA:
//     sample s into lane s % 16, in tile order);
//   - at the end of a chunk the lanes are summed in a fixed tree into that chunk's slot;
//   - the chunk slots are summed in chunk order (in double) and Adam (nnmath.hpp) applied.
// Each thread computes its own run of the chunks, then helps with the others' (claimed one
// at a time from per-thread counters); a chunk's result does not depend on which thread
// computed it, so 1, 2 or 128 threads give the same bits. No order depends on the vector
// width and multiply-adds are fused on every ISA, so avx512, avx2 and generic give the same
// bits too (OpenBLAS layers aside: their order is OpenBLAS's, chosen by the CPU).
//
// The stages live in one file each, around one class (cpu_fast_backend.hpp): this file is its
// face (set-up: plan, allocate, start the pool; details; train), cpu_fast_step.cpp the step's
// parallel region, claims and reduction, cpu_fast_tile.cpp a chunk's tiles (inputs, forward,
// backward, BLAS), cpu_fast_tuning.cpp the knobs (FastCpuTuning, NNTRAIN_FAST_*).
#include "cpu_fast.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <stdexcept>

#include "cpu_fast_backend.hpp"
#include "errors.hpp"
#include "sysinfo.hpp"

namespace nntrain {

namespace fast {

CpuFastBackend::CpuFastBackend(const Dataset& data, const BackendOptions& opt, const FastCpuTuning& tuning)
    : data_(data), opt_(opt), spec_(opt.spec), plan_(make_batch_plan(data.n, opt.batch_size, opt.shuffle)),
      optim_(opt.optimizer, opt.spec.param_count()) {
  const auto t0 = std::chrono::steady_clock::now();
  settings_ = resolve_settings(tuning);  // (every knob checked, whatever the net and the batches)
  k_ = settings_.kernels;
  threads_ = opt.threads > 0 ? opt.threads : hardware_threads();
  absent_worker_ = tuning.absent_worker;
  late_worker_ = tuning.late_worker;
  wait_for_ahead_ = tuning.wait_for_ahead;
  phases_ = settings_.phases;
  phase_clock0_ = std::chrono::steady_clock::now();
  phase_tick0_ = phase_ticks();
  tiles_ahead_used_ = tuning.tiles_ahead_used;
  blas_min_ = settings_.blas_min;
  fwd_cols_ = settings_.fwd_cols;
  plan_layers();
  plan_accumulators();
  allocate();
  start_pool();
  setup_.alloc_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

CpuFastBackend::~CpuFastBackend() {
  if (phases_) report_phases();
}

// Which layers go through OpenBLAS sgemm (those at least blas_min_ wide, when it loads), and
// the tile.
void CpuFastBackend::plan_layers() {
  const int L = spec_.layers();
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
}

// Gradient accumulator layout (per thread), the chunk slots' and the lane runs between them.
void CpuFastBackend::plan_accumulators() {
  const int L = spec_.layers();
  const size_t lanes = size_t(fast::kAccLanes);  // floats per accumulator (every ISA)
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
}

// The chunk slots, the parameters, the data in its tiles' layout, each thread's scratch, the
// tiles gathered ahead and the claim counters.
void CpuFastBackend::allocate() {
  slots_ = AlignedFloats(size_t(max_chunks_) * slot_stride_);
  grad_ = AlignedFloats(P_);
  pw_[0] = AlignedFloats(P_);
  pw_[1] = AlignedFloats(P_);
  sum_.assign(P_, 0.0);
  lay_out_data();
  const int L = spec_.layers(), nf = data_.inputs + data_.outputs;
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
  gather_ahead_ =
      settings_.gather_ahead && plan_.shuffle && threads_ >= 2 && plan_.batches > 1 && chunks_for(plan_.batch) == 1;
  if (gather_ahead_)
    for (TileAhead& t : ahead_) {
      t.x = AlignedFloats(size_t(nf) * tile_);
      t.rows.assign(size_t(tile_), 0);
    }
  claims_.reset(new ClaimCounter[size_t(threads_)]);
  if (phases_) phase_.reset(new PhaseSums[size_t(threads_)]);
  done_.reset(new ClaimCounter[size_t(threads_)]);
}

// The data once in the layout its tiles are read from. Full and unshuffled batches:
// feature-major rows, padded with zeros past the last sample by at least one tile quantum
// (a tile of T samples starting anywhere before n ends before ld_). Shuffled batches: one
// record per sample (inputs, then targets), so that a sample's values share a cache line.
void CpuFastBackend::lay_out_data() {
  const int nf = data_.inputs + data_.outputs;
  rec_stride_ = uint32_t(nf <= 4 ? 4 : round_up(size_t(nf), 16));
  if (plan_.shuffle) {
    rec_ = AlignedFloats(size_t(data_.n) * rec_stride_);
    for (int s = 0; s < data_.n; ++s) {
      float* r = rec_.p + size_t(s) * rec_stride_;
      std::copy_n(data_.x.data() + size_t(s) * data_.inputs, data_.inputs, r);
      std::copy_n(data_.y.data() + size_t(s) * data_.outputs, data_.outputs, r + data_.inputs);
    }
  } else {
    ld_ = round_up(size_t(data_.n) + fast::kTileQuantum, 16);
    xs_ = AlignedFloats(size_t(data_.inputs) * ld_);
    ys_ = AlignedFloats(size_t(data_.outputs) * ld_);
    for (int s = 0; s < data_.n; ++s) {
      for (int f = 0; f < data_.inputs; ++f) xs_.p[size_t(f) * ld_ + s] = data_.x[size_t(s) * data_.inputs + f];
      for (int f = 0; f < data_.outputs; ++f) ys_.p[size_t(f) * ld_ + s] = data_.y[size_t(s) * data_.outputs + f];
    }
  }
}

void CpuFastBackend::start_pool() {
  step_fn_ = [this](int tid) { step_body(tid); };
  // The pool holds the threads a step can use and no more. A worker that no step needs
  // still spins on the pool's line between steps, and every hand-off between the step's own
  // threads then costs more: on a 16-core Xeon (2026-11-27, docs/BENCHMARKS.md), shuffled
  // batches of 256 (one chunk, a worker gathering ahead) took 4.30 us per step on a pool of
  // 2 threads and 5.38 on a pool of 16. A batch of one chunk uses 1 thread, or 2 when a
  // worker gathers ahead; larger batches keep every thread (on that machine batches of 4
  // chunks ran no slower beside idle workers: 96.6 ms on a pool of 16, 103.9 on a pool of 4).
  // An evaluation backend's pool runs between the training's timed chunks: its idle workers
  // must not spin into them (2 cores, validation every epoch: training up to 1.7x slower).
  pool_ = std::make_unique<ThreadPool>(chunks_for(plan_.batch) == 1 ? (gather_ahead_ ? 2 : 1) : threads_,
                                       opt_.evaluation ? std::chrono::microseconds(0) : ThreadPool::kSpinFor);
  // Touch every thread once so stacks, scratch pages and the spin loop are live.
  pool_->run([](int) {});
}

std::string CpuFastBackend::details() const {
  std::string blas_layers;
  for (int l = 0; l < spec_.layers(); ++l)
    if (blas_[size_t(l)]) blas_layers += (blas_layers.empty() ? "" : ",") + std::to_string(l + 1);
  const std::string blocks =
      k_->lanes >= 8 ? fmt::format(", forward blocks of {} vector{}", fwd_cols_, fwd_cols_ > 1 ? "s" : "") : "";
  return fmt::format("{} ({} lanes{}{}), {} threads{}, tile {} samples, {} chunk(s) of <= {} samples per batch, {}; {}",
                     k_->isa, k_->lanes, k_->fma ? ", FMA" : "", blocks, threads_, thread_rule(), tile_,
                     chunks_for(plan_.batch), chunk_samples_max(plan_.batch),
                     blas_layers.empty()
                         ? (no_blas_reason_.empty() ? std::string("no BLAS layer") : no_blas_reason_)
                         : fmt::format("OpenBLAS sgemm for layer(s) {}", blas_layers),
                     describe(settings_));
}

int CpuFastBackend::chunk_samples_max(int count) const {
  const int chunks = chunks_for(count);
  int most = 0;
  for (int c = 0; c < chunks; ++c)
    most = std::max(most, fast::chunk_begin(count, chunks, c + 1) - fast::chunk_begin(count, chunks, c));
  return most;
}

// Those taking part in a step (step()) and, for a batch of one chunk, the one gathering the
// next batch ahead: a 16-thread pool runs batches of 100 samples on 1 thread.
int CpuFastBackend::threads() const {
  const int chunks = chunks_for(plan_.batch);
  if (chunks == 1) return gather_ahead_ ? 2 : 1;
  return P_ >= kParallelUpdate ? threads_ : std::min(threads_, chunks);
}

// The detail line's note when the batches leave threads idle: a step runs on no more
// threads than its batch has chunks (see step()).
std::string CpuFastBackend::thread_rule() const {
  const int chunks = chunks_for(plan_.batch);
  if (threads_ == 1 || chunks >= threads_ || (chunks > 1 && P_ >= kParallelUpdate)) return "";
  if (chunks == 1 && gather_ahead_)
    return fmt::format(" (batches of {} samples are one chunk: 1 thread, and 1 gathering the next batch's samples)",
                       plan_.batch);
  return chunks == 1 ? fmt::format(" (batches of {} samples are one chunk: 1 thread)", plan_.batch)
                     : fmt::format(" (batches of {} samples are {} chunks: {} threads)", plan_.batch, chunks, chunks);
}

void CpuFastBackend::load(const Params& p) {
  if (p.values.size() != P_)  // (the trainer checks a loaded model against the config first)
    throw std::logic_error(fmt::format("fast CPU backend: {} parameters loaded into a net of {}", p.values.size(), P_));
  std::copy(p.values.begin(), p.values.end(), pw_[pin_].p);
  optim_.reset();
  epoch_ = 0;
}

double CpuFastBackend::train(int epochs, float* losses) {
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

}  // namespace fast

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

std::string fast_cpu_layers_problem(const ModelSpec& spec) {
  if (spec.layers() <= kFastMaxLayers) return "";
  return fmt::format("the fast CPU backend takes at most {} layers, this model has {} (cpu.backend=reference "
                     "takes any number)",
                     kFastMaxLayers, spec.layers());
}

double fast_cpu_host_bytes(const BackendOptions& opt, int samples) {
  // As plan_layers(), plan_accumulators() and allocate() size them (a bad knob is the fits
  // check's to report: the defaults here).
  const ModelSpec& spec = opt.spec;
  const int L = spec.layers();
  fast::FastSettings st;
  try {
    st = fast::resolve_settings({});
  } catch (const UsageError&) {
    st.blas_min = kFastBlasMinWidth;
  }
  bool any_blas = false;
  for (int l = 0; l < L; ++l) any_blas = any_blas || std::min(spec.in(l), spec.out(l)) >= st.blas_min;
  any_blas = any_blas && fast_cpu_has_blas();
  double acc = double(fast::kAccLanes) * (1 + fast::kLaneReduceSlack), act_rows = 0;
  for (int l = 0; l < L; ++l) {
    const double n = double(spec.in(l)) * spec.out(l) + spec.out(l);
    acc += any_blas && std::min(spec.in(l), spec.out(l)) >= st.blas_min ? n : n * fast::kAccLanes;
    act_rows += spec.out(l);
  }
  const size_t P = spec.param_count();
  const BatchPlan plan = make_batch_plan(samples, opt.batch_size, opt.shuffle);
  int chunks = 1;
  for (int b : {0, plan.batches - 1}) chunks = std::max(chunks, fast::chunk_count(plan.size(b), P));
  const size_t tile_max = any_blas ? fast::kTileBlas : fast::kTileSmall;
  const double tile = double(std::min<size_t>(tile_max, fast::round_up(size_t(std::max(plan.batch, 1)),
                                                                       size_t(fast::kTileQuantum))));
  const double threads = opt.threads > 0 ? opt.threads : hardware_threads();
  const int nf = spec.widths.front() + spec.widths.back();
  const double per_thread = act_rows * tile + 2.0 * spec.max_width() * tile + nf * tile + acc;
  // The data in its layout (lay_out_data): shuffled, a padded record per sample; else
  // feature-major rows padded past the last sample.
  const double data = plan.shuffle ? double(samples) * (nf <= 4 ? 4.0 : double(fast::round_up(size_t(nf), 16)))
                                   : double(nf) * double(fast::round_up(size_t(samples) + fast::kTileQuantum, 16));
  // The chunk slots, each thread's scratch, the data, and the second weight copy (the first,
  // the gradient and the double sums are training_bytes()' live copy, gradient and sums).
  const double floats = double(chunks) * double(fast::round_up(P + 1, 16)) + threads * per_thread + data + double(P);
  return 4.0 * floats;
}

std::unique_ptr<Backend> make_cpu_fast_backend(const Dataset& data, const BackendOptions& opt,
                                               const FastCpuTuning& tuning) {
  if (opt.spec.layers() > kFastMaxLayers) throw UsageError(fast_cpu_layers_problem(opt.spec));
  return std::make_unique<fast::CpuFastBackend>(data, opt, tuning);
}

}  // namespace nntrain
