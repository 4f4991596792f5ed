// grid_barrier.cu — what the resident grid's step costs besides its group stage, on this GPU
// (issue 43: "the barrier/exchange latency for 8–264 blocks"). The cost model in docs/GPU.md
// turns simulated cycles into H200 time, but a grid barrier's real cost is what the simulator
// cannot give; the epoch time the trainer measures minus this is its group stage.
//
//   nntrain_grid_barrier [--blocks 8,16,32,66,132,264,396,528] [--threads 128] [--groups N]
//                        [--iters 2000] [--reps 5]
//
// Three loops, each one cooperative launch of B blocks of T threads, per B:
//   sync      grid.sync() alone;
//   flag      a counter barrier: thread 0 of each block adds 1 with release semantics and spins
//             on an acquire load until all B have (the issue's release/acquire alternative);
//   exchange  the grid's step without its group stage: every block writes its groups'
//             gradients of 2-20-5-1's 171 parameters, grid.sync(), the resident grid's own
//             exchange (resident_grid_exchange.cuh: fixed-order sums, the optimizer, publish),
//             the step's loss, grid.sync(), the weights copied into shared memory.
// Each is timed by %globaltimer (block 0, between a first barrier and the end of the loop) and
// by events around the launch (which add the launch), ns per iteration, the median of --reps
// launches after one warm-up launch as long. Groups: --groups N (the same N at every B), else
// one per block. The exchange runs SGD with every group's gradient 1 on even steps and 2 on odd
// ones (sums exact in any order; the arrays NaN before each launch), so a sum that reads a
// group not yet written, or last step's, is caught: every block checks the weights it copies
// each step, the host the final weights and the loss sum, exactly. On GPGPU-Sim it checks and
// prints no time: a simulator's time is not a measurement.
// Exit status: 0; 1 a CUDA error, no cooperative launch, or an exchange that is not exact (one
// line on stderr saying which); 2 a bad option.
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpu_info.hpp"
#include "resident_grid_exchange.cuh"
#include "resident_stamps.cuh"

namespace cg = cooperative_groups;
using namespace nntrain;
using namespace nntrain::cuda;

// A named namespace: nvcc's stub cannot tell two anonymous ones apart (this file's and the
// included kernels' nntrain::cuda one) when both hold kernels.
namespace gbench {

constexpr int kParams = 171;          // 2-20-5-1
constexpr float kLr = 1.0f / 4096.0f;  // times an integer gradient: exact while |w| < 4096

__global__ void sync_loop(int iters, unsigned long long* t) {
  cg::grid_group grid = cg::this_grid();
  grid.sync();
  const unsigned long long t0 = globaltimer_ns();
  for (int i = 0; i < iters; ++i) grid.sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) t[0] = t0, t[1] = globaltimer_ns();
}

// A barrier on one counter the host zeroed: arrival i of every block brings it to (i + 1) × B.
__device__ __forceinline__ void flag_barrier(unsigned* count, unsigned target) {
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(count) : "memory");
    unsigned v = 0;
    do asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(count) : "memory");
    while (v < target);
  }
  __syncthreads();
}

__global__ void flag_loop(int iters, unsigned* count, unsigned long long* t) {
  flag_barrier(count, gridDim.x);
  const unsigned long long t0 = globaltimer_ns();
  for (int i = 1; i <= iters; ++i) flag_barrier(count, (i + 1) * gridDim.x);
  if (blockIdx.x == 0 && threadIdx.x == 0) t[0] = t0, t[1] = globaltimer_ns();
}

// Steps 0 .. i with gradients 1, 2, 1, 2, ...: their sum.
__host__ __device__ inline int steps_sum(int steps) { return steps + steps / 2; }

// The grid's step (resident_grid_exact.cuh's gx_step) with each group's gradient a row of
// 1 + (i & 1); the weights each block copies after step i must be -lr × groups × steps_sum(i + 1).
__global__ void exchange_loop(GridArgs a, int iters, unsigned long long* t) {
  extern __shared__ float sw[];
  cg::grid_group grid = cg::this_grid();
  const AdamHyper h{kLr, 0.9, 0.999, 1e-8};
  Owner o = load_owner(a, kParams, 1);
  double loss = 0;
  grid.sync();
  const unsigned long long t0 = globaltimer_ns();
  bool wrong = false;
  for (int i = 0; i < iters; ++i) {
    const float gi = (i & 1) ? 2.0f : 1.0f;
    for (int g = int(blockIdx.x); g < a.groups; g += int(gridDim.x)) {
      for (int k = int(threadIdx.x); k < kParams; k += int(blockDim.x)) a.gpart[size_t(k) * a.groups + g] = gi;
      if (threadIdx.x == 0) a.gloss[g] = gi;
    }
    grid.sync();
    exchange(o, a, kParams, a.groups, h, AdamStep{}, 1);
    if (blockIdx.x == 0 && threadIdx.x < 32) loss += step_loss(a, int(threadIdx.x), a.groups);
    grid.sync();
    for (int k = int(threadIdx.x); k < kParams; k += int(blockDim.x)) sw[k] = __ldcg(a.w + k);
    __syncthreads();
    const float want = -float(a.groups * steps_sum(i + 1)) * kLr;
    if (threadIdx.x < kParams && sw[threadIdx.x] != want) wrong = true;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) t[0] = t0, t[1] = globaltimer_ns(), a.losses[0] = float(loss);
  if (wrong) a.losses[1] = 1.0f;
}

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "nntrain_grid_barrier: %s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

std::vector<int> parse_list(const char* s) {
  std::vector<int> out;
  for (const char* p = s; *p;) {
    char* end = nullptr;
    const long v = std::strtol(p, &end, 10);
    if (end == p || v < 1 || v > 100000) {
      std::fprintf(stderr, "nntrain_grid_barrier: --blocks wants numbers 1..100000 separated by commas, not '%s'\n", s);
      std::exit(2);
    }
    out.push_back(int(v));
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

struct Options {
  std::vector<int> blocks{8, 16, 32, 66, 132, 264, 396, 528};
  int threads = 128, groups = 0, iters = 2000, reps = 5;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "nntrain_grid_barrier: '%s' wants a value (see the file's head)\n", argv[i]);
      std::exit(2);
    }
    const char* v = argv[++i];
    int* field = arg == "--threads" ? &o.threads
                 : arg == "--groups" ? &o.groups
                 : arg == "--iters"  ? &o.iters
                 : arg == "--reps"   ? &o.reps
                                     : nullptr;
    if (arg == "--blocks") o.blocks = parse_list(v);
    else if (field) *field = std::atoi(v);
    else {
      std::fprintf(stderr, "nntrain_grid_barrier: unknown option '%s' (see the file's head)\n", arg.c_str());
      std::exit(2);
    }
  }
  if (o.threads < 32 || o.threads > 1024 || o.threads % 32 || o.iters < 1 || o.reps < 1 || o.groups < 0) {
    std::fprintf(stderr, "nntrain_grid_barrier: --threads 32..1024 (a multiple of 32), --iters and --reps >= 1\n");
    std::exit(2);
  }
  return o;
}

enum Mode { kSync, kFlag, kExchange };
const char* const kModeName[] = {"sync", "flag", "exchange"};

// The arrays of one B: the exchange's (as the trainer's grid allocates them) and the stamps.
struct Arrays {
  float* w = nullptr;
  float* gpart = nullptr;
  float* losses = nullptr;
  double* gloss = nullptr;
  unsigned* count = nullptr;
  unsigned long long* t = nullptr;
};

const void* kernel_of(Mode m) {
  return m == kSync ? reinterpret_cast<const void*>(sync_loop)
         : m == kFlag ? reinterpret_cast<const void*>(flag_loop)
                      : reinterpret_cast<const void*>(exchange_loop);
}

size_t smem_of(Mode m) { return m == kExchange ? kParams * sizeof(float) : 0; }

// The blocks of `m` that fit on the GPU at once (a cooperative launch of more fails).
int co_resident(Mode m, int threads, int sms) {
  int per_sm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_of(m), threads, smem_of(m)), "occupancy");
  return per_sm * sms;
}

// One launch of `iters` iterations: {globaltimer ns, event ns} per iteration. The exchange's
// weights start at 0 and must end at -groups × steps_sum(iters) × lr exactly, its loss sum at
// groups × steps_sum(iters), and no block may have copied other weights after any step.
void launch(Mode m, int blocks, int threads, int groups, int iters, Arrays& a, double out[2]) {
  GridArgs g{};
  g.w = a.w;
  g.gpart = a.gpart;
  g.gloss = a.gloss;
  g.losses = a.losses;
  g.groups = groups;
  check(cudaMemset(a.w, 0, kParams * sizeof(float)), "memset w");
  check(cudaMemset(a.count, 0, sizeof(unsigned)), "memset count");
  check(cudaMemset(a.gpart, 0xff, size_t(kParams) * groups * sizeof(float)), "memset gpart");  // NaN
  check(cudaMemset(a.gloss, 0xff, groups * sizeof(double)), "memset gloss");
  check(cudaMemset(a.losses, 0, 2 * sizeof(float)), "memset losses");
  void* sync_args[] = {&iters, &a.t};
  void* flag_args[] = {&iters, &a.count, &a.t};
  void* exch_args[] = {&g, &iters, &a.t};
  void** args = m == kSync ? sync_args : m == kFlag ? flag_args : exch_args;
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "event");
  check(cudaEventCreate(&e1), "event");
  check(cudaEventRecord(e0), "event record");
  check(cudaLaunchCooperativeKernel(kernel_of(m), dim3(blocks), dim3(threads), args, smem_of(m), nullptr),
        kModeName[m]);
  check(cudaEventRecord(e1), "event record");
  check(cudaEventSynchronize(e1), kModeName[m]);
  float ms = 0;
  check(cudaEventElapsedTime(&ms, e0, e1), "event time");
  unsigned long long t[2];
  check(cudaMemcpy(t, a.t, sizeof t, cudaMemcpyDeviceToHost), "copy stamps");
  out[0] = double(t[1] - t[0]) / iters;
  out[1] = double(ms) * 1e6 / iters;
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  if (m != kExchange) return;
  std::vector<float> w(kParams), losses(2);
  check(cudaMemcpy(w.data(), a.w, kParams * sizeof(float), cudaMemcpyDeviceToHost), "copy w");
  check(cudaMemcpy(losses.data(), a.losses, 2 * sizeof(float), cudaMemcpyDeviceToHost), "copy losses");
  const float want = -float(groups * steps_sum(iters)) * kLr, want_loss = float(groups * steps_sum(iters));
  int bad = -1;
  for (int k = 0; k < kParams && bad < 0; ++k)
    if (w[k] != want) bad = k;
  if (bad >= 0 || losses[0] != want_loss || losses[1] != 0.0f) {
    std::fprintf(stderr,
                 "nntrain_grid_barrier: exchange at %d blocks, %d groups: w[%d] = %.9g (want %.9g), loss sum %.9g "
                 "(want %.9g)%s\n",
                 blocks, groups, bad < 0 ? 0 : bad, double(w[bad < 0 ? 0 : bad]), double(want), double(losses[0]),
                 double(want_loss), losses[1] != 0.0f ? ", and a block copied other weights after some step" : "");
    std::exit(1);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace gbench

using namespace gbench;

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "device 0");
  int coop = 0;
  check(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0), "cooperative launch attribute");
  if (!coop) {
    std::fprintf(stderr, "nntrain_grid_barrier: %s has no cooperative launch\n", prop.name);
    return 1;
  }
  const bool sim = is_simulator_name(prop.name);
  std::printf("# %s, %d SMs; blocks of %d threads; %d iterations x %d launches, median; groups %s\n", prop.name,
              prop.multiProcessorCount, o.threads, o.iters, o.reps,
              o.groups ? std::to_string(o.groups).c_str() : "= blocks");
  if (sim) std::printf("# GPGPU-Sim: the loops run and the exchange is checked; no time is printed (not a measurement)\n");
  else std::printf("# ns per iteration: %%globaltimer in block 0 (events around the launch, with it)\n");
  std::printf("%8s %8s %18s %18s %18s\n", "blocks", "groups", "sync", "flag", "exchange");
  int max_groups = o.groups;
  for (int b : o.blocks) max_groups = std::max(max_groups, b);
  if (double(steps_sum(o.iters)) * max_groups >= double(1 << 24)) {  // the exact check's range
    std::fprintf(stderr, "nntrain_grid_barrier: 1.5 x --iters x groups must stay under 2^24 (the exact check)\n");
    return 2;
  }
  Arrays a;
  check(cudaMalloc(&a.w, kParams * sizeof(float)), "malloc");
  check(cudaMalloc(&a.gpart, size_t(kParams) * max_groups * sizeof(float)), "malloc");
  check(cudaMalloc(&a.gloss, max_groups * sizeof(double)), "malloc");
  check(cudaMalloc(&a.losses, 2 * sizeof(float)), "malloc");
  check(cudaMalloc(&a.count, sizeof(unsigned)), "malloc");
  check(cudaMalloc(&a.t, 2 * sizeof(unsigned long long)), "malloc");
  char cell[64];
  for (int b : o.blocks) {
    // The row is printed whole at its end: GPGPU-Sim writes to the same stdout between launches.
    const int groups = o.groups ? o.groups : b;
    std::snprintf(cell, sizeof cell, "%8d %8d", b, groups);
    std::string row = cell;
    for (Mode m : {kSync, kFlag, kExchange}) {
      const int fit = co_resident(m, o.threads, prop.multiProcessorCount);
      if (b > fit) {
        std::snprintf(cell, sizeof cell, " %18s", ("> " + std::to_string(fit) + " fit").c_str());
        row += cell;
        continue;
      }
      if (m == kExchange && b * o.threads * kResMaxOwn < kParams) {  // an owner lane holds at most kResMaxOwn
        std::snprintf(cell, sizeof cell, " %18s", "too few owners");
        row += cell;
        continue;
      }
      double r[2];
      launch(m, b, o.threads, groups, o.iters, a, r);  // warm-up: the module's load, the clocks
      std::vector<double> timer, events;
      for (int k = 0; k < o.reps; ++k) {
        launch(m, b, o.threads, groups, o.iters, a, r);
        timer.push_back(r[0]);
        events.push_back(r[1]);
      }
      if (sim) std::snprintf(cell, sizeof cell, " %18s", m == kExchange ? "ran, exact" : "ran");
      else std::snprintf(cell, sizeof cell, " %8.0f (%7.0f)", median(timer), median(events));
      row += cell;
    }
    std::printf("%s\n", row.c_str());
    std::fflush(stdout);
  }
  return 0;
}
