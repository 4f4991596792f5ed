// atomic_content.hpp — the self-describing file contents the atomic-write kill test uses:
// generation g gives one exact byte string, so a reader can tell a complete file of any
// generation from a torn or mixed one.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace testutil {

inline std::string atomic_content(unsigned long long gen, size_t payload_bytes) {
  char head[96];
  std::snprintf(head, sizeof head, "NNTRAIN-ATOMIC gen=%llu size=%zu\n", gen, payload_bytes);
  std::string s(head);
  s.reserve(s.size() + payload_bytes + 32);
  for (size_t k = 0; k < payload_bytes; ++k) s += char('a' + (gen * 7 + k * 13 + k / 4096) % 26);
  s += "\nEND gen=" + std::to_string(gen) + "\n";
  return s;
}

// The generation of `text` if it is exactly atomic_content(gen, size) for the size and gen
// its header names; -1 otherwise (torn, empty, mixed).
inline long long atomic_generation(const std::string& text) {
  unsigned long long gen = 0;
  size_t size = 0;
  if (std::sscanf(text.c_str(), "NNTRAIN-ATOMIC gen=%llu size=%zu\n", &gen, &size) != 2) return -1;
  return text == atomic_content(gen, size) ? (long long)gen : -1;
}

}  // namespace testutil
