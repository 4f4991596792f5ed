// surface.hpp — `train --write-surface N`: the model's prediction on an N × N grid over
// the peaks domain, beside the true surface, for the surface plot (scripts/plot/plot_surface.py).
#pragma once

#include <string>

#include "config.hpp"
#include "mlp.hpp"

namespace nntrain {

// Throws UsageError unless the config trains the peaks generator with a 2-input,
// 1-output model and 2 <= n <= kMaxSurfaceSide. Called before anything is written.
constexpr int kMaxSurfaceSide = 4096;
// Also refuses (UsageError) a grid whose surface would not fit in memory (memcheck.hpp).
void check_surface_request(const Config& cfg, int n);
// Host bytes surface_csv(n) needs at most.
double surface_bytes(int n);

// CSV "x1,x2,y_true,y_pred", n*n rows, x1 varying fastest (as the training grid), over the
// config's data.range; y_pred from the reference forward pass of `p`.
std::string surface_csv(const Config& cfg, const Params& p, int n);

}  // namespace nntrain
