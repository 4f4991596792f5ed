// cmd_info.cpp — `nntrain info`: the CPU, the GPU and what this binary was built with.
#include <fmt/format.h>

#include "backend_registry.hpp"
#include "commands.hpp"
#include "errors.hpp"
#include "sysinfo.hpp"

namespace nntrain {

int cmd_info() {
  const BuildInfo& b = build_info();
  fmt::print("nntrain {} ({})\n", b.version, b.git_revision);
  fmt::print("build      {} ({}), {}\n", b.build_type, b.optimized ? "optimised" : "NOT optimised", b.compiler);
  fmt::print("cuda       {}\n", b.cuda);
  fmt::print("blas       {}\n", b.blas);
  fmt::print("cpu        {}, {} hardware threads, SIMD: {}\n", cpu_model(), hardware_threads(), cpu_simd());
  // The devices as the registry's probes describe them (cpu-fast, gpu, the CUDA versions).
  for (const auto& [label, text] : backend_info_lines(backend_registry())) fmt::print("{:<10} {}\n", label, text);
  return kExitOk;
}

}  // namespace nntrain
