#pragma once
// CUDA-only helpers (include from .cu files): checked calls and device buffers.
#include <cuda_runtime.h>

#include <string>
#include <utility>

#include "io/errors.hpp"

namespace heatwave::cuda {

// Every CUDA call is checked; a failure names the call, file and line.
inline void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess)
    throw Error(ExitCode::cuda_error, std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                                          cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
}
#define HW_CUDA(call) ::heatwave::cuda::check((call), #call, __FILE__, __LINE__)

// An owning device allocation; moves, never copies.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(size_, o.size_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }

  void allocate(std::size_t n) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    size_ = 0;
    HW_CUDA(cudaMalloc(&ptr_, n * sizeof(T)));
    size_ = n;
  }
  // Grows to at least n elements (contents not kept).
  void reserve(std::size_t n) {
    if (n > size_) allocate(n);
  }
  T* get() const { return ptr_; }
  std::size_t size() const { return size_; }

 private:
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace heatwave::cuda
