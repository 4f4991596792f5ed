// resident_stamps.cpp — see resident_stamps.hpp.
#include "resident_stamps.hpp"

#include <cstdlib>
#include <vector>

#include "errors.hpp"
#include "fileio.hpp"

namespace nntrain::cuda {

std::string resident_stamps_for(ResidentPlan* plan, const std::string& path) {
  const char* e = std::getenv("NNTRAIN_RESIDENT_STAMPS");
  if (e == nullptr || *e == 0) return "";
  if (plan == nullptr || !plan->grid || !plan->exact)
    throw UsageError("NNTRAIN_RESIDENT_STAMPS: only the resident path's exact grid is stamped (2-20-5-1 relu, "
                     "--gpu-path resident, more than 480 samples per step or NNTRAIN_RESIDENT_GRID_BLOCKS); this "
                     "run's GPU path: " + path);
  plan->stamps = true;
  return e;
}

void write_resident_stamps(const std::string& file, const DeviceBuffer<unsigned long long>& dev, cudaStream_t s) {
  std::vector<unsigned long long> rows(dev.size());
  dev.download(rows.data(), rows.size(), s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  // The kernel's field order (resident_stamps.cuh: StampPhase, StampField).
  std::string csv =
      "block,group_stage_cycles,grid_sync1_cycles,exchange_cycles,grid_sync2_cycles,weight_copy_cycles,steps,"
      "launch_cycles,launch_ns\n";
  for (size_t b = 0; b * kStampFields < rows.size(); ++b) {
    csv += std::to_string(b);
    for (int f = 0; f < kStampFields; ++f) csv += "," + std::to_string(rows[b * kStampFields + size_t(f)]);
    csv += "\n";
  }
  write_file_atomic(file, csv);
}

}  // namespace nntrain::cuda
