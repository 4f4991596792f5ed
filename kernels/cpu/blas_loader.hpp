// blas_loader.hpp — OpenBLAS for the fast CPU backend, loaded on first use with dlopen.
//
// Why not link it: Debian's libopenblas0-pthread starts its own worker threads when the
// library is loaded (before main), and on this kind of machine they spin in sched_yield for
// the whole run, taking CPU from the fast backend's own pool. Loading it only when a layer
// needs BLAS, after setting OPENBLAS_NUM_THREADS=1 (unless the user set it), means it never
// starts them; a binary without OpenBLAS at run time falls back to the SIMD kernels.
#pragma once

#include <string>

namespace nntrain {

struct Blas {
  // cblas_sgemm with CBLAS's enum values (RowMajor = 101, NoTrans = 111, Trans = 112).
  void (*sgemm)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                const float* b, int ldb, float beta, float* c, int ldc) = nullptr;
  std::string description;  // e.g. "OpenBLAS 0.3.21 ... (libopenblas.so.0)"
};

// The loaded library, or nullptr (then `blas_unavailable_reason()` says why). Thread-safe;
// loads at most once per process.
const Blas* load_openblas();
std::string blas_unavailable_reason();

}  // namespace nntrain
