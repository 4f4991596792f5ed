// resident_grid.cu — the resident trainer's cooperative grid (see resident_grid.hpp): the
// generic group stage, the plan, prepare and launch; the exchange is resident_grid_exchange.cuh's,
// the exact-shape group stage resident_grid_exact.cuh's.
#include <algorithm>
#include <string>

#include "cuda_check.hpp"
#include "errors.hpp"
#include "resident_grid.hpp"
#include "resident_grid_exact.cuh"
#include "resident_grid_exchange.cuh"
#include "resident_stages.cuh"

namespace nntrain::cuda {

namespace {

constexpr int kGridMinThreads = 64;

// Stages load, forward, backward and reduce over group g (the one-block kernel's train_step
// without the optimizer): the group's gradient to gpart's column g, its loss to gloss[g].
template <int K>
__device__ __forceinline__ void group_gradient(const Block& B, const ResidentNet& n, const ResidentChunk& c, const Step& st,
                               bool reload, const GridArgs& a, Owned& own, int g) {
  const double loss = forward_block<K>(B, n, c, st, reload, a.x, a.y);
  if (B.tid == 0) a.gloss[g] = loss;
  backward_block<K>(B, n, own, [] {});
#pragma unroll
  for (int r = 0; r < kResMaxOwn; ++r) {
    const int k = B.tid + r * B.nt;
    if (k >= n.params) break;
    a.gpart[size_t(k) * a.groups + g] = own.g[r];
  }
}

// One optimiser step of the whole grid: the block's groups, the exchange, the new weights in
// every block's shared copy. Returns the step's loss × inv_terms (the first warp of block 0).
template <int K>
__device__ __forceinline__ double grid_step(const Block& B, const ResidentNet& n, const ResidentChunk& c, const GridArgs& a,
                            const AdamHyper& h, int sgd, Owned& own, Owner& o, unsigned long long epoch, int e, int b,
                            bool reload) {
  const int groups = (step_count(c, a, b) + n.batch - 1) / n.batch;
  for (int g = int(blockIdx.x); g < groups; g += int(gridDim.x))
    group_gradient<K>(B, n, c, group_step(n, c, a, epoch, b, g), reload, a, own, g);
  cg::this_grid().sync();
  exchange(o, a, n.params, groups, h, a.table[e * c.batches + b], sgd);
  double loss = 0;
  if (blockIdx.x == 0 && B.tid < 32) loss = step_loss(a, B.tid, groups) * group_step(n, c, a, epoch, b, 0).inv_terms;
  cg::this_grid().sync();
#pragma unroll
  for (int r = 0; r < kResMaxOwn; ++r) {
    const int k = B.tid + r * B.nt;
    if (k >= n.params) break;
    B.sw[own.spos[r]] = __ldcg(a.w + k);
  }
  __syncthreads();
  return loss;
}

template <int K>
__global__ void __launch_bounds__(resident_max_threads(K), 1)
    resident_grid_kernel(GridArgs a, ResidentChunk c, AdamHyper h, int sgd, ResidentNet n) {
  extern __shared__ __align__(16) unsigned char smem[];
  size_t smem_floats = 0;
  const Block B = make_block(smem, n, smem_floats);
  Owned own;  // the block's copy: spos of its threads' parameters, and their group sums
  load_owned(B, own, n, a.w, nullptr, nullptr, 1, smem_floats);
  Owner o = load_owner(a, n.params, sgd);
  const unsigned long long epoch0 = a.state->epoch;
  // A block that keeps one group of a full batch in a fixed order loads its inputs once.
  const bool reload = c.batches > 1 || c.shuffle || int(gridDim.x) < a.groups;
  if (!reload && int(blockIdx.x) < a.groups) {
    const Step st = group_step(n, c, a, epoch0, 0, int(blockIdx.x));
    for (int s = B.tid; s < n.batch; s += B.nt) load_sample(B, n, c, st, a.x, s);
  }
  __syncthreads();
  for (int e = 0; e < c.epochs; ++e) {
    double epoch_loss = 0;
    for (int b = 0; b < c.batches; ++b) epoch_loss += grid_step<K>(B, n, c, a, h, sgd, own, o, epoch0 + e, e, b, reload);
    if (blockIdx.x == 0 && B.tid == 0) a.losses[e] = float(epoch_loss / double(c.batches));
  }
  store_owner(o, a, c, n.params, sgd, epoch0);
}

// The device's SMs (and a check that it runs cooperative launches).
inline int grid_sms() {
  int dev = 0, sms = 0, coop = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
  if (!coop) throw CudaError("the resident grid needs cooperative launches, which this device does not support");
  return sms;
}

// Blocks of `threads` the device holds at once (the occupancy × SMs).
template <class Kernel>
int co_resident(Kernel kernel, int threads, size_t smem, int sms) {
  int per_sm = 0;
  // The C entry point (a const void*), not the C++ template: GPGPU-Sim's template path ignores
  // dynamic shared memory (it reported 3 blocks of 31 KiB in 64 KiB and the launch was
  // refused); on a GPU both give the same count.
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void*>(kernel), threads,
                                                           smem));
  if (per_sm < 1) throw CudaError("the resident grid kernel: no block of it fits on an SM");
  return per_sm * sms;
}

// The launch's shape: blocks of `threads`, min(groups, the co-resident maximum, the test knob).
void set_grid(ResidentPlan& p, int threads, int max_blocks) {
  p.threads = threads;
  p.max_blocks = max_blocks;
  p.blocks = std::min(p.groups, p.max_blocks);
  if (p.force_blocks > 0) p.blocks = std::min(p.blocks, p.force_blocks);
}

// The generic grid's module and shared-memory limit; its block count from the occupancy.
template <class Kernel>
int prepare_grid(ResidentPlan& p, Kernel kernel) {
  const int regs = prepare_kernel(kernel, p.smem_bytes);
  set_grid(p, p.threads, co_resident(kernel, p.threads, p.smem_bytes, grid_sms()));
  return regs;
}

// The exact stage's block size: the wide block (an item per thread) unless narrow blocks (a
// sample per thread, several per SM) run the groups in fewer rounds (exact_grid_threads);
// NNTRAIN_RESIDENT_GRID_THREADS (test-only) forces one. No bits depend on it
// (resident_grid_exact.cuh).
int prepare_grid_exact(ResidentPlan& p) {
  const int sms = grid_sms(), wide = gx_wide_threads(p.net), narrow = kGxNarrow;
  const int regs_wide = prepare_kernel(gx_kernel(wide, p.stamps), p.smem_bytes);
  const int regs_narrow = prepare_kernel(gx_kernel(narrow, p.stamps), p.smem_bytes);
  const auto max_blocks = [&](int threads) {
    return co_resident(gx_kernel(threads, p.stamps), threads, p.smem_bytes, sms);
  };
  int threads = p.force_threads;
  if (threads > 0) {
    if (threads % 32 != 0 || threads < narrow || threads > kGxMaxThreads)
      throw UsageError("NNTRAIN_RESIDENT_GRID_THREADS: the exact grid's blocks take a multiple of 32 from " +
                       std::to_string(narrow) + " to " + std::to_string(kGxMaxThreads) + " threads, got " +
                       std::to_string(threads) + " (a test-only knob)");
  } else {
    threads = exact_grid_threads(p.groups, p.force_blocks, wide, max_blocks(wide), narrow, max_blocks(narrow));
  }
  set_grid(p, threads, max_blocks(threads));
  return threads == narrow ? regs_narrow : regs_wide;
}

template <class Kernel>
void launch_grid(const ResidentPlan& p, Kernel kernel, GridArgs a, ResidentChunk c, AdamHyper h, int sgd,
                 cudaStream_t s) {
  ResidentNet n = p.net;
  void* args[] = {&a, &c, &h, &sgd, &n};
  CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(p.blocks), dim3(p.threads), args,
                                         p.smem_bytes, s));
}

// The plan's fields every grid shares, and its `why` from `what` (the group stage's shape).
void finish_grid_plan(ResidentPlan& p, int batch, int force_blocks, const std::string& what) {
  const int group = p.net.batch, last = batch - (p.groups - 1) * group;
  p.grid = true;
  p.batch = batch;
  p.force_blocks = force_blocks;
  p.fits = true;
  p.why = "cooperative grid, " + std::to_string(p.groups) + " groups of " + std::to_string(group) + " samples" +
          (last != group ? " (the last " + std::to_string(last) + ")" : "") + ", " + what + ", " +
          std::to_string((p.smem_bytes + 1023) / 1024) +
          " KiB of shared memory per block";
}

}  // namespace

void plan_resident_grid(ResidentPlan& p, const std::vector<int>& widths, const std::vector<Activation>& acts,
                        int batch, size_t smem_optin, int force_blocks) {
  p = ResidentPlan{};
  if (exact_shape(widths, acts)) {
    lay_out(p.net, widths, acts, std::min(kGxGroup, batch), kGxMaxThreads);  // the flat offsets
    if (plan_grid_exact(p, batch, smem_optin)) {
      const int S = p.net.slices[0];
      finish_grid_plan(p, batch, force_blocks,
                       "exact shape 2-20-5-1 group stage (1 sample per thread, " + std::to_string(S) +
                           (S == 1 ? " slice" : " slices") + " per gradient item)");
      return;
    }
    p = ResidentPlan{};  // rows that do not fit: the generic stages
  }
  p.bucket = resident_bucket(widths);
  const int max_threads = resident_max_threads(p.bucket);
  const int params = flat_params(widths);
  if (params > max_threads * kResMaxOwn) {
    p.why = std::to_string(params) + " parameters (a block of the grid keeps at most " +
            std::to_string(max_threads * kResMaxOwn) + " group sums in its threads' registers)";
    return;
  }
  // One sample per thread, and enough threads for the parameters' group sums.
  p.threads = std::min(max_threads, std::max(kGridMinThreads, ((params + kResMaxOwn - 1) / kResMaxOwn + 31) / 32 * 32));
  p.per_thread = 1;
  const int group = std::min(p.threads, batch);
  lay_out(p.net, widths, acts, group, p.threads);
  p.groups = (batch + group - 1) / group;
  const ResidentNet& n = p.net;
  p.smem_bytes = sizeof(ResHeader) + 4 * (size_t(n.sparams) + size_t(n.rows) * n.stride + size_t(n.scratch));
  if (p.smem_bytes > smem_optin) {
    p.why = std::to_string(n.rows) + " rows of a group of " + std::to_string(group) + " samples and the weights need " +
            std::to_string((p.smem_bytes + 1023) / 1024) + " KiB of shared memory; the device allows " +
            std::to_string(smem_optin / 1024) + " KiB per block";
    return;
  }
  finish_grid_plan(p, batch, force_blocks, "register bucket " + std::to_string(p.bucket));
}

int prepare_resident_grid(ResidentPlan& plan) {
  if (plan.exact) return prepare_grid_exact(plan);
  switch (plan.bucket) {
    case 8: return prepare_grid(plan, resident_grid_kernel<8>);
    case 16: return prepare_grid(plan, resident_grid_kernel<16>);
    case 32: return prepare_grid(plan, resident_grid_kernel<32>);
    case 64: return prepare_grid(plan, resident_grid_kernel<64>);
    default: throw CudaError("prepare_resident_grid: no bucket (the plan does not fit)");
  }
}

void launch_resident_grid(const ResidentPlan& plan, const float* x, const float* y, float* w, float* m, float* v,
                          TrainState* state, const AdamStep* table, ResidentChunk c, AdamHyper h, bool sgd,
                          float* losses, float* gpart, double* gloss, cudaStream_t s, unsigned long long* stamps) {
  if (plan.blocks < 1) throw CudaError("launch_resident_grid: prepare_resident has not sized the grid");
  const GridArgs a{x, y, w, m, v, state, table, losses, gpart, gloss, plan.batch, plan.groups, stamps};
  const int sg = sgd ? 1 : 0;
  if (plan.exact) return launch_grid(plan, gx_kernel(plan.threads, plan.stamps), a, c, h, sg, s);
  switch (plan.bucket) {
    case 8: return launch_grid(plan, resident_grid_kernel<8>, a, c, h, sg, s);
    case 16: return launch_grid(plan, resident_grid_kernel<16>, a, c, h, sg, s);
    case 32: return launch_grid(plan, resident_grid_kernel<32>, a, c, h, sg, s);
    default: return launch_grid(plan, resident_grid_kernel<64>, a, c, h, sg, s);
  }
}

}  // namespace nntrain::cuda
