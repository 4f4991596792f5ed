// cpu_reference.cpp — the reference backend: reference_loss_and_grad + HostOptimizer.
#include "cpu_reference.hpp"

#include <chrono>

#include "optimizer.hpp"
#include "reference_math.hpp"

namespace nntrain {

namespace {

class CpuReferenceBackend final : public Backend {
 public:
  CpuReferenceBackend(const Dataset& data, const BackendOptions& opt)
      : data_(data),
        opt_(opt),
        plan_(make_batch_plan(data.n, opt.batch_size, opt.shuffle)),
        optim_(opt.optimizer, opt.spec.param_count()),
        grad_(opt.spec.param_count()),
        idx_(plan_.batch) {}

  Device device() const override { return Device::cpu; }
  std::string name() const override { return "cpu-reference"; }
  std::string details() const override { return "reference loops, 1 thread, fp32 with fp64 sums"; }

  void load(const Params& p) override {
    params_ = p;
    optim_.reset();
    epoch_ = 0;
  }
  Params params() override { return params_; }

  double train(int epochs, float* losses) override {
    const auto t0 = std::chrono::steady_clock::now();
    for (int e = 0; e < epochs; ++e, ++epoch_) {
      const ShuffleKey key = make_shuffle_key(uint32_t(plan_.n), opt_.seed, uint64_t(epoch_));
      double sum = 0;
      for (int b = 0; b < plan_.batches; ++b) {
        const int count = plan_.size(b);
        for (int s = 0; s < count; ++s) {
          const uint32_t pos = uint32_t(b) * uint32_t(plan_.batch) + uint32_t(s);
          idx_[s] = plan_.shuffle ? shuffle_index(key, pos) : pos;
        }
        sum += reference_loss_and_grad<float, double>(opt_.spec, params_.values.data(), data_.x.data(),
                                                      data_.y.data(), idx_.data(), count, grad_.data());
        optim_.step(params_.values.data(), grad_.data());
      }
      losses[e] = float(sum / plan_.batches);
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  SetupReport setup() const override { return {}; }

 private:
  const Dataset& data_;
  BackendOptions opt_;
  BatchPlan plan_;
  HostOptimizer optim_;
  Params params_;
  std::vector<float> grad_;
  std::vector<unsigned> idx_;
  long long epoch_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_reference_backend(const Dataset& data, const BackendOptions& opt) {
  return std::make_unique<CpuReferenceBackend>(data, opt);
}

}  // namespace nntrain
