// test_data.cpp — the peaks generator and the CSV reader.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include "dataset.hpp"
#include "errors.hpp"
#include "golden_values.hpp"

using namespace nntrain;

TEST_CASE("peaks at hand-computed points", "[data]") {
  // peaks(0,0) = 3 e^-1 - 1/3 e^-1 = (8/3) e^-1
  CHECK(peaks(0, 0) == Approx(8.0 / 3.0 * std::exp(-1.0)).epsilon(1e-12));
  // peaks(1,0): first term 0; second -10 (1/5 - 1) e^-1 = 8 e^-1; third -1/3 e^-4
  CHECK(peaks(1, 0) == Approx(8 * std::exp(-1.0) - std::exp(-4.0) / 3).epsilon(1e-12));
  // peaks(0,1): 3 e^-4 - 10 (-1) e^-1 - 1/3 e^-2
  CHECK(peaks(0, 1) == Approx(3 * std::exp(-4.0) + 10 * std::exp(-1.0) - std::exp(-2.0) / 3).epsilon(1e-12));
  // MATLAB's peaks maximum is about 8.1 near (-0.0093, 1.58)
  CHECK(peaks(-0.0093, 1.5814) == Approx(8.1062).margin(1e-3));
}

TEST_CASE("peaks grid: x1 varies fastest, linspace ends exact", "[data]") {
  const Dataset d = make_peaks(4, 3, -3, 3);
  REQUIRE(d.n == 12);
  REQUIRE(d.inputs == 2);
  REQUIRE(d.outputs == 1);
  // sample i: x1 = g[i % 4], x2 = g[i / 4]
  CHECK(d.x[0] == -3.0f);
  CHECK(d.x[1] == -3.0f);
  CHECK(d.x[2 * 1] == -1.0f);   // x1 of sample 1
  CHECK(d.x[2 * 1 + 1] == -3.0f);
  CHECK(d.x[2 * 3] == 3.0f);    // last x1 of the first row
  CHECK(d.x[2 * 4] == -3.0f);   // sample 4 starts row 2
  CHECK(d.x[2 * 4 + 1] == 0.0f);
  CHECK(d.x[2 * 11] == 3.0f);
  CHECK(d.x[2 * 11 + 1] == 3.0f);
  CHECK(d.y[5] == float(peaks(-1.0, 0.0)));
}

TEST_CASE("peaks 200x200 grid has 40000 samples", "[data]") {
  const Dataset d = make_peaks(200, 200, -3, 3);
  CHECK(d.n == 40000);
  CHECK(d.x[2 * 199] == 3.0f);
  CHECK(d.x[2 * 200 + 1] == Approx(-3 + 6.0 / 199));
}

TEST_CASE("grid too large for memory is refused before allocating", "[data]") {
  try {
    make_peaks(1 << 20, 1 << 20, -3, 3);
    FAIL("expected refusal");
  } catch (const UsageError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("/data/grid") && Catch::Contains("GiB"));
  }
}

namespace {
std::string write_tmp(const std::string& name, const std::string& text) {
  std::ofstream(name) << text;
  return name;
}
}  // namespace

TEST_CASE("CSV: columns by name, any order", "[data][csv]") {
  const auto f = write_tmp("t_ok.csv", "y, a ,b\n1.5,2,3\n-1,4e-1,5\n\n");
  const Dataset d = load_csv(f, {"b", "a"}, {"y"});
  REQUIRE(d.n == 2);
  CHECK(d.x == std::vector<float>{3, 2, 5, 0.4f});
  CHECK(d.y == std::vector<float>{1.5f, -1});
  std::remove(f.c_str());
}

TEST_CASE("CSV errors name file, line and column", "[data][csv]") {
  auto err = [](const std::string& text, std::vector<std::string> in = {"a"}, std::vector<std::string> out = {"y"}) {
    const auto f = write_tmp("t_bad.csv", text);
    std::string msg;
    try {
      load_csv(f, in, out);
    } catch (const UsageError& e) {
      msg = e.what();
    }
    std::remove(f.c_str());
    return msg;
  };
  CHECK_THAT(err("a,y\n1,2\n3,x\n"), Catch::Contains("t_bad.csv") && Catch::Contains("line 3") &&
                                          Catch::Contains("column 2"));
  CHECK_THAT(err("a,y\n1,2\n3\n"), Catch::Contains("line 3") && Catch::Contains("fields"));
  CHECK_THAT(err("a,y\n1,nan\n"), Catch::Contains("line 2"));
  CHECK_THAT(err("a,y\n1,inf\n"), Catch::Contains("line 2"));
  CHECK_THAT(err("a,y\n1,1e39\n"), Catch::Contains("line 2"));
  CHECK_THAT(err("a,z\n1,2\n"), Catch::Contains("no target column \"y\""));
  CHECK_THAT(err(""), Catch::Contains("empty"));
  CHECK_THAT(err("a,y\n"), Catch::Contains("no data rows"));
  CHECK_THROWS_WITH(load_csv("does/not/exist.csv", {"a"}, {"y"}), Catch::Contains("not found"));
}

TEST_CASE("peaks on a grid matches NumPy (scripts/golden_numpy.py)", "[data][golden]") {
  // Points away from 0 and ±1, where x^3 and x^2 (or y^5 and y^3) give different values.
  const Dataset d = make_peaks(kPeaksGridN1, kPeaksGridN2, kPeaksGridLo, kPeaksGridHi);
  REQUIRE(d.n == kPeaksGridN1 * kPeaksGridN2);
  for (int j = 0; j < kPeaksGridN2; ++j) {
    for (int i = 0; i < kPeaksGridN1; ++i) {
      const size_t s = size_t(j) * kPeaksGridN1 + i;
      const double x1 = kPeaksGridLo + (kPeaksGridHi - kPeaksGridLo) * i / (kPeaksGridN1 - 1);
      const double x2 = kPeaksGridLo + (kPeaksGridHi - kPeaksGridLo) * j / (kPeaksGridN2 - 1);
      INFO("sample " << s << " at (" << x1 << ", " << x2 << ")");
      CHECK(d.x[2 * s] == float(x1));
      CHECK(d.x[2 * s + 1] == float(x2));
      // Both in float64 from the same formula: only exp's last bits may differ.
      CHECK(peaks(x1, x2) == Approx(kPeaksGrid[s]).epsilon(1e-12).margin(1e-15));
      // The generator stores the value in float: half an ulp of float.
      CHECK(d.y[s] == Approx(kPeaksGrid[s]).epsilon(1e-7).margin(1e-12));
    }
  }
}

TEST_CASE("CSV edge cases: no trailing newline, CRLF, BOM, blank lines", "[data][csv]") {
  auto rows = [](const std::string& text) { return parse_csv(text, "t.csv", {"a"}, {"y"}); };
  // The last row counts without a trailing newline.
  const Dataset no_nl = rows("a,y\n1,2\n3,4");
  REQUIRE(no_nl.n == 2);
  CHECK(no_nl.x == std::vector<float>{1, 3});
  CHECK(no_nl.y == std::vector<float>{2, 4});
  const Dataset one = rows("a,y\n-0.5,7.25");
  REQUIRE(one.n == 1);
  CHECK(one.x == std::vector<float>{-0.5f});
  CHECK(one.y == std::vector<float>{7.25f});
  // Windows line endings, a byte-order mark, blank and whitespace-only lines anywhere.
  const Dataset crlf = rows("\xEF\xBB\xBF" "a,y\r\n1,2\r\n\r\n  \t\r\n3,4\r\n5,6");
  REQUIRE(crlf.n == 3);
  CHECK(crlf.x == std::vector<float>{1, 3, 5});
  CHECK(crlf.y == std::vector<float>{2, 4, 6});
  const Dataset blank_first = rows("\n\na,y\n\n1,2\n");
  REQUIRE(blank_first.n == 1);
  CHECK(blank_first.y == std::vector<float>{2});
}

TEST_CASE("CSV line numbers count blank lines and the line without a newline", "[data][csv]") {
  // The reader has no comment syntax: a '#' line is a data row and an error on its own line.
  auto err = [](const std::string& text) {
    try {
      parse_csv(text, "t.csv", {"a"}, {"y"});
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(err("a,y\n1,2\n\n3,x\n"), Catch::Contains("t.csv: line 4, column 2"));
  CHECK_THAT(err("\n\na,y\n1,2\n  \n\n3,x\n"), Catch::Contains("t.csv: line 7, column 2"));
  CHECK_THAT(err("a,y\r\n\r\n1,2\r\n3,x"), Catch::Contains("t.csv: line 4, column 2"));
  CHECK_THAT(err("a,y\n1,2\n\n3"), Catch::Contains("t.csv: line 4: expected 2 fields"));
  CHECK_THAT(err("a,y\n\n# note\n1,2\n"), Catch::Contains("t.csv: line 3: expected 2 fields"));
  // A blank line before the header moves the header's line number too.
  CHECK_THAT(err("\na,a,y\n1,2,3\n"), Catch::Contains("t.csv: line 2: column \"a\" appears twice"));
  // A carriage return inside a line is not dropped: "2\r5" is no 25, and CR-only line ends
  // are one line, not a header naming "y\r1".
  CHECK_THAT(err("a,y\n1,2\r5\n"), Catch::Contains("t.csv: line 2, byte 4: a carriage return inside the line"));
  CHECK_THAT(err("a,y\r1,2\r3,4\r"), Catch::Contains("t.csv: line 1, byte 4: a carriage return inside the line"));
}

TEST_CASE("CSV quoting as spreadsheets and R write it: quoted names and cells, commas and quotes inside",
          "[data][csv]") {
  // R's write.csv quotes every name; a quoted cell may hold a comma, and "" is one quote.
  const Dataset d = parse_csv("\"id\",\"a\",\"y\"\n\"r1, first\",\"1.5\",2\n \"say \"\"hi\"\"\" , -3 ,\" 4e-1 \"\n",
                              "t.csv", {"a"}, {"y"});
  REQUIRE(d.n == 2);
  CHECK(d.x == std::vector<float>{1.5f, -3});
  CHECK(d.y == std::vector<float>{2, 0.4f});
  // The fields themselves, by hand: unquoted ones trimmed, quoted ones kept as written.
  CHECK(split_csv_line(" \"say \"\"hi\"\"\" , x ,\" y \",\r") == std::vector<std::string>{"say \"hi\"", "x", " y ", ""});
  CHECK(split_csv_line("a,\"b,c\",d") == std::vector<std::string>{"a", "b,c", "d"});
  CHECK(split_csv_line("") == std::vector<std::string>{""});
  std::string error;
  CHECK(split_csv_line("a,\"b", &error) == std::vector<std::string>{"a", "b"});
  CHECK_THAT(error, Catch::Contains("no closing quote"));
  error.clear();
  split_csv_line("\"a\"b,c", &error);
  CHECK_THAT(error, Catch::Contains("after a quoted field"));
  error.clear();
  split_csv_line("a\"b,\"\"", &error);  // a quote inside an unquoted field is a character; "" an empty field
  CHECK(error.empty());
  CHECK(split_csv_line("a\"b,\"\"") == std::vector<std::string>{"a\"b", ""});
}

TEST_CASE("CSV numbers are plain decimals: hexadecimal and other strtod forms are refused", "[data][csv]") {
  auto err = [](const std::string& cell) {
    try {
      parse_csv("a,y\n" + cell + ",1\n", "t.csv", {"a"}, {"y"});
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const char* bad : {"0x10", "0x1p3", "1e", "1e+", ".", "+", "1.5.2", "0X1A", "1,5"})
    CHECK_THAT(err(bad), Catch::Contains("line 2") && !Catch::Contains("no error"));
  CHECK_THAT(err("0x10"), Catch::Contains("is not a plain decimal number"));
  for (const char* good : {"1", "-2", "+3", "4.", ".5", "-.5e-3", "6E+2", "007"}) CHECK(err(good) == "no error");
  CHECK(parse_csv("a,y\n.5,-.5e-3\n6E+2,+3\n", "t.csv", {"a"}, {"y"}).x == std::vector<float>{0.5f, 600});
}
