// fileio.hpp — reading inputs and writing outputs atomically.
//
// Every result file is written to a temporary file in the same directory, flushed, fsynced
// and renamed over the target, so a crash or a kill leaves either the old file or the new
// one, never half of one. A process killed mid-write leaves its temporary file behind
// (hidden: ".<name>.tmp.<pid>.XXXXXX"); nntrain never reads such files, and the next
// successful write of the same target removes those whose writer no longer runs.
//
// An output path that is a symbolic link is followed, never replaced: the temporary file is
// made next to the file at the end of the link's chain and renamed over that file, so the
// link stays and its target gets the content (a dangling link's target is created). An
// existing target that is not a regular file (a device, a FIFO, a socket) is refused: a
// rename would replace it (as root, /dev/stdout or /dev/null itself). `-` is stdout only
// where an option says so (write_output).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace nntrain {

// Whole file as a string. Throws UsageError("<what> not found: <path>" / "cannot read").
std::string read_file(const std::string& path, const std::string& what);

// Atomic write (temp + fsync + rename) of the file `path` names, through links. Throws
// IoError naming the path and the OS reason, or that the target is not a regular file.
void write_file_atomic(const std::string& path, const std::string& content);

// write_file_atomic, except that "-" streams `content` to stdout (for the options that write
// one file: predict --output, bench --export-json/--export-markdown).
void write_output(const std::string& path, const std::string& content);

// The file a write of `path` replaces: `path`, or the end of its chain of symbolic links
// (a relative link target resolves against the link's folder). Throws IoError on a loop.
std::string resolve_output_path(const std::string& path);

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
// option if the name is empty, is a directory (or ends in '/'), exists as a non-regular file
// (through links), or the folder of the file it resolves to does not exist (nothing creates
// it) or cannot be written. "-" is accepted when `stdout_ok` (write_output), refused otherwise.
void check_output_file(const std::string& file, const std::string& option, bool stdout_ok = false);

// The same file: the same inode (however spelt or linked) where both exist, else the same
// path once `.`, `..` and links in its existing part are resolved.
bool same_file(const std::string& a, const std::string& b);

// UsageError when the output `file` (given by `option`) is the same file as one of `inputs`
// ({option, path} pairs) — the same inode, however spelt or linked — so that no command
// overwrites what it reads. Call it before reading anything.
void check_output_not_input(const std::string& file, const std::string& option,
                            const std::vector<std::pair<std::string, std::string>>& inputs);

}  // namespace nntrain
