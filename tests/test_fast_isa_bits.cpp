// test_fast_isa_bits.cpp — the fast CPU backend gives the same bits on every instruction set
// (avx512, avx2, generic: each that this CPU offers) and for 1, 2 or 3 threads: the 16-lane
// accumulators, the one halving tree for their sums and the fused multiply-adds of every
// kernel set (cpu_fast_kernels.hpp, kAccLanes). Comparing the sets with each other is the
// property itself; one comparison against the reference backend (fp64 sums) checks that the
// common result is also the right one.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <sstream>
#include <vector>

#include "backend.hpp"
#include "cpu_fast.hpp"
#include "cpu_reference.hpp"
#include "dataset.hpp"
#include "mlp.hpp"

using namespace nntrain;

namespace {

struct Run {
  std::vector<float> losses;
  std::vector<float> params;
};

BackendOptions options(const ModelSpec& spec, int batch, int threads) {
  BackendOptions o;
  o.spec = spec;
  o.optimizer.type = "adam";
  o.optimizer.lr = 0.01;
  o.optimizer.eps = 1e-3;
  o.batch_size = batch;
  o.shuffle = true;
  o.seed = 11;
  o.threads = threads;
  return o;
}

Run train(std::unique_ptr<Backend> b, const Params& init, int epochs) {
  Run r;
  r.losses.resize(size_t(epochs));
  b->load(init);
  // Two calls: the second starts from the state the first left (moments, epoch counter).
  b->train(epochs / 2, r.losses.data());
  b->train(epochs - epochs / 2, r.losses.data() + epochs / 2);
  r.params = b->params().values;
  return r;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The first index where two runs differ, for the failure message.
std::string first_difference(const Run& a, const Run& b) {
  std::ostringstream s;
  for (size_t e = 0; e < a.losses.size(); ++e)
    if (std::memcmp(&a.losses[e], &b.losses[e], sizeof(float)) != 0) {
      s << "loss of epoch " << e + 1 << ": " << a.losses[e] << " vs " << b.losses[e] << "; ";
      break;
    }
  for (size_t k = 0; k < a.params.size() && k < b.params.size(); ++k)
    if (std::memcmp(&a.params[k], &b.params[k], sizeof(float)) != 0) {
      s << "parameter " << k << ": " << a.params[k] << " vs " << b.params[k];
      break;
    }
  return s.str();
}

}  // namespace

TEST_CASE("fast backend: the same bits on every instruction set and thread count", "[fast][isa]") {
  // 2,500 peaks samples: full batch (3 chunks, the last tile of each narrow) and shuffled
  // batches of 700 (the last of 400: a ragged tile). The reference net 2 -> 20 -> 5 -> 1 takes
  // every fused path (the first layers' forward with the tail, the fused backward of the first
  // two layers, on AVX2 its assembly loop); 2 -> 12 -> 10 -> 3 -> 1 the unfused ones
  // (grad_lanes, backprop, output_delta) and the narrow-layer fusion.
  const Dataset data = make_peaks(50, 50, -3, 3);
  const std::vector<std::vector<int>> nets = {{2, 20, 5, 1}, {2, 12, 10, 3, 1}};
  constexpr int kEpochs = 30;
  const std::vector<std::string> isas = fast_cpu_isas();
  INFO("instruction sets this CPU offers: " << isas.size());
  for (const auto& widths : nets) {
    for (Activation act : {Activation::relu, Activation::tanh, Activation::sigmoid}) {  // (tanh/sigmoid fused too)
      for (int batch : {0, 700}) {
        ModelSpec spec;
        spec.widths = widths;
        spec.hidden = act;
        Params init = init_params(spec, Init::glorot_uniform, 3);
        for (int l = 0; l < spec.layers(); ++l)  // relu kinks not all at the origin
          for (int o = 0; o < spec.out(l); ++o) init.b(l)[o] = 0.05f * float(o % 5) - 0.1f;
        std::ostringstream name;
        for (int w : widths) name << w << ' ';
        name << activation_name(act) << ", batch " << batch;
        INFO(name.str());
        FastCpuTuning first;
        first.isa = isas.front();
        const Run base = train(make_cpu_fast_backend(data, options(spec, batch, 1), first), init, kEpochs);
        for (const std::string& isa : isas) {
          for (int threads : {1, 2, 3}) {
            FastCpuTuning tuning;
            tuning.isa = isa;
            const Run got = train(make_cpu_fast_backend(data, options(spec, batch, threads), tuning), init, kEpochs);
            INFO(isa << ", " << threads << " thread(s) against " << isas.front() << ", 1 thread: "
                     << first_difference(got, base));
            CHECK(same_bits(got.losses, base.losses));
            CHECK(same_bits(got.params, base.params));
          }
        }
        // The common result follows the reference (fp64 sums) within test_fast_sizes.cpp's
        // horizon tolerance, and training learnt something.
        const Run ref = train(make_cpu_reference_backend(data, options(spec, batch, 1)), init, kEpochs);
        for (int e = 0; e < kEpochs; ++e) {
          INFO("epoch " << e + 1);
          CHECK(base.losses[size_t(e)] == Approx(ref.losses[size_t(e)]).epsilon(1e-4));
        }
        CHECK(base.losses.back() < base.losses.front());
      }
    }
  }
}
