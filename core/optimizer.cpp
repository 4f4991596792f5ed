// optimizer.cpp — see optimizer.hpp.
#include "optimizer.hpp"

namespace nntrain {

AdamHyper adam_hyper(const OptimizerConfig& cfg) {
  return AdamHyper{cfg.lr, cfg.beta1, cfg.beta2, cfg.eps};
}

HostOptimizer::HostOptimizer(const OptimizerConfig& cfg, size_t n)
    : adam_(cfg.type == "adam"), hyper_(adam_hyper(cfg)), step_(adam_initial_step()), m_(n, 0.0f), v_(n, 0.0f) {}

void HostOptimizer::reset() {
  step_ = adam_initial_step();
  std::fill(m_.begin(), m_.end(), 0.0f);
  std::fill(v_.begin(), v_.end(), 0.0f);
}

AdamStep HostOptimizer::advance() {
  step_ = adam_next_step(step_, hyper_);
  return step_;
}

void HostOptimizer::update_range(float* params, const float* grad, const AdamStep& s, size_t begin, size_t end) {
  if (adam_) {
    for (size_t k = begin; k < end; ++k) adam_update(params[k], m_[k], v_[k], grad[k], hyper_, s);
  } else {
    const float lr = float(hyper_.lr);
    for (size_t k = begin; k < end; ++k) sgd_update(params[k], grad[k], lr);
  }
}

void HostOptimizer::step(float* params, const float* grad) {
  const AdamStep s = advance();
  update_range(params, grad, s, 0, m_.size());
}

}  // namespace nntrain
