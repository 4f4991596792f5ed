// cpu_fast_tile.cpp — a chunk of the fast backend's step, tile by tile: the tile's inputs
// (the data in place, copied or gathered rows), the forward pass (fused first layers where
// the kernels allow), the backward pass into the thread's lane accumulators, BLAS for wide
// layers, and the lane sums into the chunk's slot.
#include "cpu_fast_backend.hpp"

namespace nntrain::fast {

namespace {

// CBLAS enum values (cblas.h): RowMajor 101, NoTrans 111, Trans 112.
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

// A chunk starts on a tile quantum, so a sample's lane (its place in the tile mod 16) and the
// in-place reads below (a tile at a 16-aligned position) hold for every chunk.
static_assert(kPartitionQuantum % kTileQuantum == 0 && kTileQuantum % kAccLanes == 0);

}  // namespace

// Sums the chunk's gradient and loss over its tiles into the chunk's slot.
void CpuFastBackend::run_chunk(Scratch& s, int b, const ShuffleKey& key, int count, int chunks, int c) {
  // The SIMD layers' accumulators start from zero in the chunk's first tile (`fresh`);
  // the BLAS layers' (sgemm accumulates into them) are zeroed here.
  for (int l = 0; l < spec_.layers(); ++l)
    if (blas_[size_t(l)])
      std::memset(s.grad.p + acc_off_[size_t(l)], 0,
                  (size_t(spec_.in(l)) * spec_.out(l) + spec_.out(l)) * sizeof(float));
  std::memset(s.grad.p + loss_off_, 0, size_t(fast::kAccLanes) * sizeof(float));
  const float two_over_count = 2.0f / (float(count) * float(data_.outputs));
  const int end = fast::chunk_begin(count, chunks, c + 1);
  TileLayers t;
  const int begin = fast::chunk_begin(count, chunks, c);
  for (int s0 = begin; s0 < end; s0 += t.T) {
    // A chunk's last tile is only as wide as its samples (in whole quanta).
    t.T = int(std::min<size_t>(size_t(tile_), round_up(size_t(end - s0), size_t(fast::kTileQuantum))));
    t.tcount = std::min(t.T, end - s0);
    tile_input(s, b, key, s0, t);
    const bool tail = forward_tile(s, t, two_over_count, s0 == begin);
    backward_tile(s, t, two_over_count, s0 == begin, tail);
  }
  chunk_to_slot(s, c);
}


// The tile's inputs and targets: the feature-major data itself where the tile lies there
// whole (full batch; unshuffled mini-batches at aligned positions), else copied or
// gathered rows, zero past the tile's real samples.
void CpuFastBackend::tile_input(Scratch& s, int b, const ShuffleKey& key, int s0, TileLayers& t) {
  const size_t pos0 = size_t(b) * size_t(plan_.batch) + size_t(s0);
  if (!plan_.shuffle && (plan_.batches == 1 || (t.tcount == t.T && pos0 % 16 == 0))) {
    // (A mini-batch's short last tile is copied instead: its padding lanes would otherwise
    // hold the next batch's samples.)
    t.ins[0] = xs_.p + pos0;
    t.Y = ys_.p + pos0;
    t.ldins[0] = t.ldy = ld_;
    return;
  }
  const float* x = s.x.p;
  if (cur_.use >= 0 && s0 == 0 && ahead_[cur_.use].T == t.T && ahead_[cur_.use].count == t.tcount) {
    x = ahead_[cur_.use].x.p;  // gathered during the step before
    if (tiles_ahead_used_) ++*tiles_ahead_used_;
  } else
    gather(s.rows.data(), s.x.p, b, key, s0, t.tcount, t.T);
  t.ins[0] = x;
  t.Y = x + size_t(data_.inputs) * t.T;
  t.ldins[0] = t.ldy = size_t(t.T);
}


// Forward: act(l) = f(W_l act(l-1) + b_l), rows of T samples, into the scratch's act rows.
// Returns whether the fused forward did the tail too (forward_first_layers).
bool CpuFastBackend::forward_tile(Scratch& s, TileLayers& t, float two_over_count, bool fresh) {
  const int L = spec_.layers(), T = t.T;
  const float* P = cur_.w;
  float* a = s.act.p;
  for (int l = 0; l < L; ++l) {
    if (l > 0) {
      t.ins[l] = t.outs[l - 1];
      t.ldins[l] = size_t(T);
    }
    t.outs[l] = a;
    a += size_t(spec_.out(l)) * T;
    const float* W = P + w_off_[size_t(l)];
    const float* bias = P + b_off_[size_t(l)];
    const int act = int(spec_.activation(l));
    if (l == 0 && L >= 2 && !blas_[0] && !blas_[1]) {
      bool tail = false;
      const int done = forward_first_layers(s, t, a, two_over_count, fresh, tail);
      if (tail) return true;
      if (done >= 2) {
        l += done - 1;
        continue;
      }
    }
    if (blas_[size_t(l)]) {
      blas_forward(W, bias, spec_.in(l), spec_.out(l), t.ins[l], t.ldins[l], t.outs[l], T);
      k_->activate(t.outs[l], spec_.out(l), T, act, t.tcount);
    } else {
      k_->forward(W, bias, spec_.in(l), spec_.out(l), t.ins[l], t.ldins[l], t.outs[l], T, act, t.tcount);
    }
  }
  return false;
}


// The first two layers in one pass when the first has <= 2 inputs, and the third when it has
// one output and the identity (same bits as layer-by-layer). `a` is the next free act row
// (after layer 0's), advanced past what was done. Returns the layers done: 0, 2 or 3.
// When the third layer is the last (a net of three layers), the same pass does its
// backward too (FirstForward's tail: the loss, the third layer's gradient and the second
// layer's delta, into the first delta buffer), and `tail` is set.
int CpuFastBackend::forward_first_layers(Scratch& s, TileLayers& t, float*& a, float two_over_count, bool fresh,
                                         bool& tail) {
  const int L = spec_.layers(), T = t.T;
  const float* P = cur_.w;
  t.outs[1] = a;
  t.ins[1] = t.outs[0];
  t.ldins[1] = size_t(T);
  const bool third = L >= 3 && !blas_[2];
  float* out2 = a + size_t(spec_.out(1)) * T;
  fast::FirstForward f{};
  f.W0 = P + w_off_[size_t(0)];
  f.b0 = P + b_off_[size_t(0)];
  f.nx = spec_.in(0);
  f.X0 = t.ins[0];
  f.ldx = t.ldins[0];
  f.K = spec_.out(0);
  f.act0 = int(spec_.activation(0));
  f.H = t.outs[0];
  f.W1 = P + w_off_[size_t(1)];
  f.b1 = P + b_off_[size_t(1)];
  f.out = spec_.out(1);
  f.Z = t.outs[1];
  f.T = T;
  f.act1 = int(spec_.activation(1));
  f.valid = t.tcount;
  f.W2 = third ? P + w_off_[size_t(2)] : nullptr;
  f.b2 = third ? P + b_off_[size_t(2)] : nullptr;
  f.out2 = third ? spec_.out(2) : 0;
  f.Z2 = out2;
  f.act2 = third ? int(spec_.activation(2)) : 0;
  f.cols = fwd_cols_;
  if (third && L == 3) {
    f.Y = t.Y;
    f.two_over_count = two_over_count;
    f.loss = s.grad.p + loss_off_;
    f.gW2 = s.grad.p + acc_off_[2];
    f.gb2 = f.gW2 + size_t(spec_.in(2)) * spec_.out(2) * size_t(fast::kAccLanes);
    f.D = s.delta.p;
    f.fresh = fresh;
  }
  const int done = k_->forward_first(f);
  tail = done == 3 && f.D;
  if (done >= 2) {
    a = out2;
    if (done == 3) {
      t.outs[2] = out2;
      t.ins[2] = t.outs[1];
      t.ldins[2] = size_t(T);
      a += size_t(spec_.out(2)) * T;
    }
  }
  return done;
}


// Output delta and loss, then backward: the gradients of layer l from D and its input (into
// the chunk's lane accumulators), then D for layer l-1. After the forward's tail (a net of
// three layers), from layer 1 with its delta in the first buffer.
void CpuFastBackend::backward_tile(Scratch& s, const TileLayers& t, float two_over_count, bool fresh, bool tail) {
  const int L = spec_.layers(), T = t.T;
  const float* P = cur_.w;
  float* D = s.delta.p;
  float* Dn = s.delta.p + size_t(spec_.max_width()) * T;
  if (!tail)
    k_->output_delta(t.outs[L - 1], t.Y, t.ldy, data_.outputs, t.tcount, T, two_over_count,
                     int(spec_.activation(L - 1)), D, s.grad.p + loss_off_);
  for (int l = tail ? 1 : L - 1; l >= 0; --l) {
    const int in = spec_.in(l), out = spec_.out(l);
    const float* W = P + w_off_[size_t(l)];
    float* gW = s.grad.p + acc_off_[size_t(l)];
    if (!blas_[size_t(l)] && l > 0) {
      // Weight gradient and D for layer l-1 in one kernel call (fused for narrow layers).
      float* gb = gW + size_t(in) * out * size_t(fast::kAccLanes);
      if (l == 1 && !blas_[0]) {
        // With the first layer's gradient too (fused when it has <= 2 inputs): done.
        float* gW0 = s.grad.p + acc_off_[0];
        float* gb0 = gW0 + size_t(spec_.in(0)) * spec_.out(0) * size_t(fast::kAccLanes);
        k_->grad_backprop_first({W, D, t.ins[1], in, out, T, int(spec_.activation(0)), gW, gb, Dn, t.ins[0],
                                 t.ldins[0], spec_.in(0), gW0, gb0, fresh});
        break;
      }
      k_->grad_backprop(W, D, t.ins[l], in, out, T, int(spec_.activation(l - 1)), gW, gb, Dn, fresh);
      std::swap(D, Dn);
      continue;
    }
    if (blas_[size_t(l)]) {
      blas_grad(D, t.ins[l], t.ldins[l], in, out, T, gW);
      k_->bias_grad(D, out, T, gW + size_t(in) * out, fresh);
    } else {
      k_->grad_lanes(D, t.ins[l], t.ldins[l], in, out, T, gW, gW + size_t(in) * out * size_t(fast::kAccLanes), fresh);
    }
    if (l > 0) {
      const int act_prev = int(spec_.activation(l - 1));
      if (blas_[size_t(l)]) {
        blas_backprop(W, D, in, out, T, Dn);
        k_->scale_by_derivative(Dn, t.outs[l - 1], in, T, act_prev);
      } else {
        k_->backprop(W, D, in, out, T, t.outs[l - 1], act_prev, Dn);
      }
      std::swap(D, Dn);
    }
  }
}


// Lanes -> chunk c's slot: the gradient in the flat parameter layout, then the loss.
void CpuFastBackend::chunk_to_slot(Scratch& s, int c) {
  float* slot = slots_.p + size_t(c) * slot_stride_;
  for (const LaneRun& r : runs_) {
    if (r.blas)
      std::memcpy(slot + r.slot, s.grad.p + r.acc, r.n * sizeof(float));
    else
      k_->lane_reduce(s.grad.p + r.acc, r.n, slot + r.slot);
  }
}


// The tile's samples of batch b, feature-major, zero beyond tcount: shuffled positions
// from the vectorised permutation kernel, their rows gathered from the feature-major data
// (vector gathers: the scalar copy from the sample-major data was ~10 % of a shuffled step
// at batch 1024), or an unshuffled run of positions copied row by row.
// Into x (inputs, then targets, rows T apart), with `rows` for the shuffled positions.
void CpuFastBackend::gather(uint32_t* rows, float* x, int b, const ShuffleKey& key, int s0, int tcount, int T) {
  const uint32_t pos0 = uint32_t(b) * uint32_t(plan_.batch) + uint32_t(s0);
  if (plan_.shuffle) {
    const fast::ShuffleArgs args{key.n, key.half_bits, {key.k[0], key.k[1], key.k[2], key.k[3]}};
    k_->shuffle_rows(args, pos0, tcount, rows);
    if (uint64_t(data_.n) * rec_stride_ < (uint64_t(1) << 31)) {
      k_->gather_rows(rec_.p, rec_stride_, data_.inputs + data_.outputs, rows, tcount, T, x);
    } else {  // too many records for 32-bit vector indices
      for (int f = 0; f < data_.inputs + data_.outputs; ++f) {
        float* dst = x + size_t(f) * T;
        for (int j = 0; j < tcount; ++j) dst[j] = rec_.p[size_t(rows[j]) * rec_stride_ + size_t(f)];
        std::fill(dst + tcount, dst + T, 0.0f);
      }
    }
    return;
  }
  auto copy = [&](const float* src, int n, float* dst) {
    for (int f = 0; f < n; ++f, src += ld_, dst += T) {
      std::memcpy(dst, src + pos0, size_t(tcount) * sizeof(float));
      std::fill(dst + tcount, dst + T, 0.0f);
    }
  };
  copy(xs_.p, data_.inputs, x);
  copy(ys_.p, data_.outputs, x + size_t(data_.inputs) * T);
}

// Z (out × T) = b 1^T + W (out × in) A (in × T)
void CpuFastBackend::blas_forward(const float* W, const float* b, int in, int out, const float* A, size_t lda, float* Z,
                                  int T) const {
  for (int o = 0; o < out; ++o) std::fill(Z + size_t(o) * T, Z + size_t(o + 1) * T, b[o]);
  blas_lib_->sgemm(kRowMajor, kNoTrans, kNoTrans, out, T, in, 1.0f, W, in, A, int(lda), 1.0f, Z, T);
}

// gW (out × in) += D (out × T) A^T (T × in)
void CpuFastBackend::blas_grad(const float* D, const float* A, size_t lda, int in, int out, int T, float* gW) const {
  blas_lib_->sgemm(kRowMajor, kNoTrans, kTrans, out, in, T, 1.0f, D, T, A, int(lda), 1.0f, gW, in);
}

// Dn (in × T) = W^T (in × out) D (out × T)
void CpuFastBackend::blas_backprop(const float* W, const float* D, int in, int out, int T, float* Dn) const {
  blas_lib_->sgemm(kRowMajor, kTrans, kNoTrans, in, T, out, 1.0f, W, in, D, T, 0.0f, Dn, T);
}

}  // namespace nntrain::fast
