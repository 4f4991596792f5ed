// cmd_predict.cpp — `nntrain predict`: a saved model.json on a CSV of inputs, written atomically.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "commands.hpp"
#include "dataset.hpp"
#include "errors.hpp"
#include "fileio.hpp"
#include "reference_math.hpp"

namespace nntrain {

int cmd_predict(const PredictArgs& a) {
  check_output_file(a.output, "--output");  // an unwritable output fails before reading anything
  const Params p = load_model(a.model);
  const int n_in = p.spec.widths.front();
  std::vector<std::string> cols = a.input_columns;
  if (cols.empty()) {
    // Default: the first N columns of the header.
    std::ifstream in(a.input);
    std::string header;
    if (!in || !std::getline(in, header)) (void)read_file(a.input, "input CSV");  // names the failure
    std::istringstream hs(header);
    std::string c;
    while (std::getline(hs, c, ',') && int(cols.size()) < n_in) {
      const size_t s = c.find_first_not_of(" \t\r"), e = c.find_last_not_of(" \t\r");
      cols.push_back(s == std::string::npos ? c : c.substr(s, e - s + 1));
    }
  }
  for (size_t i = 0; i < cols.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (cols[k] == cols[i])  // as train refuses it: the model's inputs are distinct features
        throw UsageError(a.input + ": input column \"" + cols[i] + "\" is named twice (inputs " + std::to_string(k + 1) +
                         " and " + std::to_string(i + 1) + ")");
  if (int(cols.size()) != n_in)
    throw UsageError(a.input + ": the model takes " + std::to_string(n_in) + " inputs but " +
                     std::to_string(cols.size()) + " input columns were found/given");
  const Dataset d = load_csv(a.input, cols, {});
  std::vector<float> out(size_t(d.n) * p.spec.widths.back());
  reference_forward(p, d.x.data(), d.n, out.data());
  std::string s;
  for (const auto& c : cols) s += c + ",";
  for (int o = 0; o < p.spec.widths.back(); ++o) s += fmt::format("prediction{}{}", o, o + 1 < p.spec.widths.back() ? "," : "\n");
  for (int i = 0; i < d.n; ++i) {
    for (int k = 0; k < n_in; ++k) s += fmt::format("{:.9g},", d.x[size_t(i) * n_in + k]);
    for (int o = 0; o < p.spec.widths.back(); ++o)
      s += fmt::format("{:.9g}{}", out[size_t(i) * p.spec.widths.back() + o], o + 1 < p.spec.widths.back() ? "," : "\n");
  }
  write_file_atomic(a.output, s);
  fmt::print(stderr, "nntrain: wrote {} predictions to {}\n", d.n, a.output);
  return kExitOk;
}

}  // namespace nntrain
