// cuda_check.hpp — error checking for CUDA runtime and cuBLAS calls.
//
// Every failing call throws CudaError naming the statement, the error and file:line, so a
// failure on the (rarely available) GPU machine says exactly which call broke. Kernel
// launches are followed by CUDA_CHECK_LAUNCH(), which reads the launch error without
// synchronising (execution errors surface at the next synchronising call, also checked).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace nntrain::cuda {

struct CudaError : std::runtime_error {
  explicit CudaError(const std::string& what) : std::runtime_error(what) {}
};

inline const char* cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "CUBLAS_STATUS_(unknown)";
  }
}

[[noreturn]] inline void throw_cuda(cudaError_t e, const char* stmt, const char* file, int line) {
  throw CudaError(std::string(stmt) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ") at " +
                  file + ":" + std::to_string(line));
}

[[noreturn]] inline void throw_cublas(cublasStatus_t s, const char* stmt, const char* file, int line) {
  throw CudaError(std::string(stmt) + " failed: " + cublas_status_name(s) + " at " + file + ":" + std::to_string(line));
}

}  // namespace nntrain::cuda

#define CUDA_CHECK(stmt)                                                               \
  do {                                                                                 \
    const cudaError_t nn_err_ = (stmt);                                                \
    if (nn_err_ != cudaSuccess) ::nntrain::cuda::throw_cuda(nn_err_, #stmt, __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(stmt)                                                                   \
  do {                                                                                       \
    const cublasStatus_t nn_st_ = (stmt);                                                    \
    if (nn_st_ != CUBLAS_STATUS_SUCCESS) ::nntrain::cuda::throw_cublas(nn_st_, #stmt, __FILE__, __LINE__); \
  } while (0)

// After every <<<...>>>: a bad configuration or missing kernel image is reported here,
// naming the launch site.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
