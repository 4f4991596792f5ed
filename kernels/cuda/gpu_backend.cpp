// gpu_backend.cpp — the GPU Backend: data kept on the device, a cuBLAS path for any network
// and a fused path for small ones, steps captured in CUDA graphs and replayed, per-epoch
// losses kept on the device and copied back once per chunk.
//
// Host C++ (not .cu): it implements core's Backend interface and calls the launchers of
// mlp_kernels.hpp / fused_v2.hpp / resident.hpp and cuBLAS.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend.hpp"
#include "cuda_raii.hpp"
#include "errors.hpp"
#include "fused_v2.hpp"
#include "gpu_backend.hpp"
#include "gpu_backend_util.hpp"
#include "mlp_kernels.hpp"
#include "optimizer.hpp"
#include "resident.hpp"
#include "resident_stamps.hpp"
#include "train_state.hpp"

namespace nntrain {

namespace {

using namespace nntrain::cuda;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A graph holds whole epochs (batch indices baked in; the rest from TrainState). Epochs of
// more than kMaxGraphSteps steps (gpu_backend.hpp) launch without one, a launch per kernel.
constexpr size_t kCublasWorkspaceBytes = size_t(32) << 20;

FusedV2Plan plan_fused_v2_for(const ModelSpec& spec) {
  int cc_major = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, 0));
  const bool pdl = pdl_from_env();  // (a bad value is refused on every device)
  FusedV2Plan p = plan_fused_v2(spec.widths, activations_of(spec), fused_v2_smem_limit(shared_optin()),
                                exact_threads_from_env());
  p.pdl = p.fits && cc_major >= 9 && pdl;
  if (p.pdl) p.why += "; steps overlap (programmatic dependent launch)";
  return p;
}

class GpuBackend final : public Backend {
 public:
  GpuBackend(const Dataset& data, const BackendOptions& opt, const GpuInfo& info, int max_graph_steps)
      : opt_(opt), spec_(opt.spec), plan_(make_batch_plan(data.n, opt.batch_size, opt.shuffle)),
        hyper_(adam_hyper(opt.optimizer)), sgd_(opt.optimizer.type == "sgd"), info_(info),
        max_graph_steps_(max_graph_steps) {
    if (data.inputs != spec_.widths.front() || data.outputs != spec_.widths.back())
      throw UsageError("the data has " + std::to_string(data.inputs) + " inputs and " + std::to_string(data.outputs) +
                       " outputs but the model takes " + std::to_string(spec_.widths.front()) + " and gives " +
                       std::to_string(spec_.widths.back()));
    auto t = Clock::now();
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaFree(nullptr));  // creates the primary context
    setup_.context_seconds = seconds_since(t);

    t = Clock::now();
    stream_ = std::make_unique<Stream>();
    start_ = std::make_unique<Event>();
    stop_ = std::make_unique<Event>();
    choose_path();
    if (!opt_.evaluation) stamps_path_ = resident_stamps_for(res_ ? &res_plan_ : nullptr, name() + ": " + path_why_);
    if (!fused()) {
      cublas_ = std::make_unique<CublasHandle>();
      CUBLAS_CHECK(cublasSetStream(cublas_->get(), stream_->get()));
      CUBLAS_CHECK(cublasSetPointerMode(cublas_->get(), CUBLAS_POINTER_MODE_HOST));
      // Plain fp32 (no TF32 tensor-op shortcut), and no atomics in any reduction.
      CUBLAS_CHECK(cublasSetMathMode(cublas_->get(), CUBLAS_DEFAULT_MATH));
      CUBLAS_CHECK(cublasSetAtomicsMode(cublas_->get(), CUBLAS_ATOMICS_NOT_ALLOWED));
    }
    setup_.handle_seconds = seconds_since(t);

    t = Clock::now();
    load_elementwise_kernels();
    if (res_) {
      const int regs = prepare_resident(res_plan_);  // the grid's block count too
      path_why_ += resident_launch_note(res_plan_) + "; " + std::to_string(regs) + " registers per thread";
    }
    else if (v2_) path_why_ += "; " + std::to_string(prepare_fused_v2(v2_plan_)) + " registers per thread";
    setup_.module_seconds = seconds_since(t);

    t = Clock::now();
    allocate(data);
    CUDA_CHECK(cudaDeviceSynchronize());
    setup_.alloc_seconds = seconds_since(t);

    t = Clock::now();
    x_.upload(data.x, stream_->get());
    y_.upload(data.y, stream_->get());
    stream_->synchronize();
    setup_.transfer_seconds = seconds_since(t);

    // One eager step on zero weights loads cuBLAS's kernels too (lazily loaded modules), so
    // neither graph capture nor the timed epochs pay for it; load() then resets everything.
    t = Clock::now();
    w_.zero(stream_->get());
    m_.zero(stream_->get());
    v_.zero(stream_->get());
    launch_reset_state(state_.get(), stream_->get());
    ensure_table_capacity(1);
    stage_resident_table(1);
    enqueue_epochs(1);
    stamps_.zero(stream_->get());  // the stamps count every step after this one
    stream_->synchronize();
    setup_.module_seconds += seconds_since(t);
  }

  ~GpuBackend() override {
    // Graphs and buffers free themselves; make sure nothing still runs on them.
    if (stream_) cudaStreamSynchronize(stream_->get());
  }

  Device device() const override { return Device::gpu; }
  bool simulated() const override { return info_.simulated; }
  std::string name() const override {
    return res_ ? "gpu-resident" : v2_ ? "gpu-fused" : "gpu-cublas";
  }
  std::string details() const override {
    std::string s = info_.name + " (cc " + std::to_string(info_.cc_major) + "." + std::to_string(info_.cc_minor) +
                    "), fp32; path " + (res_ ? "resident" : v2_ ? "fused" : "cublas") + ": " + path_why_;
    s += res_ ? "; one launch per chunk of epochs"
         : uses_graphs() ? "; epochs replayed from CUDA graphs"
                                             : "; " + std::to_string(steps_per_epoch()) +
                                                   " steps per epoch, launched without a graph";
    if (!graph_kernels_.empty()) s += "; " + graph_kernels_;
    if (wall_seconds_ > 0)
      s += "; timed from launch to losses on the host, the device busy " +
           std::to_string(std::lround(100.0 * device_seconds_ / wall_seconds_)) + " % of it (CUDA events)";
    if (res_plan_.stamps) s += "; STAMPED (NNTRAIN_RESIDENT_STAMPS): not the timed kernel";
    return s;
  }

  void load(const Params& p) override {
    if (p.values.size() != spec_.param_count())
      throw UsageError("GPU backend: initial parameters have the wrong size");
    cudaStream_t s = stream_->get();
    w_.upload(p.values, s);
    m_.zero(s);
    v_.zero(s);
    tickets_.zero(s);
    launch_reset_state(state_.get(), s);
    wall_seconds_ = device_seconds_ = 0;  // the busy share is of the chunks since (a repeat's)
    adam_ = adam_initial_step();
    stream_->synchronize();
  }

  Params params() override {
    Params p{spec_, std::vector<float>(spec_.param_count())};
    w_.download(p.values.data(), p.values.size(), stream_->get());
    stream_->synchronize();
    return p;
  }

  double train(int epochs, float* losses) override {
    if (epochs <= 0) return 0.0;
    ensure_loss_capacity(epochs);
    ensure_table_capacity(epochs);
    cudaStream_t s = stream_->get();
    // Work out (and capture, if new) the graphs before the clock starts.
    const bool graphs = uses_graphs();
    int per_graph = 0, full = 0, rest = 0;
    if (graphs) {
      per_graph = std::max(1, std::min(epochs, max_graph_steps_ / steps_per_epoch()));
      full = epochs / per_graph;
      rest = epochs % per_graph;
      graph_for(per_graph);
      if (rest) graph_for(rest);
    }
    // Timed as the CPU's train() is, on the host's clock to the losses on the host: the work
    // around the kernels (the step table, the loss copy, the synchronisation) is training's
    // too. The events' span (the device alone) goes to details().
    const Clock::time_point t0 = Clock::now();
    launch_reset_slot(state_.get(), s);
    stage_resident_table(epochs);

    start_->record(s);
    if (graphs) {
      for (int k = 0; k < full; ++k) graphs_.at(per_graph).launch(s);
      if (rest) graphs_.at(rest).launch(s);
    } else {
      enqueue_epochs(epochs);
    }
    stop_->record(s);
    loss_dev_.download(losses, size_t(epochs), s);
    stream_->synchronize();
    const double seconds = seconds_since(t0);
    wall_seconds_ += seconds;
    device_seconds_ += double(stop_->ms_since(*start_)) / 1000.0;
    // Outside the clock (the run's times are the stamped kernel's anyway).
    if (res_plan_.stamps) write_resident_stamps(stamps_path_, stamps_, s);
    return seconds;
  }

  SetupReport setup() const override { return setup_; }

  // A fused path (v2 or resident): no cuBLAS handle, no gathered batch.
  bool fused() const { return v2_ || res_; }

 private:
  int steps_per_epoch() const { return plan_.batches; }
  bool uses_graphs() const { return !res_ && steps_per_epoch() <= max_graph_steps_; }

  // fused = v2 (one kernel per step); auto takes the resident path where it measured faster
  // (resident_preferred), else v2 in its 64-sample tile, else cuBLAS. A path's test-only knobs
  // are read only where that path is planned: a bad value fails only the paths it changes.
  void choose_path() {
    const GpuPath want = opt_.gpu_path;
    if (want == GpuPath::cublas) {
      path_why_ = "requested";
      return;
    }
    if (want == GpuPath::resident || want == GpuPath::automatic)
      res_plan_ = plan_resident_for(spec_, plan_.batch, opt_.chunk_epochs, steps_per_epoch(),
                                    /*knobs=*/want == GpuPath::resident);
    if (want == GpuPath::resident || (want == GpuPath::automatic && resident_preferred(res_plan_, steps_per_epoch()))) {
      if (!res_plan_.fits) throw UsageError("gpu.path resident: this problem does not fit: " + res_plan_.why);
      res_ = true;
      path_why_ = (want == GpuPath::resident ? "requested; " : "auto, faster than v2 here on an H200; ") + res_plan_.why;
      return;
    }
    v2_plan_ = plan_fused_v2_for(spec_);
    if (want == GpuPath::fused && !v2_plan_.fits)
      throw UsageError("gpu.path fused: this network does not fit the fused kernel: " + v2_plan_.why);
    // H200, 2026-11-30: the nets v2 runs in its 32 tile (2-64x5-1, 2-64x7-1) took 4.8-22x
    // cuBLAS's time at 400-40,000 samples.
    const bool small_tile = v2_plan_.fits && v2_plan_.tile < kV2Tile;
    v2_ = v2_plan_.fits && (want == GpuPath::fused || !small_tile);
    path_why_ = want == GpuPath::fused ? "requested; " + v2_plan_.why
                : v2_                  ? "auto, the net is small (" + v2_plan_.why + ")"
                : small_tile ? "auto, the fused kernel's small tile is slower than cuBLAS (" + v2_plan_.why + ")"
                             : "auto, too large for the fused kernel (" + v2_plan_.why + ")";
  }

  void allocate(const Dataset& data) {
    const int L = spec_.layers();
    const size_t P = spec_.param_count();
    const int B = plan_.batch;
    x_ = DeviceBuffer<float>(data.x.size());
    y_ = DeviceBuffer<float>(data.y.size());
    w_ = DeviceBuffer<float>(P);
    m_ = DeviceBuffer<float>(P);
    v_ = DeviceBuffer<float>(P);
    g_ = DeviceBuffer<float>(P);
    state_ = DeviceBuffer<TrainState>(1);
    loss_dev_ = DeviceBuffer<float>(size_t(std::max(1, opt_.chunk_epochs)));
    if (plan_.batches > 1 && !fused()) {
      xb_ = DeviceBuffer<float>(size_t(B) * spec_.widths.front());
      yb_ = DeviceBuffer<float>(size_t(B) * spec_.widths.back());
    }
    if (v2_) {
      const int tile = v2_plan_.tile;
      const size_t blocks = size_t(fused_v2_blocks(B, tile)), groups = size_t(fused_v2_groups(B, tile));
      grad_partial_ = DeviceBuffer<float>(P * blocks);
      loss_partial_ = DeviceBuffer<double>(blocks);
      group_grad_ = DeviceBuffer<float>(P * groups);
      group_loss_ = DeviceBuffer<double>(groups);
      tickets_ = DeviceBuffer<unsigned int>(1 + groups);
      tickets_.zero(stream_->get());
    } else if (res_ && res_plan_.grid) {  // the groups' gradients and losses (one block: none)
      grad_partial_ = DeviceBuffer<float>(P * size_t(res_plan_.groups));
      loss_partial_ = DeviceBuffer<double>(size_t(res_plan_.groups));
      if (res_plan_.stamps) stamps_ = DeviceBuffer<unsigned long long>(size_t(res_plan_.blocks) * kStampFields);
    } else if (res_) {
      // one block: nothing per step, the block keeps everything else in shared memory
    } else {
      act_.resize(size_t(L) + 1);
      delta_.resize(size_t(L) + 1);
      for (int l = 1; l <= L; ++l) {
        act_[size_t(l)] = DeviceBuffer<float>(size_t(B) * spec_.widths[size_t(l)]);
        delta_[size_t(l)] = DeviceBuffer<float>(size_t(B) * spec_.widths[size_t(l)]);
      }
      loss_partial_ = DeviceBuffer<double>(size_t(kMaxLossBlocks));
      bias_partial_ = DeviceBuffer<float>(size_t(kMaxBiasChunks) * size_t(spec_.max_width()));
      workspace_ = DeviceBuffer<unsigned char>(kCublasWorkspaceBytes);
      // An explicit workspace: cuBLAS then allocates nothing during graph capture.
      CUBLAS_CHECK(cublasSetWorkspace(cublas_->get(), workspace_.get(), workspace_.bytes()));
    }
  }

  // The loss array's pointer is baked into every captured graph: growing it drops them.
  void ensure_loss_capacity(int epochs) {
    if (size_t(epochs) <= loss_dev_.size()) return;
    stream_->synchronize();
    graphs_.clear();
    loss_dev_ = DeviceBuffer<float>(size_t(epochs));
  }

  Graph& graph_for(int epochs) {
    auto it = graphs_.find(epochs);
    if (it != graphs_.end()) return it->second;
    cudaStream_t s = stream_->get();
    Graph g;
    Graph::begin_capture(s);
    const long launches_before = fused_launches_;
    try {
      enqueue_epochs(epochs);
    } catch (...) {
      Graph::abandon_capture(s);
      throw;
    }
    g.end_capture(s);
    CUDA_CHECK(cudaGraphUpload(g.exec(), s));
    stream_->synchronize();  // the upload is stream-ordered: done before train()'s clock starts
    note_graph_kernels(g, epochs, fused_launches_ - launches_before);
    return graphs_.emplace(epochs, std::move(g)).first->second;
  }

  StepDesc step_desc(int b) const {
    StepDesc d;
    d.batch_index = b;
    d.batches = plan_.batches;
    d.batch_offset = b * plan_.batch;
    d.count = plan_.size(b);
    d.n = uint32_t(plan_.n);
    d.shuffle = plan_.shuffle ? 1 : 0;
    d.seed = opt_.seed;
    return d;
  }

  // Growing the resident path's step table (a cudaMalloc, and a cudaFree that waits for the
  // device) happens before the clock starts; filling and uploading it is the chunk's work.
  void ensure_table_capacity(int epochs) {
    const size_t steps = size_t(epochs) * size_t(steps_per_epoch());
    if (!res_ || table_.size() >= steps) return;
    if (steps > size_t(std::numeric_limits<int>::max()))  // choose_path refused such chunks
      throw std::logic_error("resident path: a chunk of " + std::to_string(steps) + " steps");
    stream_->synchronize();
    table_ = DeviceBuffer<AdamStep>(steps);
    table_host_.reserve(steps);
  }

  // The resident path's Adam scalars for the next `epochs` epochs, in double on the host.
  void stage_resident_table(int epochs) {
    if (!res_) return;
    table_host_.resize(size_t(epochs) * size_t(steps_per_epoch()));
    for (AdamStep& a : table_host_) a = adam_ = adam_next_step(adam_, hyper_);
    table_.upload(table_host_, stream_->get());
  }

  void enqueue_epochs(int epochs) {
    if (res_) {
      const ResidentChunk c{epochs, plan_.batches, plan_.size(plan_.batches - 1), uint32_t(plan_.n),
                            plan_.shuffle ? 1 : 0, opt_.seed};
      ++fused_launches_;
      return launch_resident(res_plan_, x_.get(), y_.get(), w_.get(), m_.get(), v_.get(), state_.get(), table_.get(), c,
                             hyper_, sgd_, loss_dev_.get(), grad_partial_.get(), loss_partial_.get(), stream_->get(),
                             stamps_.get());
    }
    for (int e = 0; e < epochs; ++e)
      for (int b = 0; b < plan_.batches; ++b) {
        if (v2_) enqueue_fused_v2_step(step_desc(b));
        else enqueue_cublas_step(step_desc(b));
      }
  }

  // Kernel launches per optimiser step in a graph of `epochs` epochs (details(), the [gpu]
  // tests): the driver's count, else (GPGPU-Sim) `launched`, counted while capturing.
  void note_graph_kernels(const Graph& g, int epochs, long launched) {
    const long steps = long(epochs) * steps_per_epoch();
    long kernels = count_kernel_nodes(g.graph());
    std::string how = "cuGraphGetNodes";
    if (kernels < 0 && fused()) {
      kernels = launched;
      how = "launches during capture";
    }
    if (kernels < 0) return;
    graph_kernels_ = std::to_string(kernels / steps) + (kernels == steps ? " kernel" : " kernels") +
                     " per step (graph of " + std::to_string(steps) + " steps: " + std::to_string(kernels) +
                     " kernel nodes, by " + how + ")";
  }

  void enqueue_fused_v2_step(const StepDesc& d) {
    const FusedV2Scratch sc{grad_partial_.get(), loss_partial_.get(), group_grad_.get(), group_loss_.get(),
                            tickets_.get()};
    ++fused_launches_;
    launch_fused_v2_step(v2_plan_, x_.get(), y_.get(), w_.get(), m_.get(), v_.get(), g_.get(), state_.get(), d,
                         hyper_, sgd_, loss_dev_.get(), sc, stream_->get());
  }

  // One step with cuBLAS. Activations are count × width row-major = cuBLAS's column-major
  // width × count; W_l (out × in row-major) is column-major in × out with lda = in.
  void enqueue_cublas_step(const StepDesc& d) {
    cudaStream_t s = stream_->get();
    cublasHandle_t h = cublas_->get();
    const int L = spec_.layers();
    const int n = d.count;
    const int n_in = spec_.widths.front(), n_out = spec_.widths.back();
    const float one = 1.0f, zero = 0.0f;
    const float* X = x_.get();
    const float* Y = y_.get();
    if (plan_.batches > 1) {
      launch_gather(x_.get(), y_.get(), n_in, n_out, state_.get(), d, xb_.get(), yb_.get(), s);
      X = xb_.get();
      Y = yb_.get();
    }
    auto act = [&](int l) -> const float* { return l == 0 ? X : act_[size_t(l)].get(); };
    // Forward: Z_l (out × n) = W_l (out × in) · A_l (in × n); A_{l+1} = f(Z_l + b_l).
    for (int l = 0; l < L; ++l) {
      const int in = spec_.in(l), out = spec_.out(l);
      CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, &one, w_.get() + spec_.weight_offset(l), in,
                               act(l), in, &zero, act_[size_t(l) + 1].get(), out));
      launch_bias_act(act_[size_t(l) + 1].get(), w_.get() + spec_.bias_offset(l), out, n, spec_.activation(l), s);
    }
    launch_mse_delta(act_[size_t(L)].get(), Y, n_out, n, spec_.activation(L - 1), delta_[size_t(L)].get(),
                     loss_partial_.get(), s);
    launch_loss_finalize(loss_partial_.get(), loss_blocks(size_t(n) * size_t(n_out)), n_out, d, hyper_, state_.get(),
                         loss_dev_.get(), s);
    // Backward: dW_l (in × out col-major) = A_l (in × n) · D_{l+1}^T; db_l = row sums of D_{l+1};
    // D_l (in × n) = W_l^T (in × out) · D_{l+1} (out × n), then times f'(A_l).
    for (int l = L - 1; l >= 0; --l) {
      const int in = spec_.in(l), out = spec_.out(l);
      CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, &one, act(l), in, delta_[size_t(l) + 1].get(),
                               out, &zero, g_.get() + spec_.weight_offset(l), in));
      launch_bias_grad(delta_[size_t(l) + 1].get(), out, n, bias_partial_.get(), g_.get() + spec_.bias_offset(l), s);
      if (l > 0) {
        CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, &one, w_.get() + spec_.weight_offset(l), in,
                                 delta_[size_t(l) + 1].get(), out, &zero, delta_[size_t(l)].get(), in));
        launch_act_backward(delta_[size_t(l)].get(), act_[size_t(l)].get(), in, n, spec_.activation(l - 1), s);
      }
    }
    launch_optimizer(w_.get(), m_.get(), v_.get(), g_.get(), spec_.param_count(), state_.get(), hyper_, sgd_, s);
  }

  BackendOptions opt_;
  ModelSpec spec_;
  BatchPlan plan_;
  AdamHyper hyper_;
  bool sgd_;
  GpuInfo info_;
  int max_graph_steps_;  // epochs with more steps are launched without a graph
  SetupReport setup_;
  bool v2_ = false;   // the one-kernel-per-step v2
  bool res_ = false;  // the resident path: one launch per chunk
  std::string path_why_, graph_kernels_;
  std::string stamps_path_;  // NNTRAIN_RESIDENT_STAMPS ("": off)
  double wall_seconds_ = 0, device_seconds_ = 0;  // train() calls since load(): host clock, events
  long fused_launches_ = 0;  // kernel launch calls of the fused paths, ever
  FusedV2Plan v2_plan_;
  ResidentPlan res_plan_;
  AdamStep adam_ = adam_initial_step();  // the resident path: the last step's scalars staged
  std::vector<AdamStep> table_host_;
  DeviceBuffer<AdamStep> table_;

  std::unique_ptr<Stream> stream_;
  std::unique_ptr<Event> start_, stop_;
  std::unique_ptr<CublasHandle> cublas_;
  DeviceBuffer<float> x_, y_, xb_, yb_;      // data (n × inputs, n × outputs), gathered batch
  DeviceBuffer<float> w_, m_, v_, g_;        // params, Adam moments, gradient (flat)
  DeviceBuffer<TrainState> state_;
  DeviceBuffer<float> loss_dev_;             // one loss per epoch of the current chunk
  std::vector<DeviceBuffer<float>> act_, delta_;  // cuBLAS path: per layer, batch × width
  DeviceBuffer<double> loss_partial_;
  DeviceBuffer<float> bias_partial_, grad_partial_, group_grad_;
  DeviceBuffer<double> group_loss_;
  DeviceBuffer<unsigned int> tickets_;       // v2: the last-block tickets, zero between steps
  DeviceBuffer<unsigned long long> stamps_;  // the stamped grid's [block][field] rows, summed
  DeviceBuffer<unsigned char> workspace_;
  std::map<int, Graph> graphs_;              // by epochs per graph
};

}  // namespace

std::string gpu_path_problem(const ModelSpec& spec, GpuPath gpu_path) {
  if (std::string why = resident_stamps_problem(spec.widths, activations_of(spec), gpu_path); !why.empty()) return why;
  if (gpu_path == GpuPath::resident) {  // the batch's limits are checked when the backend is made
    const ResidentPlan p = plan_resident(spec.widths, activations_of(spec), 1, size_t(1) << 30);
    return p.fits ? "" : "this network does not fit the resident kernel: " + p.why;
  }
  if (gpu_path != GpuPath::fused) return "";
  // The shape limits need no device; shared memory does, so it is checked only with one.
  if (const std::string why = fused_shape_problem(spec.widths); !why.empty())
    return "this network does not fit the fused kernel: " + why;
  if (!query_gpu().available) return "";
  const FusedV2Plan p = plan_fused_v2_for(spec);
  return p.fits ? "" : "this network does not fit the fused kernel: " + p.why;
}

std::unique_ptr<Backend> make_gpu_backend(const Dataset& data, const BackendOptions& opt) {
  return make_gpu_backend(data, opt, kMaxGraphSteps);
}

std::unique_ptr<Backend> make_gpu_backend(const Dataset& data, const BackendOptions& opt, int max_graph_steps) {
  const GpuInfo info = query_gpu();
  if (!info.available) throw DeviceUnavailable("no CUDA device: " + info.reason);
  return std::make_unique<GpuBackend>(data, opt, info, max_graph_steps);
}

}  // namespace nntrain
