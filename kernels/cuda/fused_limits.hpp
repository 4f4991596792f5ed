// fused_limits.hpp — the fused path's shape limits, as plain C++ (no CUDA), so every build
// (a CPU-only one too) refuses `gpu.path: fused` for a net it could never run, before
// anything runs (train and bench alike).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace nntrain::cuda {

constexpr int kFusedMaxWidth = 64;   // one thread per sample loops over widths: keep them small
constexpr int kFusedMaxLayers = 8;

// Why `widths` (inputs ... outputs) exceeds the fused kernel's limits, or "" when it does not
// (shared memory, which depends on the device, is checked by plan_fused_v2).
inline std::string fused_shape_problem(const std::vector<int>& widths) {
  const int layers = int(widths.size()) - 1;
  if (layers < 1) return "malformed network";
  if (layers > kFusedMaxLayers)
    return std::to_string(layers) + " layers (the fused kernel takes at most " + std::to_string(kFusedMaxLayers) + ")";
  const int wmax = *std::max_element(widths.begin(), widths.end());
  if (wmax > kFusedMaxWidth)
    return "a layer is " + std::to_string(wmax) + " wide (the fused kernel takes widths up to " +
           std::to_string(kFusedMaxWidth) + ")";
  return "";
}

// What the fused v2 and resident plans refuse before sizing anything: a net whose activations do not match
// its layers ("malformed network"), or one beyond the limits above. "" when neither.
inline std::string fused_plan_problem(const std::vector<int>& widths, size_t activations) {
  if (widths.size() < 2 || activations != widths.size() - 1) return "malformed network";
  return fused_shape_problem(widths);
}

}  // namespace nntrain::cuda
