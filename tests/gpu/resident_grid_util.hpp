// resident_grid_util.hpp — the [gpu] tests' handles on the resident grid: the test-only knobs
// that force it (NNTRAIN_RESIDENT_GRID_BLOCKS and _THREADS) and one run of it.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gpu_training_util.hpp"

namespace nntrain::test {

// The knobs for the lifetime of a backend's construction (the backend reads them once):
// the grid's block count, and (threads > 0) the exact stage's block size.
struct GridBlocks {
  explicit GridBlocks(int blocks, int threads = 0) {
    setenv("NNTRAIN_RESIDENT_GRID_BLOCKS", std::to_string(blocks).c_str(), 1);
    if (threads > 0) setenv("NNTRAIN_RESIDENT_GRID_THREADS", std::to_string(threads).c_str(), 1);
  }
  ~GridBlocks() {
    unsetenv("NNTRAIN_RESIDENT_GRID_BLOCKS");
    unsetenv("NNTRAIN_RESIDENT_GRID_THREADS");
  }
  GridBlocks(const GridBlocks&) = delete;
  GridBlocks& operator=(const GridBlocks&) = delete;
};

// A grid's shape as the knobs force it: blocks, and threads per block (0: the plan's).
struct GridShape {
  GridShape(int b, int t = 0) : blocks(b), threads(t) {}  // NOLINT: a plain count converts
  int blocks, threads;
};

struct Run {
  std::vector<float> losses, params;
  std::string details;
};

inline Run run_grid(const Dataset& d, const BackendOptions& o, const Params& init, int epochs, GridShape shape) {
  std::unique_ptr<Backend> b;
  {
    GridBlocks knob(shape.blocks, shape.threads);
    b = make_gpu_backend(d, o);
  }
  CHECK(b->name() == "gpu-resident");
  Run r;
  r.losses = train_losses(*b, init, epochs);
  r.params = b->params().values;
  r.details = b->details();
  return r;
}

}  // namespace nntrain::test
