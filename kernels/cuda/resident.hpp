// resident.hpp — the resident trainer, one block: ONE launch runs a whole chunk of epochs
// (every optimiser step of every epoch of a train() call) in a single thread block.
//
// The block holds the batch's samples in shared memory (one column per sample; a thread takes
// samples tid, tid + threads, ...), the padded weights in shared memory, and each parameter's
// w, m and v in registers of its owner thread (parameter k: thread k mod threads) for the
// whole launch. A step is stages separated only by __syncthreads: load + forward (a thread's
// own samples), then per layer from the top a gradient pass (parameter × slice of samples,
// partial sums) and, after a barrier, the owners' sums of the partials in slice order and the
// deltas of the layer below (written over that layer's activations); last the optimiser
// (owner threads; Adam's step scalars come from a table the host computed in double for the
// chunk). The loss is summed in a fixed order (thread, warp tree, warps) and written once per
// epoch. Every sum has an order fixed by the batch size and the net alone: bit-identical runs.
//
// The net of configs/small_data.json (2-20-5-1, relu, relu, identity) with batches of ≤ 480
// samples has its own kernel (resident_exact.cuh: one thread per sample through forward and
// backward, every layer's gradient in one pass, 2–3 barriers per step); past 480 samples that
// net takes the grid's exact group stage (resident_grid_exact.cuh); other nets take the generic
// kernel described here, or the generic grid past one block.
//
// It fits a bounded problem: widths ≤ 64, ≤ 8 layers (the fused limits), at most
// threads × kResMaxOwn parameters, at most threads × kResMaxPerThread samples per batch, and
// the rows in shared memory (plan_resident says which limit a net or batch exceeds).
//
// A batch one block cannot hold goes to the cooperative grid (resident_grid.hpp): the same
// stages per fixed group of samples in every block, an exchange between grid barriers.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "fused_limits.hpp"
#include "nnmath.hpp"
#include "train_state.hpp"

namespace nntrain::cuda {

constexpr int kResMaxOwn = 4;        // parameters per owner thread (w, m, v in registers)
constexpr int kResMaxPerThread = 8;  // samples per thread
constexpr int kResMaxSlices = 16;    // sample slices of one parameter's gradient pass

// Threads of the block for a register bucket K: the kernel is compiled for one block of that
// many (K ≤ 32: ≤ 128 registers per thread; K = 64: ≤ 255).
constexpr int resident_max_threads(int K) { return K <= 32 ? 512 : 256; }

struct ResidentNet {
  int layers = 0;
  int widths[kFusedMaxLayers + 1] = {};
  int act[kFusedMaxLayers] = {};
  int woff[kFusedMaxLayers] = {};   // W_l in the flat params (b_l follows it)
  int swoff[kFusedMaxLayers] = {};  // W_l in shared memory, rows padded to a multiple of 4
  int sboff[kFusedMaxLayers] = {};  // b_l in shared memory
  int aoff[kFusedMaxLayers] = {};   // first row of a_l (l < L); delta_l overwrites it (l ≥ 1)
  int droff = 0;                    // first row of delta_L (the prediction before it)
  int slices[kFusedMaxLayers] = {};     // G_l: slices of the batch in layer l's gradient pass
  int slice_len[kFusedMaxLayers] = {};  // samples per slice (a multiple of 4)
  int params = 0, sparams = 0;      // flat parameters; floats of padded weights
  int rows = 0;                     // a_0 ... a_{L-1} and delta_L
  int batch = 0, batch4 = 0;        // samples per (full) batch; rounded up to 4
  int stride = 0;                   // floats between rows (≥ batch4, an odd number of float4s)
  int scratch = 0;                  // floats of partial sums: max over layers of P_l × G_l
  // The exact-shape kernel (resident_exact.cuh): slices[0] and slice_len[0] are its gradient
  // items' slices; the batch's columns go through shared memory in `passes` of pass_cols.
  int pass_cols = 0, passes = 1;
};

struct ResidentPlan {
  bool fits = false;
  std::string why;
  ResidentNet net;
  bool exact = false;  // the 2-20-5-1 relu kernel (widths as constants), else the generic one
  int bucket = 0;   // K: register arrays of this many floats (the generic kernel)
  int threads = 0;  // of the one block; of each block of the grid (the exact grid's: prepare_resident's)
  int per_thread = 0;  // samples per thread (the last pass ragged)
  size_t smem_bytes = 0;
  // The cooperative grid (resident_grid.hpp): net.batch is then one group's samples.
  bool grid = false;
  int batch = 0;       // samples per optimiser step
  int groups = 0;      // groups of a full batch: ceil(batch / net.batch)
  int force_blocks = 0;  // the test-only knob (0: as many blocks as groups and co-residency allow)
  int force_threads = 0;  // the exact stage's block size, a test-only knob (0: prepare_resident picks)
  bool stamps = false;    // the exact grid's stamped kernel (a diagnostic, resident_stamps.hpp)
  int blocks = 0;      // of the launch (prepare_resident sets it)
  int max_blocks = 0;  // co-resident at most (prepare_resident)
};

// `auto`'s rule, from an H200's timings (docs/BENCHMARKS.md, journal/2026-11-30-h200-lease3.md;
// medians of 3). One block beat v2 up to 256 samples per batch: 2-20-5-1 relu at full batch
// (5.6 against 8.9 ms at 100; it lost from 400: 11.2 against 8.8), its shuffled batches of
// 32-256 out of 40,000 (72 against 137 ms at 32, 14.4 against 16.8 at 256; lost at 480), and
// the generic kernel on 2-20-5-1 tanh and 2-32-16-1 relu (29.7 against 35.6 and 50.4 against
// 68.4 at 100; lost at 900). The grid at full batch: the exact stage lost at 900 (11.8 against
// 9.5) and won from 2,500 (17.9 against 24.7 at 40,000; 176 against 353 at 1,000,000); the
// generic stages won wherever they were planned (4,900-40,000 samples: 40.3 against 48.7 and
// 47.1 against 65.9 for tanh). Mini-batches past one block keep v2 (not timed).
constexpr int kResidentOneBlockMax = 256;  // the crossings: ~270 (full batch), 256-480 (batches)
constexpr int kResidentGridMin = 2000;     // the exact stage's crossing: ~1,800
inline bool resident_preferred(const ResidentPlan& p, int steps_per_epoch) {
  if (!p.fits) return false;
  if (!p.grid) return p.net.batch <= kResidentOneBlockMax;
  return steps_per_epoch == 1 && (!p.exact || p.batch >= kResidentGridMin);
}

// `batch`: samples per optimiser step (the whole data at full batch). grid_blocks > 0 (tests
// only): the cooperative grid even where one block fits, with at most that many blocks.
ResidentPlan plan_resident(const std::vector<int>& widths, const std::vector<Activation>& acts, int batch,
                           size_t smem_optin, int grid_blocks = 0);

// NNTRAIN_RESIDENT_GRID_BLOCKS: a TEST-ONLY knob that forces the grid and its block count
// (0 where unset; anything but an integer from 1 to 2^20 throws UsageError: exit 2).
int resident_grid_blocks_from_env();

// The exact grid's block size: `narrow` where its co-resident blocks (narrow_blocks) run the
// groups in fewer rounds than the wide block's (ties: wide, a thread per gradient item);
// force_blocks > 0 (the test knob) caps both counts.
int exact_grid_threads(int groups, int force_blocks, int wide, int wide_blocks, int narrow, int narrow_blocks);

// NNTRAIN_RESIDENT_GRID_THREADS: a TEST-ONLY knob that forces the exact grid's block size (0
// where unset; not an integer from 1 to 1024: UsageError; prepare_resident checks its range).
int resident_grid_threads_from_env();

// Loads the kernel's module and raises its dynamic shared-memory limit; the grid's block count
// and (the exact stage) block size from the occupancy; returns the kernel's registers per thread.
int prepare_resident(ResidentPlan& plan);

// For details(): "" for one block, else the grid's blocks (after prepare_resident).
std::string resident_launch_note(const ResidentPlan& plan);

// One launch: `epochs` epochs of `batches` steps (batch samples each, the last one last_count).
struct ResidentChunk {
  int epochs;
  int batches;
  int last_count;  // samples of the epoch's last batch
  uint32_t n;      // samples in the data set
  int shuffle;     // 1: positions go through shuffle_index(key(seed, epoch), pos)
  uint64_t seed;
};

// Runs the chunk: w/m/v (device, flat) are read at the start and written at the end;
// table[e × batches + b] holds the Adam scalars of that step; losses[e] gets epoch e's loss;
// state->epoch (the shuffle key's epoch) and state->adam advance by the chunk. The grid needs
// gpart (plan.groups × parameters floats) and gloss (plan.groups doubles); one block, nullptr.
// plan.stamps: the launch adds its stamps to `stamps` (plan.blocks × kStampFields).
void launch_resident(const ResidentPlan& plan, const float* x, const float* y, float* w, float* m, float* v,
                     TrainState* state, const AdamStep* table, ResidentChunk c, AdamHyper h, bool sgd, float* losses,
                     float* gpart, double* gloss, cudaStream_t s, unsigned long long* stamps = nullptr);

}  // namespace nntrain::cuda
