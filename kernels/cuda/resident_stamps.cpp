// resident_stamps.cpp — see resident_stamps.hpp.
#include "resident_stamps.hpp"

#include <cstdlib>
#include <vector>

#include "errors.hpp"
#include "fileio.hpp"
#include "resident_grid.hpp"

namespace nntrain::cuda {

namespace {

constexpr const char* kOnlyExactGrid =
    "NNTRAIN_RESIDENT_STAMPS: only the resident path's exact grid is stamped (2-20-5-1 relu, --gpu-path resident, "
    "more than 480 samples per step or NNTRAIN_RESIDENT_GRID_BLOCKS); ";

const char* stamps_file() {
  const char* e = std::getenv("NNTRAIN_RESIDENT_STAMPS");
  return e == nullptr || *e == 0 ? nullptr : e;
}

}  // namespace

std::string resident_stamps_problem(const std::vector<int>& widths, const std::vector<Activation>& acts,
                                    GpuPath gpu_path) {
  const char* file = stamps_file();
  if (file == nullptr) return "";
  if (gpu_path != GpuPath::resident) return std::string(kOnlyExactGrid) + "this run's --gpu-path is not resident";
  ResidentPlan p;  // the batch and the shared memory aside: does the exact group stage take this net?
  plan_resident_grid(p, widths, acts, 1024, size_t(1) << 30, 0);
  if (!p.exact) return std::string(kOnlyExactGrid) + "this run's net is not 2-20-5-1 relu, relu, identity";
  check_output_file(file, "NNTRAIN_RESIDENT_STAMPS");
  return "";
}

std::string resident_stamps_for(ResidentPlan* plan, const std::string& path) {
  const char* file = stamps_file();
  if (file == nullptr) return "";
  if (plan == nullptr || !plan->grid || !plan->exact)
    throw UsageError(std::string(kOnlyExactGrid) + "this run's GPU path: " + path);
  plan->stamps = true;
  return file;
}

void write_resident_stamps(const std::string& file, const DeviceBuffer<unsigned long long>& dev, cudaStream_t s) {
  std::vector<unsigned long long> rows(dev.size());
  dev.download(rows.data(), rows.size(), s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  // The kernel's field order (resident_stamps.cuh: StampPhase, StampField).
  std::string csv =
      "block,group_stage_cycles,grid_sync1_cycles,exchange_cycles,grid_sync2_cycles,weight_copy_cycles,steps,"
      "loop_cycles,loop_ns\n";
  for (size_t b = 0; b * kStampFields < rows.size(); ++b) {
    csv += std::to_string(b);
    for (int f = 0; f < kStampFields; ++f) csv += "," + std::to_string(rows[b * kStampFields + size_t(f)]);
    csv += "\n";
  }
  write_file_atomic(file, csv);
}

}  // namespace nntrain::cuda
