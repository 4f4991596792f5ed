// test_fast_partition.cpp — the fast CPU backend's work partition (cpu_fast_partition.hpp)
// computed for 1–128 threads without running any: its load balance, and that it depends
// on the batch size and the model only. And the vectorised shuffle against the scalar one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <queue>
#include <vector>

#include "cpu_fast.hpp"
#include "cpu_fast_kernels.hpp"
#include "cpu_fast_partition.hpp"
#include "fast_kernels_util.hpp"
#include "nnmath.hpp"

using namespace nntrain;
using testutil::kernels_for;

namespace {

constexpr size_t kRefParams = 2 * 20 + 20 + 20 * 5 + 5 + 5 * 1 + 1;  // 2->20->5->1

std::vector<int> chunk_sizes(int count, size_t params) {
  const int chunks = fast::chunk_count(count, params);
  std::vector<int> v;
  for (int c = 0; c < chunks; ++c) v.push_back(fast::chunk_begin(count, chunks, c + 1) - fast::chunk_begin(count, chunks, c));
  return v;
}

// The samples each of `threads` equally fast threads computes when, as in the backend, a
// free thread takes the next chunk of its own run (owned_begin), else the next unclaimed
// chunk of thread t+1's run, t+2's, … (the earliest free thread first; ties to the lowest
// index). `late` threads start that much later (a worker woken late, or descheduled).
std::vector<int64_t> schedule(const std::vector<int>& sizes, int threads, int64_t late = 0, int late_threads = 0) {
  using Slot = std::pair<int64_t, int>;  // (time free, thread)
  std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> free;
  const int chunks = int(sizes.size());
  std::vector<int> next(static_cast<size_t>(threads)), end(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    free.push({t >= threads - late_threads ? late : 0, t});
    next[size_t(t)] = fast::owned_begin(chunks, threads, t);
    end[size_t(t)] = fast::owned_begin(chunks, threads, t + 1);
  }
  std::vector<int64_t> work(size_t(threads), 0);
  for (int left = chunks; left > 0; --left) {
    const auto [at, t] = free.top();
    free.pop();
    int owner = t;
    for (int k = 0; k < threads && next[size_t(owner)] == end[size_t(owner)]; ++k) owner = (t + k + 1) % threads;
    const int64_t w = sizes[size_t(next[size_t(owner)]++)];
    work[size_t(t)] += w;
    free.push({at + w, t});
  }
  return work;
}

}  // namespace

TEST_CASE("the chunks cover the batch in order, in whole quanta, independent of threads", "[fast][partition]") {
  for (int count : {1, 63, 64, 65, 256, 1000, 1024, 1100, 4096, 8192, 40000, 65536, 1000000}) {
    INFO("batch " << count);
    const std::vector<int> sizes = chunk_sizes(count, kRefParams);
    const int chunks = int(sizes.size());
    CHECK(fast::chunk_begin(count, chunks, 0) == 0);
    CHECK(fast::chunk_begin(count, chunks, chunks) == count);
    for (int c = 0; c < chunks; ++c) {
      CHECK(sizes[size_t(c)] > 0);
      if (c + 1 < chunks) CHECK(fast::chunk_begin(count, chunks, c + 1) % fast::kPartitionQuantum == 0);
      // At most 2048 samples, and equal up to one quantum.
      CHECK(sizes[size_t(c)] <= fast::kChunkMaxQuanta * fast::kPartitionQuantum);
      if (c + 1 < chunks) CHECK(std::abs(sizes[size_t(c)] - sizes[0]) <= fast::kPartitionQuantum);
    }
  }
  // Hand-checked values: the reference experiment is 157 chunks of 256 or 192 samples.
  CHECK(fast::chunk_count(40000, kRefParams) == 157);
  CHECK(fast::chunk_count(1024, kRefParams) == 4);
  CHECK(fast::chunk_count(4096, kRefParams) == 16);
  CHECK(fast::chunk_count(256, kRefParams) == 1);
  CHECK(fast::chunk_count(1 << 20, kRefParams) == 512);  // 2048-sample chunks
  // A net with many parameters gets fewer chunks (slot memory), but never fewer than 16.
  CHECK(fast::chunk_count(40000, 66'049 + 1'024) == 157);
  CHECK(fast::chunk_count(1 << 20, size_t(1) << 20) == 16);
}

TEST_CASE("the partition keeps up to 64 threads (and more) busy", "[fast][partition]") {
  // Load balance = the mean work per thread / the most any thread gets: the fraction of
  // the ideal speed-up t that the partition allows (1 = perfect); count / most is the
  // speed-up bound itself. Chunks are at least one full tile (256 samples), so a batch has
  // about count / 256 chunks up to 256 of them, and no more threads than chunks get work.
  const int batches[] = {1024, 2048, 3000, 4096, 8192, 10000, 16384, 32768, 40000, 50000, 65536};
  for (int count : batches) {
    const std::vector<int> sizes = chunk_sizes(count, kRefParams);
    const int chunks = int(sizes.size());
    CHECK(chunks >= std::min(count / 256, 157));
    for (int threads = 1; threads <= 128; ++threads) {
      const std::vector<int64_t> work = schedule(sizes, threads);
      const int64_t most = *std::max_element(work.begin(), work.end());
      int64_t total = 0;
      for (int64_t w : work) total += w;
      REQUIRE(total == count);
      const double balance = (double(count) / threads) / double(most);
      const double speedup = double(count) / double(most);
      INFO("batch " << count << " (" << chunks << " chunks), " << threads << " threads: balance " << balance
                    << ", speed-up bound " << speedup);
      // Never worse than half of what whole chunks allow (the claims must not hand one
      // thread a long run while others idle).
      CHECK(speedup >= 0.5 * std::min(threads, chunks));
      // With >= 4 chunks per thread, within 25 % of perfect.
      if (4 * threads <= chunks) CHECK(balance >= 0.75);
      // The reference experiment: >= 75 % up to 64 threads, >= 60 % up to 128.
      if (count == 40000) CHECK(balance >= (threads <= 64 ? 0.75 : 0.6));
      // Big batches: 64 threads at >= 80 % (65,536) or a speed-up of >= 48 (>= 16,384 samples,
      // 64+ chunks).
      if (count >= 65536 && threads <= 64) CHECK(balance >= 0.8);
      if (count >= 16384 && threads == 64) CHECK(speedup >= 48);
    }
  }
}

TEST_CASE("a late thread's run is taken by the others", "[fast][partition]") {
  // A worker that joins late (or never: a descheduled thread the region does not wait for)
  // must not hold the step back: the others take its run, from its front.
  for (int count : {1024, 4096, 40000}) {
    const std::vector<int> sizes = chunk_sizes(count, kRefParams);
    for (int threads : {2, 3, 8}) {
      INFO("batch " << count << ", " << threads << " threads");
      const int64_t never = int64_t(1) << 40;
      const std::vector<int64_t> work = schedule(sizes, threads, never, 1);
      CHECK(work.back() == 0);
      int64_t total = 0;
      for (int64_t w : work) total += w;
      CHECK(total == count);
      // Late by half the step's per-thread share: it computes about half its share.
      const std::vector<int64_t> half = schedule(sizes, threads, count / threads / 2, 1);
      CHECK(half.back() < int64_t(count / threads));
      CHECK(*std::max_element(half.begin(), half.end()) <= count / threads + count / threads / 2 + 256);
    }
  }
}

TEST_CASE("the vectorised shuffle gives nnmath.hpp's permutation", "[fast][partition]") {
  for (const std::string& isa : fast_cpu_isas()) {
    const fast::Kernels& k = kernels_for(isa);
    for (uint32_t n : {1u, 2u, 3u, 5u, 17u, 64u, 255u, 256u, 257u, 1000u, 4097u, 16385u, 40000u, 65536u, 65537u}) {
      const ShuffleKey key = make_shuffle_key(n, 42, 7);
      const fast::ShuffleArgs args{key.n, key.half_bits, {key.k[0], key.k[1], key.k[2], key.k[3]}};
      std::vector<uint32_t> got(n, 0xFFFFFFFFu), want(n);
      for (uint32_t i = 0; i < n; ++i) want[i] = shuffle_index(key, i);
      // In pieces of odd lengths and at odd offsets, as the tiles ask for them.
      for (uint32_t first = 0; first < n;) {
        const int count = int(std::min<uint32_t>(n - first, 1 + (first * 7 + 13) % 300));
        k.shuffle_rows(args, first, count, got.data() + first);
        first += uint32_t(count);
      }
      INFO("isa " << isa << ", n " << n);
      CHECK(got == want);
    }
  }
}

TEST_CASE("the VBMI byte-table shuffle gives nnmath.hpp's permutation", "[fast][partition]") {
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool vbmi = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512vbmi");
#else
  const bool vbmi = false;
#endif
  if (!vbmi) {
    // Catch2 v2 has no SKIP: a warning with the reason (as test_cli.cpp's sanitizer case).
#ifdef SKIP
    SKIP("skipped: this CPU has no AVX-512 VBMI, so the byte-table shuffle cannot run here");
#else
    WARN("skipped: this CPU has no AVX-512 VBMI, so the byte-table shuffle cannot run here");
    return;
#endif
  }
#if defined(__x86_64__)
  // Piece lengths cycled through: single samples, whole and ragged tiles, and pieces longer
  // than the kernel's 256 (its inner loop), each piece starting where the last ended.
  const int lengths[] = {1, 256, 255, 257, 63, 64, 65, 300, 17, 1, 129, 512, 7, 191};
  const uint32_t kUnwritten = 0xFFFFFFFFu;
  for (uint32_t n : {1u, 2u, 3u, 5u, 16u, 17u, 64u, 255u, 256u, 257u, 1000u, 4097u, 40000u, 65536u}) {
    for (uint64_t seed : {uint64_t(1), uint64_t(42), uint64_t(20240229)}) {
      for (uint64_t epoch : {uint64_t(0), uint64_t(7), uint64_t(1000)}) {
        const ShuffleKey key = make_shuffle_key(n, seed, epoch);
        const fast::ShuffleArgs args{key.n, key.half_bits, {key.k[0], key.k[1], key.k[2], key.k[3]}};
        INFO("n " << n << ", seed " << seed << ", epoch " << epoch);
        REQUIRE(fast::shuffle_rows_vbmi_usable(args));
        // One spare entry: each piece must leave the next position unwritten.
        std::vector<uint32_t> got(size_t(n) + 1, kUnwritten), want(n);
        for (uint32_t i = 0; i < n; ++i) want[i] = shuffle_index(key, i);
        size_t overruns = 0, li = size_t(seed + epoch) % std::size(lengths);  // offsets differ per key
        for (uint32_t first = 0; first < n; li = (li + 1) % std::size(lengths)) {
          const int count = int(std::min<uint32_t>(n - first, uint32_t(lengths[li])));
          fast::shuffle_rows_vbmi(args, first, count, got.data() + first);
          first += uint32_t(count);
          overruns += got[first] != kUnwritten ? 1 : 0;
        }
        CHECK(overruns == 0);
        got.pop_back();
        CHECK(got == want);
      }
    }
  }
  // Two keys' pieces interleaved call by call: the tables kept for one key must not serve the
  // other (the kernel rebuilds them when the key changes).
  const ShuffleKey ka = make_shuffle_key(40000, 42, 3), kb = make_shuffle_key(40000, 42, 4);
  const fast::ShuffleArgs a{ka.n, ka.half_bits, {ka.k[0], ka.k[1], ka.k[2], ka.k[3]}};
  const fast::ShuffleArgs b{kb.n, kb.half_bits, {kb.k[0], kb.k[1], kb.k[2], kb.k[3]}};
  std::vector<uint32_t> got_a(40000), got_b(40000);
  bool same_a = true, same_b = true;
  for (uint32_t first = 0; first < 40000; first += 200) {
    fast::shuffle_rows_vbmi(a, first, 200, got_a.data() + first);
    fast::shuffle_rows_vbmi(b, first, 200, got_b.data() + first);
  }
  for (uint32_t i = 0; i < 40000; ++i) {
    same_a = same_a && got_a[i] == shuffle_index(ka, i);
    same_b = same_b && got_b[i] == shuffle_index(kb, i);
  }
  CHECK(same_a);
  CHECK(same_b);
  // Halves wider than a byte are not for it.
  const ShuffleKey wide = make_shuffle_key(65537, 42, 7);
  CHECK_FALSE(fast::shuffle_rows_vbmi_usable({wide.n, wide.half_bits, {wide.k[0], wide.k[1], wide.k[2], wide.k[3]}}));
#endif
}

TEST_CASE("lane sums are the halving tree, bit for bit, on every ISA", "[fast][partition]") {
  // The chunk slots' values depend on this order (and the results' bits on them): lane j +
  // lane j+8 first, then j + j+4, ..., as the scalar loop below writes it out, whatever the
  // kernel set's vector width (16-lane accumulators everywhere). Values
  // of mixed magnitudes, so that another order would round differently.
  for (const std::string& isa : fast_cpu_isas()) {
    const fast::Kernels& k = kernels_for(isa);
    const int L = fast::kAccLanes;  // 16 on every ISA
    for (size_t n : {size_t(1), size_t(5), size_t(16), size_t(17), size_t(172)}) {
      // 64-byte aligned, as the backend's accumulators, with the slack the kernel may read
      // (filled like the rest: its sums must not leak into the n results).
      const size_t total = (n + size_t(fast::kLaneReduceSlack)) * size_t(L);
      std::unique_ptr<float, decltype(&std::free)> buf(
          static_cast<float*>(std::aligned_alloc(64, (total * sizeof(float) + 63) / 64 * 64)), &std::free);
      float* acc = buf.get();
      uint32_t r = 12345;
      for (size_t i = 0; i < total; ++i) {
        float& a = acc[i];
        r = r * 1664525u + 1013904223u;
        a = float(int(r >> 8) % 2001 - 1000) * std::ldexp(1.0f, int(r % 13) - 6) / 7.0f;
      }
      std::vector<float> got(n + 16, -1.0f), want(n);
      for (size_t p = 0; p < n; ++p) {
        std::vector<float> v(acc + p * size_t(L), acc + (p + 1) * size_t(L));
        for (int h = L / 2; h >= 1; h /= 2)
          for (int j = 0; j < h; ++j) v[size_t(j)] = v[size_t(j)] + v[size_t(j + h)];
        want[p] = v[0];
      }
      k.lane_reduce(acc, n, got.data());
      INFO("isa " << isa << ", " << n << " accumulators");
      CHECK(std::memcmp(got.data(), want.data(), n * sizeof(float)) == 0);
      for (size_t p = n; p < n + 16; ++p) CHECK(got[p] == -1.0f);  // nothing written past n
    }
  }
}
