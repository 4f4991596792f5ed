// names.hpp — the device, CPU-backend and GPU-path names, defined once.
//
// The config file, the command line (its IsMember checks), the backend registry and every
// report spell these names from the tables below; once parsed they are enums, so no code
// compares strings to choose a device.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nntrain {

enum class Device { cpu, gpu };                  // where one run trains
enum class DeviceChoice { cpu, gpu, both };      // config "device", --device
enum class CpuBackendKind { fast, reference };   // config "cpu.backend", --backend
// config "gpu.path", --gpu-path ("auto" = automatic; "fused" = the one-kernel-per-step v2;
// "resident" = one block, one launch per chunk of epochs)
enum class GpuPath { automatic, fused, cublas, resident };

template <class E>
struct NamedValue {
  E value;
  const char* name;
};

inline constexpr NamedValue<Device> kDeviceNames[] = {{Device::cpu, "cpu"}, {Device::gpu, "gpu"}};
inline constexpr NamedValue<DeviceChoice> kDeviceChoiceNames[] = {
    {DeviceChoice::cpu, "cpu"}, {DeviceChoice::gpu, "gpu"}, {DeviceChoice::both, "both"}};
inline constexpr NamedValue<CpuBackendKind> kCpuBackendNames[] = {{CpuBackendKind::fast, "fast"},
                                                                  {CpuBackendKind::reference, "reference"}};
inline constexpr NamedValue<GpuPath> kGpuPathNames[] = {
    {GpuPath::automatic, "auto"}, {GpuPath::fused, "fused"}, {GpuPath::cublas, "cublas"},
    {GpuPath::resident, "resident"}};

// Values a config key (dotted path) once took, no longer offered: the one line the config
// reader and the command line give for them (exit 2), saying when and what to use instead.
struct RetiredName {
  const char* key;
  const char* name;
  const char* note;
};
inline constexpr RetiredName kRetiredNames[] = {
    {"gpu.path", "fused-v1",
     "\"fused-v1\" was retired on 2026-11-29 (fused v2 fits every net it fitted and takes one kernel per step, not "
     "two: docs/GPU.md); use \"fused\" or \"auto\""}};
inline std::string retired_name_note(std::string_view key, std::string_view value) {
  for (const auto& r : kRetiredNames)
    if (key == r.key && value == r.name) return r.note;
  return "";
}

template <class E, size_t N>
const char* name_of(const NamedValue<E> (&table)[N], E v) {
  for (const auto& e : table)
    if (e.value == v) return e.name;
  return "?";
}
template <class E, size_t N>
std::optional<E> parse_name(const NamedValue<E> (&table)[N], std::string_view s) {
  for (const auto& e : table)
    if (s == e.name) return e.value;
  return std::nullopt;
}
template <class E, size_t N>
std::vector<std::string> names_of(const NamedValue<E> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& e : table) out.emplace_back(e.name);
  return out;
}

inline const char* to_string(Device d) { return name_of(kDeviceNames, d); }
inline const char* to_string(DeviceChoice d) { return name_of(kDeviceChoiceNames, d); }
inline const char* to_string(CpuBackendKind k) { return name_of(kCpuBackendNames, k); }
inline const char* to_string(GpuPath p) { return name_of(kGpuPathNames, p); }

// The devices a choice trains, in order: {cpu}, {gpu} or {cpu, gpu}.
inline std::vector<Device> devices_of(DeviceChoice c) {
  if (c == DeviceChoice::both) return {Device::cpu, Device::gpu};
  return {c == DeviceChoice::gpu ? Device::gpu : Device::cpu};
}

}  // namespace nntrain
