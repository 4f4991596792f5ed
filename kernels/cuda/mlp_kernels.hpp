// mlp_kernels.hpp — launchers for the cuBLAS path's element-wise and reduction kernels.
//
// Plain C++ declarations (callable from .cpp tests); definitions in mlp_kernels.cu.
// Layouts: a batch of activations is sample-major, `count × width` row-major (which is
// cuBLAS's column-major width × count). Every launcher checks its launch.
// Reductions are deterministic: fixed grids, fixed per-thread ranges, fixed-order trees;
// no atomics.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "nnmath.hpp"
#include "train_state.hpp"

namespace nntrain::cuda {

constexpr int kElementwiseThreads = 256;
constexpr int kReduceThreads = 256;       // block size of every fixed-order tree reduction
constexpr int kMaxLossBlocks = 1024;      // loss partial sums per step (≤ this many)
constexpr int kMaxBiasChunks = 256;       // sample chunks of the bias-gradient reduction

// Gathers the batch's rows: xb[s][i] = x[row(s)][i], yb[s][o] = y[row(s)][o] for
// s in [0, d.count), row(s) = batch_row(d, state->epoch, d.batch_offset + s).
void launch_gather(const float* x, const float* y, int n_in, int n_out, const TrainState* state, StepDesc d,
                   float* xb, float* yb, cudaStream_t s);

// z[s][o] = act(z[s][o] + b[o]) for a count × out batch.
void launch_bias_act(float* z, const float* b, int out, int count, Activation a, cudaStream_t s);

// d[s][i] *= act'(y[s][i]) (derivative through the layer's output y).
void launch_act_backward(float* d, const float* y, int width, int count, Activation a, cudaStream_t s);

// Output layer: delta[k] = 2/(count·n_out) (p[k] - t[k]) · act'(p[k]); the squared errors
// summed (in double) into partials[0 .. loss_blocks(count·n_out)).
int loss_blocks(size_t elements);
void launch_mse_delta(const float* p, const float* t, int n_out, int count, Activation out_act, float* delta,
                      double* partials, cudaStream_t s);

// One block: sums the loss partials in fixed order, adds this batch's mean loss to the
// epoch, advances the Adam step scalars (state->adam), and after the epoch's last batch
// writes losses[state->slot] (the mean of its batch losses) and moves to the next epoch.
void launch_loss_finalize(const double* partials, int parts, int n_out, StepDesc d, AdamHyper h, TrainState* state,
                          float* losses, cudaStream_t s);

// db[o] = sum over s of delta[s][o], in two fixed-order stages through `partial`
// (at least bias_chunks(count) × out floats).
int bias_chunks(int count);
void launch_bias_grad(const float* delta, int out, int count, float* partial, float* db, cudaStream_t s);

// Adam (or SGD when sgd) over n parameters, with the step scalars in state->adam.
void launch_optimizer(float* w, float* m, float* v, const float* g, size_t n, const TrainState* state, AdamHyper h,
                      bool sgd, cudaStream_t s);

// Loads this file's kernels (cudaFuncGetAttributes forces the lazy module load), so the
// cost is reported as set-up and not paid inside the first timed step.
void load_elementwise_kernels();

// Resets the state for a fresh start (epoch 0, Adam step 0, loss slot 0).
void launch_reset_state(TrainState* state, cudaStream_t s);
// Points the loss slot back at the start of the chunk's loss array.
void launch_reset_slot(TrainState* state, cudaStream_t s);

}  // namespace nntrain::cuda
