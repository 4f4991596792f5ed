// memcheck.cpp — see memcheck.hpp.
#include "memcheck.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "errors.hpp"

namespace nntrain {

namespace {

// A cgroup limit file holds a byte count or "max"; anything unreadable means "no limit".
double cgroup_limit(const char* path) {
  std::ifstream in(path);
  std::string s;
  if (!(in >> s) || s == "max") return 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  // cgroup v1 reports "no limit" as a huge page-rounded number; treat anything above 2^60 so.
  return end && *end == '\0' && v > 0 && v < 1.15e18 ? v : 0;
}

std::string gib(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g GiB", bytes / double(1ull << 30));
  return buf;
}

}  // namespace

double memory_limit_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  double mem = pages > 0 && page > 0 ? double(pages) * double(page) : 0.0;
  for (const char* f : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    const double lim = cgroup_limit(f);
    if (lim > 0) mem = mem > 0 ? std::min(mem, lim) : lim;
  }
  // An address-space limit (ulimit -v, prlimit --as; some batch systems set one) caps what
  // this process can allocate, whatever the machine has.
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    const double lim = double(rl.rlim_cur);
    mem = mem > 0 ? std::min(mem, lim) : lim;
  }
  return mem;
}

void check_fits_in_memory(double bytes, const std::string& what) {
  const double mem = memory_limit_bytes();
  if (mem > 0 && bytes > 0.5 * mem)
    throw UsageError(what + " would need " + gib(bytes) + " of memory; this machine allows " + gib(mem) +
                     " (nntrain refuses more than half of it)");
}

double training_bytes(const ModelSpec& spec, double batch_samples, double epochs) {
  double params = 0, width_sum = 0;
  for (int l = 0; l < spec.layers(); ++l) params += double(spec.in(l)) * spec.out(l) + spec.out(l);
  for (int w : spec.widths) width_sum += w;
  // floats: initial, backend live copy, final copy, gradient, 2 Adam moments, a spare copy
  // for warm-up restore; doubles: the reference backend's gradient sums.
  const double param_bytes = params * (7 * 4.0 + 8.0);
  // activations and deltas of one batch (fast and GPU backends keep the whole batch)
  const double act_bytes = batch_samples * width_sum * 4.0 * 2.0;
  // the curve, its copy in the result, and ~24 bytes a row of metrics.csv text
  const double curve_bytes = epochs * (4.0 * 2.0 + 24.0);
  return param_bytes + act_bytes + curve_bytes;
}

}  // namespace nntrain
