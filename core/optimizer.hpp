// optimizer.hpp — Adam and SGD over a flat parameter vector, on the host.
//
// The per-element update is nnmath.hpp's (shared with the GPU); this class holds the
// moments and the step scalars. Used by both CPU backends.
#pragma once

#include <vector>

#include "config.hpp"
#include "nnmath.hpp"

namespace nntrain {

class HostOptimizer {
 public:
  HostOptimizer(const OptimizerConfig& cfg, size_t n);
  void reset();
  // params -= update(grad); `grad` is d(loss)/d(params) for this step.
  void step(float* params, const float* grad);
  // The step's scalars, for callers that apply the element update themselves (in parallel).
  AdamStep advance();
  void update_range(float* params, const float* grad, const AdamStep& s, size_t begin, size_t end);
  bool is_adam() const { return adam_; }
  // The moments and hyper-parameters, for a backend that applies adam_update's operations
  // itself (vectorised).
  float* adam_m() { return m_.data(); }
  float* adam_v() { return v_.data(); }
  const AdamHyper& hyper() const { return hyper_; }

 private:
  bool adam_;
  AdamHyper hyper_;
  AdamStep step_;
  std::vector<float> m_, v_;
};

AdamHyper adam_hyper(const OptimizerConfig& cfg);

}  // namespace nntrain
