// gpu_main.cpp — main of the [gpu] test executable. Without a usable CUDA device it prints
// "skipped: no CUDA device: <reason>" and returns 77, which CTest (SKIP_RETURN_CODE 77)
// reports as skipped, never as passed. Listing the tests (CTest's discovery) needs no GPU.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>

#include "gpu_backend.hpp"

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--list", 6) == 0) listing = true;
  if (!listing) {
    const nntrain::GpuInfo g = nntrain::query_gpu();
    if (!g.available) {
      std::printf("skipped: no CUDA device: %s\n", g.reason.c_str());
      return 77;
    }
    std::printf("GPU: %s (cc %d.%d, %d SMs)\n", g.name.c_str(), g.cc_major, g.cc_minor, g.sm_count);
  }
  return Catch::Session().run(argc, argv);
}
