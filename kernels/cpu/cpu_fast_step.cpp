// cpu_fast_step.cpp — the fast backend's step: one parallel region per batch, the chunks
// claimed from per-thread counters, then the chunk-slot reduction and the optimiser update
// (how the work is split and why the bits do not depend on the thread count: cpu_fast.cpp).
#include <cstdio>
#include <fmt/format.h>
#include <thread>

#include "cpu_fast_backend.hpp"

namespace nntrain::fast {

namespace {

// A hint that this core is about to write the cache line at p: a line another core holds
// then moves while this one computes, instead of when the stores reach it.
inline void prefetch_write(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));  // (a no-op where unsupported)
#else
  __builtin_prefetch(p, 1, 3);
#endif
}

}  // namespace

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
double CpuFastBackend::step(int b, const ShuffleKey& key, const ShuffleKey& next_key) {
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
void CpuFastBackend::step_body(int tid) {
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
void CpuFastBackend::report_phases() const {
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
int64_t CpuFastBackend::chunks_done(const StepArgs& a) const {
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
int64_t CpuFastBackend::claim(int owner, uint64_t tag, int64_t items, int threads) {
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
void CpuFastBackend::reduce_update(const StepArgs& a, size_t begin, size_t end) {
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

}  // namespace nntrain::fast
