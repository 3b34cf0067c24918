#pragma once
// The CUDA devices behind a plain C++ header: the host code (registry,
// heatwave info, bench) includes this and never sees CUDA types.
#include <cstddef>
#include <string>
#include <vector>

namespace heatwave::cuda {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int compute_major = 0, compute_minor = 0;
  int multiprocessors = 0;
  double memory_gib = 0;
  double l2_mib = 0;
  int shared_per_block_optin_kib = 0;
  bool clusters = false;  // thread-block clusters launchable (sm_90+)
};

// Devices this process sees (empty when none, or when the driver is absent).
std::vector<DeviceInfo> devices();

// Picks the device for this rank (node-local rank modulo device count) and
// returns its description. Throws Error(cuda_error) when there is none.
DeviceInfo select_device(int node_local_rank);

// The device this thread computes on.
DeviceInfo current_device();

// Bytes free on the current device (cudaMemGetInfo).
std::size_t free_memory();

// Device-to-device copy bandwidth in bytes/s (bytes read + bytes written),
// median of `repeats` copies of `bytes` bytes: the roofline for the benchmarks.
double copy_bandwidth(std::size_t bytes, int repeats);

}  // namespace heatwave::cuda
