// region_cost.cpp — what one parallel region of the fast CPU backend's thread pool
// (kernels/cpu/thread_pool.hpp) costs on this machine, with nothing to compute: the fixed
// cost every multi-thread step pays for its start, its "all chunks done" wait and its end.
//
//   build/nntrain_region_cost [--regions N] [--reps N] [--threads T1,T2,...]
//
// For each thread count t (default 2, 4, 8, … up to the CPU count, and the CPU count): a pool
// of t threads runs N regions back to back (default 20,000; the workers stay spinning between
// them, as between the steps of a training run), min of --reps (default 5) timings. Two
// kinds of region, one JSON line per t (nanoseconds per region):
//   empty_ns  fn does nothing: the pool's start and end alone
//   step_ns   fn as a step uses it: each thread reports one item done (the fast backend
//             writes a per-thread line, as this does), and thread 0 waits until every taking
//             part thread has reported before it returns (the wait before the reduction)
// A worker that misses a region (descheduled) shows up as a wait of up to ~50 us, not as an
// error. A measurement tool: nothing asserts its figures.
// The source depends only on thread_pool.hpp, so that an older pool can be timed with the same
// file (docs/journal/2026-11-issue14-cpu-minibatch.md, "Sixteen cores: one line per worker").
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "thread_pool.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct alignas(64) Line {
  std::atomic<uint64_t> v{0};
};

int usage(const char* msg) {
  std::fprintf(stderr, "nntrain_region_cost: %s\nusage: nntrain_region_cost [--regions N] [--reps N] [--threads T1,T2,...]\n", msg);
  return 2;
}

double time_regions(nntrain::ThreadPool& pool, int t, int regions, int reps, bool step_like) {
  std::unique_ptr<Line[]> done(new Line[size_t(t)]);
  uint64_t seq = 0;
  const std::function<void(int)> empty = [](int) {};
  const std::function<void(int)> step = [&](int tid) {
    done[size_t(tid)].v.store(seq, std::memory_order_release);
    if (tid != 0) return;
    // Thread 0 waits for every thread's report, for at most ~50 us: a worker descheduled
    // by the host may not join in time, and the pool lets a late worker skip the region
    // (its missing report then counts as that much waiting, not as an error).
    const auto give_up = Clock::now() + std::chrono::microseconds(50);
    for (int w = 1; w < t; ++w) {
      for (unsigned spins = 0; done[size_t(w)].v.load(std::memory_order_acquire) != seq; ++spins) {
        if (spins % 256 == 255 && Clock::now() > give_up) break;
      }
    }
  };
  const std::function<void(int)>& fn = step_like ? step : empty;
  for (int i = 0; i < 2000; ++i) {  // warm-up: workers started and spinning
    ++seq;
    pool.run(fn, t);
  }
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < regions; ++i) {
      ++seq;
      pool.run(fn, t);
    }
    best = std::min(best, std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / regions);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int regions = 20000, reps = 5;
  const int cpus = int(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> counts;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--regions" && i + 1 < argc) {
      regions = std::atoi(argv[++i]);
      if (regions < 1) return usage("--regions: a positive number");
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
      if (reps < 1) return usage("--reps: a positive number");
    } else if (a == "--threads" && i + 1 < argc) {
      std::string list = argv[++i];
      for (size_t p = 0; p <= list.size();) {
        const size_t q = std::min(list.find(',', p), list.size());
        const int t = std::atoi(list.substr(p, q - p).c_str());
        if (t < 2 || t > 1024) return usage("--threads: thread counts from 2 to 1024, comma-separated");
        counts.push_back(t);
        p = q + 1;
      }
    } else {
      return usage(("unknown argument " + a).c_str());
    }
  }
  if (counts.empty()) {
    for (int t = 2; t < cpus; t *= 2) counts.push_back(t);
    if (cpus >= 2) counts.push_back(cpus);
  }
  for (int t : counts) {
    nntrain::ThreadPool pool(t);
    const double empty = time_regions(pool, t, regions, reps, false);
    const double step = time_regions(pool, t, regions, reps, true);
    std::printf("{\"threads\": %d, \"cpus\": %d, \"regions\": %d, \"reps\": %d, \"empty_ns\": %.1f, \"step_ns\": %.1f}\n",
                t, cpus, regions, reps, empty, step);
    std::fflush(stdout);
  }
  return 0;
}
