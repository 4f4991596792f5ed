// cmd_common.cpp — exit-code mapping and version string shared by the commands.
#include <fmt/format.h>

#include <new>

#include "cli_flags.hpp"
#include "commands.hpp"
#include "errors.hpp"
#include "sysinfo.hpp"

namespace nntrain {

int guarded(const std::function<int()>& body, const std::vector<std::string>& flag_keys) {
  try {
    return body();
  } catch (const UsageError& e) {
    fmt::print(stderr, "nntrain: error: {}\n", blame_flag(e, flag_keys));
    return kExitUsage;
  } catch (const DeviceUnavailable& e) {
    fmt::print(stderr, "nntrain: error: {}\n", e.what());
    return kExitNoDevice;
  } catch (const IoError& e) {
    fmt::print(stderr, "nntrain: error: {}\n", e.what());
    return kExitInternal;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "nntrain: error: out of host memory\n");
    return kExitInternal;
  } catch (const std::exception& e) {
    // Anything else — a CUDA/cuBLAS failure mid-run included — is exit 1. Files already
    // written are complete (atomic writes); the run's results are not written.
    fmt::print(stderr, "nntrain: internal error: {}\n", e.what());
    return kExitInternal;
  } catch (...) {
    fmt::print(stderr, "nntrain: internal error: unknown exception\n");
    return kExitInternal;
  }
}

std::string nntrain_version_string() {
  const BuildInfo& b = build_info();
  return fmt::format("nntrain {} ({}, {}, {})", b.version, b.git_revision, b.build_type, b.cuda);
}

}  // namespace nntrain
