// cmd_common.cpp — exit-code mapping, version string and flag merging shared by commands.
#include <fmt/format.h>

#include <new>

#include "commands.hpp"
#include "errors.hpp"
#include "sysinfo.hpp"

namespace nntrain {

int guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    fmt::print(stderr, "nntrain: error: {}\n", e.what());
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

nlohmann::json flags_json(const FlagsSet& set, const std::string& device, long long epochs, double lr,
                          unsigned long long seed, long long batch_size, long long threads,
                          const std::string& cpu_backend, const std::string& gpu_path) {
  nlohmann::json j = nlohmann::json::object();
  if (set.device) j["device"] = device;
  if (set.epochs) j["train"]["epochs"] = epochs;
  if (set.lr) j["optimizer"]["lr"] = lr;
  if (set.seed) j["seed"] = seed;
  if (set.batch_size) j["train"]["batch_size"] = batch_size;
  if (set.threads) j["cpu"]["threads"] = threads;
  if (set.cpu_backend) j["cpu"]["backend"] = cpu_backend;
  if (set.gpu_path) j["gpu"]["path"] = gpu_path;
  return j;
}

}  // namespace nntrain
