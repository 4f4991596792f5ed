// test_fast_cpu.cpp — the fast CPU backend against the reference backend, and its
// thread-count determinism, on seeded random nets with awkward sizes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <chrono>
#include <thread>
#include <vector>

#include "backend.hpp"
#include "backend_registry.hpp"
#include "cpu_fast.hpp"
#include "cpu_reference.hpp"
#include "mlp.hpp"
#include "rng.hpp"

using namespace nntrain;

namespace {

Dataset random_dataset(int n, int inputs, int outputs, uint64_t seed) {
  Rng rng(seed);
  Dataset d;
  d.n = n;
  d.inputs = inputs;
  d.outputs = outputs;
  d.x.resize(size_t(n) * inputs);
  d.y.resize(size_t(n) * outputs);
  for (auto& v : d.x) v = rng.uniform_symmetric(1.5);
  for (auto& v : d.y) v = rng.uniform_symmetric(1.0);
  d.description = "random";
  return d;
}

struct Run {
  std::vector<float> losses;
  Params params;
};

Run train_with(std::unique_ptr<Backend> b, const Params& init, int epochs) {
  Run r;
  r.losses.resize(size_t(epochs));
  b->load(init);
  // Two calls, so that the epoch counter (shuffle key, Adam step) carries across chunks.
  b->train(epochs / 2, r.losses.data());
  b->train(epochs - epochs / 2, r.losses.data() + epochs / 2);
  r.params = b->params();
  return r;
}

BackendOptions options(const ModelSpec& spec, int batch, int threads) {
  BackendOptions o;
  o.spec = spec;
  o.optimizer.lr = 1e-3;  // small steps: 10 of them stay close to the reference path
  // Adam with eps 1e-8 turns a gradient component that cancels to ~1e-8 into a step of ±lr
  // whatever its sign's rounding, so two correct summation orders can differ by 2 lr in such
  // a weight. With eps 1e-3 the step is Lipschitz in the gradient and weight differences
  // measure gradient differences, which is what this test is about.
  o.optimizer.eps = 1e-3;
  o.batch_size = batch;
  o.shuffle = true;
  o.seed = 42;
  o.threads = threads;
  return o;
}

struct Case {
  std::vector<int> widths;
  int samples;
  int blas_min;  // -1: the tool's default switch point
};

std::string describe(const Case& c, Activation act, int batch, const std::string& isa) {
  std::ostringstream s;
  s << "widths";
  for (int w : c.widths) s << ' ' << w;
  s << ", " << c.samples << " samples, batch " << batch << ", " << activation_name(act) << ", isa " << isa
    << ", blas_min " << c.blas_min;
  return s.str();
}

}  // namespace

// Tolerances. The fast path sums in fp32 (lanes of a tile, then per-lane chunk sums, then
// chunks in double) where the reference sums every sample in fp64, and the avx2/avx512
// kernels fuse multiply-adds: per-step relative differences in loss and gradient are ~1e-7
// to 1e-6. Ten Adam steps (lr 1e-3, eps 1e-3: see options()) keep weight differences at
// the level of the gradients' rounding, ~1e-7.
constexpr double kLossRel = 2e-5;
// A loss near zero is the square of a small difference p - y: a prediction that differs
// by dp (a few ulps, ~1e-7 for O(1) outputs) moves it by 2 sqrt(loss) dp, which relative to
// a tiny loss is large (1 sample, loss 1e-4: ~3e-5 relative). Hence also a margin of
// kLossSqrt sqrt(loss).
constexpr double kLossSqrt = 2e-6;
constexpr double kWeightAbs = 1e-6;  // observed: <= 6e-8 (2026-11-23, avx512/avx2/generic)

TEST_CASE("fast backend matches the reference backend on random nets", "[fast]") {
  const int wide = kFastBlasMinWidth + 3;  // at and above the BLAS switch point
  const std::vector<Case> cases = {
      {{2, 20, 5, 1}, 1, -1},           // one sample: a tile of padding
      {{2, 20, 5, 1}, 1000, -1},        // the reference experiment's shape, 1000 = 7.8 tiles
      {{3, 7, 2}, 37, -1},              // widths below every register block
      {{1, 33, 17, 4}, 2500, -1},       // several chunks, last chunk and tile partial
      {{4, 24, 24, 3}, 300, 16},        // BLAS for the middle layer (switch point forced low)
      {{2, wide, wide, 1}, 301, -1},    // BLAS at the default switch point
  };
  const Activation acts[] = {Activation::relu, Activation::tanh, Activation::sigmoid, Activation::identity,
                             Activation::leaky_relu};
  const int epochs = 10;
  for (const Case& c : cases) {
    for (Activation act : acts) {
      if (c.widths[1] == wide && act != Activation::relu && act != Activation::tanh) continue;  // keep it quick
      ModelSpec spec;
      spec.widths = c.widths;
      spec.hidden = act;
      spec.output = act == Activation::sigmoid ? Activation::sigmoid : Activation::identity;
      const Dataset data = random_dataset(c.samples, c.widths.front(), c.widths.back(), 7 + c.samples);
      Params init = init_params(spec, Init::glorot_uniform, 3);
      for (int l = 0; l < spec.layers(); ++l)  // non-zero biases: relu kinks not all at one place
        for (int o = 0; o < spec.out(l); ++o) init.b(l)[o] = 0.05f * float(o % 5) - 0.1f;
      // Full batch; mini-batches shuffled (tiles gathered from per-sample records) and not:
      // tiles read in place where whole at 16-aligned positions (a batch of whole quanta,
      // mode 2), else copied (a third of the samples, not a multiple of 16 for most sizes).
      for (int mode = 0; mode < 4; ++mode) {
        const int ragged = c.samples > 1 ? (c.samples + 2) / 3 : 1;
        const int batch = mode == 0 ? 0 : mode == 2 ? std::max(64, ragged / 64 * 64) : ragged;
        BackendOptions ref_opt = options(spec, batch, 1), fast_opt = options(spec, batch, 2);
        ref_opt.shuffle = fast_opt.shuffle = mode == 1;
        const Run ref = train_with(make_cpu_reference_backend(data, ref_opt), init, epochs);
        for (const std::string& isa : fast_cpu_isas()) {
          FastCpuTuning tuning;
          tuning.isa = isa;
          tuning.blas_min_width = c.blas_min;
          const Run got = train_with(make_cpu_fast_backend(data, fast_opt, tuning), init, epochs);
          INFO(describe(c, act, batch, isa) << (mode >= 2 ? ", no shuffle" : ""));
          for (int e = 0; e < epochs; ++e) {
            INFO("epoch " << e + 1);
            const double want = ref.losses[size_t(e)];
            CHECK(got.losses[size_t(e)] == Approx(want).epsilon(kLossRel).margin(kLossSqrt * std::sqrt(want)));
          }
          double worst = 0;
          size_t worst_k = 0;
          for (size_t k = 0; k < ref.params.values.size(); ++k) {
            const double d = std::fabs(double(got.params.values[k]) - double(ref.params.values[k]));
            if (d > worst) worst = d, worst_k = k;
          }
          INFO("largest weight difference " << worst << " at parameter " << worst_k);
          CHECK(worst <= kWeightAbs);
          // The weights moved: a backend that did nothing would fail the check above only
          // by luck, so make it explicit.
          CHECK(got.params.values != init.values);
        }
      }
    }
  }
}

TEST_CASE("fast backend gives bit-identical results for 1, 2 and 3 threads, one of them absent or late", "[fast][determinism]") {
  const int wide = kFastBlasMinWidth + 3;
  const std::vector<Case> cases = {
      {{2, 20, 5, 1}, 5000, -1},
      {{1, 33, 17, 4}, 2500, -1},
      {{2, wide, wide, 1}, 3000, -1},
  };
  for (const Case& c : cases) {
    ModelSpec spec;
    spec.widths = c.widths;
    spec.hidden = Activation::tanh;
    const Dataset data = random_dataset(c.samples, c.widths.front(), c.widths.back(), 11);
    const Params init = init_params(spec, Init::glorot_uniform, 5);
    for (int batch : {0, 1100}) {
      for (const std::string& isa : fast_cpu_isas()) {
        FastCpuTuning tuning;
        tuning.isa = isa;
        tuning.blas_min_width = c.blas_min;
        INFO(describe(c, spec.hidden, batch, isa));
        const Run one = train_with(make_cpu_fast_backend(data, options(spec, batch, 1), tuning), init, 6);
        // 2 and 3 threads; and 3 threads of which one never takes part (descheduled for the
        // whole run: the others must take its run of chunks), or joins and then sleeps (the
        // others have done everything by the time it looks: it must take nothing again).
        struct Threads {
          int threads, absent, late;
        };
        for (const Threads& th : {Threads{2, 0, 0}, Threads{3, 0, 0}, Threads{3, 1, 0}, Threads{3, 2, 0},
                                  Threads{3, 0, 1}, Threads{3, 0, 2}}) {
          const int threads = th.threads;
          INFO(threads << " threads, worker absent " << th.absent << ", late " << th.late);
          FastCpuTuning t = tuning;
          t.absent_worker = th.absent;
          t.late_worker = th.late;
          const Run more = train_with(make_cpu_fast_backend(data, options(spec, batch, threads), t), init, 6);
          CHECK(std::memcmp(more.losses.data(), one.losses.data(), one.losses.size() * sizeof(float)) == 0);
          CHECK(std::memcmp(more.params.values.data(), one.params.values.data(),
                            one.params.values.size() * sizeof(float)) == 0);
        }
        CHECK(one.params.values != init.values);
      }
    }
  }
}

TEST_CASE("fast backend gathers shuffled one-chunk batches ahead with the same bits, across calls and loads",
          "[fast][determinism]") {
  // On two or more threads a worker gathers the next shuffled batch's tile while a one-chunk
  // step runs (FastCpuTuning::gather_ahead). That must change no bit: against one thread
  // (which gathers every tile in its step), for batches of 256 with a short last one
  // (3000 = 11 x 256 + 184) and of 100 (not a whole number of vectors), with the ahead tile
  // crossing an epoch, a train() call, and a load() that starts again from epoch 0 (a tile
  // gathered for the old run's next epoch must not be used), and with the worker absent or
  // late.
  ModelSpec spec;
  spec.widths = {2, 20, 5, 1};
  spec.hidden = Activation::relu;
  const Dataset data = random_dataset(3000, 2, 1, 17);
  const Params init = init_params(spec, Init::glorot_uniform, 8);
  // load, 1 + 2 epochs in two calls, load again, 3 epochs: losses of all six, final weights.
  // (used: the steps that found their tile gathered ahead.)
  auto run = [&](int batch, int threads, FastCpuTuning t, long long* used) {
    t.tiles_ahead_used = used;
    auto b = make_cpu_fast_backend(data, options(spec, batch, threads), t);
    Run r;
    r.losses.resize(6);
    b->load(init);
    b->train(1, r.losses.data());
    b->train(2, r.losses.data() + 1);
    b->load(init);
    b->train(3, r.losses.data() + 3);
    r.params = b->params();
    return r;
  };
  for (int batch : {256, 100}) {
    for (const std::string& isa : fast_cpu_isas()) {
      FastCpuTuning tuning;
      tuning.isa = isa;
      INFO("batch " << batch << ", " << isa);
      long long used = 0;
      const Run one = run(batch, 1, tuning, &used);
      CHECK(used == 0);
      // The second load starts the same run again: a stale tile would change its losses.
      CHECK(std::memcmp(one.losses.data() + 3, one.losses.data(), 3 * sizeof(float)) == 0);
      struct Threads {
        int threads, ahead, absent, late;
      };
      for (const Threads& th : {Threads{2, 1, 0, 0}, Threads{3, 1, 0, 0}, Threads{2, 0, 0, 0}, Threads{3, 1, 1, 0},
                                Threads{2, 1, 0, 1}}) {
        INFO(th.threads << " threads, gather_ahead " << th.ahead << ", worker absent " << th.absent << ", late "
                        << th.late);
        FastCpuTuning t = tuning;
        t.gather_ahead = th.ahead;
        t.absent_worker = th.absent;
        t.late_worker = th.late;
        // With the worker present (and waited for: FastCpuTuning::wait_for_ahead), every step
        // but the first after each load() finds its tile gathered ahead; absent, none does.
        t.wait_for_ahead = true;
        used = 0;
        const Run more = run(batch, th.threads, t, &used);
        const long long steps = 6 * ((3000 + batch - 1) / batch);
        CHECK(used == (th.ahead && !th.absent ? steps - 2 : 0));
        CHECK(std::memcmp(more.losses.data(), one.losses.data(), one.losses.size() * sizeof(float)) == 0);
        CHECK(std::memcmp(more.params.values.data(), one.params.values.data(),
                          one.params.values.size() * sizeof(float)) == 0);
      }
      CHECK(one.params.values != init.values);
    }
  }
}

// The process's threads (Linux: the Threads line of /proc/self/status).
static int process_threads() {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  return -1;
}

// process_threads() once threads that were joined have also left the count: a joined thread
// is counted until the kernel releases it, a moment after join() returns (a run of this test
// once saw the previous backend's workers still counted). Waits until the count has not
// changed for 20 ms (at most 2 s).
static int settled_threads() {
  int last = process_threads(), same = 0;
  for (int ms = 0; ms < 2000 && same < 20; ++ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const int now = process_threads();
    same = now == last ? same + 1 : 0;
    last = now;
  }
  return last;
}

TEST_CASE("fast backend starts only the threads its steps can use", "[fast]") {
  // A worker no step needs would spin beside the step's threads and slow their hand-offs
  // (measured on a 16-core Xeon, cpu_fast.cpp): batches of one chunk get a pool of 1 thread,
  // or 2 when a worker gathers the next shuffled batch ahead; larger batches every thread.
  ModelSpec spec;
  spec.widths = {2, 20, 5, 1};
  spec.hidden = Activation::relu;
  const Dataset data = random_dataset(3000, 2, 1, 5);
  // A sanitizer may start a helper thread of its own with the process's first thread
  // (ThreadSanitizer does): start and join one first, so that it is counted in `before`.
  std::thread([] {}).join();
  const int before = settled_threads();
  REQUIRE(before >= 1);
  struct Case {
    int batch;
    bool shuffle;
    int workers;  // threads started besides the caller, with 6 asked for
  };
  for (const Case& c : {Case{256, true, 1}, Case{256, false, 0}, Case{100, true, 1}, Case{1024, true, 5},
                        Case{0, false, 5}}) {
    INFO("batch " << c.batch << (c.shuffle ? ", shuffled" : ""));
    BackendOptions o = options(spec, c.batch, 6);
    o.shuffle = c.shuffle;
    FastCpuTuning t;
    t.gather_ahead = 1;
    REQUIRE(settled_threads() == before);  // (the previous case's workers have gone)
    auto b = make_cpu_fast_backend(data, o, t);
    CHECK(process_threads() - before == c.workers);  // (a thread is counted once started)
  }
}

TEST_CASE("fast backend's fused forward gives the same bits with blocks of 1 and 2 vectors and 1-3 threads",
          "[fast][determinism]") {
  // The block width is chosen by CPU (FastCpuTuning::forward_cols): both must give the same
  // bits on every kernel set, for each shape and activation the fused forward takes (first
  // layer of 1 or 2 inputs; second of <= 8 outputs; the third layer fused or not). That the
  // bits are right is the [fast] and [sizes] tests' job, against the reference backend.
  const std::vector<Case> cases = {
      {{2, 20, 5, 1}, 5000, -1},  // the reference shape: three layers in one pass
      {{1, 12, 3, 1}, 1000, -1},  // one input
      {{2, 9, 7}, 700, -1},       // two layers: no third
      {{2, 6, 8, 2}, 900, -1},    // a third layer of 2 outputs: not fused
  };
  for (const Case& c : cases) {
    // tanh and sigmoid too: the fused forward applies them in registers since 2026-11-29.
    for (Activation act : {Activation::relu, Activation::leaky_relu, Activation::identity, Activation::tanh,
                           Activation::sigmoid}) {
      ModelSpec spec;
      spec.widths.assign(c.widths.begin(), c.widths.end());  // (not =: a gcc 12 -Wnonnull false positive)
      spec.hidden = act;
      const Dataset data = random_dataset(c.samples, c.widths.front(), c.widths.back(), 13);
      Params init = init_params(spec, Init::glorot_uniform, 6);
      for (int l = 0; l < spec.layers(); ++l)  // non-zero biases: relu kinks not all at one place
        for (int o = 0; o < spec.out(l); ++o) init.b(l)[o] = 0.05f * float(o % 5) - 0.1f;
      for (int batch : {0, 300}) {
        for (const std::string& isa : fast_cpu_isas()) {
          INFO(describe(c, act, batch, isa));
          FastCpuTuning t1, t2;
          t1.isa = t2.isa = isa;
          t1.forward_cols = 1;
          t2.forward_cols = 2;
          const Run one = train_with(make_cpu_fast_backend(data, options(spec, batch, 1), t1), init, 4);
          // Blocks of 2 on 1 thread, and both widths on 2 and 3 threads (the tail writes each
          // thread's own accumulators).
          for (const auto& [tuning, threads] : {std::pair{t2, 1}, std::pair{t1, 3}, std::pair{t2, 2}}) {
            INFO("blocks of " << tuning.forward_cols << ", " << threads << " thread(s)");
            const Run other = train_with(make_cpu_fast_backend(data, options(spec, batch, threads), tuning), init, 4);
            CHECK(std::memcmp(other.losses.data(), one.losses.data(), one.losses.size() * sizeof(float)) == 0);
            CHECK(std::memcmp(other.params.values.data(), one.params.values.data(),
                              one.params.values.size() * sizeof(float)) == 0);
          }
          CHECK(one.params.values != init.values);
        }
      }
    }
  }
}

TEST_CASE("fast backend reports what it runs and refuses an unknown instruction set", "[fast]") {
  ModelSpec spec;
  spec.widths = {2, 20, 5, 1};
  const Dataset data = random_dataset(100, 2, 1, 1);
  auto b = make_cpu_fast_backend(data, options(spec, 0, 2));
  CHECK(b->name() == "cpu-fast");
  CHECK(b->threads() == 1);  // 100 samples are one chunk: 1 of the 2 threads asked for runs a step
  CHECK(b->details().find(fast_cpu_isas().front()) != std::string::npos);
  // A step runs on no more threads than its batch has chunks (256 samples: one chunk; 300:
  // two, of 128 and 172), and the details line says so when threads are left idle; a second
  // thread gathers a shuffled one-chunk batch ahead (not an unshuffled one).
  const Dataset more = random_dataset(1000, 2, 1, 1);
  CHECK_THAT(make_cpu_fast_backend(more, options(spec, 256, 2))->details(),
             Catch::Contains("2 threads (batches of 256 samples are one chunk: 1 thread, and 1 gathering the next "
                             "batch's samples)"));
  BackendOptions in_order = options(spec, 256, 2);
  in_order.shuffle = false;
  CHECK_THAT(make_cpu_fast_backend(more, in_order)->details(),
             Catch::Contains("2 threads (batches of 256 samples are one chunk: 1 thread)"));
  FastCpuTuning no_ahead;
  no_ahead.gather_ahead = 0;
  CHECK_THAT(make_cpu_fast_backend(more, options(spec, 256, 2), no_ahead)->details(),
             Catch::Contains("2 threads (batches of 256 samples are one chunk: 1 thread)"));
  CHECK_THAT(make_cpu_fast_backend(more, options(spec, 300, 2))->details(), !Catch::Contains("batches of"));
  CHECK_THAT(make_cpu_fast_backend(more, options(spec, 300, 3))->details(),
             Catch::Contains("3 threads (batches of 300 samples are 2 chunks: 2 threads)"));
  // threads(), what reports show, is the threads a step keeps busy: by hand from the rule.
  CHECK(make_cpu_fast_backend(more, options(spec, 256, 2))->threads() == 2);  // 1 and 1 gathering ahead
  CHECK(make_cpu_fast_backend(more, in_order)->threads() == 1);
  CHECK(make_cpu_fast_backend(more, options(spec, 300, 2))->threads() == 2);
  CHECK(make_cpu_fast_backend(more, options(spec, 300, 3))->threads() == 2);
  CHECK(make_cpu_fast_backend(more, options(spec, 0, 3))->threads() == 3);  // 1000 samples: 4 chunks
  FastCpuTuning bad;
  bad.isa = "sse9";
  CHECK_THROWS_WITH(make_cpu_fast_backend(data, options(spec, 0, 1), bad), Catch::Contains("sse9"));
  FastCpuTuning bad_cols;
  bad_cols.forward_cols = 3;
  CHECK_THROWS_WITH(make_cpu_fast_backend(data, options(spec, 0, 1), bad_cols), Catch::Contains("3 vectors"));
  FastCpuTuning bad_ahead;
  bad_ahead.gather_ahead = 2;
  CHECK_THROWS_WITH(make_cpu_fast_backend(data, options(spec, 0, 1), bad_ahead), Catch::Contains("gather_ahead 2"));
  // The registry picks fast by default name and reference on request.
  CHECK(make_backend(backend_registry(), Device::cpu, CpuBackendKind::fast, data, options(spec, 0, 1))->name() ==
        "cpu-fast");
  CHECK(make_backend(backend_registry(), Device::cpu, CpuBackendKind::reference, data, options(spec, 0, 1))->name() ==
        "cpu-reference");
}

// The kernel sets the tests loop over (fast_cpu_isas) against the CPU's own flags in
// /proc/cpuinfo: a set dropped from the list would go untested while everything passes.
TEST_CASE("the fast backend offers every kernel set this CPU's flags allow", "[fast][isa]") {
  std::ifstream in("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) {
      flags = " " + line.substr(line.find(':') + 1) + " ";
      break;
    }
  const auto isas = fast_cpu_isas();
  const auto has = [&](const char* isa) { return std::find(isas.begin(), isas.end(), isa) != isas.end(); };
  CHECK(has("generic"));
#if defined(__x86_64__)
  if (flags.empty()) {
    WARN("no flags line in /proc/cpuinfo: the kernel sets are not checked against it");
    return;
  }
  const auto flag = [&](const char* f) { return flags.find(std::string(" ") + f + " ") != std::string::npos; };
  INFO("flags:" << flags);
  CHECK(has("avx2") == (flag("avx2") && flag("fma")));
  CHECK(has("avx512") == (flag("avx512f") && flag("avx2") && flag("fma")));
#endif
}

// The BLAS cases above pass with or without OpenBLAS (a layer falls back to the SIMD
// kernels when it cannot be loaded): here the backend must say it uses it where it loads,
// and CI (CI set) must have it.
TEST_CASE("wide layers go through OpenBLAS where it loads", "[fast][blas]") {
  if (std::getenv("CI")) CHECK(fast_cpu_has_blas());
  if (!fast_cpu_has_blas()) {
    WARN("OpenBLAS cannot be loaded here: the BLAS layers ran on the SIMD kernels");
    return;
  }
  ModelSpec spec;
  spec.widths = {2, kFastBlasMinWidth, kFastBlasMinWidth, 1};
  const Dataset data = random_dataset(300, 2, 1, 5);
  const auto b = make_cpu_fast_backend(data, options(spec, 0, 1), FastCpuTuning{});
  INFO(b->details());
  CHECK_THAT(b->details(), Catch::Contains("OpenBLAS sgemm for layer(s) 2"));
}
