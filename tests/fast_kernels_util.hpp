// fast_kernels_util.hpp — test helper: the fast CPU backend's kernel table for an ISA name
// as fast_cpu_isas() lists it ("avx512", "avx2", "generic").
#pragma once

#include <string>

#include "cpu_fast_kernels.hpp"

namespace testutil {

inline const nntrain::fast::Kernels& kernels_for(const std::string& isa) {
#if defined(__x86_64__)
  if (isa == "avx512") return nntrain::fast::kernels_avx512();
  if (isa == "avx2") return nntrain::fast::kernels_avx2();
#endif
  return nntrain::fast::kernels_generic();
}

}  // namespace testutil
