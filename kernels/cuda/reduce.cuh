// reduce.cuh — a fixed-order block reduction: the same inputs in the same threads always
// give the same bits (no atomics, no dependence on warp scheduling).
#pragma once

namespace nntrain::cuda {

// Sums `v` over the block (blockDim.x == kThreads, a power of two) through `scratch`
// (kThreads elements of shared memory). The result is valid in thread 0 only.
template <int kThreads, class T>
__device__ __forceinline__ T block_sum_fixed(T v, T* scratch) {
  static_assert((kThreads & (kThreads - 1)) == 0, "power-of-two block");
  scratch[threadIdx.x] = v;
  __syncthreads();
#pragma unroll
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) scratch[threadIdx.x] = scratch[threadIdx.x] + scratch[threadIdx.x + stride];
    __syncthreads();
  }
  return scratch[0];
}

}  // namespace nntrain::cuda
