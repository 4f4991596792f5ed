// fused_v2.hpp — the fused small-MLP path, version 2: ONE kernel per optimiser step (one
// per epoch at full batch).
//
// Each block takes a tile of S samples (kV2Tile = 64 wherever its shared memory fits, else 32
// or 16: see plan_fused_v2), T threads per sample (T = 1, or 4 for the exact shape):
// forward, loss and backward with the layer's input vector in registers and the weights
// broadcast from shared memory. With T > 1 the sample's T threads (adjacent lanes of one
// warp) each compute every T-th output of a layer (and every T-th delta of the backward),
// exchange them through the sample's column of shared rows and a __syncwarp, so one
// thread's dependent chain is about 1/T of the sample's. Every layer's activations and
// deltas go to the sample's column of shared rows, and the weight gradient is then a
// transposed pass (one thread per parameter, the tile's samples in a fixed order), written
// as the block's partial. The last block to
// arrive (an atomic ticket after a fence) sums the partials in block order and applies
// Adam/SGD. With more than kV2Group blocks there is one more level: the last block of each
// group of kV2Group blocks sums its group first. Every sum has a fixed order, so two runs
// are bit-identical whichever block arrives last.
//
// Register arrays are sized by a compile-time bucket K (8, 16, 32 or 64: the smallest that
// holds the widest layer), with the layer loop and the widths as run-time values; one exact
// shape (kV2ExactShape) has its own instantiation with the widths as constants.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "fused_limits.hpp"
#include "nnmath.hpp"
#include "train_state.hpp"

namespace nntrain::cuda {

constexpr int kV2Tile = 64;    // samples per block (threads: tile × threads per sample)
// The smaller tiles, for nets whose 64-sample tile does not fit (deep nets of wide layers):
// rows of 36 or 20 floats instead of 68, so every net the two-kernel v1 fitted (tiles down
// to 32, rows of 33 floats, twice the rows; retired on 2026-11-29) fits one of them. They run the bucket-64
// kernel whatever the widths (its loops stop at each layer's width; such a net is smem-bound
// to a block or two per SM anyway), so only two kernels are added to the module that every
// simulator process loads. Per tile the sums have a fixed order (bit-identical reruns); a
// net that fits 64 never takes a smaller tile, so its kernel and bits do not change.
constexpr int kV2SmallTiles[] = {32, 16};
constexpr int kV2SmallTileBucket = 64;
constexpr int kV2MaxThreadsPerSample = 4;
// Floats between rows of the activation/delta columns: tile + 4 (68, 36, 20), a multiple of
// 4 (rows 16-byte aligned for the float4 gradient pass) and an odd number of 16-byte units,
// so that the gradient pass's float4 reads of different rows spread over all banks. With
// T > 1 the threads are mapped to columns so that row writes are conflict-free too (v2_column).
constexpr int v2_stride(int tile) { return tile + 4; }
constexpr int kV2Group = 16;   // blocks summed by one group-last block before the final sum

// The one shape with its own compile-time instantiation (widths, layer count and activations
// constants): the reference net (configs/peaks.json, small_data.json). Any other net, other
// activations included, takes a register bucket.
inline const std::vector<int> kV2ExactShape = {2, 20, 5, 1};
inline const std::vector<Activation> kV2ExactActivations = {Activation::relu, Activation::relu, Activation::identity};

struct FusedV2Net {
  int layers = 0;
  int widths[kFusedMaxLayers + 1] = {};
  int act[kFusedMaxLayers] = {};
  int woff[kFusedMaxLayers] = {};   // W_l (out × in, row-major) in the flat params
  int boff[kFusedMaxLayers] = {};   // b_l in the flat params (= woff + out·in)
  int swoff[kFusedMaxLayers] = {};  // W_l in shared memory, rows padded to a multiple of 4
  int sboff[kFusedMaxLayers] = {};  // b_l in shared memory
  int aoff[kFusedMaxLayers + 1] = {};  // first row of a_l in the activation columns
  int doff[kFusedMaxLayers] = {};   // first row of delta_{l+1} (layer l's output side) in the delta rows
  int params = 0;                   // flat parameter count
  int sparams = 0;                  // floats of padded weights in shared memory (multiple of 4)
  int rows = 0;                     // widths[0] + ... + widths[L]
  int drows = 0;                    // widths[1] + ... + widths[L]: rows of the delta columns
};

struct FusedV2Plan {
  bool fits = false;
  std::string why;
  FusedV2Net net;
  int bucket = 0;      // K: register arrays of this many floats (run-time widths)
  bool exact = false;  // the net is kV2ExactShape: the kernel compiled for exactly these widths
  int threads_per_sample = 1;  // T: 4 (or 2) for the exact shape, 1 for the buckets
  int tile = 0;                // S: samples per block, kV2Tile or one of kV2SmallTiles
  size_t smem_bytes = 0;
  // Launch with programmatic dependent launch (compute capability >= 9.0; the caller
  // decides): the next step's blocks start while this one's tail runs (fused_v2.cu).
  bool pdl = false;
};

// Scratch in device memory, sized by fused_v2_scratch_sizes for the largest batch.
struct FusedV2Scratch {
  float* block_grad;      // blocks × P
  double* block_loss;     // blocks
  float* group_grad;      // groups × P
  double* group_loss;     // groups
  unsigned int* tickets;  // 1 + groups: [0] the final ticket, [1 + g] group g's; all zero between steps
};

inline int fused_v2_blocks(int count, int tile) { return (count + tile - 1) / tile; }
inline int fused_v2_groups(int count, int tile) { return (fused_v2_blocks(count, tile) + kV2Group - 1) / kV2Group; }

// Threads per sample of the exact-shape kernel: 4, or 2 (both compiled; see docs/GPU.md).
constexpr int kV2ExactThreadsDefault = 4;

// The largest tile whose weights and rows fit `smem_optin` bytes per block (the device's
// opt-in limit, or a smaller one from fused_v2_smem_limit).
FusedV2Plan plan_fused_v2(const std::vector<int>& widths, const std::vector<Activation>& acts, size_t smem_optin,
                          int exact_threads = kV2ExactThreadsDefault);

// `optin`, or less where NNTRAIN_FUSED_V2_SMEM_KIB (a test knob: whole KiB) says so, so that
// a [gpu] test can make a small net take a small tile, cheap enough for the simulator.
size_t fused_v2_smem_limit(size_t optin);

// Loads the kernel's module and raises its dynamic shared-memory limit to what `plan` needs.
// Returns the kernel's registers per thread (as compiled for this device).
int prepare_fused_v2(const FusedV2Plan& plan);

// One optimiser step in one kernel: the batch's gradient (written to grad too), the update
// of w/m/v, and the loss bookkeeping of TrainState (as launch_loss_finalize does on the cuBLAS path).
void launch_fused_v2_step(const FusedV2Plan& plan, const float* x, const float* y, float* w, float* m, float* v,
                          float* grad, TrainState* state, StepDesc d, AdamHyper h, bool sgd, float* losses,
                          const FusedV2Scratch& scratch, cudaStream_t s);

}  // namespace nntrain::cuda
