// blas_loader.cpp — see blas_loader.hpp.
#include "blas_loader.hpp"

#include <cstdlib>
#include <mutex>

#if NNTRAIN_HAVE_OPENBLAS
#include <dlfcn.h>
#endif

namespace nntrain {

namespace {
struct Loaded {
  Blas blas;
  bool ok = false;
  std::string why = "this binary was built without OpenBLAS";
};

Loaded load() {
  Loaded l;
#if NNTRAIN_HAVE_OPENBLAS
  // One thread inside OpenBLAS: the fast backend's pool owns the cores, and a
  // single-threaded sgemm sums in an order that depends only on the shapes.
  ::setenv("OPENBLAS_NUM_THREADS", "1", /*overwrite=*/0);
  const char* candidates[] = {"libopenblas.so.0", "libopenblas.so", NNTRAIN_OPENBLAS_PATH};
  void* h = nullptr;
  std::string errors;
  const char* used = nullptr;
  for (const char* name : candidates) {
    h = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h) {
      used = name;
      break;
    }
    const char* e = ::dlerror();
    errors += std::string(errors.empty() ? "" : "; ") + (e ? e : name);
  }
  if (!h) {
    l.why = "OpenBLAS could not be loaded: " + errors;
    return l;
  }
  l.blas.sgemm = reinterpret_cast<decltype(l.blas.sgemm)>(::dlsym(h, "cblas_sgemm"));
  auto set_threads = reinterpret_cast<void (*)(int)>(::dlsym(h, "openblas_set_num_threads"));
  auto config = reinterpret_cast<char* (*)()>(::dlsym(h, "openblas_get_config"));
  if (!l.blas.sgemm) {
    l.why = std::string(used) + " has no cblas_sgemm";
    return l;
  }
  if (set_threads) set_threads(1);  // also when the user's OPENBLAS_NUM_THREADS said more
  l.blas.description = std::string(config ? config() : "OpenBLAS") + " (" + used + ")";
  l.ok = true;
#endif
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}
}  // namespace

const Blas* load_openblas() { return loaded().ok ? &loaded().blas : nullptr; }
std::string blas_unavailable_reason() { return loaded().ok ? std::string() : loaded().why; }

}  // namespace nntrain
