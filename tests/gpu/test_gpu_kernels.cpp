// test_gpu_kernels.cpp — every kernel of kernels/cuda/ against the CPU on seeded random inputs,
// with awkward sizes (1 sample, sizes that are not multiples of a block), outputs poisoned
// with NaN first. Tolerances are stated where a result may differ from the host's by rounding.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "fused_v2.hpp"
#include "gpu_test_util.hpp"
#include "mlp_kernels.hpp"
#include "reference_math.hpp"

using namespace nntrain;
using namespace nntrain::cuda;
using namespace nntrain::test;

namespace {

const Activation kActs[] = {Activation::identity, Activation::relu, Activation::tanh, Activation::sigmoid,
                            Activation::leaky_relu};

TrainState host_state(unsigned long long epoch, int steps, const AdamHyper& h) {
  TrainState st{};
  st.adam = adam_initial_step();
  for (int k = 0; k < steps; ++k) st.adam = adam_next_step(st.adam, h);
  st.epoch = epoch;
  return st;
}

StepDesc desc(int n, int batch, int b, bool shuffle, uint64_t seed) {
  StepDesc d{};
  const int batches = (n + batch - 1) / batch;
  d.batch_index = b;
  d.batches = batches;
  d.batch_offset = b * batch;
  d.count = b + 1 < batches ? batch : n - batch * (batches - 1);
  d.n = uint32_t(n);
  d.shuffle = shuffle ? 1 : 0;
  d.seed = seed;
  return d;
}

}  // namespace

TEST_CASE("gather reads the shuffled rows of a batch exactly", "[gpu][kernels]") {
  Stream stream;
  cudaStream_t s = stream.get();
  for (int n : {1, 37, 1001}) {
    for (int batch : {1, 7, n}) {
      const int n_in = 3, n_out = 2;
      const auto x = random_floats(size_t(n) * n_in, 11 + n), y = random_floats(size_t(n) * n_out, 12 + n);
      auto dx = to_device(x, s), dy = to_device(y, s);
      const TrainState st = host_state(5, 0, AdamHyper{0.1, 0.9, 0.999, 1e-8});
      auto dstate = to_device(std::vector<TrainState>{st}, s);
      const int batches = (n + batch - 1) / batch;
      for (int b : {0, batches - 1}) {
        const StepDesc d = desc(n, batch, b, batches > 1, 42);
        DeviceBuffer<float> xb(size_t(batch) * n_in), yb(size_t(batch) * n_out);
        xb.fill_bytes(kPoisonByte, s);
        yb.fill_bytes(kPoisonByte, s);
        launch_gather(dx.get(), dy.get(), n_in, n_out, dstate.get(), d, xb.get(), yb.get(), s);
        const auto hx = to_host(xb, s), hy = to_host(yb, s);
        const ShuffleKey key = make_shuffle_key(uint32_t(n), 42, 5);
        size_t wrong = 0;
        for (int k = 0; k < d.count; ++k) {
          const uint32_t pos = uint32_t(d.batch_offset + k);
          const uint32_t row = d.shuffle ? shuffle_index(key, pos) : pos;
          for (int i = 0; i < n_in; ++i) wrong += !bits_equal(hx[size_t(k) * n_in + i], x[row * n_in + i]);
          for (int o = 0; o < n_out; ++o) wrong += !bits_equal(hy[size_t(k) * n_out + o], y[row * n_out + o]);
        }
        INFO("n " << n << " batch " << batch << " b " << b);
        CHECK(wrong == 0);
      }
    }
  }
}

// Device expf/tanhf are within 2 ulp of the host's; 1e-6 relative + 1e-7 absolute covers it.
TEST_CASE("bias plus activation matches the host for every activation", "[gpu][kernels]") {
  Stream stream;
  cudaStream_t s = stream.get();
  // Up to 300 × 129 elements: many blocks, none full. (Kept small: the same cases run on the
  // simulator, which takes ~0.1 ms per element here.)
  for (Activation a : kActs)
    for (int out : {1, 5, 33, 300})
      for (int count : {1, 37, 129}) {
        const auto z = random_floats(size_t(out) * count, 100 + out + count, -4, 4);
        const auto b = random_floats(size_t(out), 200 + out, -1, 1);
        auto dz = to_device(z, s), db = to_device(b, s);
        launch_bias_act(dz.get(), db.get(), out, count, a, s);
        std::vector<double> want(z.size());
        for (size_t k = 0; k < z.size(); ++k) want[k] = act_forward(a, float(z[k] + b[k % out]));
        INFO(activation_name(a) << " out " << out << " count " << count);
        check_close(to_host(dz, s), want, 1e-6, 1e-7, "bias_act");
      }
}

TEST_CASE("activation backward matches the host", "[gpu][kernels]") {
  Stream stream;
  cudaStream_t s = stream.get();
  for (Activation a : kActs)
    for (int width : {1, 20, 257}) {
      const int count = 33;
      const auto d = random_floats(size_t(width) * count, 300 + width);
      auto y = random_floats(size_t(width) * count, 400 + width, -1, 1);
      for (auto& v : y) v = act_forward(a, v);
      auto dd = to_device(d, s), dy = to_device(y, s);
      launch_act_backward(dd.get(), dy.get(), width, count, a, s);
      std::vector<double> want(d.size());
      for (size_t k = 0; k < d.size(); ++k) want[k] = d[k] * act_derivative_from_output(a, y[k]);
      INFO(activation_name(a) << " width " << width);
      // 1 - y·y may be contracted to one FMA on the device: a few ulp.
      check_close(to_host(dd, s), want, 1e-6, 1e-7, "act_backward");
    }
}

TEST_CASE("MSE delta, loss and the step's Adam scalars match the host", "[gpu][kernels]") {
  Stream stream;
  cudaStream_t s = stream.get();
  const AdamHyper h{0.08, 0.9, 0.999, 1e-8};
  static_assert(90000 * 3 > kMaxLossBlocks * kReduceThreads, "the largest case must need the grid-stride loop");
  for (Activation out_act : {Activation::identity, Activation::sigmoid})
    for (int n_out : {1, 3})
      for (int count : {1, 255, 257, 90000}) {
        // 90,000 × 3 outputs = 270,000 elements, more than kMaxLossBlocks × kReduceThreads:
        // the blocks' grid-stride loop runs twice. Once (identity) is enough for that size.
        if (count > 1000 && out_act != Activation::identity) continue;
        const size_t total = size_t(count) * n_out;
        const auto p0 = random_floats(total, 500 + count), t = random_floats(total, 600 + count);
        std::vector<float> p(p0);
        for (auto& v : p) v = act_forward(out_act, v);
        auto dp = to_device(p, s), dt = to_device(t, s);
        DeviceBuffer<float> delta(total);
        delta.fill_bytes(kPoisonByte, s);
        DeviceBuffer<double> partials{size_t(kMaxLossBlocks)};
        launch_mse_delta(dp.get(), dt.get(), n_out, count, out_act, delta.get(), partials.get(), s);
        // Three batches of one epoch (here all the same batch): the loss is their mean.
        TrainState st0 = host_state(2, 6, h);
        auto dstate = to_device(std::vector<TrainState>{st0}, s);
        DeviceBuffer<float> losses(4);
        losses.fill_bytes(kPoisonByte, s);
        StepDesc d = desc(3 * count, count, 0, false, 1);
        for (int b = 0; b < 3; ++b) {
          d.batch_index = b;
          launch_loss_finalize(partials.get(), loss_blocks(int(total)), n_out, d, h, dstate.get(), losses.get(), s);
        }
        const float two_over_count = 2.0f / (float(count) * float(n_out));
        std::vector<double> want_delta(total);
        double sum = 0;
        for (size_t k = 0; k < total; ++k) {
          sum += double(mse_term(p[k], t[k]));
          want_delta[k] = mse_grad(p[k], t[k], two_over_count) * act_derivative_from_output(out_act, p[k]);
        }
        INFO("n_out " << n_out << " count " << count);
        check_close(to_host(delta, s), want_delta, 1e-6, 1e-12, "mse delta");
        const auto hl = to_host(losses, s);
        // The mean is summed in double on both sides, in different orders: 1e-6 relative.
        check_close({hl[0]}, {sum / double(total)}, 1e-6, 0, "epoch loss");
        CHECK(std::isnan(hl[1]));  // only one epoch finished: slot 1 untouched
        const TrainState st = to_host(dstate, s)[0];
        CHECK(st.epoch == 3);
        CHECK(st.slot == 1);
        CHECK(st.loss_acc == 0.0);
        // The device's step scalars are bit-identical to the host's (adam_next_step, _rn).
        const TrainState want = host_state(0, 9, h);
        CHECK(st.adam.beta1_pow == want.adam.beta1_pow);
        CHECK(st.adam.beta2_pow == want.adam.beta2_pow);
        CHECK(bits_equal(st.adam.step_size, want.adam.step_size));
        CHECK(bits_equal(st.adam.bias2_sqrt, want.adam.bias2_sqrt));
      }
}

// Float sums over up to 70,000 terms in a different order from the double reference:
// bound the error by 1e-6 × the sum of |terms| (about sqrt(n)·eps in practice).
TEST_CASE("bias gradient two-stage reduction matches a double sum and is reproducible", "[gpu][kernels]") {
  Stream stream;
  cudaStream_t s = stream.get();
  for (int out : {1, 5, 33})
    for (int count : {1, 255, 257, 70001}) {
      const auto d = random_floats(size_t(out) * count, 700 + out * 7 + count);
      auto dd = to_device(d, s);
      DeviceBuffer<float> partial{size_t(kMaxBiasChunks) * out}, db{size_t(out)};
      partial.fill_bytes(kPoisonByte, s);
      db.fill_bytes(kPoisonByte, s);
      launch_bias_grad(dd.get(), out, count, partial.get(), db.get(), s);
      const auto first = to_host(db, s);
      std::vector<double> want(size_t(out), 0.0), mag(size_t(out), 0.0);
      for (int k = 0; k < count; ++k)
        for (int o = 0; o < out; ++o) {
          want[size_t(o)] += d[size_t(k) * out + o];
          mag[size_t(o)] += std::fabs(d[size_t(k) * out + o]);
        }
      INFO("out " << out << " count " << count);
      for (int o = 0; o < out; ++o) {
        INFO("o " << o << " got " << first[size_t(o)] << " want " << want[size_t(o)]);
        CHECK(std::fabs(first[size_t(o)] - want[size_t(o)]) <= 1e-6 * mag[size_t(o)] + 1e-7);
      }
      launch_bias_grad(dd.get(), out, count, partial.get(), db.get(), s);
      const auto second = to_host(db, s);
      CHECK(std::equal(first.begin(), first.end(), second.begin(), bits_equal));
    }
}

TEST_CASE("Adam and SGD updates are bit-identical to the host's", "[gpu][kernels]") {
  Stream stream;
  cudaStream_t s = stream.get();
  const AdamHyper h{0.08, 0.9, 0.999, 1e-8};
  for (size_t n : {size_t(1), size_t(1000), size_t(100003)})
    for (bool sgd : {false, true}) {
      auto w = random_floats(n, 800 + n), m = random_floats(n, 801 + n, -0.1f, 0.1f),
           v = random_floats(n, 802 + n, 0.0f, 0.01f), g = random_floats(n, 803 + n);
      auto dw = to_device(w, s), dm = to_device(m, s), dv = to_device(v, s), dg = to_device(g, s);
      const TrainState st = host_state(0, 3, h);
      auto dstate = to_device(std::vector<TrainState>{st}, s);
      launch_optimizer(dw.get(), dm.get(), dv.get(), dg.get(), n, dstate.get(), h, sgd, s);
      const auto hw = to_host(dw, s), hm = to_host(dm, s), hv = to_host(dv, s);
      size_t wrong = 0;
      for (size_t k = 0; k < n; ++k) {
        if (sgd) {
          sgd_update(w[k], g[k], float(h.lr));
        } else {
          adam_update(w[k], m[k], v[k], g[k], h, st.adam);
        }
        wrong += !bits_equal(hw[k], w[k]) || !bits_equal(hm[k], m[k]) || !bits_equal(hv[k], v[k]);
      }
      INFO("n " << n << (sgd ? " sgd" : " adam"));
      CHECK(wrong == 0);
    }
}

// The shape limits every fused plan shares (fused_limits.hpp), through v2's plan: the fused
// kernels' own gradients are checked end to end in test_gpu_fused_v2.cpp.
TEST_CASE("fused plan refuses wide or deep networks and says why", "[gpu][fused]") {
  const auto wide = plan_fused_v2({2, 256, 1}, {Activation::relu, Activation::identity}, 227 * 1024);
  CHECK_FALSE(wide.fits);
  CHECK_THAT(wide.why, Catch::Contains("256"));
  std::vector<int> deep(kFusedMaxLayers + 2, 4);
  const auto d = plan_fused_v2(deep, std::vector<Activation>(deep.size() - 1, Activation::relu), 227 * 1024);
  CHECK_FALSE(d.fits);
  CHECK_THAT(d.why, Catch::Contains("layers"));
  const auto small = plan_fused_v2({2, 20, 5, 1}, {Activation::relu, Activation::relu, Activation::identity}, 48 * 1024);
  CHECK(small.fits);
  CHECK(small.tile == kV2Tile);
  CHECK(small.smem_bytes <= 48u * 1024u);
}
