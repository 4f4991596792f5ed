// dataset.cpp — peaks generator and CSV reader; see dataset.hpp.
#include "dataset.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "errors.hpp"
#include "fileio.hpp"
#include "memcheck.hpp"
#include "rng.hpp"

namespace nntrain {

double peaks(double x, double y) {
  return 3.0 * (1 - x) * (1 - x) * std::exp(-x * x - (y + 1) * (y + 1)) -
         10.0 * (x / 5 - x * x * x - y * y * y * y * y) * std::exp(-x * x - y * y) -
         1.0 / 3.0 * std::exp(-(x + 1) * (x + 1) - y * y);
}

namespace {

void check_fits(double samples, int inputs, int outputs, const std::string& what) {
  // Inputs and targets, plus a copy of each that a backend keeps in its own layout.
  const double bytes = samples * (inputs + outputs) * sizeof(float) * 2.0;
  std::ostringstream os;
  os << what << " (" << static_cast<long long>(samples) << " samples)";
  if (samples > 2147483647.0) {
    os.precision(3);
    os << " would need " << bytes / double(1ull << 30) << " GiB for the data alone and has more samples than "
       << "nntrain supports (2147483647)";
    throw UsageError(os.str());
  }
  check_fits_in_memory(bytes, os.str() + ": the data alone");
}

}  // namespace

Dataset make_peaks(int n1, int n2, double lo, double hi) {
  check_fits(double(n1) * double(n2), 2, 1, "config /data/grid");
  Dataset d;
  d.n = n1 * n2;
  d.inputs = 2;
  d.outputs = 1;
  d.x.resize(size_t(d.n) * 2);
  d.y.resize(size_t(d.n));
  auto g = [lo, hi](int k, int n) { return n == 1 ? lo : lo + (hi - lo) * double(k) / double(n - 1); };
  for (int j = 0; j < n2; ++j) {
    const double x2 = g(j, n2);
    for (int i = 0; i < n1; ++i) {
      const double x1 = g(i, n1);
      const size_t s = size_t(j) * n1 + i;
      d.x[2 * s] = float(x1);
      d.x[2 * s + 1] = float(x2);
      d.y[s] = float(peaks(x1, x2));
    }
  }
  std::ostringstream os;
  os << "peaks " << n1 << "x" << n2 << " grid on [" << lo << ", " << hi << "]^2";
  d.description = os.str();
  return d;
}

// RFC 4180's quoting on one line (spreadsheets and R's write.csv quote every name): a field
// in double quotes may hold commas, and "" in it is one quote. A field holding a line break
// cannot be read line by line, so an unclosed quote is an error, not a field that runs on.
std::vector<std::string> split_csv_line(const std::string& line, std::string* error) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  auto fail = [&](const char* why) {
    if (error && error->empty()) *error = why;
  };
  std::vector<std::string> out;
  size_t i = 0;
  const size_t n = line.size();
  for (;;) {
    std::string f;
    while (i < n && blank(line[i])) ++i;
    if (i < n && line[i] == '"') {
      bool closed = false;
      for (++i; i < n && !closed; ++i) {
        if (line[i] != '"') f += line[i];
        else if (i + 1 < n && line[i + 1] == '"') f += line[i++];
        else closed = true;
      }
      if (!closed) fail("a quoted field has no closing quote (a field holding a line break is not read)");
      while (i < n && blank(line[i])) ++i;
      if (i < n && line[i] != ',') fail("text after a quoted field's closing quote");
      while (i < n && line[i] != ',') ++i;
    } else {
      for (; i < n && line[i] != ','; ++i) f += line[i];
      while (!f.empty() && blank(f.back())) f.pop_back();
    }
    out.push_back(std::move(f));
    if (i >= n) return out;
    ++i;  // the comma
  }
}

namespace {

// One line's fields, or a UsageError naming the file and line where it is malformed.
std::vector<std::string> fields_of(std::string line, const std::string& path, size_t line_no) {
  if (!line.empty() && line.back() == '\r') line.pop_back();  // a CRLF line end
  // A carriage return anywhere else is no blank to drop: "2\r5" is not the number 25, and a
  // file whose lines end in CR alone reads as one long line.
  if (const size_t cr = line.find('\r'); cr != std::string::npos)
    throw UsageError(path + ": line " + std::to_string(line_no) + ", byte " + std::to_string(cr + 1) +
                     ": a carriage return inside the line (lines that end in CR alone are not read; save the file "
                     "with LF or CRLF line ends)");
  std::string error;
  std::vector<std::string> f = split_csv_line(line, &error);
  if (!error.empty()) throw UsageError(path + ": line " + std::to_string(line_no) + ": " + error);
  return f;
}

// Optional sign, digits with an optional point, an optional exponent: what a CSV of numbers
// holds. strtod also reads hexadecimal (0x10, 0x1p3), which no such file means.
bool plain_decimal(const std::string& f) {
  auto digit = [&](size_t i) { return i < f.size() && f[i] >= '0' && f[i] <= '9'; };
  size_t i = f.empty() || (f[0] != '+' && f[0] != '-') ? 0 : 1, digits = 0;
  for (; digit(i); ++i) ++digits;
  if (i < f.size() && f[i] == '.')
    for (++i; digit(i); ++i) ++digits;
  if (digits == 0) return false;
  if (i < f.size() && (f[i] == 'e' || f[i] == 'E')) {
    i += i + 1 < f.size() && (f[i + 1] == '+' || f[i + 1] == '-') ? 2 : 1;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  return i == f.size();
}

// The text's lines as std::getline gives them ('\n' ends a line; a last line without one
// counts), read in place: a file of hundreds of MB is not copied into a stream first.
class Lines {
 public:
  Lines(const std::string& text, size_t from) : t_(text), pos_(from) {}
  bool next(std::string& line) {
    if (pos_ >= t_.size()) return false;
    size_t end = t_.find('\n', pos_);
    if (end == std::string::npos) end = t_.size();
    line.assign(t_, pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }

 private:
  const std::string& t_;
  size_t pos_;
};

// Where the text starts: past a UTF-8 byte-order mark (spreadsheets write one; it is not part
// of the first column's name). UTF-16 (Excel's "Unicode text", PowerShell's Out-File) would
// read as names full of NULs: said plainly instead.
size_t text_start(const std::string& text, const std::string& path) {
  if (text.compare(0, 2, "\xFF\xFE") == 0 || text.compare(0, 2, "\xFE\xFF") == 0)
    throw UsageError(path + ": the file is UTF-16 (it starts with a UTF-16 byte-order mark); nntrain reads CSV in "
                            "UTF-8 or ASCII: save it as \"CSV UTF-8\"");
  return text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
}

}  // namespace

// (A NUL would end the message early, an ESC start a terminal sequence.)
std::string shown(const std::string& s) {
  constexpr size_t kMax = 40;
  size_t cut = std::min(s.size(), kMax);
  while (cut > 0 && cut < s.size() && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  std::string out = escape_control_bytes(s.substr(0, cut));
  if (cut < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

Dataset load_csv(const std::string& path, const std::vector<std::string>& inputs,
                 const std::vector<std::string>& targets) {
  return parse_csv(read_file(path, "CSV data file"), path, inputs, targets);
}

Dataset parse_csv(const std::string& file_text, const std::string& path, const std::vector<std::string>& inputs,
                  const std::vector<std::string>& targets) {
  Lines in(file_text, text_start(file_text, path));
  std::string line;
  size_t line_no = 0;
  std::vector<std::string> header;
  while (in.next(line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    header = fields_of(line, path, line_no);
    break;
  }
  if (header.empty()) throw UsageError(path + ": empty CSV file (expected a header row)");
  for (size_t c = 0; c < header.size(); ++c)
    for (size_t k = 0; k < c; ++k)
      if (header[k] == header[c] && !header[c].empty())
        throw UsageError(path + ": line " + std::to_string(line_no) + ": column \"" + shown(header[c]) +
                         "\" appears twice in the header (columns " + std::to_string(k + 1) + " and " +
                         std::to_string(c + 1) + ")");
  auto find_col = [&](const std::string& name, const char* role) {
    for (size_t c = 0; c < header.size(); ++c)
      if (header[c] == name) return c;
    std::string cols;
    for (const auto& h : header) cols += (cols.empty() ? "" : ", ") + shown(h);
    throw UsageError(path + ": line " + std::to_string(line_no) + ": no " + role + " column \"" + name +
                     "\" in the header (columns: " + cols + ")");
  };
  std::vector<size_t> in_cols, out_cols;
  for (const auto& n : inputs) in_cols.push_back(find_col(n, "input"));
  for (const auto& n : targets) out_cols.push_back(find_col(n, "target"));

  Dataset d;
  d.inputs = int(inputs.size());
  d.outputs = int(targets.size());
  // Sized once from the lines left (blank ones over-count): no doubling to twice the data.
  const size_t rows = size_t(std::count(file_text.begin(), file_text.end(), '\n')) + 1;
  d.x.reserve(rows * inputs.size());
  d.y.reserve(rows * targets.size());
  while (in.next(line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto fields = fields_of(line, path, line_no);
    if (fields.size() != header.size())
      throw UsageError(path + ": line " + std::to_string(line_no) + ": expected " + std::to_string(header.size()) +
                       " fields (as the header), got " + std::to_string(fields.size()));
    auto parse = [&](size_t c) {
      // A quoted cell keeps its spaces (" 1.5"); its number is read without them.
      const std::string& cell = fields[c];
      const size_t first = cell.find_first_not_of(" \t"), last = cell.find_last_not_of(" \t");
      const std::string f = first == std::string::npos ? std::string() : cell.substr(first, last - first + 1);
      char* end = nullptr;
      errno = 0;
      const double v = f.empty() ? 0.0 : std::strtod(f.c_str(), &end);
      auto fail = [&](const char* why) {
        throw UsageError(path + ": line " + std::to_string(line_no) + ", column " + std::to_string(c + 1) + " (\"" +
                         shown(header[c]) + "\"): \"" + shown(f) + "\" " + why);
      };
      // (strtod also sets ERANGE on underflow, 1e-400: a value that is ~0, as float(1e-50) is.)
      if (f.empty() || end != f.c_str() + f.size()) fail("is not a finite number");
      if (errno == ERANGE && std::isinf(v)) fail("is beyond float32's range (largest 3.4028235e38)");
      if (!std::isfinite(v)) fail("is not a finite number");  // "inf", "nan"
      if (!plain_decimal(f)) fail("is not a plain decimal number (as 0.25 or -1.5e-3)");
      // Doubles from the half-way point between FLT_MAX and the next power of two on round
      // to infinity as float32, the type nntrain trains in.
      if (std::fabs(v) >= 0x1.ffffffp127) fail("is beyond float32's range (largest 3.4028235e38)");
      return float(v);
    };
    if (d.n == 2147483647)
      throw UsageError(path + ": line " + std::to_string(line_no) + ": more rows than nntrain supports (2147483647)");
    for (size_t c : in_cols) d.x.push_back(parse(c));
    for (size_t c : out_cols) d.y.push_back(parse(c));
    ++d.n;
  }
  if (d.n == 0) throw UsageError(path + ": no data rows after the header");
  d.description = "csv " + path + " (" + std::to_string(d.n) + " rows)";
  return d;
}

int validation_samples(int n, double fraction) {
  if (!(fraction > 0)) return 0;
  const long long k = std::max(1LL, std::llround(fraction * double(n)));
  if (k >= n) {
    std::ostringstream os;
    os << "config /data/validation_fraction: " << fraction << " of " << n << " sample" << (n == 1 ? "" : "s")
       << " holds out " << k << ", leaving nothing to train on";
    throw UsageError(os.str());
  }
  return int(k);
}

namespace {
// Copies the rows of `d` whose `pick` flag equals `want` (row order kept).
Dataset take_rows(const Dataset& d, const std::vector<char>& pick, char want) {
  Dataset out;
  out.inputs = d.inputs;
  out.outputs = d.outputs;
  for (int i = 0; i < d.n; ++i) {
    if (pick[size_t(i)] != want) continue;
    out.x.insert(out.x.end(), d.x.begin() + ptrdiff_t(i) * d.inputs, d.x.begin() + ptrdiff_t(i + 1) * d.inputs);
    out.y.insert(out.y.end(), d.y.begin() + ptrdiff_t(i) * d.outputs, d.y.begin() + ptrdiff_t(i + 1) * d.outputs);
    ++out.n;
  }
  return out;
}
}  // namespace

DataSplit split_validation(const Dataset& d, double fraction, uint64_t seed) {
  const int k = validation_samples(d.n, fraction);
  DataSplit s;
  if (k == 0) {
    s.train = d;
    return s;
  }
  // A stream of its own ("validate" in ASCII): not the initial weights' sequence.
  Rng rng(seed ^ 0x76616c6964617465ULL);
  std::vector<int> idx(size_t(d.n));
  for (int i = 0; i < d.n; ++i) idx[size_t(i)] = i;
  for (int i = 0; i < k; ++i) {
    // (modulo bias below 2^-32 for any n nntrain accepts: no effect on a split)
    const int j = i + int(rng.next_u64() % uint64_t(d.n - i));
    std::swap(idx[size_t(i)], idx[size_t(j)]);
  }
  std::vector<char> pick(size_t(d.n), 0);
  for (int i = 0; i < k; ++i) pick[size_t(idx[size_t(i)])] = 1;
  s.train = take_rows(d, pick, 0);
  s.validation = take_rows(d, pick, 1);
  for (int i = 0; i < d.n; ++i)
    if (pick[size_t(i)]) s.validation_rows.push_back(i);
  s.train.description = d.description + ", " + std::to_string(s.train.n) + " trained on";
  s.validation.description = d.description + ", " + std::to_string(k) + " held out";
  return s;
}

Dataset load_dataset(const DataConfig& d) {
  if (!d.csv.empty()) return load_csv(d.csv_resolved, d.inputs, d.targets);
  return make_peaks(d.grid_x1, d.grid_x2, d.range_lo, d.range_hi);
}

ModelNames data_column_names(const DataConfig& d) {
  if (!d.csv.empty()) return {d.inputs, d.targets};
  return {{"x1", "x2"}, {"y"}};  // the names surface.csv and the docs give the grid's columns
}

std::vector<std::string> csv_header(const std::string& file_text, const std::string& path) {
  Lines in(file_text, text_start(file_text, path));
  std::string line;
  for (size_t line_no = 1; in.next(line); ++line_no)
    if (line.find_first_not_of(" \t\r") != std::string::npos) return fields_of(line, path, line_no);
  return {};
}

}  // namespace nntrain
