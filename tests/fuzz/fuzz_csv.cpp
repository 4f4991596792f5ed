// fuzz_csv.cpp — libFuzzer target: CSV text → Dataset (columns x1, x2 → y, as data/sine2d.csv).
//
// Invariants: bad input only ever throws UsageError; an accepted data set has at least one
// row, exactly n × inputs and n × outputs values, and every value is a finite float.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "dataset.hpp"
#include "errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nntrain;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const Dataset d = parse_csv(text, "fuzz.csv", {"x1", "x2"}, {"y"});
    if (d.n < 1 || d.inputs != 2 || d.outputs != 1) std::abort();
    if (d.x.size() != size_t(d.n) * 2 || d.y.size() != size_t(d.n)) std::abort();
    for (float v : d.x)
      if (!std::isfinite(v)) std::abort();
    for (float v : d.y)
      if (!std::isfinite(v)) std::abort();
  } catch (const UsageError&) {
  }
  return 0;
}
