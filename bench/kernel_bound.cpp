// kernel_bound.cpp — what the fast CPU backend's kernels alone allow: the best a mini-batch
// step of the reference net (2→20→5→1 relu, Adam) could take on this machine if nothing but
// the kernels and the unavoidable hand-offs between cores cost time.
//
//   build/nntrain_kernel_bound [--isa avx512|avx2|generic] [--calls N] [--trips N] [--reps N]
//
// Prints one JSON object (nanoseconds; each figure the minimum over --reps repeats (default 9)
// of --calls calls (default 20,000), hot cache, one core; the widest kernel set unless --isa;
// fewer repeats for a loaded machine, where a long run is more often interrupted):
//   chunk_ns     one 256-sample chunk: the fused forward (with the loss, the last layer's
//                gradient and the second layer's delta), the fused backward of layers 2 and
//                1, and the lane sums of the 172 accumulators into the chunk's slot — the
//                kernel calls a chunk makes in a step, in the same order, the faster of the
//                two forward blockings (FirstForward::cols 1 and 2; 1 only on the baseline set)
//   forward_ns, backward_ns, lanes_ns   the same calls one at a time
//   forward_ns_by_cols  {"1": …, "2": …}: the forward with each blocking (FirstForward::cols;
//                "2" absent on the baseline set), for pick_forward_cols's rule in cpu_fast_tuning.cpp
//   adam_ns      {"1": …, "2": …, "4": …, "8": …, "16": …}: the slot reduction and the Adam
//                update of the 171 parameters from that many chunk slots (normal values: a
//                dead relu unit's Adam state turns subnormal in training, which is slower)
//   round_trip_ns  a core-to-core round trip: two threads answering each other through two
//                cache lines, --trips of them (default 100,000), min of 3 (absent on a 1-CPU
//                machine; on a VM it depends on where the host puts the two vCPUs: 50–120 ns
//                on the AMD EPYC guests of docs/BENCHMARKS.md)
// scripts/bench/bench_cpu.sh turns these into a bound on each mini-batch row: a step of C chunks on
// t threads takes at least ceil(C/t) chunks + adam(C) / t, plus one round trip when t > 1 (the
// start must reach the other cores and their slots come back; / t as if the reduction were
// shared at no cost). What the bound leaves out (the data's and the slots' trips through the
// caches, the pool's bookkeeping, a dead relu unit's subnormal Adam state, a core's lower
// clock when both run) only adds: it is a floor for any schedule of these kernels.
// A measurement tool: no test asserts its figures (docs/BENCHMARKS.md records them). Exit 0;
// 2 with the usage line on a bad argument or an instruction set this CPU lacks; 1 on an
// internal error (a kernel set that does not fuse the reference net's forward).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cpu_fast.hpp"
#include "cpu_fast_kernels.hpp"

namespace {

using nntrain::fast::Kernels;
using Clock = std::chrono::steady_clock;

// 64-byte aligned floats, filled with values in [-0.5, 0.5) (a fixed hash: no zero, no
// subnormal) so that the relu units are about half active, as in training.
struct Buf {
  std::vector<float> v;
  float* p;
  explicit Buf(size_t n) : v(n + 16) {
    p = v.data() + ((64 - reinterpret_cast<uintptr_t>(v.data()) % 64) % 64) / sizeof(float);
    for (size_t i = 0; i < n; ++i) p[i] = float((i * 2654435761u) % 1000) / 1000.0f - 0.4995f;
  }
};

// Minimum over `reps` repeats of `calls` calls of f, in ns per call.
template <class F>
double min_ns(int reps, int calls, F&& f) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) {
      f();
      asm volatile("" ::: "memory");
    }
    best = std::min(best, std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / calls);
  }
  return best;
}

// Two threads pass a counter back and forth through two cache lines; ns per round trip.
double round_trip_ns(int trips, int reps) {
  struct alignas(64) Line {
    std::atomic<int> v{0};
  };
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    Line ping, pong;
    std::thread other([&] {
      for (int i = 1; i <= trips; ++i) {
        while (ping.v.load(std::memory_order_acquire) != i) {
        }
        pong.v.store(i, std::memory_order_release);
      }
    });
    // (the other thread's start is outside the timing: it waits for the first ping)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const auto t0 = Clock::now();
    for (int i = 1; i <= trips; ++i) {
      ping.v.store(i, std::memory_order_release);
      while (pong.v.load(std::memory_order_acquire) != i) {
      }
    }
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / trips;
    other.join();
    best = std::min(best, ns);
  }
  return best;
}

int usage(const char* msg) {
  std::fprintf(stderr,
               "nntrain_kernel_bound: %s\nusage: nntrain_kernel_bound [--isa avx512|avx2|generic] [--calls N] "
               "[--trips N] [--reps N]\n",
               msg);
  return 2;
}

struct Options {
  std::string isa = nntrain::fast_cpu_isas().front();
  int calls = 20000, trips = 100000, reps = 9;
};

// A positive count from argv[i], or 0.
int count_arg(const char* text) { return std::max(0, std::atoi(text)); }

// The options, or the exit code (usage's 2) in `exit_code`.
bool parse_args(int argc, char** argv, Options& o, int& exit_code) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    int* count = a == "--calls" ? &o.calls : a == "--trips" ? &o.trips : a == "--reps" ? &o.reps : nullptr;
    if (a == "--isa" && i + 1 < argc) {
      o.isa = argv[++i];
      const auto ok = nntrain::fast_cpu_isas();
      if (std::find(ok.begin(), ok.end(), o.isa) == ok.end()) {
        exit_code = usage(("instruction set not available here: " + o.isa).c_str());
        return false;
      }
    } else if (count && i + 1 < argc) {
      *count = count_arg(argv[++i]);
      if (*count < 1) {
        exit_code = usage((a + ": a positive number").c_str());
        return false;
      }
    } else {
      exit_code = usage(("unknown argument: " + a).c_str());
      return false;
    }
  }
  return true;
}

const Kernels& kernels_of(const std::string& isa) {
#if defined(__x86_64__)
  return isa == "avx512" ? nntrain::fast::kernels_avx512()
         : isa == "avx2" ? nntrain::fast::kernels_avx2()
                         : nntrain::fast::kernels_generic();
#else
  (void)isa;
  return nntrain::fast::kernels_generic();
#endif
}

constexpr int T = 256, kAcc = 172, kParams = 171, kStride = 176;

// The reference net's parameters, one tile's rows (inputs, target, activations, deltas), the
// accumulators and a chunk's slot, with the fused forward's and backward's arguments over them.
struct Net {
  const size_t L = size_t(nntrain::fast::kAccLanes);  // floats per accumulator
  Buf W0{40}, b0{20}, W1{100}, b1{5}, W2{5}, b2{1};
  Buf X{3 * T}, H{20 * T}, Z{5 * T}, Z2{T}, D{20 * T}, P{20 * T};
  // (lane_reduce may read up to kLaneReduceSlack accumulators past the run: readable, finite)
  Buf acc{(kAcc + nntrain::fast::kLaneReduceSlack) * L}, slot{kStride};
  nntrain::fast::FirstForward f{};
  nntrain::fast::FirstBackward bk{};

  Net() {
    // The accumulators in the backend's order: layer 0 (40 + 20), layer 1 (100 + 5), layer 2
    // (5 + 1), the loss.
    float* gW0 = acc.p;
    float* gb0 = gW0 + 40 * L;
    float* gW1 = gb0 + 20 * L;
    float* gb1 = gW1 + 100 * L;
    float* gW2 = gb1 + 5 * L;
    float* gb2 = gW2 + 5 * L;
    float* loss = gb2 + 1 * L;
    f.W0 = W0.p, f.b0 = b0.p, f.nx = 2, f.X0 = X.p, f.ldx = T, f.K = 20, f.act0 = 1, f.H = H.p;
    f.W1 = W1.p, f.b1 = b1.p, f.out = 5, f.Z = Z.p, f.T = T, f.act1 = 1, f.valid = T;
    f.W2 = W2.p, f.b2 = b2.p, f.out2 = 1, f.Z2 = Z2.p, f.act2 = 0;
    f.Y = X.p + 2 * T, f.two_over_count = 2.0f / 40000.0f, f.loss = loss, f.gW2 = gW2, f.gb2 = gb2, f.D = D.p;
    f.fresh = true;
    f.cols = 1;
    bk = {W1.p, D.p, H.p, 20, 5, T, 1, gW1, gb1, P.p, X.p, size_t(T), 2, gW0, gb0, true};
  }
  Net(const Net&) = delete;  // (the Bufs' pointers point into their own vectors)
  Net& operator=(const Net&) = delete;
};

constexpr int kAdamChunks[] = {1, 2, 4, 8, 16};

struct Figures {
  double chunk = 1e300, forward = 1e300, backward = 0, lanes = 0;
  double forward_cols[2] = {0.0, 0.0};
  int most_cols = 2;
  double adam[5] = {};
  bool two = false;  // (round_trip measured)
  double rtt = 0.0;
};

// The chunk's kernel calls, together and one at a time, with each forward blocking.
void time_chunk(const Kernels& k, Net& n, const Options& o, Figures& fig) {
  fig.most_cols = o.isa == "generic" ? 1 : 2;  // (the baseline set has blocks of 1 only)
  for (int cols = 1; cols <= fig.most_cols; ++cols) {
    n.f.cols = cols;
    fig.forward_cols[cols - 1] = min_ns(o.reps, o.calls, [&] { k.forward_first(n.f); });
    fig.forward = std::min(fig.forward, fig.forward_cols[cols - 1]);
    fig.chunk = std::min(fig.chunk, min_ns(o.reps, o.calls, [&] {
                           k.forward_first(n.f);
                           k.grad_backprop_first(n.bk);
                           k.lane_reduce(n.acc.p, kAcc, n.slot.p);
                         }));
  }
  fig.backward = min_ns(o.reps, o.calls, [&] { k.grad_backprop_first(n.bk); });
  fig.lanes = min_ns(o.reps, o.calls, [&] { k.lane_reduce(n.acc.p, kAcc, n.slot.p); });
}

// The reduction and Adam from 1, 2, 4, 8 and 16 slots. m and v start normal and stay so:
// a constant gradient keeps m near it and v near its square.
void time_adam(const Kernels& k, const Options& o, Figures& fig) {
  Buf slots(16 * kStride), w(kStride), m(kStride), v(kStride);
  for (int i = 0; i < kStride; ++i) v.p[i] = m.p[i] * m.p[i] + 1e-3f;
  const nntrain::fast::AdamScalars h{0.9f, 0.1f, 0.999f, 0.001f, 1e-8f, 0.5f, 1e-4f};
  for (int j = 0; j < 5; ++j)
    fig.adam[j] =
        min_ns(o.reps, o.calls, [&] { k.reduce_adam(slots.p, kStride, kAdamChunks[j], 0, kParams, w.p, m.p, v.p, h); });
}

void print_figures(const std::string& isa, const Figures& fig) {
  std::printf("{\"isa\": \"%s\", \"samples_per_chunk\": %d, \"chunk_ns\": %.1f, \"forward_ns\": %.1f, "
              "\"backward_ns\": %.1f, \"lanes_ns\": %.1f, \"adam_ns\": {",
              isa.c_str(), T, fig.chunk, fig.forward, fig.backward, fig.lanes);
  for (int j = 0; j < 5; ++j) std::printf("%s\"%d\": %.1f", j ? ", " : "", kAdamChunks[j], fig.adam[j]);
  std::printf("}");
  std::printf(", \"forward_ns_by_cols\": {\"1\": %.1f", fig.forward_cols[0]);
  if (fig.most_cols == 2) std::printf(", \"2\": %.1f", fig.forward_cols[1]);
  std::printf("}");
  if (fig.two) std::printf(", \"round_trip_ns\": %.1f", fig.rtt);
  std::printf("}\n");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  int exit_code = 0;
  if (!parse_args(argc, argv, o, exit_code)) return exit_code;
  const Kernels& k = kernels_of(o.isa);
  Net net;
  if (k.forward_first(net.f) != 3) {
    std::fprintf(stderr, "nntrain_kernel_bound: internal error: the %s fused forward did not take the reference net\n",
                 o.isa.c_str());
    return 1;
  }
  Figures fig;
  time_chunk(k, net, o, fig);
  time_adam(k, o, fig);
  fig.two = std::thread::hardware_concurrency() >= 2;
  if (fig.two) fig.rtt = round_trip_ns(o.trips, 3);
  print_figures(o.isa, fig);
  return 0;
}
