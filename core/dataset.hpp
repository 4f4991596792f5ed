// dataset.hpp — the training data: the synthetic peaks grid or a CSV file.
#pragma once

#include <string>
#include <vector>

#include "config.hpp"

namespace nntrain {

struct Dataset {
  int n = 0;        // samples
  int inputs = 0;   // features per sample
  int outputs = 0;  // targets per sample
  std::vector<float> x;  // n × inputs, row-major (sample-major)
  std::vector<float> y;  // n × outputs, row-major
  std::string description;
};

// MATLAB's peaks surface (docs/DESIGN.md §1), in double.
double peaks(double x, double y);

// The grid: sample i has x1 = g1[i % N1], x2 = g2[i / N1] (x1 varies fastest),
// g = linspace(lo, hi, N) computed as lo + (hi - lo) * k / (N - 1) in double.
// Refuses (UsageError) a grid whose arrays would not fit in memory, before allocating.
Dataset make_peaks(int n1, int n2, double lo, double hi);

// CSV with a header row; columns picked by name. Errors name the file, line and column.
Dataset load_csv(const std::string& path, const std::vector<std::string>& inputs,
                 const std::vector<std::string>& targets);
// The same on text already read; `path` is only for messages (and the CSV fuzzer).
Dataset parse_csv(const std::string& file_text, const std::string& path, const std::vector<std::string>& inputs,
                  const std::vector<std::string>& targets);

// The held-out validation split (data.validation_fraction, docs/CONFIG.md): round(f * n)
// samples, at least 1, and at least 1 left to train on, else UsageError naming
// /data/validation_fraction (before anything is written). f = 0: no split (0 held out).
int validation_samples(int n, double fraction);

// The split itself, from the seed alone (never the device, backend, ISA or thread count): a
// partial Fisher-Yates shuffle of the row indices by the project's portable Rng, keyed by
// the seed on a stream of its own, picks the validation rows. Both parts keep the data's
// row order; `validation_rows` are the held-out rows' indices in `d`, ascending.
struct DataSplit {
  Dataset train, validation;
  std::vector<int> validation_rows;
};
DataSplit split_validation(const Dataset& d, double fraction, uint64_t seed);

// Builds the data set the config describes.
Dataset load_dataset(const DataConfig& d);

// The column names of the data the config describes, as model.json records them: the peaks
// grid's x1, x2 -> y; a CSV's configured inputs and targets.
ModelNames data_column_names(const DataConfig& d);

// For predict, which copies every column of its input through: the header of CSV text (its
// first non-blank line, a byte-order mark dropped; empty if there is none; a malformed one
// is a UsageError naming `path` and the line), and the fields of one line as parse_csv
// splits them: on commas outside double quotes, a quoted field unquoted ("" is one quote),
// an unquoted one trimmed of spaces and tabs. `error`, if given, is set to why a line is
// malformed (an unclosed quote, text after a closing quote), and left as it is otherwise.
std::vector<std::string> csv_header(const std::string& file_text, const std::string& path);
std::vector<std::string> split_csv_line(const std::string& line, std::string* error = nullptr);

// A cell or a column name as an error message shows it: control bytes (NUL, ESC, ...) as
// \xHH, so the message stays one line of text that a terminal prints as it is, and a long
// one cut after ~40 bytes (at a character boundary) with its size.
std::string shown(const std::string& s);

}  // namespace nntrain
