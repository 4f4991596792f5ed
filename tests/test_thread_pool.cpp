// test_thread_pool.cpp — the fast CPU backend's thread pool (kernels/cpu/thread_pool.hpp) on
// its own: workers that fell asleep after an idle spell must wake for the next region (a
// lost wake-up would leave a worker asleep for good and its cores idle), and a region
// bounded to fewer threads must not run on the others.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "thread_pool.hpp"

using namespace nntrain;
using namespace std::chrono;

TEST_CASE("thread pool: workers asleep after an idle spell wake for the next region", "[pool]") {
  ThreadPool pool(3);
  std::atomic<int> joined{0};
  int regions = 0, missed = 0;
  // Idle gaps shorter and longer than the workers' spin limit (500 us, counted from each
  // worker's last region), so that a region finds its workers spinning, asleep, or on their
  // way to sleep. (This catches a sleeper the pool does not count or wake; the ordering that
  // closes the nanosecond-wide race between sleeping and a new region rests on the argument
  // in thread_pool.cpp and on the ThreadSanitizer run of this suite, not on this test.)
  for (int i = 0; i < 120 && missed == 0; ++i) {
    std::this_thread::sleep_for(microseconds(i % 3 == 0 ? 2000 : 350 + (i * 37) % 300));
    joined.store(0);
    // Thread 0 waits in the region until both workers are inside: a worker that was not
    // woken never joins (a region stays open while thread 0 is in it).
    pool.run([&](int t) {
      if (t > 0) {
        joined.fetch_add(1);
        return;
      }
      const auto until = steady_clock::now() + seconds(10);
      while (joined.load() < 2 && steady_clock::now() < until) std::this_thread::yield();
    });
    ++regions;
    if (joined.load() != 2) ++missed;
  }
  INFO(missed << " of " << regions << " regions had a worker that never woke");
  CHECK(missed == 0);
  CHECK(regions == 120);
}

TEST_CASE("thread pool: a region bounded to fewer threads runs on those only", "[pool]") {
  ThreadPool pool(4);
  REQUIRE(pool.size() == 4);
  // Up and down: the pool writes its thread bound only when it changes.
  for (int bound : {1, 2, 3, 4, 2, 3, 1, 2}) {
    std::atomic<int> ran[4] = {0, 0, 0, 0};
    for (int r = 0; r < 50; ++r) pool.run([&](int t) { ran[t].fetch_add(1); }, bound);
    CHECK(ran[0].load() == 50);  // the caller always runs its part
    for (int t = bound; t < 4; ++t) CHECK(ran[t].load() == 0);
  }
}

TEST_CASE("thread pool: a region returns only after every worker that joined it has left", "[pool]") {
  ThreadPool pool(3);
  // Both ways of joining (thread_pool.hpp): 2 threads through the shared count, 3 through the
  // workers' own lines.
  for (int bound : {2, 3}) {
    std::atomic<int> inside{0}, joined{0};
    int left_inside = 0;
    for (int r = 0; r < 40; ++r) {
      joined.store(0);
      pool.run(
          [&](int t) {
            if (t > 0) {
              inside.fetch_add(1);
              joined.fetch_add(1);
              std::this_thread::sleep_for(microseconds(300));  // still busy when thread 0 is done
              inside.fetch_sub(1);
              return;
            }
            // Thread 0 returns as soon as one worker is in (or after 10 s): its part is done,
            // and run() must now wait for that worker (another may skip the region, if late).
            const auto until = steady_clock::now() + seconds(10);
            while (joined.load() < 1 && steady_clock::now() < until) std::this_thread::yield();
          },
          bound);
      if (inside.load() != 0) ++left_inside;
      for (int w = 0; w < 1000 && inside.load() != 0; ++w) std::this_thread::sleep_for(microseconds(100));
    }
    INFO("bound " << bound << ": " << left_inside << " of 40 regions returned with a worker still inside");
    CHECK(left_inside == 0);
  }
}
