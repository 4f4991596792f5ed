// thread_pool.hpp — a small fixed pool for the fast CPU backend: N threads (the caller
// is thread 0), one parallel region at a time, started once before any timing.
//
// An epoch of the reference experiment takes ~100 µs, so waking threads through the
// kernel every epoch would cost a noticeable share of it: workers spin (with pause) for a
// short while after each region and only then block on a condition variable.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace nntrain {

// One turn of a spin loop: x86's pause hint; elsewhere a yield to the OS. The workers'
// spin (thread_pool.cpp) and wait_a_little use it.
inline void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// A step of a spin-wait on another thread: pause, and yield to the OS after a while (a
// thread descheduled on a busy machine). The pool's waits and the fast backend's use it.
inline void wait_a_little(unsigned spins) {
  if (spins < 4096)
    spin_pause();
  else
    std::this_thread::yield();
}

class ThreadPool {
 public:
  // threads >= 1; starts threads - 1 workers. An idle worker spins for `spin` before it
  // blocks: long enough to bridge the gap between two epochs (the reduction and the Adam
  // step), short enough not to burn a core when training has stopped. A pool used now and
  // then beside a timed one (an evaluation between training chunks) passes 0: its workers
  // block at once instead of competing with the timed work.
  static constexpr std::chrono::microseconds kSpinFor{500};
  explicit ThreadPool(int threads, std::chrono::microseconds spin = kSpinFor);
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
  // How a worker joins and leaves: with more than kSharedJoinMax threads, through its own
  // line: a region costs thread 0 one store to the line the workers poll (two when a worker
  // has not been in and out by the end of thread 0's part: the region must then be closed)
  // and a read of each taking part worker's line (misses that overlap); each worker writes
  // only its own line. With two, through a count in the
  // polled line itself (a read-modify-write to join and one to leave), which moves one line
  // between the two cores instead of two. Measured on a 16-core Xeon
  // (docs/journal/2026-11-issue14-cpu-minibatch.md, "Sixteen cores: one line per worker"):
  // a region in which each thread reports and thread 0 waits for all costs 0.5 us with the
  // count and 0.7 with the lines on 2 threads, 0.9-1.0 and 0.7-0.8 on 4, 2.5-2.7 and 0.7-0.9
  // on 8, 5.8-6.4 and 0.9-1.1 on 16: on the one shared
  // line, each worker's join and leave queue behind the others'.
  void run(const std::function<void(int)>& fn, int threads = 0);

 private:
  void worker(int index);
  void shut_down();  // stops and joins every worker

  std::vector<std::thread> workers_;
  static constexpr int kSharedJoinMax = 2;
  // state_: generation << 32 | closed bit | shared-count bit | number of workers inside (with
  // the shared count; else 0, and only thread 0 and shut_down write state_).
  static constexpr uint64_t kClosed = uint64_t(1) << 31;
  static constexpr uint64_t kShared = uint64_t(1) << 30;
  static constexpr uint64_t kInside = kShared - 1;
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
  std::chrono::microseconds spin_;
  std::mutex mutex_;
  std::condition_variable wake_;
};

}  // namespace nntrain
