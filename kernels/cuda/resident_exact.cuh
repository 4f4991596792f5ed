// resident_exact.cuh — the resident trainer's exact-shape kernel: 2-20-5-1, relu, relu, identity
// (configs/small_data.json and peaks.json), its plan and kernel; included by resident.cu, which
// dispatches to it. The generic kernel there walks a sample's chain with run-time widths and a
// barrier pair per layer; this one is built for the simulated critical path (docs/GPU.md,
// "The resident path"):
//
//   * one thread per sample does forward AND backward in registers (widths are constants, every
//     loop unrolled, each layer's weight loads issued before its FMAs so they wait once), then
//     writes its sample's column of every row the gradient needs (x, a1, a2, d1, d2, d3, loss);
//   * one barrier, then ALL layers' gradients in one pass: item k of slice g (thread
//     g × kExItems + k) sums delta · a over its slice's columns (4 accumulators; biases and
//     the loss read a row of ones), so there is no barrier per layer;
//   * one barrier (two slices only), then owner thread k sums its slices in order and runs
//     Adam on parameter k; the loss item's owner keeps the epoch's loss (no double-precision
//     loss chain in any other warp).
// 2 or 3 barriers per step. Where the rows of the whole batch do not fit in shared memory the
// columns go through in passes (the thread keeps its values in registers); a slice's columns
// are summed in the same order whatever the passes, so the bits depend on the batch only.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "resident.hpp"

namespace nntrain::cuda {
namespace {

// Rows of the sample columns (each `stride` floats).
constexpr int kExX = 0, kExA1 = 2, kExA2 = 22, kExD1 = 27, kExD2 = 47, kExD3 = 52, kExLoss = 53, kExOnes = 54;
constexpr int kExRows = 55;
constexpr int kExParams = 171;
constexpr int kExItems = kExParams + 1;  // the loss is the last gradient item
// Padded weights: W0 as 20 float4 {w0, w1, b0, 0}; W1 as 5 rows of 5 float4; b1 (8); {W2, b2} (8).
constexpr int kExSW1 = 80, kExSB1 = 180, kExSW2 = 188, kExSWFloats = 196;

// Parameter k's place in the padded weights (flat order: W0, b0, W1, b1, W2, b2).
__device__ __forceinline__ int exact_spos(int k) {
  if (k < 40) return 4 * (k >> 1) + (k & 1);
  if (k < 60) return 4 * (k - 40) + 2;
  if (k < 160) return kExSW1 + (k - 60);
  if (k < 165) return kExSB1 + (k - 160);
  return kExSW2 + (k - 165);  // W2 (5), then b2 at 193
}

// Gradient item k's rows: the delta and the activation (a bias or the loss: the row of ones).
__device__ __forceinline__ void exact_item_rows(int k, int& drow, int& arow) {
  if (k < 40) drow = kExD1 + (k >> 1), arow = kExX + (k & 1);
  else if (k < 60) drow = kExD1 + (k - 40), arow = kExOnes;
  else if (k < 160) drow = kExD2 + (k - 60) / 20, arow = kExA1 + (k - 60) % 20;
  else if (k < 165) drow = kExD2 + (k - 160), arow = kExOnes;
  else if (k < 170) drow = kExD3, arow = kExA2 + (k - 165);
  else drow = k == 170 ? kExD3 : kExLoss, arow = kExOnes;
}

// A sample's values, kept in registers until its pass writes them.
struct ExVals {
  float x[2], a1[20], a2[5], d1[20], d2[5], d3, loss;
};

// Stage "forward": a1, a2 and the prediction from the padded weights; all of a layer's
// weight loads first (float4 broadcasts), then its FMAs, bias first and inputs in order.
__device__ __forceinline__ float exact_forward(const float* sw, ExVals& v) {
  const float4* w0 = reinterpret_cast<const float4*>(sw);
  float4 r[2][10];  // two halves, the second's loads before the first's FMAs
#pragma unroll
  for (int o = 0; o < 10; ++o) r[0][o] = w0[o];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    if (h == 0)
#pragma unroll
      for (int o = 0; o < 10; ++o) r[1][o] = w0[10 + o];
#pragma unroll
    for (int o = 0; o < 10; ++o) {
      const float4 wr = r[h][o];
      v.a1[10 * h + o] = act_forward(Activation::relu, fmaf(wr.y, v.x[1], fmaf(wr.x, v.x[0], wr.z)));
    }
  }
  // W1 by column chunk c (float4 c of the 5 rows), chunk c + 1's loads issued before chunk c's
  // FMAs: they wait once, and only 40 registers hold weights (the kernel has 128).
  const float4* w1 = reinterpret_cast<const float4*>(sw + kExSW1);
  float4 q[2][5];
#pragma unroll
  for (int o = 0; o < 5; ++o) q[0][o] = w1[o * 5];
  float acc[5];
#pragma unroll
  for (int o = 0; o < 5; ++o) acc[o] = sw[kExSB1 + o];
#pragma unroll
  for (int c = 0; c < 5; ++c) {
    if (c + 1 < 5)
#pragma unroll
      for (int o = 0; o < 5; ++o) q[(c + 1) & 1][o] = w1[o * 5 + c + 1];
#pragma unroll
    for (int o = 0; o < 5; ++o) {
      const float4 wq = q[c & 1][o];
      acc[o] = fmaf(wq.x, v.a1[4 * c], acc[o]);
      acc[o] = fmaf(wq.y, v.a1[4 * c + 1], acc[o]);
      acc[o] = fmaf(wq.z, v.a1[4 * c + 2], acc[o]);
      acc[o] = fmaf(wq.w, v.a1[4 * c + 3], acc[o]);
    }
  }
#pragma unroll
  for (int o = 0; o < 5; ++o) v.a2[o] = act_forward(Activation::relu, acc[o]);
  const float4 wa = reinterpret_cast<const float4*>(sw + kExSW2)[0];
  const float4 wb = reinterpret_cast<const float4*>(sw + kExSW2)[1];  // {w4, b2, 0, 0}
  float p = wb.y;
  p = fmaf(wa.x, v.a2[0], p);
  p = fmaf(wa.y, v.a2[1], p);
  p = fmaf(wa.z, v.a2[2], p);
  p = fmaf(wa.w, v.a2[3], p);
  return fmaf(wb.x, v.a2[4], p);
}

// Stage "backward": the loss term, d3, d2 = W2ᵀ d3 · f'(a2), d1 = W1ᵀ d2 · f'(a1) (the generic
// kernel's products and order). A dead column (past the batch's count) gets zero deltas.
__device__ __forceinline__ void exact_backward(const float* sw, ExVals& v, float p, float y, bool live,
                                               float two_over_count) {
  v.loss = live ? mse_term(p, y) : 0.0f;
  v.d3 = live ? __fmul_rn(mse_grad(p, y, two_over_count), 1.0f) : 0.0f;
  const float* w2 = sw + kExSW2;
#pragma unroll
  for (int i = 0; i < 5; ++i)
    v.d2[i] = __fmul_rn(fmaf(w2[i], v.d3, 0.0f), act_derivative_from_output(Activation::relu, v.a2[i]));
  // W1 by row o, row o + 1's loads before row o's FMAs (as the forward's chunks).
  const float4* w1 = reinterpret_cast<const float4*>(sw + kExSW1);
  float4 q[2][5];
#pragma unroll
  for (int c = 0; c < 5; ++c) q[0][c] = w1[c];
  float nd[20];
#pragma unroll
  for (int i = 0; i < 20; ++i) nd[i] = 0.0f;
#pragma unroll
  for (int o = 0; o < 5; ++o) {
    if (o + 1 < 5)
#pragma unroll
      for (int c = 0; c < 5; ++c) q[(o + 1) & 1][c] = w1[(o + 1) * 5 + c];
#pragma unroll
    for (int c = 0; c < 5; ++c) {
      const float4 wq = q[o & 1][c];
      nd[4 * c] = fmaf(wq.x, v.d2[o], nd[4 * c]);
      nd[4 * c + 1] = fmaf(wq.y, v.d2[o], nd[4 * c + 1]);
      nd[4 * c + 2] = fmaf(wq.z, v.d2[o], nd[4 * c + 2]);
      nd[4 * c + 3] = fmaf(wq.w, v.d2[o], nd[4 * c + 3]);
    }
  }
#pragma unroll
  for (int i = 0; i < 20; ++i) v.d1[i] = __fmul_rn(nd[i], act_derivative_from_output(Activation::relu, v.a1[i]));
}

// The sample's column of the forward's rows (column `col` of its pass).
__device__ __forceinline__ void exact_write_forward(float* rows, int sp, int col, const ExVals& v) {
  float* c = rows + col;
#pragma unroll
  for (int i = 0; i < 2; ++i) c[(kExX + i) * sp] = v.x[i];
#pragma unroll
  for (int i = 0; i < 20; ++i) c[(kExA1 + i) * sp] = v.a1[i];
#pragma unroll
  for (int i = 0; i < 5; ++i) c[(kExA2 + i) * sp] = v.a2[i];
}

// ... and of the backward's rows.
__device__ __forceinline__ void exact_write_backward(float* rows, int sp, int col, const ExVals& v) {
  float* c = rows + col;
#pragma unroll
  for (int i = 0; i < 20; ++i) c[(kExD1 + i) * sp] = v.d1[i];
#pragma unroll
  for (int i = 0; i < 5; ++i) c[(kExD2 + i) * sp] = v.d2[i];
  c[kExD3 * sp] = v.d3;
  c[kExLoss * sp] = v.loss;
}

// Stage "reduce", one pass: the item's float4 columns [lo, hi) of the batch (pass-local from
// `base`), four at a time with their eight loads first; acc[u] takes lane u in column order.
__device__ __forceinline__ void exact_grad_pass(const float4* dp, const float4* ap, int lo, int hi, int base,
                                                float acc[4]) {
  int j = lo;
  for (; j + 4 <= hi; j += 4) {
    float4 dv[4], av[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      dv[u] = dp[j + u - base];
      av[u] = ap[j + u - base];
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      acc[0] = fmaf(dv[u].x, av[u].x, acc[0]);
      acc[1] = fmaf(dv[u].y, av[u].y, acc[1]);
      acc[2] = fmaf(dv[u].z, av[u].z, acc[2]);
      acc[3] = fmaf(dv[u].w, av[u].w, acc[3]);
    }
  }
  for (; j < hi; ++j) {
    const float4 dv = dp[j - base], av = ap[j - base];
    acc[0] = fmaf(dv.x, av.x, acc[0]);
    acc[1] = fmaf(dv.y, av.y, acc[1]);
    acc[2] = fmaf(dv.z, av.z, acc[2]);
    acc[3] = fmaf(dv.w, av.w, acc[3]);
  }
}

// What one thread keeps for the whole launch: its sample's inputs (full batch), its gradient
// item, and (owners) its parameter's w, m, v.
struct ExThread {
  int tid, g, k;      // gradient item: slice g, item k
  int drow, arow;     // the item's rows
  int lo4, hi4;       // the slice's float4 columns
  float x0, x1, y;    // the sample (a fixed full batch)
  float w, m, v;      // parameter k (g == 0, k < kExParams)
  int spos;
};

// The per-step values every thread needs, computed once per launch (no division per step).
struct ExScalars {
  float two_full, two_last;  // 2 / (count × outputs) of a full and of the last batch
  double inv_full, inv_last, inv_batches;
  bool reload;
};

// Full batch keeps the step's float loss sums here and turns a run of epochs into their losses
// at once (kExRing epochs, by the helper warp), so no warp waits on a double-precision chain
// per step. The helper warp (the block's last, no sample and no item) also fetches each step's
// Adam scalars from the table into shared memory while the others run the forward: no thread
// holds them in registers through the step, and no one waits on the global load.
constexpr int kExRing = 32;

// The thread's gradient item (slice g, item k) and its rows and columns; the padded weights
// zeroed and the row of ones written (the caller's barrier follows). Shared with the grid.
__device__ __forceinline__ ExThread exact_items(float* sw, float* rows, const ResidentNet& n) {
  ExThread t;
  t.tid = threadIdx.x;
  t.g = t.tid / kExItems;
  t.k = t.tid - t.g * kExItems;
  const int G = n.slices[0], len4 = n.slice_len[0] / 4;
  t.drow = t.arow = kExOnes;
  t.lo4 = t.hi4 = 0;
  if (t.g < G) {
    exact_item_rows(t.k, t.drow, t.arow);
    t.lo4 = t.g * len4;
    t.hi4 = min(n.batch4 / 4, t.lo4 + len4);
  }
  for (int i = t.tid; i < kExSWFloats; i += blockDim.x) sw[i] = 0.0f;
  for (int i = t.tid; i < n.stride; i += blockDim.x) rows[kExOnes * n.stride + i] = 1.0f;
  return t;
}

// Stage "load": zero the padded weights, the row of ones; the owners' w, m, v; the item's rows.
__device__ inline ExThread exact_prologue(float* sw, float* rows, const ResidentNet& n, const float* __restrict__ x,
                                   const float* __restrict__ y, const float* w, const float* m, const float* v,
                                   int sgd, bool reload) {
  ExThread t = exact_items(sw, rows, n);
  __syncthreads();
  t.w = t.m = t.v = 0.0f;
  t.spos = 0;
  if (t.g == 0 && t.k < kExParams) {
    t.spos = exact_spos(t.k);
    t.w = w[t.k];
    if (!sgd) {
      t.m = m[t.k];
      t.v = v[t.k];
    }
    sw[t.spos] = t.w;
  }
  __syncthreads();  // every weight placed before any thread's first forward reads it
  const bool live = !reload && t.tid < n.batch;
  t.x0 = live ? __ldg(x + 2 * t.tid) : 0.0f;
  t.x1 = live ? __ldg(x + 2 * t.tid + 1) : 0.0f;
  t.y = live ? __ldg(y + t.tid) : 0.0f;
  return t;
}

// Stages "load" (mini-batch) + "forward" + "backward" of the thread's sample; its values
// written to its column when the sample is in the first pass.
__device__ __forceinline__ void exact_sample(const ExThread& t, float* sw, float* rows, const ResidentNet& n,
                                             const ResidentChunk& c, const ExScalars& sc, int b, int count,
                                             unsigned long long epoch, const float* __restrict__ x,
                                             const float* __restrict__ y, ExVals& v) {
  const bool live = t.tid < count;
  float yy = t.y;
  v.x[0] = t.x0;
  v.x[1] = t.x1;
  if (sc.reload) {
    uint32_t row = 0;
    if (live) {
      const uint32_t pos = uint32_t(b * n.batch + t.tid);
      row = c.shuffle ? shuffle_index(make_shuffle_key(c.n, c.seed, epoch), pos) : pos;
    }
    v.x[0] = live ? __ldg(x + 2 * size_t(row)) : 0.0f;
    v.x[1] = live ? __ldg(x + 2 * size_t(row) + 1) : 0.0f;
    yy = live ? __ldg(y + row) : 0.0f;
  }
  const float p = exact_forward(sw, v);
  // Written between the two stages: the stores also keep the compiler from holding the
  // forward's 100 W1 registers for the backward (it reloads them: no spills at 128 registers).
  if (t.tid < n.pass_cols) exact_write_forward(rows, n.stride, t.tid, v);
  exact_backward(sw, v, p, yy, live, b == c.batches - 1 ? sc.two_last : sc.two_full);
  if (t.tid < n.pass_cols) exact_write_backward(rows, n.stride, t.tid, v);
}

// Stage "reduce" over every pass: the item's sum of its slice (the thread's sample written
// into its pass's columns between passes).
__device__ __forceinline__ float exact_reduce(const ExThread& t, float* rows, const ResidentNet& n, const ExVals& v) {
  const float4* dp = reinterpret_cast<const float4*>(rows + t.drow * n.stride);
  const float4* ap = reinterpret_cast<const float4*>(rows + t.arow * n.stride);
  const int pass4 = n.pass_cols / 4;
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int r = 0; r < n.passes; ++r) {
    __syncthreads();
    exact_grad_pass(dp, ap, max(t.lo4, r * pass4), min(t.hi4, (r + 1) * pass4), r * pass4, acc);
    if (r + 1 < n.passes) {
      __syncthreads();
      const int col = t.tid - (r + 1) * n.pass_cols;
      if (col >= 0 && col < n.pass_cols && t.tid < n.batch4) {
        exact_write_forward(rows, n.stride, col, v);
        exact_write_backward(rows, n.stride, col, v);
      }
    }
  }
  return __fadd_rn(__fadd_rn(acc[0], acc[1]), __fadd_rn(acc[2], acc[3]));
}

// Stage "optimizer": owner k adds its slices in order and updates parameter k (the new weight
// to the padded copy); the loss item's owner records the step's loss.
__device__ __forceinline__ void exact_update(ExThread& t, float* sw, float* part, const ResidentNet& n, float sum,
                                             const AdamHyper& h, const float* slot, int sgd, float* ring,
                                             int ring_slot, double& epoch_loss, double inv_terms) {
  const int G = n.slices[0];
  if (G > 1) {
    if (t.g > 0 && t.g < G) part[(t.g - 1) * kExItems + t.k] = sum;
    __syncthreads();
  }
  if (t.g != 0) return;
  for (int g = 1; g < G; ++g) sum = __fadd_rn(sum, part[(g - 1) * kExItems + t.k]);
  if (t.k < kExParams) {
    if (sgd) sgd_update(t.w, sum, float(h.lr));
    else adam_update(t.w, t.m, t.v, sum, h, AdamStep{0.0, 0.0, slot[0], slot[1]});
    sw[t.spos] = t.w;
  } else if (ring_slot >= 0) {
    ring[ring_slot] = sum;
  } else {
    epoch_loss += double(sum) * inv_terms;
  }
}

template <int kThreads>
__global__ void __launch_bounds__(kThreads, 1)
    resident_exact_kernel(const float* __restrict__ x, const float* __restrict__ y, float* w, float* m, float* v,
                          TrainState* state, const AdamStep* table, ResidentChunk c, AdamHyper h, int sgd,
                          ResidentNet n, ExScalars sc, float* losses) {
  extern __shared__ __align__(16) unsigned char smem[];
  float* sw = reinterpret_cast<float*>(smem);
  float* rows = sw + kExSWFloats;
  float* part = rows + kExRows * n.stride;
  float* ring = part + (n.slices[0] - 1) * kExItems;
  float* slot = ring + kExRing;  // this step's step_size, bias2_sqrt
  const int helper = blockDim.x - 32;  // the helper warp's first thread
  ExThread t = exact_prologue(sw, rows, n, x, y, w, m, v, sgd, sc.reload);
  const unsigned long long epoch0 = state->epoch;
  const bool ringed = c.batches == 1;
  double epoch_loss = 0;
  for (int e = 0; e < c.epochs; ++e) {
    for (int b = 0; b < c.batches; ++b) {
      if (t.tid == helper && !sgd) {
        const AdamStep a = table[e * c.batches + b];
        slot[0] = a.step_size;
        slot[1] = a.bias2_sqrt;
      }
      const int count = b == c.batches - 1 ? c.last_count : n.batch;
      ExVals vals;
      if (t.tid < n.batch4) exact_sample(t, sw, rows, n, c, sc, b, count, epoch0 + e, x, y, vals);
      const float sum = exact_reduce(t, rows, n, vals);
      exact_update(t, sw, part, n, sum, h, slot, sgd, ring, ringed ? e % kExRing : -1, epoch_loss,
                   b == c.batches - 1 ? sc.inv_last : sc.inv_full);
      if (!ringed && b == c.batches - 1 && t.g == 0 && t.k == kExParams) {
        losses[e] = float(epoch_loss * sc.inv_batches);
        epoch_loss = 0;
      }
      __syncthreads();
    }
    const int lane = t.tid - helper;
    if (ringed && (e % kExRing == kExRing - 1 || e == c.epochs - 1) && lane >= 0 && lane <= e % kExRing)
      losses[e - e % kExRing + lane] = float(double(ring[lane]) * sc.inv_full);
  }
  if (t.g == 0 && t.k < kExParams) {
    w[t.k] = t.w;
    if (!sgd) {
      m[t.k] = t.m;
      v[t.k] = t.v;
    }
  }
  if (t.tid == 0) {
    state->epoch = epoch0 + c.epochs;
    if (c.epochs > 0) state->adam = table[c.epochs * c.batches - 1];
    state->loss_acc = 0;
  }
}

inline bool exact_shape(const std::vector<int>& widths, const std::vector<Activation>& acts) {
  return widths == std::vector<int>{2, 20, 5, 1} &&
         acts == std::vector<Activation>{Activation::relu, Activation::relu, Activation::identity};
}

constexpr int kExMaxThreads = 512;  // ≤ 480 samples, one per thread, and the helper warp (128 registers)

// The exact kernel's plan for a batch of ≤ kExMaxThreads samples: two slices per gradient item
// from 32 samples on (their chains half as long), the fewest passes whose rows fit `smem_optin`.
// Every order depends on the batch alone (the passes change no sum's order).
inline bool plan_exact(ResidentPlan& p, int batch, size_t smem_optin) {
  ResidentNet& n = p.net;
  n.batch = batch;
  n.batch4 = (batch + 3) & ~3;
  const int cols4 = n.batch4 / 4, G = cols4 >= 8 ? 2 : 1;
  n.slices[0] = G;
  n.slice_len[0] = 4 * ((cols4 + G - 1) / G);
  p.threads = (std::max(n.batch4, G * kExItems) + 31) / 32 * 32 + 32;  // + the helper warp
  p.per_thread = 1;
  for (int passes = 1; passes <= cols4; ++passes) {
    const int pass4 = (cols4 + passes - 1) / passes;
    n.passes = (cols4 + pass4 - 1) / pass4;
    n.pass_cols = 4 * pass4;
    n.stride = pass4 % 2 == 1 ? n.pass_cols : n.pass_cols + 4;
    p.smem_bytes = 4 * (size_t(kExSWFloats) + size_t(kExRows) * n.stride + size_t(G - 1) * kExItems + kExRing + 2);
    if (p.smem_bytes <= smem_optin) return true;
  }
  return false;
}

inline std::string exact_why(const ResidentPlan& p) {
  const ResidentNet& n = p.net;
  return "one launch per chunk of epochs, one block of " + std::to_string(p.threads) +
         " threads, exact shape 2-20-5-1 (1 sample per thread, " + std::to_string(n.slices[0]) +
         (n.slices[0] == 1 ? " slice" : " slices") + " per gradient item, " + std::to_string(n.passes) +
         (n.passes == 1 ? " pass" : " passes") + " of " + std::to_string(n.pass_cols) + " columns), " +
         std::to_string((p.smem_bytes + 1023) / 1024) + " KiB of shared memory";
}

// The per-launch scalars, as the generic kernel computes them per step.
inline ExScalars exact_scalars(const ResidentNet& n, const ResidentChunk& c) {
  ExScalars s;
  s.two_full = 2.0f / float(n.batch);
  s.two_last = 2.0f / float(c.last_count);
  s.inv_full = 1.0 / double(n.batch);
  s.inv_last = 1.0 / double(c.last_count);
  s.inv_batches = 1.0 / double(c.batches);
  s.reload = c.batches > 1 || c.shuffle;
  return s;
}

}  // namespace
}  // namespace nntrain::cuda
