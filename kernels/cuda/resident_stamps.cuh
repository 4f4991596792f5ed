// resident_stamps.cuh — where a step of the resident grid's exact stage goes, on the GPU that
// runs it (a diagnostic: NNTRAIN_RESIDENT_STAMPS=FILE, resident_stamps.hpp). The simulator
// gives cycles, not a GPU's barrier or L2 latency; docs/GPU.md's cost model needs those.
//
// Each block's threads read the SM's 32-bit %clock at each phase's end and add the difference
// to the phase's sum in registers (a shared-memory sum would put a load on the step's path):
// the group stage (the block's groups), the wait in the first grid.sync(), the exchange (the
// thread's own warp's owned parameters: none in most blocks), the wait in the second
// grid.sync(), the weights' copy. After each step thread 0 adds its sums to the block's 64-bit
// row in shared memory (between two readings, so no phase pays for it; the row is thread 0's
// alone: "the block's" phases are its thread 0's, so the exchange is thread 0's warp's owned
// parameters, and the loss warp's sum only where that is block 0's first warp); at the
// launch's end, with the %clock64 cycles and %globaltimer nanoseconds of its step loop, to the
// block's row in global memory. The host turns cycles into ns with each block's own ratio over
// its launches: a phase is well under a µs, and the PTX ISA promises %globaltimer no resolution.
//
// A separate instantiation of the kernel (kStamps), so the timed kernel has no stamp in it;
// the stamped one computes the same bits (tests/gpu: its losses against the plain kernel's).
#pragma once

#include "resident_stamps.hpp"

namespace nntrain::cuda {
namespace {

enum StampPhase : int { kStGroups, kStSync1, kStExchange, kStSync2, kStCopy, kStPhases };
// A block's row: the phases' cycles, then steps, the cycles and ns of the launches' step loops.
enum StampField : int { kStSteps = kStPhases, kStCycles, kStNs, kStFields };
static_assert(kStPhases == kStampPhases && kStFields == kStampFields, "resident_stamps.hpp's row");

// %globaltimer, ns ("memory": no load or store moves across the reading). Also the barrier
// bench's clock (bench/grid_barrier.cu).
__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : : "memory");
  return t;
}

template <bool kOn>
struct Stamps {  // off: nothing, compiled away
  __device__ __forceinline__ void begin() {}
  __device__ __forceinline__ void mark(int) {}
  __device__ __forceinline__ void flush() {}
  __device__ __forceinline__ void end(unsigned long long*) {}
};

template <>
struct Stamps<true> {
  unsigned acc[kStPhases];  // this step's cycles per phase (a step is far below 2^32 cycles)
  unsigned last;

  // "memory": no load or store of the step moves across a reading.
  __device__ static __forceinline__ unsigned clk() {
    unsigned t;
    asm volatile("mov.u32 %0, %%clock;" : "=r"(t) : : "memory");
    return t;
  }
  // The block's row, then the step loop's first %clock64 and %globaltimer (thread 0's alone).
  __device__ static __forceinline__ unsigned long long* row() {
    __shared__ unsigned long long r[kStFields + 2];
    return r;
  }
  __device__ __forceinline__ void begin() {
    unsigned long long* r = row();
    if (threadIdx.x == 0) {
      for (int i = 0; i < kStFields; ++i) r[i] = 0;
      r[kStFields] = clock64();
      r[kStFields + 1] = globaltimer_ns();
    }
    for (int i = 0; i < kStPhases; ++i) acc[i] = 0;
    last = clk();
  }
  __device__ __forceinline__ void mark(int phase) {
    const unsigned t = clk();
    acc[phase] += t - last;  // modulo 2^32: right while a phase is under 2^32 cycles
    last = t;
  }
  // The step's sums into the block's row.
  __device__ __forceinline__ void flush() {
    unsigned long long* r = row();
    if (threadIdx.x == 0) {
      for (int i = 0; i < kStPhases; ++i) r[i] += acc[i];
      r[kStSteps] += 1;
    }
    for (int i = 0; i < kStPhases; ++i) acc[i] = 0;
    last = clk();
  }
  // Adds the launch's row to out[block] (each block its own row: no two writers meet).
  __device__ __forceinline__ void end(unsigned long long* out) {
    if (threadIdx.x != 0 || out == nullptr) return;
    unsigned long long* r = row();
    r[kStCycles] = clock64() - r[kStFields];
    r[kStNs] = globaltimer_ns() - r[kStFields + 1];
    unsigned long long* o = out + size_t(blockIdx.x) * kStFields;
    for (int i = 0; i < kStFields; ++i) o[i] += r[i];
  }
};

}  // namespace
}  // namespace nntrain::cuda
