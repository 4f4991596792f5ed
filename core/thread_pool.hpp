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
  // Runs fn(thread_index) on every thread (the caller is 0) and returns when all are done.
  // Which thread does which work item must not change results: callers hand out items
  // whose results land in per-item slots, reduced afterwards in a fixed order.
  void run(const std::function<void(int)>& fn);

 private:
  void worker(int index);

  std::vector<std::thread> workers_;
  const std::function<void(int)>* fn_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> done_{0};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
};

}  // namespace nntrain
