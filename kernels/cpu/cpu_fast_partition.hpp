// cpu_fast_partition.hpp — how the fast CPU backend cuts a batch into chunks and hands
// them to threads. Pure functions (no threads, no state), so that tests can compute the
// partition and its load balance for any thread count without running anything.
//
// Two separate decisions:
//   - the chunks (the unit of the fixed reduction order): a function of the batch size and
//     the model only, never of the thread count, so results are the same bits for 1, 2 or
//     128 threads;
//   - the schedule (which thread computes which chunk): may depend on the thread count
//     freely, since a chunk's result does not depend on who computed it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace nntrain::fast {

// Chunk boundaries fall on whole quanta of samples: 64, four of the kernels' 16-sample tile
// quanta (kTileQuantum; until 2026-11-30 the two were equal), so a chunk starts on a 16-sample
// boundary, where cpu_fast_tile.cpp reads a full batch's tiles in place.
constexpr int kPartitionQuantum = 64;
// About this many chunks per batch: 64 threads get >= 2 chunks each on the reference
// experiment (40,000 samples: 157 chunks) and >= 4 each on batches of 65,536, so the
// last chunk each thread takes is small next to its share. Measured cost of a chunk (its
// accumulators zeroed, its lanes summed into a slot, its slot in the final reduction):
// docs/ARCHITECTURE.md, "Scaling model".
constexpr int kChunksWanted = 256;
// A chunk has at least this many quanta (256 samples, one full tile: smaller chunks pay
// each kernel call's set-up over fewer vectors) and at most kChunkMaxQuanta (2048 samples).
constexpr int kChunkMinQuanta = 4;
constexpr int kChunkMaxQuanta = 32;
// The chunk slots (chunks x parameters floats) are bounded by this many floats (64 MiB);
// nets with many parameters get fewer, bigger chunks (still a function of the model only).
constexpr size_t kSlotFloatsBudget = size_t(16) << 20;

// The number of chunks a batch of `count` samples is cut into, for a net of `params`
// parameters. A function of (count, params) only.
inline int chunk_count(int count, size_t params) {
  if (count <= 0) return 1;
  const int64_t quanta = (int64_t(count) + kPartitionQuantum - 1) / kPartitionQuantum;
  const int64_t per = std::clamp<int64_t>(quanta / kChunksWanted, kChunkMinQuanta, kChunkMaxQuanta);
  int64_t chunks = (quanta + per - 1) / per;
  const int64_t most = std::max<int64_t>(1, int64_t(kSlotFloatsBudget / std::max<size_t>(params, 1)));
  chunks = std::min(chunks, std::max<int64_t>(most, 16));  // at least 16 chunks where the batch has them
  return int(std::max<int64_t>(1, std::min(chunks, quanta)));
}

// Chunk c's first sample (c = chunks: the end): the batch is cut into `chunks` chunks of
// whole quanta, as even as possible (40,000 samples, 157 chunks: 256 or 192 samples).
inline int chunk_begin(int count, int chunks, int c) {
  const int64_t q = (int64_t(count) + kPartitionQuantum - 1) / kPartitionQuantum;
  return int(std::min<int64_t>(count, (q * c) / chunks * kPartitionQuantum));
}

// The schedule: each of a step's `threads` threads owns a contiguous run of the chunks
// (owned_begin(t) … owned_begin(t + 1), as even as whole chunks allow) and claims them one
// at a time from its own counter, which lives in its own cache line: a thread's claims cost
// no transfer between cores unless another thread takes from the same run. A thread whose
// run is done takes the next unclaimed chunk of thread t+1's run, then t+2's, … (wrapping),
// so a thread that is late or descheduled on a busy machine has its chunks done by the
// others, and threads finish within about one chunk of each other.
// (The same split hands out the parameter blocks of a shared reduction.)
inline int64_t owned_begin(int64_t items, int threads, int t) {
  return items * t / std::max(threads, 1);
}

}  // namespace nntrain::fast
