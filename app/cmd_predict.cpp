// cmd_predict.cpp — `nntrain predict`: a saved model.json on a CSV, its inputs found by the
// names the model records, every column of the CSV copied through, written atomically (or to
// stdout with --output -).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "commands.hpp"
#include "dataset.hpp"
#include "errors.hpp"
#include "fileio.hpp"
#include "reference_math.hpp"
#include "trainer.hpp"

namespace nntrain {

namespace {

// Names as a message shows them (a header may hold control bytes: shown() escapes them).
std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + shown(n);
  return s;
}

// The CSV's input columns, in the model's input order: --inputs if given; else the names
// model.json records, each of which the header must have; else (a model written before
// names were recorded) the first N columns, with a note saying so.
std::vector<std::string> input_columns(const PredictArgs& a, const ModelNames& names,
                                       const std::vector<std::string>& header, int n_in) {
  std::vector<std::string> cols = a.input_columns;
  if (cols.empty() && !names.inputs.empty()) {
    for (const auto& n : names.inputs)
      if (std::find(header.begin(), header.end(), n) == header.end())
        throw UsageError(a.input + ": no column \"" + shown(n) + "\" in the header, an input of " + a.model +
                         " (its inputs: " + joined(names.inputs) + "; the header: " + joined(header) +
                         "); name the columns to use with --inputs");
    cols = names.inputs;
  } else if (cols.empty()) {
    cols.assign(header.begin(), header.begin() + std::min<std::ptrdiff_t>(n_in, std::ptrdiff_t(header.size())));
    fmt::print(stderr, "nntrain: note: {} records no input names (an older model file); using the first {} columns "
                       "of {} by position: {}\n", a.model, cols.size(), a.input, joined(cols));
  }
  for (size_t i = 0; i < cols.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (cols[k] == cols[i])  // as train refuses it: the model's inputs are distinct features
        throw UsageError(a.input + ": input column \"" + shown(cols[i]) + "\" is named twice (inputs " +
                         std::to_string(k + 1) + " and " + std::to_string(i + 1) + ")");
  if (int(cols.size()) != n_in) {
    // "--inputs x1,x2" is one name with a comma in it (a CSV name may hold one).
    const auto comma = std::find_if(cols.begin(), cols.end(), [](const std::string& c) { return c.find(',') != c.npos; });
    throw UsageError(a.input + ": the model takes " + std::to_string(n_in) + " inputs but " +
                     std::to_string(cols.size()) + " input columns were found/given" +
                     (comma == cols.end() || a.input_columns.empty()
                          ? std::string()
                          : " (--inputs \"" + shown(*comma) + "\" is one column name; give each as its own argument: "
                                                        "--inputs NAME NAME ...)"));
  }
  return cols;
}

// The output: every line of the input as it was, its quoting and spacing kept (so an id
// column joins the results back), then one prediction column per model output.
std::string output_csv(const std::string& text, const std::string& input, const std::vector<std::string>& header,
                       const std::vector<float>& out, int n_out) {
  std::vector<std::string> pred_names;
  for (int o = 0; o < n_out; ++o) pred_names.push_back("prediction" + std::to_string(o));
  for (const auto& p : pred_names)
    if (std::find(header.begin(), header.end(), p) != header.end())
      throw UsageError(input + ": has a column \"" + p + "\" already, which the output adds; rename or drop it");
  // The lines as parse_csv counted them: blank lines skipped, the first the header.
  const bool bom = text.compare(0, 3, "\xEF\xBB\xBF") == 0;
  std::istringstream in(bom ? text.substr(3) : text);
  std::string line, s;
  bool seen_header = false;
  size_t row = 0;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // the output's lines end in \n
    s += line + ",";
    if (!seen_header) {
      seen_header = true;
      for (int o = 0; o < n_out; ++o) s += pred_names[size_t(o)] + (o + 1 < n_out ? "," : "\n");
      continue;
    }
    for (int o = 0; o < n_out; ++o)
      s += fmt::format("{:.9g}{}", out[row * size_t(n_out) + size_t(o)], o + 1 < n_out ? "," : "\n");
    ++row;
  }
  return s;
}

int interrupted(const PredictArgs& a) {
  fmt::print(stderr, "nntrain: predict interrupted; {} not written{}\n", a.output == "-" ? "stdout" : a.output,
             a.output == "-" ? "" : " (left as it was)");
  return kExitInterrupted;
}

}  // namespace

int cmd_predict(const PredictArgs& a) {
  // An unwritable output, or one that is an input, fails before anything is read.
  check_output_file(a.output, "--output", /*stdout_ok=*/true);
  check_output_not_input(a.output, "--output", {{"--input", a.input}, {"--model", a.model}});
  ModelNames names;
  const Params p = load_model(a.model, &names);
  const int n_in = p.spec.widths.front(), n_out = p.spec.widths.back();
  const std::string text = read_file(a.input, "input CSV");
  const std::vector<std::string> header = csv_header(text, a.input);
  if (header.empty()) throw UsageError(a.input + ": empty CSV file (expected a header row)");
  const std::vector<std::string> cols = input_columns(a, names, header, n_in);
  const Dataset d = parse_csv(text, a.input, cols, {});
  std::vector<float> out(size_t(d.n) * size_t(n_out));
  reference_forward(p, d.x.data(), d.n, out.data());
  const std::string csv = output_csv(text, a.input, header, out, n_out);
  // A stop (SIGINT/SIGTERM) before the write leaves the output as it was: exit 130, as train.
  if (stop_requested()) return interrupted(a);
  write_output(a.output, csv);
  if (stop_requested())  // it came while the file was written: that write finished whole
    fmt::print(stderr, "nntrain: the stop came while {} was written; it is complete\n",
               a.output == "-" ? "stdout" : a.output);
  fmt::print(stderr, "nntrain: wrote {} predictions to {}\n", d.n, a.output == "-" ? "stdout" : a.output);
  // Finite inputs can still overflow fp32 inside the net (a cell of 3e38 times a weight):
  // the file says nan or inf, and this line says where, so a script's log shows it.
  const auto bad = std::count_if(out.begin(), out.end(), [](float v) { return !std::isfinite(v); });
  if (bad > 0) {
    const size_t first = size_t(std::find_if(out.begin(), out.end(), [](float v) { return !std::isfinite(v); }) -
                                out.begin()) / size_t(n_out);
    fmt::print(stderr, "nntrain: warning: {} prediction(s) are not finite (NaN or inf), the first in data row {}: "
                       "its inputs overflow float32 inside the model\n", bad, first + 1);
  }
  return kExitOk;
}

}  // namespace nntrain
