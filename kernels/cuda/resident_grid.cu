// resident_grid.cu — the resident trainer's cooperative grid (see resident_grid.hpp).
//
// gpart is laid out [param][group] (not [group][param]): an exchange lane reads consecutive
// groups of one parameter, so a warp's 32 loads are one coalesced row; the writers' scattered
// stores do not wait. Every read of what another block wrote in this launch is __ldcg (L2):
// grid.sync() orders it, and no stale L1 line can be read even where a fence would not drop it.
#include <cooperative_groups.h>

#include <algorithm>
#include <string>

#include "cuda_check.hpp"
#include "resident_grid.hpp"
#include "resident_stages.cuh"

namespace cg = cooperative_groups;

namespace nntrain::cuda {

namespace {

constexpr int kGridMinThreads = 64;

// The launch's arrays and the step's shape.
struct GridArgs {
  const float* x;
  const float* y;
  float* w;  // read at the start; the owners publish each step's new weights here
  float* m;
  float* v;
  TrainState* state;
  const AdamStep* table;
  float* losses;
  float* gpart;   // [param][group]: the groups' gradients
  double* gloss;  // [group]: the groups' losses
  int batch;      // samples of a full step
  int groups;     // groups of a full step (gpart's row length)
};

// The parameters an exchange lane owns, for the whole launch: slot r holds the warp's
// parameter r × 32 + lane, k = warp + (r × 32 + lane) × warps.
struct Owner {
  float w[kResMaxOwn], m[kResMaxOwn], v[kResMaxOwn], g[kResMaxOwn];
  int warp, warps, lane;
};

__device__ __forceinline__ int owner_param(const Owner& o, int r) { return o.warp + (r * 32 + o.lane) * o.warps; }

// A fixed xor tree: every lane ends with the same bits (a + b == b + a in IEEE arithmetic).
__device__ __forceinline__ float warp_sum_float(float x) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x = __fadd_rn(x, __shfl_xor_sync(kFull, x, off));
  return x;
}

__device__ __forceinline__ int step_count(const ResidentChunk& c, const GridArgs& a, int b) {
  return b == c.batches - 1 ? c.last_count : a.batch;
}

// Group g of step b: its columns' place in the step and its live count; the loss scalars are
// the whole step's (as the CPU reference's).
__device__ __forceinline__ Step group_step(const ResidentNet& n, const ResidentChunk& c, const GridArgs& a,
                                           unsigned long long epoch, int b, int g) {
  const int count = step_count(c, a, b);
  Step st;
  st.offset = b * a.batch + g * n.batch;
  st.count = min(n.batch, count - g * n.batch);
  st.key = c.shuffle ? make_shuffle_key(c.n, c.seed, epoch) : ShuffleKey{};
  const int n_out = n.widths[n.layers];
  st.two_over_count = 2.0f / (float(count) * float(n_out));
  st.inv_terms = 1.0 / (double(count) * double(n_out));
  return st;
}

// Stages load, forward, backward and reduce over group g (the one-block kernel's train_step
// without the optimizer): the group's gradient to gpart's column g, its loss to gloss[g].
template <int K>
__device__ __forceinline__ void group_gradient(const Block& B, const ResidentNet& n, const ResidentChunk& c, const Step& st,
                               bool reload, const GridArgs& a, Owned& own, int g) {
  double loss = 0;
  for (int s = B.tid; s < n.batch; s += B.nt) {
    if (reload) load_sample(B, n, c, st, a.x, s);
    loss += forward_sample<K>(B, n, c, st, a.y, s);
  }
  publish_loss(B, loss);
  __syncthreads();
  if (B.tid == 0) a.gloss[g] = block_loss(B);
  for (int l = n.layers - 1; l >= 0; --l) {
    grad_partials(B, n, l);
    __syncthreads();
    owner_sums(B, n, l, own);
    if (l > 0)
      for (int s = B.tid; s < n.batch; s += B.nt) delta_sample<K>(B, n, l, s);
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < kResMaxOwn; ++r) {
    const int k = B.tid + r * B.nt;
    if (k >= n.params) break;
    a.gpart[size_t(k) * a.groups + g] = own.g[r];
  }
}

// Stage "exchange": each owned parameter's gradient summed over the step's groups (lane j
// sums groups j, j + 32, ... in order, then the xor tree: an order fixed by the group count),
// then the optimizer; the owner lane publishes the new weight.
__device__ __forceinline__ void exchange(Owner& o, const GridArgs& a, int params, int groups, const AdamHyper& h,
                         const AdamStep& as, int sgd) {
#pragma unroll
  for (int r = 0; r < kResMaxOwn; ++r) {
    for (int j = 0; j < 32; ++j) {
      const int k = o.warp + (r * 32 + j) * o.warps;
      if (k >= params) break;  // the same for the whole warp
      const float* row = a.gpart + size_t(k) * a.groups;
      float s = 0.0f;
      for (int q = o.lane; q < groups; q += 32) s = __fadd_rn(s, __ldcg(row + q));
      s = warp_sum_float(s);
      if (o.lane == j) o.g[r] = s;
    }
  }
#pragma unroll
  for (int r = 0; r < kResMaxOwn; ++r) {
    const int k = owner_param(o, r);
    if (k >= params) break;
    if (sgd) sgd_update(o.w[r], o.g[r], float(h.lr));
    else adam_update(o.w[r], o.m[r], o.v[r], o.g[r], h, as);
    a.w[k] = o.w[r];
  }
}

// The step's loss (one warp, all lanes): the groups' losses in the exchange's order.
__device__ __forceinline__ double step_loss(const GridArgs& a, int lane, int groups) {
  double s = 0;
  for (int q = lane; q < groups; q += 32) s += __ldcg(a.gloss + q);
  return warp_sum_double(s);
}

__device__ __forceinline__ Owner load_owner(const GridArgs& a, int params, int sgd) {
  Owner o;
  o.lane = threadIdx.x & 31;
  o.warps = int(gridDim.x) * int(blockDim.x / 32);
  o.warp = int(blockIdx.x) * int(blockDim.x / 32) + int(threadIdx.x >> 5);
#pragma unroll
  for (int r = 0; r < kResMaxOwn; ++r) {
    const int k = owner_param(o, r);
    o.w[r] = o.m[r] = o.v[r] = o.g[r] = 0.0f;
    if (k >= params) continue;
    o.w[r] = a.w[k];
    if (!sgd) {
      o.m[r] = a.m[k];
      o.v[r] = a.v[k];
    }
  }
  return o;
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
#pragma unroll
  for (int r = 0; r < kResMaxOwn; ++r) {
    const int k = owner_param(o, r);
    if (k >= n.params || sgd) break;
    a.m[k] = o.m[r];
    a.v[k] = o.v[r];
  }
  if (blockIdx.x == 0 && B.tid == 0) {
    a.state->epoch = epoch0 + c.epochs;
    if (c.epochs > 0) a.state->adam = a.table[c.epochs * c.batches - 1];
    a.state->loss_acc = 0;
  }
}

template <int K>
int prepare_grid_k(ResidentPlan& p) {
  const int regs = prepare_kernel(resident_grid_kernel<K>, p.smem_bytes);
  int dev = 0, sms = 0, coop = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
  if (!coop) throw CudaError("the resident grid needs cooperative launches, which this device does not support");
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, resident_grid_kernel<K>, p.threads, p.smem_bytes));
  p.max_blocks = per_sm * sms;
  if (p.max_blocks < 1) throw CudaError("the resident grid kernel: no block of it fits on an SM");
  p.blocks = std::min(p.groups, p.max_blocks);
  if (p.force_blocks > 0) p.blocks = std::min(p.blocks, p.force_blocks);
  return regs;
}

template <int K>
void launch_grid_k(const ResidentPlan& p, GridArgs a, ResidentChunk c, AdamHyper h, int sgd, cudaStream_t s) {
  ResidentNet n = p.net;
  void* args[] = {&a, &c, &h, &sgd, &n};
  CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(resident_grid_kernel<K>), dim3(p.blocks),
                                         dim3(p.threads), args, p.smem_bytes, s));
}

}  // namespace

void plan_resident_grid(ResidentPlan& p, const std::vector<int>& widths, const std::vector<Activation>& acts,
                        int batch, size_t smem_optin, int force_blocks) {
  p = ResidentPlan{};
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
  p.grid = true;
  p.batch = batch;
  p.groups = (batch + group - 1) / group;
  p.force_blocks = force_blocks;
  const ResidentNet& n = p.net;
  p.smem_bytes = sizeof(ResHeader) + 4 * (size_t(n.sparams) + size_t(n.rows) * n.stride + size_t(n.scratch));
  const std::string kib = std::to_string((p.smem_bytes + 1023) / 1024) + " KiB";
  if (p.smem_bytes > smem_optin) {
    p.why = std::to_string(n.rows) + " rows of a group of " + std::to_string(group) + " samples and the weights need " +
            kib + " of shared memory; the device allows " + std::to_string(smem_optin / 1024) + " KiB per block";
    return;
  }
  const int last = batch - (p.groups - 1) * group;
  p.fits = true;
  p.why = "cooperative grid, " + std::to_string(p.groups) + " groups of " + std::to_string(group) + " samples" +
          (last != group ? " (the last " + std::to_string(last) + ")" : "") + ", blocks of " +
          std::to_string(p.threads) + " threads, register bucket " + std::to_string(p.bucket) + ", " + kib +
          " of shared memory per block";
}

int prepare_resident_grid(ResidentPlan& plan) {
  switch (plan.bucket) {
    case 8: return prepare_grid_k<8>(plan);
    case 16: return prepare_grid_k<16>(plan);
    case 32: return prepare_grid_k<32>(plan);
    case 64: return prepare_grid_k<64>(plan);
    default: throw CudaError("prepare_resident_grid: no bucket (the plan does not fit)");
  }
}

void launch_resident_grid(const ResidentPlan& plan, const float* x, const float* y, float* w, float* m, float* v,
                          TrainState* state, const AdamStep* table, ResidentChunk c, AdamHyper h, bool sgd,
                          float* losses, float* gpart, double* gloss, cudaStream_t s) {
  if (plan.blocks < 1) throw CudaError("launch_resident_grid: prepare_resident has not sized the grid");
  const GridArgs a{x, y, w, m, v, state, table, losses, gpart, gloss, plan.batch, plan.groups};
  const int sg = sgd ? 1 : 0;
  switch (plan.bucket) {
    case 8: return launch_grid_k<8>(plan, a, c, h, sg, s);
    case 16: return launch_grid_k<16>(plan, a, c, h, sg, s);
    case 32: return launch_grid_k<32>(plan, a, c, h, sg, s);
    default: return launch_grid_k<64>(plan, a, c, h, sg, s);
  }
}

}  // namespace nntrain::cuda
