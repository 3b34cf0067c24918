// Device discovery and the device-to-device copy roofline.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "io/errors.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/device.hpp"

namespace heatwave::cuda {

namespace {

DeviceInfo describe(int index) {
  cudaDeviceProp p{};
  HW_CUDA(cudaGetDeviceProperties(&p, index));
  DeviceInfo d;
  d.index = index;
  d.name = p.name;
  d.compute_major = p.major, d.compute_minor = p.minor;
  d.multiprocessors = p.multiProcessorCount;
  d.memory_gib = p.totalGlobalMem / double(1 << 30);
  d.l2_mib = p.l2CacheSize / double(1 << 20);
  d.shared_per_block_optin_kib = static_cast<int>(p.sharedMemPerBlockOptin / 1024);
  int cluster = 0;
  cudaDeviceGetAttribute(&cluster, cudaDevAttrClusterLaunch, index);
  d.clusters = cluster != 0;
  return d;
}

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, std::size_t n) {
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[k] = in[k];
}

}  // namespace

std::vector<DeviceInfo> devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: not an error here
    return {};
  }
  std::vector<DeviceInfo> out;
  for (int i = 0; i < count; ++i) out.push_back(describe(i));
  return out;
}

DeviceInfo select_device(int node_local_rank) {
  const auto all = devices();
  if (all.empty()) throw Error(ExitCode::cuda_error, "no CUDA device is visible to this process");
  const DeviceInfo& d = all[node_local_rank % all.size()];
  HW_CUDA(cudaSetDevice(d.index));
  return d;
}

DeviceInfo current_device() {
  int device = 0;
  HW_CUDA(cudaGetDevice(&device));
  return describe(device);
}

std::size_t free_memory() {
  std::size_t free = 0, total = 0;
  HW_CUDA(cudaMemGetInfo(&free, &total));
  return free;
}

double copy_bandwidth(std::size_t bytes, int repeats) {
  const std::size_t n = bytes / sizeof(float4);
  DeviceBuffer<float4> a, b;
  a.allocate(n);
  b.allocate(n);
  HW_CUDA(cudaMemset(a.get(), 0x3f, n * sizeof(float4)));
  cudaEvent_t start, stop;
  HW_CUDA(cudaEventCreate(&start));
  HW_CUDA(cudaEventCreate(&stop));
  int sms = 0;
  HW_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::vector<double> seconds;
  for (int r = 0; r < repeats + 2; ++r) {  // two warm-ups
    HW_CUDA(cudaEventRecord(start));
    copy_kernel<<<sms * 8, 512>>>(a.get(), b.get(), n);
    HW_CUDA(cudaGetLastError());
    HW_CUDA(cudaEventRecord(stop));
    HW_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    HW_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (r >= 2) seconds.push_back(ms * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(seconds.begin(), seconds.end());
  return 2.0 * n * sizeof(float4) / seconds[seconds.size() / 2];
}

}  // namespace heatwave::cuda
