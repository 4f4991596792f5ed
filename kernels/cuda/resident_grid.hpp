// resident_grid.hpp — the resident trainer's cooperative grid: one cooperative launch runs a
// chunk of epochs over a batch that one block cannot hold (resident.hpp dispatches to it).
//
// The batch's samples are split into GROUPS of a fixed size (the generic stages: the threads of
// a block, one sample each; the exact stage: 128; a function of the net and the batch only,
// never of the SM count); the last
// group of a batch is ragged. The launch has min(groups, co-resident blocks) blocks; block b
// takes groups b, b + B, b + 2B, ... Every block keeps the whole padded weights in shared
// memory and one group's rows, and per step:
//   1. per group of its own: the one-block kernel's stages (resident_stages.cuh: load, forward,
//      backward with per-slice partials summed in slice order) give the group's gradient,
//      written to gpart[param][group], and its double loss to gloss[group];  grid.sync();
//   2. exchange: parameter k belongs to warp k mod W (W: the grid's warps), whose lane j sums
//      groups j, j + 32, ... in order, then a fixed xor tree: the sum's order depends on the
//      group count alone. The owner lane runs Adam (the host table's scalars), its w, m and v
//      in registers for the whole launch, and publishes w; the grid's first warp sums the loss
//      in the same order;  grid.sync();
//   3. every block copies the published weights into its shared copy.
// The owner mapping depends on the grid's size; no sum's order does: the same bits run to run
// and for any block count (a grid of fewer blocks runs the same groups in the same sums).
// The exact shape of resident_exact.cuh (2-20-5-1 relu) takes its own group stage
// (resident_grid_exact.cuh: groups of 128, one thread per sample, every layer's gradient in
// one pass, 2 barriers per group; blocks of 352 threads, or of 128
// four to an SM where that takes fewer rounds of groups); other nets the generic stages (a
// barrier pair per layer).
#pragma once

#include <string>
#include <vector>

#include "resident.hpp"

namespace nntrain::cuda {

// Plans the grid into p (p.fits and p.why say whether and how); force_blocks > 0: the test knob.
void plan_resident_grid(ResidentPlan& p, const std::vector<int>& widths, const std::vector<Activation>& acts,
                        int batch, size_t smem_optin, int force_blocks);

// The grid's module, shared-memory limit, block count and (the exact stage) block size;
// returns registers per thread.
int prepare_resident_grid(ResidentPlan& plan);

void launch_resident_grid(const ResidentPlan& plan, const float* x, const float* y, float* w, float* m, float* v,
                          TrainState* state, const AdamStep* table, ResidentChunk c, AdamHyper h, bool sgd,
                          float* losses, float* gpart, double* gloss, cudaStream_t s, unsigned long long* stamps);

}  // namespace nntrain::cuda
