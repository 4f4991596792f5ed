// surface.cpp — see surface.hpp.
#include "surface.hpp"

#include <fmt/format.h>

#include "dataset.hpp"
#include "errors.hpp"
#include "memcheck.hpp"
#include "reference_math.hpp"

namespace nntrain {

void check_surface_request(const Config& cfg, int n) {
  if (n < 2 || n > kMaxSurfaceSide)
    throw UsageError(fmt::format("--write-surface {}: expected a grid side from 2 to {}", n, kMaxSurfaceSide));
  if (!cfg.data.csv.empty() || cfg.data.generator != "peaks")
    throw UsageError("--write-surface needs the peaks generator (config /data/generator); this config reads " +
                     (cfg.data.csv.empty() ? cfg.data.generator : cfg.data.csv));
  if (cfg.model.layers.front() != 2 || cfg.model.layers.back() != 1)
    throw UsageError("--write-surface needs a model with 2 inputs and 1 output (config /model/layers)");
  // Built after training: refuse now, not after the training time is spent.
  check_fits_in_memory(surface_bytes(n), fmt::format("--write-surface {} ({} points)", n, double(n) * n));
}

double surface_bytes(int n) {
  // Per point: the grid's x1, x2, y and the prediction (4 floats), and the CSV text (four
  // %.9g numbers, at most 16 characters each with the separator) counted twice, for the
  // string's growth while it is built.
  return double(n) * double(n) * (4 * 4.0 + 2 * 64.0);
}

std::string surface_csv(const Config& cfg, const Params& p, int n) {
  check_surface_request(cfg, n);
  const Dataset grid = make_peaks(n, n, cfg.data.range_lo, cfg.data.range_hi);
  std::vector<float> pred(size_t(grid.n));
  reference_forward(p, grid.x.data(), grid.n, pred.data());
  std::string s = "x1,x2,y_true,y_pred\n";
  s.reserve(s.size() + size_t(grid.n) * 48);
  for (int i = 0; i < grid.n; ++i)
    s += fmt::format("{:.9g},{:.9g},{:.9g},{:.9g}\n", grid.x[2 * size_t(i)], grid.x[2 * size_t(i) + 1],
                     grid.y[size_t(i)], pred[size_t(i)]);
  return s;
}

}  // namespace nntrain
