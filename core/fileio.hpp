// fileio.hpp — reading inputs and writing outputs atomically.
//
// Every result file is written to a temporary file in the same directory, flushed, fsynced
// and renamed over the target, so a crash or a kill leaves either the old file or the new
// one, never half of one. A process killed mid-write leaves its temporary file behind
// (hidden: ".<name>.tmp.<pid>.XXXXXX"); nntrain never reads such files, and the next
// successful write of the same target removes those whose writer no longer runs.
#pragma once

#include <string>

namespace nntrain {

// Whole file as a string. Throws UsageError("<what> not found: <path>" / "cannot read").
std::string read_file(const std::string& path, const std::string& what);

// Atomic write (temp + fsync + rename). Throws IoError naming the path and the OS reason.
void write_file_atomic(const std::string& path, const std::string& content);

// Creates `dir` (and parents). Throws IoError if it cannot, or if it exists and is not a
// writable directory.
void ensure_directory(const std::string& dir);

// A new numbered run folder under `parent` (parent/001, parent/002, ...): the first number
// whose folder did not exist, created atomically so two concurrent runs never share one.
std::string make_numbered_run_dir(const std::string& parent);

// Checks, without creating anything, that `dir` could be created or written to; throws
// UsageError naming the path otherwise. Used before training so a bad --out fails fast.
void check_output_location(const std::string& dir);

// The same for an output file given by `option` (e.g. "--save-model"): UsageError naming the
// option if the name is empty, is a directory (or ends in '/'), exists as a non-regular file,
// or its folder does not exist (nothing creates it) or cannot be written.
void check_output_file(const std::string& file, const std::string& option);

}  // namespace nntrain
