// cmd_info.cpp — `nntrain info`: the CPU, the GPU and what this binary was built with.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "cpu_fast.hpp"
#include "errors.hpp"
#include "gpu_backend.hpp"
#include "report.hpp"
#include "sysinfo.hpp"

namespace nntrain {

int cmd_info() {
  const BuildInfo& b = build_info();
  fmt::print("nntrain {} ({})\n", b.version, b.git_revision);
  fmt::print("build      {} ({}), {}\n", b.build_type, b.optimized ? "optimised" : "NOT optimised", b.compiler);
  fmt::print("cuda       {}\n", b.cuda);
  fmt::print("blas       {}\n", b.blas);
  fmt::print("cpu        {}, {} hardware threads, SIMD: {}\n", cpu_model(), hardware_threads(), cpu_simd());
  fmt::print("cpu-fast   kernels {} (this CPU can run: {}), {}\n", fast_cpu_isas().front(),
             fmt::join(fast_cpu_isas(), ", "),
             fast_cpu_has_blas() ? fmt::format("OpenBLAS for layers >= {} wide", kFastBlasMinWidth)
                                 : std::string("no BLAS (built without OpenBLAS)"));
  const GpuInfo g = query_gpu();
  if (g.available) {
    fmt::print("gpu        {}, {:.1f} GiB, compute capability {}.{}, {} SMs{}\n", g.name,
               double(g.total_memory) / (1 << 30), g.cc_major, g.cc_minor, g.sm_count,
               g.simulated ? std::string(" — SIMULATED: ") + kSimulatedNote : std::string());
  } else {
    fmt::print("gpu        none: {}\n", g.reason);
  }
  if (g.built_with_cuda) {
    fmt::print("driver     CUDA {}\n", cuda_version_string(g.driver_version));
    fmt::print("runtime    CUDA {}\n", cuda_version_string(g.runtime_version));
    fmt::print("cublas     {}\n", cublas_version_string(g.cublas_version));
    fmt::print("archs      {}\n", g.compiled_archs);
  }
  return kExitOk;
}

}  // namespace nntrain
