// resident.cu — the one-block resident trainer (see resident.hpp); its stages and shared-memory
// layout are resident_stages.cuh's, shared with the cooperative grid (resident_grid.cu).
#include <algorithm>
#include <cstdlib>
#include <string>

#include "cuda_check.hpp"
#include "errors.hpp"
#include "resident.hpp"
#include "resident_exact.cuh"
#include "resident_grid.hpp"
#include "resident_stages.cuh"

namespace nntrain::cuda {

namespace {

// One optimiser step (the block's weights in shared memory are this step's on entry, the
// next step's on return). Returns the batch loss (thread 0 only).
template <int K>
__device__ __forceinline__ double train_step(const Block& B, const ResidentNet& n, const ResidentChunk& c,
                                             const Step& st, bool reload, const float* __restrict__ x,
                                             const float* __restrict__ y, Owned& own, const AdamHyper& h,
                                             const AdamStep& a, int sgd) {
  const double batch_loss = forward_block<K>(B, n, c, st, reload, x, y);
  backward_block<K>(B, n, own, [&] { optimize(B, n, own, h, a, sgd); });
  return batch_loss;
}

template <int K>
__global__ void __launch_bounds__(resident_max_threads(K), 1)
    resident_kernel(const float* __restrict__ x, const float* __restrict__ y, float* w, float* m, float* v,
                    TrainState* state, const AdamStep* table, ResidentChunk c, AdamHyper h, int sgd, ResidentNet n,
                    float* losses) {
  extern __shared__ __align__(16) unsigned char smem[];
  size_t smem_floats = 0;
  const Block B = make_block(smem, n, smem_floats);
  Owned own;
  load_owned(B, own, n, w, m, v, sgd, smem_floats);
  const unsigned long long epoch0 = state->epoch;
  // A full batch in a fixed order keeps its inputs in a_0 for the whole launch.
  const bool reload = c.batches > 1 || c.shuffle;
  if (!reload) {
    const Step st = make_step(n, c, epoch0, 0);
    for (int s = B.tid; s < n.batch; s += B.nt) load_sample(B, n, c, st, x, s);
  }
  __syncthreads();
  for (int e = 0; e < c.epochs; ++e) {
    double epoch_loss = 0;
    for (int b = 0; b < c.batches; ++b) {
      const Step st = make_step(n, c, epoch0 + e, b);
      const AdamStep a = table[e * c.batches + b];
      epoch_loss += train_step<K>(B, n, c, st, reload, x, y, own, h, a, sgd) * st.inv_terms;
    }
    if (B.tid == 0) losses[e] = float(epoch_loss / double(c.batches));
  }
#pragma unroll
  for (int r = 0; r < kResMaxOwn; ++r) {
    const int k = B.tid + r * B.nt;
    if (k >= n.params) break;
    w[k] = own.w[r];
    if (!sgd) {
      m[k] = own.m[r];
      v[k] = own.v[r];
    }
  }
  if (B.tid == 0) {
    state->epoch = epoch0 + c.epochs;
    if (c.epochs > 0) state->adam = table[c.epochs * c.batches - 1];
    state->loss_acc = 0;
  }
}

template <int K>
int prepare_k(size_t smem) {
  return prepare_kernel(resident_kernel<K>, smem);
}

// The generic one-block kernel's plan into p; false (p.why says why) where it does not fit.
bool plan_one_block(ResidentPlan& p, const std::vector<int>& widths, const std::vector<Activation>& acts, int batch,
                    size_t smem_optin) {
  p.bucket = resident_bucket(widths);
  const int max_threads = resident_max_threads(p.bucket);
  const int params = flat_params(widths);
  if (params > max_threads * kResMaxOwn) {
    p.why = std::to_string(params) + " parameters (one block keeps at most " +
            std::to_string(max_threads * kResMaxOwn) + " in its threads' registers)";
    return false;
  }
  if (batch > max_threads * kResMaxPerThread) {
    p.why = "batches of " + std::to_string(batch) + " samples (one block takes at most " +
            std::to_string(max_threads * kResMaxPerThread) + ")";
    return false;
  }
  const int want = std::max(std::min(batch, max_threads), (params + kResMaxOwn - 1) / kResMaxOwn);
  p.threads = std::min(max_threads, (want + 31) / 32 * 32);
  p.per_thread = (batch + p.threads - 1) / p.threads;
  lay_out(p.net, widths, acts, batch, p.threads);
  const ResidentNet& n = p.net;
  p.smem_bytes = sizeof(ResHeader) + 4 * (size_t(n.sparams) + size_t(n.rows) * n.stride + size_t(n.scratch));
  const std::string kib = std::to_string((p.smem_bytes + 1023) / 1024) + " KiB";
  if (p.smem_bytes > smem_optin) {
    p.why = std::to_string(n.rows) + " rows of " + std::to_string(batch) + " samples and the weights need " + kib +
            " of shared memory; the device allows " + std::to_string(smem_optin / 1024) + " KiB per block";
    return false;
  }
  p.why = "one launch per chunk of epochs, one block of " + std::to_string(p.threads) + " threads (" +
          std::to_string(p.per_thread) + (p.per_thread == 1 ? " sample" : " samples") +
          " per thread), register bucket " + std::to_string(p.bucket) + ", " + kib + " of shared memory";
  return true;
}

}  // namespace

ResidentPlan plan_resident(const std::vector<int>& widths, const std::vector<Activation>& acts, int batch,
                           size_t smem_optin, int grid_blocks) {
  ResidentPlan p;
  if (const std::string why = fused_plan_problem(widths, acts.size()); !why.empty()) {
    p.why = why;
    return p;
  }
  if (batch < 1) {
    p.why = "an empty batch";
    return p;
  }
  if (grid_blocks <= 0 && batch <= kExMaxThreads - 32 && exact_shape(widths, acts)) {
    p.exact = true;
    lay_out(p.net, widths, acts, batch, kExMaxThreads);  // the flat offsets (the rest is plan_exact's)
    if (plan_exact(p, batch, smem_optin)) {
      p.fits = true;
      p.why = exact_why(p);
      return p;
    }
    p = ResidentPlan{};  // rows that do not fit even in passes: the generic kernel says why
  }
  // Past the exact kernel's batch, the exact shape takes the grid's exact group stage before
  // the generic one-block kernel. SIMULATION: one round of groups (16 at 2,000 samples) costs
  // 8,720 cycles per epoch, and 481-1,000 samples are one round of 4-8 groups; the generic
  // block costs 25,452 already at 400 (docs/journal/2026-11-29-grid-exact.md). On an H200 the
  // grid's exact stage lost to v2 at 900 samples and won from 2,500 (resident_preferred).
  ResidentPlan g;
  plan_resident_grid(g, widths, acts, batch, smem_optin, grid_blocks);
  const bool exact_grid = g.fits && g.exact;
  if (grid_blocks <= 0 && !exact_grid && plan_one_block(p, widths, acts, batch, smem_optin)) {
    p.fits = true;
    return p;
  }
  // One block does not hold the batch (or the test knob asks for the grid): the cooperative grid.
  if (!g.fits) {
    p.why = grid_blocks > 0 ? g.why : p.why + "; nor does the cooperative grid: " + g.why;
    return p;
  }
  g.why = (grid_blocks > 0 ? "forced by NNTRAIN_RESIDENT_GRID_BLOCKS=" + std::to_string(grid_blocks) + " (test-only); "
            : exact_grid   ? "past the exact one-block kernel's " + std::to_string(kExMaxThreads - 32) + " samples; "
                           : "one block does not fit (" + p.why + "); ") +
          g.why;
  return g;
}

namespace {

// A test-only knob: 0 where unset, else an integer in [1, max] (else UsageError: exit 2).
int knob_from_env(const char* name, long max, const char* what) {
  const char* s = std::getenv(name);
  if (s == nullptr || *s == 0) return 0;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (*end != 0 || v < 1 || v > max)
    throw UsageError(std::string(name) + ": expected a number of " + what + " from 1 to " + std::to_string(max) +
                     ", got '" + s + "' (a test-only knob)");
  return int(v);
}

}  // namespace

int resident_grid_blocks_from_env() { return knob_from_env("NNTRAIN_RESIDENT_GRID_BLOCKS", 1L << 20, "blocks"); }

int resident_grid_threads_from_env() { return knob_from_env("NNTRAIN_RESIDENT_GRID_THREADS", 1024, "threads"); }

int exact_grid_threads(int groups, int force_blocks, int wide, int wide_blocks, int narrow, int narrow_blocks) {
  const auto rounds = [&](int blocks) {
    if (force_blocks > 0) blocks = std::min(blocks, force_blocks);
    blocks = std::max(1, std::min(blocks, groups));
    return (groups + blocks - 1) / blocks;
  };
  return rounds(narrow_blocks) < rounds(wide_blocks) ? narrow : wide;
}

std::string resident_launch_note(const ResidentPlan& plan) {
  if (!plan.grid) return "";
  return "; " + std::to_string(plan.blocks) + (plan.blocks == 1 ? " block" : " blocks") + " of " +
         std::to_string(plan.threads) + " threads (co-resident at most " + std::to_string(plan.max_blocks) + "), " +
         std::to_string(plan.groups) + " groups";
}

int prepare_resident(ResidentPlan& plan) {
  if (plan.grid) return prepare_resident_grid(plan);
  if (plan.exact) return prepare_kernel(resident_exact_kernel<kExMaxThreads>, plan.smem_bytes);
  switch (plan.bucket) {
    case 8: return prepare_k<8>(plan.smem_bytes);
    case 16: return prepare_k<16>(plan.smem_bytes);
    case 32: return prepare_k<32>(plan.smem_bytes);
    case 64: return prepare_k<64>(plan.smem_bytes);
    default: throw CudaError("prepare_resident: no bucket (the plan does not fit)");
  }
}

void launch_resident(const ResidentPlan& plan, const float* x, const float* y, float* w, float* m, float* v,
                     TrainState* state, const AdamStep* table, ResidentChunk c, AdamHyper h, bool sgd, float* losses,
                     float* gpart, double* gloss, cudaStream_t s, unsigned long long* stamps) {
  if (!plan.fits) throw CudaError("launch_resident: the plan does not fit");
  if (plan.grid)
    return launch_resident_grid(plan, x, y, w, m, v, state, table, c, h, sgd, losses, gpart, gloss, s, stamps);
  const int sg = sgd ? 1 : 0;
  const dim3 grid(1), block(unsigned(plan.threads));
  if (plan.exact) {
    resident_exact_kernel<kExMaxThreads><<<grid, block, plan.smem_bytes, s>>>(x, y, w, m, v, state, table, c, h, sg,
                                                                              plan.net, exact_scalars(plan.net, c),
                                                                              losses);
    CUDA_CHECK_LAUNCH();
    return;
  }
  switch (plan.bucket) {
    case 8: resident_kernel<8><<<grid, block, plan.smem_bytes, s>>>(x, y, w, m, v, state, table, c, h, sg, plan.net, losses); break;
    case 16: resident_kernel<16><<<grid, block, plan.smem_bytes, s>>>(x, y, w, m, v, state, table, c, h, sg, plan.net, losses); break;
    case 32: resident_kernel<32><<<grid, block, plan.smem_bytes, s>>>(x, y, w, m, v, state, table, c, h, sg, plan.net, losses); break;
    default: resident_kernel<64><<<grid, block, plan.smem_bytes, s>>>(x, y, w, m, v, state, table, c, h, sg, plan.net, losses); break;
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace nntrain::cuda
