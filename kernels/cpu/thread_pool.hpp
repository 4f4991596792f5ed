// thread_pool.hpp — a small fixed pool for the fast CPU backend: N threads (the caller
// is thread 0), one parallel region at a time, started once before any timing.
//
// An epoch of the reference experiment takes ~100 µs, so waking threads through the
// kernel every epoch would cost a noticeable share of it: workers spin (with pause) for a
// short while after each region and only then block on a condition variable.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace nntrain {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // threads >= 1; starts threads - 1 workers
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return int(workers_.size()) + 1; }
  // Runs fn(thread_index) on the caller (index 0) and on every worker that joins in time,
  // and returns when fn(0) has returned and every worker that joined has left. A worker
  // that has not joined by the time fn(0) returns (descheduled on a busy machine) skips the
  // region instead of making everyone wait for it. So fn must hand out its work
  // dynamically (claims from counters) and the caller's fn(0) must take whatever is left:
  // every item is done by someone, whoever joins. Which thread does which item must not
  // change results: items write per-item slots, reduced afterwards in a fixed order.
  //
  // `threads` (1 … size(), 0 = all) bounds the threads that take part: workers with an
  // index >= threads skip the region.
  //
  // Nothing shared is read-modify-written per worker: a region costs thread 0 two stores to
  // the line the workers poll (open, close) and one read of each taking part worker's own
  // line; each worker writes only its own line (joined, left). On a 16-core Xeon one shared
  // counter that every worker joined and left through cost ~7.8 us per region
  // (docs/ARCHITECTURE.md, "Measured on 16 cores"): ~350 ns per transfer, serialised.
  void run(const std::function<void(int)>& fn, int threads = 0);

 private:
  void worker(int index);
  void shut_down();  // stops and joins every worker

  std::vector<std::thread> workers_;
  // state_: generation << 32 | closed bit. Written by thread 0 only (and shut_down).
  static constexpr uint64_t kClosed = uint64_t(1) << 31;
  // What a spinning worker reads to start a region, in one cache line of its own (a line the
  // workers poll: whatever else lived in it would move between cores with it).
  alignas(64) std::atomic<uint64_t> state_{0};
  const std::function<void(int)>* fn_ = nullptr;
  std::atomic<int> active_{0};  // threads taking part in the current region
  std::atomic<bool> stop_{false};
  // Each worker's own line: generation << 1 | 1 while it is inside that generation's region,
  // generation << 1 once it has left it (or skipped it, late). At first neither, for any
  // generation (an odd value above every generation << 1 | 1).
  struct alignas(64) Presence {
    std::atomic<uint64_t> v{~uint64_t(0)};
  };
  std::unique_ptr<Presence[]> presence_;  // [index - 1] for worker index
  // The sleepers' side: run() takes the mutex and notifies only when a worker sleeps.
  alignas(64) std::atomic<int> sleepers_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
};

}  // namespace nntrain
