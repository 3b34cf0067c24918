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

// The greatest stream priority of the device (cudaDeviceGetStreamPriorityRange:
// lower numbers run first when work of several streams waits for SMs).
inline int greatest_stream_priority() {
  int least = 0, greatest = 0;
  HW_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  return greatest;
}

// An owning non-blocking stream (no implicit order with the legacy default stream).
class Stream {
 public:
  explicit Stream(int priority = 0) {
    HW_CUDA(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, priority));
  }
  ~Stream() {
    if (stream_) cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// An owning event that orders streams (no timing).
class Event {
 public:
  // Ordering only by default (cheaper to record); timing: for cudaEventElapsedTime.
  explicit Event(bool timing = false) {
    HW_CUDA(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming));
  }
  ~Event() {
    if (event_) cudaEventDestroy(event_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  operator cudaEvent_t() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace heatwave::cuda
