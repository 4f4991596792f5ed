// thread_pool.cpp — see thread_pool.hpp.
#include "thread_pool.hpp"

#include <algorithm>
#include <chrono>

namespace nntrain {

ThreadPool::ThreadPool(int threads, std::chrono::microseconds spin)
    : presence_(new Presence[size_t(std::max(threads, 1))]), spin_(spin) {
  try {
    for (int t = 1; t < threads; ++t) workers_.emplace_back([this, t] { worker(t); });
  } catch (...) {
    // Thread creation failed (std::system_error: a process/thread limit). The destructor
    // does not run for a constructor that throws, and destroying a joinable std::thread
    // calls std::terminate: stop and join the workers already started, then report.
    shut_down();
    throw;
  }
}

ThreadPool::~ThreadPool() { shut_down(); }

void ThreadPool::shut_down() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
    state_.store(((state_.load() >> 32) + 1) << 32, std::memory_order_release);
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::run(const std::function<void(int)>& fn, int threads) {
  if (threads <= 0 || threads > size()) threads = size();
  if (threads == 1) {
    fn(0);
    return;
  }
  // (Written only when they change: the workers poll this line, and each write would take
  // it back from them.) Published by the generation's store.
  if (fn_ != &fn) fn_ = &fn;
  if (active_.load(std::memory_order_relaxed) != threads) active_.store(threads, std::memory_order_relaxed);
  // A new generation, open. Then wake the sleepers, if any. Both sequentially consistent:
  // either a worker about to sleep sees the new generation in its wait's predicate, or this
  // sees it counted in sleepers_ (worker()). Without a sleeper, no mutex and no notify: on
  // two cores they were ~0.2 us of thread 0's time before its fn(0) (rdtsc, 2026-11-25).
  const uint64_t gen = ((state_.load(std::memory_order_relaxed) >> 32) + 1) & 0xffffffffu;
  const bool shared = threads <= kSharedJoinMax;
  state_.store((gen << 32) | (shared ? kShared : 0), std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard<std::mutex> lock(mutex_); }
    wake_.notify_all();
  }
  fn(0);
  if (shared) {
    // Close the region: late workers skip it. Then wait for those inside (they hold items).
    state_.fetch_or(kClosed, std::memory_order_acq_rel);
    for (unsigned spins = 0; (state_.load(std::memory_order_acquire) & kInside) != 0; ++spins) wait_a_little(spins);
    return;
  }
  // A worker joins a generation at most once: one that has been in and out of this region
  // cannot come back to it. When every taking part worker has (the common case: thread 0's
  // part ends last, with the reduction), the region needs no closing, and thread 0 saves the
  // store that would take the polled line from every worker (one transfer between cores).
  const uint64_t inside = (gen << 1) | 1, left = gen << 1;
  int w = 1;
  while (w < threads && presence_[size_t(w - 1)].v.load(std::memory_order_acquire) == left) ++w;
  if (w == threads) return;
  // Close the region: late workers skip it. Then wait for those inside (they hold items).
  // A worker announces itself on its own line and then reads state_; thread 0 writes state_
  // and then reads the worker's line, all four sequentially consistent: either the worker
  // sees the region closed (and leaves without running fn), or thread 0 sees it inside and
  // waits for it to leave. The loads of the workers' lines are independent, so their misses
  // overlap instead of queueing on one line.
  state_.store((gen << 32) | kClosed, std::memory_order_seq_cst);
  for (; w < threads; ++w) {
    const std::atomic<uint64_t>& p = presence_[size_t(w - 1)].v;
    for (unsigned spins = 0; p.load(std::memory_order_seq_cst) == inside; ++spins) wait_a_little(spins);
  }
}

void ThreadPool::worker(int index) {
  std::atomic<uint64_t>& presence = presence_[size_t(index - 1)].v;
  uint64_t seen = 0;  // the last generation this worker looked at
  for (;;) {
    uint64_t s = state_.load(std::memory_order_acquire);
    if ((s >> 32) == seen) {
      const auto until = std::chrono::steady_clock::now() + spin_;
      for (unsigned spins = 1; ((s = state_.load(std::memory_order_acquire)) >> 32) == seen; ++spins) {
        spin_pause();
        if (spins % 64 == 0 && std::chrono::steady_clock::now() > until) {
          std::unique_lock<std::mutex> lock(mutex_);
          sleepers_.fetch_add(1, std::memory_order_seq_cst);
          wake_.wait(lock, [&] { return (state_.load(std::memory_order_seq_cst) >> 32) != seen; });
          sleepers_.fetch_sub(1, std::memory_order_relaxed);
        }
      }
    }
    seen = s >> 32;
    if (stop_.load()) return;
    if (index >= active_.load(std::memory_order_relaxed)) continue;  // not needed this time
    if (s & kClosed) continue;  // closed before this worker came to it
    if (s & kShared) {
      // Join through the shared count unless the region has closed (or moved on) meanwhile.
      bool joined = false;
      while ((s >> 32) == seen && !(s & kClosed)) {
        if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
          joined = true;
          break;
        }
      }
      if (!joined) continue;
      (*fn_)(index);
      state_.fetch_sub(1, std::memory_order_acq_rel);
      continue;
    }
    // Join: announce, then check that the region is still open (run() says why this order).
    presence.store((seen << 1) | 1, std::memory_order_seq_cst);
    if (state_.load(std::memory_order_seq_cst) != (seen << 32)) {
      presence.store(seen << 1, std::memory_order_release);  // closed or moved on: skip it
      continue;
    }
    (*fn_)(index);
    presence.store(seen << 1, std::memory_order_release);
  }
}

}  // namespace nntrain
