// fused_v2_stages.cuh — fused_v2_kernel's stages (see fused_v2.hpp and fused_v2.cu): the block's
// layout in shared memory (V2Block), then one device function per stage of a step, in order:
// load the samples, load the weights, forward, loss, backward, the block's partial gradient,
// and the tail (tickets, the sums over blocks and groups, Adam), the last three stages' bodies
// in fused_v2.cu. Every stage is inlined into
// the one kernel, so splitting it changes no instruction's order or rounding. Included by
// fused_v2.cu only: everything here is internal to that translation unit.
#pragma once

#include "fused_v2_device.cuh"

namespace nntrain::cuda {

namespace {
// A batch sample as the loss stage needs it: is it real (not tile padding), its row of x/y,
// and its first target (loaded early, before the weights).
struct V2Sample {
  bool live;
  size_t row;
  float y0;
};

// One block of fused_v2_kernel: where its shared memory holds what, and which sample and part
// of it this thread computes. The stages below are its member functions. S: the tile.
template <int K, int T, class Shape, int S>
struct V2Block {
  static_assert(T == 1 || T == 2 || T == 4, "threads per sample: 1, 2 or 4");
  static_assert(S == kV2Tile || (T == 1 && K == kV2SmallTileBucket && (S == 32 || S == 16)), "64 samples, or 32/16 with K = 64");
  static constexpr int SP = v2_stride(S), NT = S * T;
  const FusedV2Net& net;
  const Shape sh;
  AdamStep& s_adam;
  int& s_last;
  double* const sloss;
  const int P, L;
  float* const sw;
  float* const sa;
  float* const sd;
  float* const st;  // the exact shape's transposed weights (T > 1)
  const int tid, lane, warp;
  const int part, smp;  // this thread's part of its sample, and the sample
  const int n_in, n_out;

  // No static __shared__ variables: GPGPU-Sim lays static shared memory over the start of
  // the dynamic array; the block's scalars are a header of the dynamic array instead.
  __device__ __forceinline__ V2Block(const FusedV2Net& n, unsigned char* smem)
      : net(n), sh(n), s_adam(reinterpret_cast<V2Header*>(smem)->adam), s_last(reinterpret_cast<V2Header*>(smem)->last),
        sloss(reinterpret_cast<V2Header*>(smem)->loss), P(sh.params()), L(sh.layers()),
        sw(reinterpret_cast<float*>(smem + sizeof(V2Header))), sa(sw + sh.sparams()), sd(sa + (net.rows + 1) * SP),
        st(sd + net.drows * SP), tid(threadIdx.x), lane(tid & 31), warp(tid >> 5), part(tid % T),
        smp(v2_column<T>(tid)), n_in(sh.width(0)), n_out(sh.width(L)) {}

  // The row of ones, this thread's sample's row of the batch, and its inputs (into registers
  // and the sample's column). Reads only x and y (and, shuffled, the epoch after the wait).
  // Defined in fused_v2.cu, as is the tail: the stages that touch the step's global state.
  __device__ __forceinline__ V2Sample load_samples(const float* __restrict__ x, const float* __restrict__ y,
                                                   const TrainState* state, const StepDesc& d, float (&a)[K],
                                                   float (&al)[K], float (&dl)[K]) const;

  // The weights (and this step's Adam scalars) into shared memory, after the previous step.
  __device__ __forceinline__ void load_weights(const float* w, const TrainState* state, const AdamHyper& h) const {
    // Everything below reads what the previous step wrote (weights, Adam state, tickets) or
    // writes what it reads (the partials).
    pdl_wait();
    // Weights into shared memory, rows padded with zeros: kLoadRound loads per thread in
    // flight at a time (a loop of one load each would wait for every one in turn).
    // The exact shape with T > 1 never reads the padding (its forward skips the padded inputs,
    // its backward reads single floats), so there each thread moves flat parameters tid, tid + NT,
    // ... to their padded places; otherwise the padded array is filled, zeros included.
    constexpr int LR = NT >= 256 ? 1 : kLoadRound;
    const int sparams = sh.sparams();
    if constexpr (Shape::kExact && T > 1) {
#pragma unroll
      for (int r = 0; r < (Shape::params() + NT - 1) / NT; ++r)
        if (tid + r * NT < P) place_exact<Shape>(tid + r * NT, w[tid + r * NT], sw, st);
    } else {
      for (int k0 = tid; k0 < sparams; k0 += LR * NT) {
        float t[LR];
#pragma unroll
        for (int r = 0; r < LR; ++r) {
          const int k = k0 + r * NT, src = k < sparams ? padded_source(sh, k) : -1;
          t[r] = src >= 0 ? w[src] : 0.0f;
        }
#pragma unroll
        for (int r = 0; r < LR; ++r)
          if (k0 + r * NT < sparams) sw[k0 + r * NT] = t[r];
      }
    }
    // The next Adam scalars (double math, slow) now, off the serial tail; only the last block
    // uses them (state->adam changes only at the very end of the step).
    if (tid == 0) s_adam = adam_next_step(state->adam, h);
    __syncthreads();
  }

  // Forward: a ← f(W a + b), layer by layer. The input vector is in registers; each output
  // (a run-time loop, so the code does not grow with K²; this thread's outputs are part,
  // part + T, ...) goes to the sample's column of a_{l+1}, from which (after the sample's
  // threads have all written theirs) the next layer reloads its registers.
  __device__ __forceinline__ void forward(float (&a)[K]) const {
#pragma unroll Shape::kUnroll
    for (int l = 0; l < L; ++l) {
      const int in = sh.width(l), out = sh.width(l + 1), q = (in + 3) >> 2;
      const Activation act = sh.act(l);
      const float4* W4 = reinterpret_cast<const float4*>(sw + net.swoff[l]);
      const float* b = sw + net.sboff[l];
      float* col = sa + net.aoff[l + 1] * SP + smp;
      // With the exact shape the input's float4 padding is known and skipped (a multiply by
      // zero adds nothing), and the loop over this thread's outputs unrolls.
      const auto output = [&](int o) {
        float acc = b[o];
#pragma unroll
        for (int c = 0; c < K / 4; ++c) {
          if (c >= q) break;
          const float4 wv = W4[o * q + c];
          acc = fmaf(wv.x, a[4 * c], acc);
          if (!Shape::kExact || 4 * c + 1 < in) acc = fmaf(wv.y, a[4 * c + 1], acc);
          if (!Shape::kExact || 4 * c + 2 < in) acc = fmaf(wv.z, a[4 * c + 2], acc);
          if (!Shape::kExact || 4 * c + 3 < in) acc = fmaf(wv.w, a[4 * c + 3], acc);
        }
        col[o * SP] = act_forward(act, acc);
      };
      if constexpr (Shape::kExact) {
#pragma unroll
        for (int r = 0; r < (K + T - 1) / T; ++r) {
          if (r * T >= out) break;
          if (part + r * T < out) output(part + r * T);
        }
      } else {
        for (int o = part; o < out; o += T) output(o);
      }
      if (T > 1) __syncwarp();
      const int out4 = (out + 3) & ~3;
#pragma unroll
      for (int i = 0; i < K; ++i) {
        if (i >= out4) break;
        a[i] = i < out ? col[i * SP] : 0.0f;
      }
    }
  }

  // Loss and output delta (padding samples: delta 0, loss 0). Every thread of the sample
  // has the whole output delta; the loss is counted once, by the sample's first thread.
  __device__ __forceinline__ double loss_delta(const float* __restrict__ y, bool live, size_t row, float y0,
                                               float two_over_count, const float (&a)[K], float (&dl)[K]) const {
    double loss = 0;
    if (live) {
      const Activation act = sh.act(L - 1);
#pragma unroll
      for (int o = 0; o < K; ++o) {
        if (o >= n_out) break;
        const float p = a[o], t = o == 0 ? y0 : y[row * n_out + o];
        if (part == 0) loss += double(mse_term(p, t));
        dl[o] = __fmul_rn(mse_grad(p, t, two_over_count), act_derivative_from_output(act, p));
      }
    }
    return loss;
  }

  // Backward: delta_l = (W_lᵀ delta_{l+1}) · f'(a_l). delta_{l+1} is in registers (dl) and in
  // the sample's column of the delta rows (all layers kept: the gradient pass reads them).
  __device__ __forceinline__ void backward_split(float (&dl)[K]) const {
    // This thread computes delta_l[i] for i = part, part + T, ...: the sum over the layer's
    // outputs in order, as with one thread per sample (the same bits), into the sample's
    // column (the exact shape reads row i of W_lᵀ as float4s, any other shape single floats
    // of W_l); then the whole of delta_l is reloaded into registers for the layer below.
    {
      float* dcol = sd + net.doff[L - 1] * SP + smp;
#pragma unroll
      for (int o = 0; o < K; ++o) {
        if (o >= n_out) break;
        if (o % T == part) dcol[o * SP] = dl[o];
      }
    }
#pragma unroll Shape::kUnroll
    for (int l = L - 1; l >= 1; --l) {
      const int in = sh.width(l), out = sh.width(l + 1), in4 = (in + 3) & ~3;
      const float* acol = sa + net.aoff[l] * SP + smp;
      float* ncol = sd + net.doff[l - 1] * SP + smp;
      const Activation act = sh.act(l - 1);
      if constexpr (Shape::kExact) {
        // The exact shape reads row i of W_lᵀ as float4s (the same products, summed in the same
        // order): out/4 loads instead of out.
        const auto delta_t = [&](int i) {
          constexpr int kOut4 = (K + 3) & ~3;
          const float4* Wt = reinterpret_cast<const float4*>(st + transposed_offset<Shape>(l) + i * ((out + 3) & ~3));
          float nd = 0.0f;
#pragma unroll
          for (int c = 0; c < kOut4 / 4; ++c) {
            if (4 * c >= out) break;
            const float4 wv = Wt[c];
            nd = fmaf(wv.x, dl[4 * c], nd);
            if (4 * c + 1 < out) nd = fmaf(wv.y, dl[4 * c + 1], nd);
            if (4 * c + 2 < out) nd = fmaf(wv.z, dl[4 * c + 2], nd);
            if (4 * c + 3 < out) nd = fmaf(wv.w, dl[4 * c + 3], nd);
          }
          ncol[i * SP] = __fmul_rn(nd, act_derivative_from_output(act, acol[i * SP]));
        };
#pragma unroll
        for (int r = 0; r < (K + T - 1) / T; ++r) {
          if (r * T >= in) break;
          if (part + r * T < in) delta_t(part + r * T);
        }
      } else {
        const float* W = sw + net.swoff[l];
        for (int i = part; i < in; i += T) {
          float nd = 0.0f;
#pragma unroll
          for (int o = 0; o < K; ++o) {
            if (o >= out) break;
            nd = fmaf(W[o * in4 + i], dl[o], nd);
          }
          ncol[i * SP] = __fmul_rn(nd, act_derivative_from_output(act, acol[i * SP]));
        }
      }
      if (l == 1) break;
      __syncwarp();
#pragma unroll
      for (int i = 0; i < K; ++i) {
        if (i >= in) break;
        dl[i] = ncol[i * SP];
      }
    }
  }

  // The backward with one thread per sample: delta_{l+1} to the delta rows, then delta_l as
  // float4 weight broadcasts into register accumulators.
  __device__ __forceinline__ void backward_one(float (&al)[K], float (&dl)[K]) const {
#pragma unroll Shape::kUnroll
    for (int l = L - 1; l >= 0; --l) {
      const int in = sh.width(l), out = sh.width(l + 1), q = (in + 3) >> 2;
      float* dcol = sd + net.doff[l] * SP + smp;
#pragma unroll
      for (int o = 0; o < K; ++o) {
        if (o >= out) break;
        dcol[o * SP] = dl[o];
      }
      if (l == 0) break;
      const float* col = sa + net.aoff[l] * SP + smp;
#pragma unroll
      for (int i = 0; i < K; ++i) {
        if (i >= in) break;
        al[i] = col[i * SP];
      }
      const float4* W4 = reinterpret_cast<const float4*>(sw + net.swoff[l]);
      float nd[K];
#pragma unroll
      for (int i = 0; i < K; ++i) {
        if (i >= 4 * q) break;
        nd[i] = 0.0f;
      }
      for (int o = 0; o < out; ++o) {
        const float dk = dcol[o * SP];
#pragma unroll
        for (int c = 0; c < K / 4; ++c) {
          if (c >= q) break;
          const float4 wv = W4[o * q + c];
          nd[4 * c] = fmaf(wv.x, dk, nd[4 * c]);
          nd[4 * c + 1] = fmaf(wv.y, dk, nd[4 * c + 1]);
          nd[4 * c + 2] = fmaf(wv.z, dk, nd[4 * c + 2]);
          nd[4 * c + 3] = fmaf(wv.w, dk, nd[4 * c + 3]);
        }
      }
      const Activation act = sh.act(l - 1);
#pragma unroll
      for (int i = 0; i < K; ++i) {
        if (i >= in) break;
        dl[i] = __fmul_rn(nd[i], act_derivative_from_output(act, al[i]));
      }
    }
  }

  // The block's loss (warp tree, then warps in order) and partial gradient, to global memory.
  __device__ __forceinline__ void block_partials(double loss, const FusedV2Scratch& sc) const {
    loss = warp_sum_double<NT>(loss);
    if (lane == 0) sloss[warp] = loss;
    __syncthreads();

    // The block's partial gradient, transposed: thread t takes parameters t, t + NT, ... and
    // sums delta · a over the tile's S samples in a fixed order (four interleaved accumulators,
    // then (0+1)+(2+3)). Lanes on one row read one address (a broadcast); lanes on different
    // rows (68 floats apart) spread over the banks.
    const int b = blockIdx.x;
    for (int k = tid; k < P; k += NT) {
      int arow = 0, drow = 0;
      if constexpr (Shape::kExact) {
        param_rows_exact<Shape>(k, arow, drow);
      } else {
        int l = 0;
        while (l + 1 < L && k >= net.woff[l + 1]) ++l;
        const int in = net.widths[l];
        if (k < net.boff[l]) {
          const int o = (k - net.woff[l]) / in;
          arow = net.aoff[l] + (k - net.woff[l] - o * in);
          drow = net.doff[l] + o;
        } else {
          arow = net.rows;
          drow = net.doff[l] + (k - net.boff[l]);
        }
      }
      const float* ap = sa + arow * SP;
      const float* dp = sd + drow * SP;
      // float4 reads (rows are 16-byte aligned): four samples per pair of loads, which then
      // wait for one shared-memory latency instead of four.
      const float4* dp4 = reinterpret_cast<const float4*>(dp);
      const float4* ap4 = reinterpret_cast<const float4*>(ap);
      float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
      for (int j = 0; j < S / 4; ++j) {
        const float4 dv = dp4[j], av = ap4[j];
        acc[0] = fmaf(dv.x, av.x, acc[0]);
        acc[1] = fmaf(dv.y, av.y, acc[1]);
        acc[2] = fmaf(dv.z, av.z, acc[2]);
        acc[3] = fmaf(dv.w, av.w, acc[3]);
      }
      sc.block_grad[size_t(b) * P + k] = __fadd_rn(__fadd_rn(acc[0], acc[1]), __fadd_rn(acc[2], acc[3]));
    }
    if (tid == 0) {
      double ls = sloss[0];
      for (int j = 1; j < NT / 32; ++j) ls += sloss[j];
      sc.block_loss[b] = ls;
    }
  }

  // After the partials: the tickets, and in the last block the sums over blocks (and groups)
  // and the update (final_update). Defined in fused_v2.cu.
  __device__ __forceinline__ void ticket_tail(float* w, float* m, float* v, float* grad, TrainState* state,
                                              const StepDesc& d, const AdamHyper& h, int sgd, double inv_terms,
                                              const FusedV2Scratch& sc, float* losses) const;
};

}  // namespace

}  // namespace nntrain::cuda
