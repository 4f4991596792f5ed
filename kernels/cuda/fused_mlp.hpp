// fused_mlp.hpp — the fused small-MLP path: one kernel per step does forward, loss and
// backward for a tile of samples with the weights in shared memory and writes per-block
// gradient partial sums; a second kernel reduces them in fixed order and applies Adam.
//
// Fits when every width is ≤ kFusedMaxWidth, there are ≤ kFusedMaxLayers layers and the
// weights plus one tile's activations and deltas fit the device's shared memory.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "fused_limits.hpp"
#include "nnmath.hpp"
#include "train_state.hpp"

namespace nntrain::cuda {

constexpr int kFusedReduceWarps = 8;  // warps per block of the reduce-and-update kernel

// The network as the fused kernels see it (passed by value as a kernel parameter).
struct FusedNet {
  int layers = 0;
  int widths[kFusedMaxLayers + 1] = {};
  int act[kFusedMaxLayers] = {};   // Activation of layer l
  int woff[kFusedMaxLayers] = {};  // offset of W_l (out × in, row-major) in the flat params
  int boff[kFusedMaxLayers] = {};
  int aoff[kFusedMaxLayers + 1] = {};  // first row of layer l's values in the shared tile
  int params = 0;
  int rows = 0;  // sum of all widths: rows of the shared activation (and delta) tile
};

struct FusedPlan {
  bool fits = false;
  std::string why;    // why it fits, or why not
  FusedNet net;
  int tile = 0;       // samples per block (= threads per block): 128, 64 or 32
  size_t smem_bytes = 0;
};

// `widths`, `acts` as ModelSpec; `smem_optin` = the device's max dynamic shared memory per
// block (cudaDevAttrMaxSharedMemoryPerBlockOptin).
FusedPlan plan_fused(const std::vector<int>& widths, const std::vector<Activation>& acts, size_t smem_optin);
size_t fused_smem_bytes(const FusedNet& net, int tile);

// Blocks of the forward/backward kernel for a batch of `count` samples.
inline int fused_blocks(int count, int tile) { return (count + tile - 1) / tile; }

// Stage 1 for one step: reads params (flat), the batch's rows of x/y (through d and
// state->epoch), writes grad_partial[p × blocks + block] and loss_partial[block]. Block 0
// also advances state->adam to this step's scalars.
void launch_fused_forward_backward(const FusedPlan& plan, const float* params, const float* x, const float* y,
                                   TrainState* state, StepDesc d, AdamHyper h, float* grad_partial,
                                   double* loss_partial, cudaStream_t s);

// Stage 2 for one step: grad[p] = sum over blocks (fixed order), then the Adam (or SGD)
// update of params/m/v; one warp also folds the loss into the epoch (as
// launch_loss_finalize does).
void launch_fused_reduce_update(const FusedPlan& plan, int count, const float* grad_partial,
                                const double* loss_partial, float* grad, float* params, float* m, float* v,
                                TrainState* state, StepDesc d, AdamHyper h, bool sgd, float* losses,
                                cudaStream_t s);

// Loads the fused kernels' module (so the cost is paid at set-up, not in the first step),
// and raises their dynamic shared memory limit to what `plan` needs.
void prepare_fused_kernels(const FusedPlan& plan);

}  // namespace nntrain::cuda
