// test_fast_kernels.cpp — the fast CPU backend's fused kernels against the unfused ones they
// replace, bit for bit, on every kernel set this CPU runs. (That the unfused kernels are
// right is test_fast_cpu.cpp's and test_fast_sizes.cpp's job, against the reference backend.)
// And the slot reduction with Adam against nnmath.hpp's scalar adam_update.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cpu_fast.hpp"
#include "cpu_fast_kernels.hpp"
#include "fast_kernels_util.hpp"
#include "nnmath.hpp"

using namespace nntrain;
using testutil::kernels_for;

namespace {

// 64-byte aligned floats, filled with values in [-1, 1) from a fixed LCG (some negative:
// relu kinks inside the tile).
struct Buf {
  float* p = nullptr;
  size_t n = 0;
  explicit Buf(size_t count, uint32_t seed = 0) : n(count) {
    p = static_cast<float*>(std::aligned_alloc(64, ((count * sizeof(float) + 63) / 64) * 64));
    uint32_t x = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < count; ++i) {
      x = x * 1664525u + 1013904223u;
      p[i] = float(int32_t(x >> 8) - (1 << 23)) / float(1 << 23);
    }
  }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  ~Buf() { std::free(p); }
  bool same_bits(const Buf& o, size_t count) const { return std::memcmp(p, o.p, count * sizeof(float)) == 0; }
};

}  // namespace

TEST_CASE("fast kernels: the fused forward's tail gives the bits of output_delta and grad_backprop",
          "[fast][kernels]") {
  // A net of three layers, nx -> K -> out -> 1 with the identity output: forward_first with
  // FirstForward::D does the loss, the third layer's gradient and the second layer's delta
  // in the forward pass. The unfused path: forward_first storing Z and Z2, then output_delta
  // and grad_backprop. Ragged tiles (count < T: a partial vector, or whole vectors of padding
  // only, or under one vector), fresh and accumulating, both block widths.
  const int T = 256, K = 20;
  for (const std::string& isa : fast_cpu_isas()) {
    const fast::Kernels& k = kernels_for(isa);
    const size_t lanes = size_t(fast::kAccLanes);  // floats per accumulator
    for (int nx : {1, 2}) {
      for (int out : {1, 5, 8}) {
        for (int act : {1, 4, 0, 2, 3}) {  // relu, leaky_relu, identity, tanh, sigmoid (the fused activations)
          for (int count : {T, 201, 200, 5}) {
            for (bool fresh : {true, false}) {
              for (int cols : {1, 2}) {
                INFO(isa << ": " << nx << " -> " << K << " -> " << out << " -> 1, activation " << act << ", "
                          << count << " of " << T << " samples, fresh " << fresh << ", blocks of " << cols);
                const uint32_t s = uint32_t(nx * 100 + out * 10 + act);
                Buf W0(size_t(K * nx), s), b0(size_t(K), s + 1), X(size_t(nx * T), s + 2), W1(size_t(out * K), s + 3),
                    b1(size_t(out), s + 4), W2(size_t(out), s + 5), b2(1, s + 6), Y(size_t(T), s + 7);
                for (int j = count; j < T; ++j) Y.p[j] = X.p[j] = 0.0f;  // a gathered tile's padding
                if (nx == 2)
                  for (int j = count; j < T; ++j) X.p[T + j] = 0.0f;
                // Accumulators as a previous tile left them (fresh = false reads them).
                Buf gW_a(size_t(out) * lanes, s + 8), gb_a(lanes, s + 9), loss_a(lanes, s + 10);
                Buf gW_b(size_t(out) * lanes, s + 8), gb_b(lanes, s + 9), loss_b(lanes, s + 10);
                Buf H_a(size_t(K * T)), H_b(size_t(K * T)), D_a(size_t(out * T)), D_b(size_t(out * T));
                Buf Z(size_t(out * T)), Z2{size_t(T)}, D2{size_t(T)};
                const float scale = 2.0f / float(count);
                fast::FirstForward f{};
                f.W0 = W0.p, f.b0 = b0.p, f.nx = nx, f.X0 = X.p, f.ldx = size_t(T), f.K = K, f.act0 = act;
                f.W1 = W1.p, f.b1 = b1.p, f.out = out, f.T = T, f.act1 = act, f.valid = count;
                f.W2 = W2.p, f.b2 = b2.p, f.out2 = 1, f.act2 = 0, f.cols = cols;
                // Unfused: three forward calls (mv_rows, not forward_first's code), so a broken
                // fused first or second layer cannot pass by being on both sides.
                k.forward(W0.p, b0.p, nx, K, X.p, size_t(T), H_b.p, T, act, count);
                k.forward(W1.p, b1.p, K, out, H_b.p, size_t(T), Z.p, T, act, count);
                k.forward(W2.p, b2.p, out, 1, Z.p, size_t(T), Z2.p, T, 0, count);
                k.output_delta(Z2.p, Y.p, size_t(T), 1, count, T, scale, 0, D2.p, loss_b.p);
                k.grad_backprop(W2.p, D2.p, Z.p, out, 1, T, act, gW_b.p, gb_b.p, D_b.p, fresh);
                // Fused: Z and Z2 are not written (poisoned to tell).
                Buf Zx(size_t(out * T)), Z2x{size_t(T)};
                for (size_t i = 0; i < Zx.n; ++i) Zx.p[i] = 1e30f;
                f.H = H_a.p, f.Z = Zx.p, f.Z2 = Z2x.p;
                f.Y = Y.p, f.two_over_count = scale, f.loss = loss_a.p, f.gW2 = gW_a.p, f.gb2 = gb_a.p;
                f.D = D_a.p, f.fresh = fresh;
                REQUIRE(k.forward_first(f) == 3);
                CHECK(H_a.same_bits(H_b, H_b.n));
                CHECK(D_a.same_bits(D_b, D_b.n));
                CHECK(gW_a.same_bits(gW_b, gW_b.n));
                CHECK(gb_a.same_bits(gb_b, gb_b.n));
                CHECK(loss_a.same_bits(loss_b, loss_b.n));
                CHECK(Zx.p[0] == 1e30f);
                // And the delta is not trivially zero (a tail that did nothing would fail above
                // only where the unfused path's values are non-zero).
                bool any = false;
                for (size_t i = 0; i < D_b.n; ++i) any = any || D_b.p[i] != 0.0f;
                CHECK(any);
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("fast kernels: the fused backward of the first two layers gives the bits of grad_lanes and backprop",
          "[fast][kernels]") {
  // grad_backprop_first (the second layer's gradient, the first layer's delta in registers,
  // the first layer's gradient, in one pass; on AVX2 the relu columns after the first go
  // through the unit's own loop) against grad_lanes, backprop and grad_lanes. Every output
  // count the fused pass takes and one it does not (9), hidden widths on either side of the
  // AVX2 loop's 32-column batches, every activation's derivative, input rows that are not T
  // apart, one and several vectors a tile, fresh and accumulating.
  for (const std::string& isa : fast_cpu_isas()) {
    const fast::Kernels& k = kernels_for(isa);
    const size_t lanes = size_t(fast::kAccLanes);  // floats per accumulator
    for (int nx : {1, 2}) {
      for (int out : {1, 2, 3, 4, 5, 6, 8, 9}) {
        for (int in : {1, 2, 20, 33, 40}) {
          for (int act : {1, 4, 0, 2}) {  // relu, leaky_relu, identity, tanh
            for (int T : {64, 256}) {
              for (bool fresh : {true, false}) {
                INFO(isa << ": " << nx << " -> " << in << " -> " << out << ", activation " << act << ", T " << T
                          << ", fresh " << fresh);
                const uint32_t s = uint32_t(nx * 1000 + out * 100 + in * 7 + act);
                const size_t ldx = size_t(T) + 16;
                Buf W(size_t(out * in), s), D(size_t(out * T), s + 1), A(size_t(in * T), s + 2),
                    X(ldx * size_t(nx), s + 3);
                // A is the first layer's output: relu's is >= 0 with exact zeros, tanh's in (-1, 1).
                if (act == 1)
                  for (size_t i = 0; i < A.n; ++i) A.p[i] = A.p[i] > 0.0f ? A.p[i] : 0.0f;
                Buf gW_a(size_t(out * in) * lanes, s + 4), gb_a(size_t(out) * lanes, s + 5),
                    gW0_a(size_t(in * nx) * lanes, s + 6), gb0_a(size_t(in) * lanes, s + 7);
                Buf gW_b(size_t(out * in) * lanes, s + 4), gb_b(size_t(out) * lanes, s + 5),
                    gW0_b(size_t(in * nx) * lanes, s + 6), gb0_b(size_t(in) * lanes, s + 7);
                Buf P(size_t(in * T)), Pscratch(size_t(in * T));
                // Unfused.
                k.grad_lanes(D.p, A.p, size_t(T), in, out, T, gW_b.p, gb_b.p, fresh);
                k.backprop(W.p, D.p, in, out, T, A.p, act, P.p);
                k.grad_lanes(P.p, X.p, ldx, nx, in, T, gW0_b.p, gb0_b.p, fresh);
                // Fused.
                k.grad_backprop_first({W.p, D.p, A.p, in, out, T, act, gW_a.p, gb_a.p, Pscratch.p, X.p, ldx, nx,
                                       gW0_a.p, gb0_a.p, fresh});
                CHECK(gW_a.same_bits(gW_b, gW_b.n));
                CHECK(gb_a.same_bits(gb_b, gb_b.n));
                CHECK(gW0_a.same_bits(gW0_b, gW0_b.n));
                CHECK(gb0_a.same_bits(gb0_b, gb0_b.n));
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("fast kernels: the fused backward keeps the unfused kernels' signed zeros", "[fast][kernels]") {
  // Every delta zero (a tile of padding) and every weight negative: each w d is -0, and the
  // backprop sum, started from +0 as backprop starts it, is +0. Accumulators that are -0
  // (a product that underflowed) then become +0 + -0 = +0; a sum started from the first
  // product instead (-0) would leave them -0. The bits must be the unfused kernels'.
  const int T = 64, in = 20, nx = 2;
  for (const std::string& isa : fast_cpu_isas()) {
    const fast::Kernels& k = kernels_for(isa);
    const size_t lanes = size_t(fast::kAccLanes);  // floats per accumulator
    for (int out : {1, 3, 5, 8}) {
      INFO(isa << ": " << nx << " -> " << in << " -> " << out);
      Buf W(size_t(out * in), 1), D(size_t(out * T), 2), A(size_t(in * T), 3), X(size_t(nx * T), 4);
      for (size_t i = 0; i < W.n; ++i) W.p[i] = -1.0f - std::abs(W.p[i]);
      for (size_t i = 0; i < D.n; ++i) D.p[i] = 0.0f;
      for (size_t i = 0; i < A.n; ++i) A.p[i] = 0.5f + std::abs(A.p[i]);  // relu outputs > 0: nothing masked
      for (size_t i = 0; i < X.n; ++i) X.p[i] = 0.25f + std::abs(X.p[i]);
      Buf gW_a(size_t(out * in) * lanes), gb_a(size_t(out) * lanes), gW0_a(size_t(in * nx) * lanes),
          gb0_a(size_t(in) * lanes);
      Buf gW_b(size_t(out * in) * lanes), gb_b(size_t(out) * lanes), gW0_b(size_t(in * nx) * lanes),
          gb0_b(size_t(in) * lanes);
      for (Buf* b : {&gW_a, &gb_a, &gW0_a, &gb0_a, &gW_b, &gb_b, &gW0_b, &gb0_b})
        for (size_t i = 0; i < b->n; ++i) b->p[i] = -0.0f;
      Buf P(size_t(in * T)), Pscratch(size_t(in * T));
      k.grad_lanes(D.p, A.p, size_t(T), in, out, T, gW_b.p, gb_b.p, false);
      k.backprop(W.p, D.p, in, out, T, A.p, 1, P.p);
      k.grad_lanes(P.p, X.p, size_t(T), nx, in, T, gW0_b.p, gb0_b.p, false);
      k.grad_backprop_first({W.p, D.p, A.p, in, out, T, 1, gW_a.p, gb_a.p, Pscratch.p, X.p, size_t(T), nx, gW0_a.p,
                             gb0_a.p, false});
      CHECK(gW_a.same_bits(gW_b, gW_b.n));
      CHECK(gb_a.same_bits(gb_b, gb_b.n));
      CHECK(gW0_a.same_bits(gW0_b, gW0_b.n));
      CHECK(gb0_a.same_bits(gb0_b, gb0_b.n));
      CHECK(!std::signbit(gb0_b.p[0]));  // the unfused sum did turn -0 into +0
    }
  }
}

namespace {

#if defined(__SSE__)
unsigned mxcsr() { return __builtin_ia32_stmxcsr(); }
constexpr bool defined_x86() { return true; }
#else
unsigned mxcsr() { return 0; }
constexpr bool defined_x86() { return false; }
#endif

// The three groups of the case below where a subnormal occurs (parameters 40..59, see there),
// planted in the slots of every chunk and in the moments.
void plant_subnormal_groups(Buf& slots, Buf& m, Buf& v, int chunks, size_t stride) {
  for (size_t i = 40; i < 60; ++i) {
    for (int c = 0; c < chunks; ++c) slots.p[size_t(c) * stride + i] = i < 55 ? 0.0f : 1.1e-38f;
    const float sign = i % 2 ? -1.0f : 1.0f;
    if (i < 50) {
      m.p[i] = (i % 2 ? -1.0f : 1.0f) * 3e-40f;
      v.p[i] = 2e-41f;
      REQUIRE(std::fpclassify(m.p[i]) == FP_SUBNORMAL);
      REQUIRE(std::fpclassify(v.p[i]) == FP_SUBNORMAL);
    } else if (i < 55) {
      m.p[i] = sign * 2e-38f;             // beta1 * m: 1.8e-38
      slots.p[i] = -sign * 1.5e-37f;      // (1 - beta1) * g: -1.5e-38 (chunk 0 only)
      v.p[i] = 1e-6f;
      REQUIRE(std::fpclassify(0.9f * m.p[i]) == FP_NORMAL);
      REQUIRE(std::fpclassify(0.1f * slots.p[i]) == FP_NORMAL);
    } else {
      m.p[i] = 0.0f;
      v.p[i] = 1e-6f;
      REQUIRE(std::fpclassify(slots.p[i]) == FP_SUBNORMAL);
    }
  }
}

}  // namespace

TEST_CASE("fast kernels: reduce_adam gives adam_update's bits, and flushes subnormal moments", "[fast][kernels][adam]") {
  // The slots summed in chunk order in double, rounded to float, then nnmath.hpp's
  // adam_update (the reference backend's and the GPU's), one parameter at a time, in the
  // test's own IEEE arithmetic. 171 parameters (a partial last vector), 1, 3 and 16 chunks,
  // the whole range and one starting a vector in. Three groups where a subnormal occurs:
  //   40..49: a dead unit: gradient zero, moments subnormal (decayed) — a subnormal input;
  //   50..54: beta1 * m and (1 - beta1) * g normal, of opposite signs, their sum subnormal — a
  //           subnormal result written out (flush-to-zero's part: a subnormal product would
  //           be read back as zero by the add under denormals-are-zero alone);
  //   55..59: m zero, each chunk's slot value subnormal (1.1e-38): 16 of them sum to a normal
  //           gradient whose (1 - beta1) * g is normal — denormals-are-zero's part.
  // On x86 with eps >= 1e-12 the kernel reads and writes those as zero (IEEE gives nonzero
  // moments there) and every other value, the weights included, keeps adam_update's bits; with
  // a smaller eps (1e-13, and 1e-40: subnormal as a float) it is IEEE arithmetic throughout.
  constexpr size_t P = 171, stride = 176;
  for (const std::string& isa : fast_cpu_isas()) {
    const fast::Kernels& k = kernels_for(isa);
    for (double eps : {1e-8, 1e-13, 1e-40}) {
      for (int chunks : {1, 3, 16}) {
        for (size_t begin : {size_t(0), size_t(k.lanes)}) {
          INFO(isa << ": eps " << eps << ", " << chunks << " chunks, from parameter " << begin);
          const uint32_t s0 = uint32_t(chunks * 10 + int(begin));
          Buf slots(size_t(chunks) * stride, s0), w(P, s0 + 1), m(P, s0 + 2), v(P, s0 + 3);
          for (size_t i = 0; i < P; ++i) {
            v.p[i] = v.p[i] * v.p[i] * 0.01f;  // >= 0
            m.p[i] *= 0.1f;
          }
          plant_subnormal_groups(slots, m, v, chunks, stride);
          const AdamHyper hy{0.01, 0.9, 0.999, eps};
          AdamStep st = adam_initial_step();
          for (int t = 0; t < 3; ++t) st = adam_next_step(st, hy);
          const fast::AdamScalars ah{float(hy.beta1), float(1.0 - hy.beta1), float(hy.beta2), float(1.0 - hy.beta2),
                                     float(hy.eps),   st.bias2_sqrt,         st.step_size};
          // The expectation, in IEEE arithmetic.
          std::vector<float> we(w.p, w.p + P), me(m.p, m.p + P), ve(v.p, v.p + P);
          for (size_t i = begin; i < P; ++i) {
            double sum = 0.0;
            for (int c = 0; c < chunks; ++c) sum += double(slots.p[size_t(c) * stride + i]);
            adam_update(we[i], me[i], ve[i], float(sum), hy, st);
          }
          if (chunks == 16) REQUIRE(std::fpclassify(me[55]) == FP_NORMAL);  // only a read as zero zeroes it
          if (begin == 0) REQUIRE(std::fpclassify(me[50]) == FP_SUBNORMAL);    // only a write as zero does
          const unsigned before = mxcsr() & ~0x3Fu;  // (not the sticky exception flags)
          k.reduce_adam(slots.p, stride, chunks, begin, P, w.p, m.p, v.p, ah);
          CHECK((mxcsr() & ~0x3Fu) == before);  // the caller's MXCSR restored
          const bool flushes = defined_x86() && float(eps) >= 1e-12f;
          for (size_t i = 0; i < P; ++i) {
            INFO("parameter " << i);
            const bool flushed_m = flushes && i >= 40 && i < 60 && i >= begin;
            if (flushed_m) {
              CHECK(me[i] != 0.0f);  // what IEEE arithmetic gives
              CHECK(m.p[i] == 0.0f);
            } else {
              CHECK(std::memcmp(&m.p[i], &me[i], sizeof(float)) == 0);
            }
            if (flushed_m && i < 50)
              CHECK(v.p[i] == 0.0f);  // the dead unit's v, subnormal in IEEE arithmetic
            else
              CHECK(std::memcmp(&v.p[i], &ve[i], sizeof(float)) == 0);
            CHECK(std::memcmp(&w.p[i], &we[i], sizeof(float)) == 0);  // every weight as IEEE moves it
          }
        }
      }
    }
  }
}
