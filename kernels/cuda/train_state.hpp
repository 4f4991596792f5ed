// train_state.hpp — the small state that lives on the device between steps, and the
// description of one step. Plain structs shared by the kernels and the host code.
//
// Everything a replayed CUDA graph needs that changes from step to step is read from
// TrainState in device memory (never baked into the graph), so one captured graph can be
// replayed for any chunk of epochs: the Adam step scalars, the epoch number (for the
// mini-batch shuffle key) and the slot of the next loss in the chunk's loss array.
#pragma once

#include <cstdint>

#include "nnmath.hpp"

namespace nntrain::cuda {

struct TrainState {
  AdamStep adam;             // scalars of the step being applied (advanced once per step)
  unsigned long long epoch;  // epochs finished since load(): keys the shuffle
  int slot;                  // index of the next epoch loss in the chunk's loss array
  int pad_;
  double loss_acc;           // sum of the current epoch's batch losses
};

// The host's view of one optimiser step: which batch of the epoch it is.
struct StepDesc {
  int batch_index;    // b in [0, batches)
  int batches;        // per epoch
  int batch_offset;   // b × batch: first shuffled position of this batch
  int count;          // samples in this batch
  uint32_t n;         // samples in the data set
  int shuffle;        // 1: positions go through shuffle_index(key(seed, epoch), pos)
  uint64_t seed;
};

// The row of the data set that position `pos` of this epoch reads.
NN_HD uint32_t batch_row(const StepDesc& d, unsigned long long epoch, uint32_t pos) {
  if (!d.shuffle) return pos;
  const ShuffleKey key = make_shuffle_key(d.n, d.seed, epoch);
  return shuffle_index(key, pos);
}

}  // namespace nntrain::cuda
