// thread_pool.cpp — see thread_pool.hpp.
#include "thread_pool.hpp"

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define NN_PAUSE() _mm_pause()
#else
#define NN_PAUSE() std::this_thread::yield()
#endif

namespace nntrain {

namespace {
// How long an idle worker spins before it blocks: long enough to bridge the gap between two
// epochs (the gradient reduction and the Adam step), short enough not to burn a core when
// training has stopped.
constexpr auto kSpinFor = std::chrono::microseconds(500);
}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int t = 1; t < threads; ++t) workers_.emplace_back([this, t] { worker(t); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::run(const std::function<void(int)>& fn) {
  if (workers_.empty()) {
    fn(0);
    return;
  }
  fn_ = &fn;
  done_.store(0, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  fn(0);
  const int others = int(workers_.size());
  for (unsigned spins = 0; done_.load(std::memory_order_acquire) < others; ++spins) {
    if (spins < 4096)
      NN_PAUSE();
    else
      std::this_thread::yield();
  }
  fn_ = nullptr;
}

void ThreadPool::worker(int index) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t g = generation_.load(std::memory_order_acquire);
    if (g == seen) {
      const auto until = std::chrono::steady_clock::now() + kSpinFor;
      for (unsigned spins = 1; (g = generation_.load(std::memory_order_acquire)) == seen; ++spins) {
        NN_PAUSE();
        if (spins % 64 == 0 && std::chrono::steady_clock::now() > until) {
          std::unique_lock<std::mutex> lock(mutex_);
          wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
        }
      }
    }
    seen = g;
    if (stop_.load()) return;
    (*fn_)(index);
    done_.fetch_add(1, std::memory_order_release);
  }
}

}  // namespace nntrain
