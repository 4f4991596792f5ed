// atomic_writer.cpp — test helper: rewrites one file with nntrain's write_file_atomic in a
// loop, so a test can SIGKILL it at random moments and inspect what is left.
//   nntrain_atomic_writer PATH PAYLOAD_BYTES FIRST_GENERATION COUNT   (COUNT 0 = until killed)
#include <cstdio>
#include <cstdlib>
#include <string>

#include "atomic_content.hpp"
#include "fileio.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s PATH PAYLOAD_BYTES FIRST_GENERATION COUNT\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  const size_t bytes = std::strtoull(argv[2], nullptr, 10);
  const unsigned long long first = std::strtoull(argv[3], nullptr, 10);
  const unsigned long long count = std::strtoull(argv[4], nullptr, 10);
  // Two contents prepared up front, so nearly all of the loop's time is spent writing.
  const std::string a = testutil::atomic_content(first, bytes), b = testutil::atomic_content(first + 1, bytes);
  // Tell the test the contents are ready (it times its kill from here, not from exec).
  std::fputs("ready\n", stdout);
  std::fflush(stdout);
  for (unsigned long long i = 0; count == 0 || i < count; ++i) nntrain::write_file_atomic(path, i % 2 ? b : a);
  return 0;
}
