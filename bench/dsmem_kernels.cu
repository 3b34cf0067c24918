// The DSMEM microbenchmark's kernels and timing (bench/dsmem.hpp):
//   latency    one thread chases dependent indices through 8 KiB of shared
//              memory, its block's own or a peer's (cluster.map_shared_rank):
//              clock cycles a load;
//   bandwidth  every block of a full GPU reads 16-byte packs of its own or a
//              peer's shared memory: TB/s over the GPU, bytes a clock an SM;
//   barriers   a loop of `work` FMAs a thread with __syncthreads, cluster.sync,
//              or the split form (barrier_arrive, the work, barrier_wait)
//              each iteration: ns an iteration beyond the work alone;
//   grid       the same for a persistent launch of one block an SM (all
//              resident: a cooperative launch), synchronised each iteration
//              by grid.sync or by flags: each block publishes its iteration
//              count (a release store) and waits (acquire loads) only for its
//              four neighbours in a 2D arrangement of the blocks, as a
//              persistent stencil kernel would for its tiles' edges.
// Cluster sizes 1 to 16 (16 is non-portable; skipped where it cannot be
// co-scheduled). CUDA events time the launches: a warm-up, then the median.
#include <cooperative_groups.h>

#include <algorithm>
#include <cuda/atomic>
#include <vector>

#include "bench/dsmem.hpp"
#include "kernels/cuda/check.hpp"

namespace heatwave::bench {

namespace {

namespace cg = cooperative_groups;
using cuda::DeviceBuffer;

constexpr int chain_length = 2048;  // ints: 8 KiB
constexpr int hops = 8192;
constexpr int stream_packs = 2048;  // float4: 32 KiB a block
constexpr int stream_threads = 512;
constexpr int sync_threads = 256;

// The block `offset` ranks on in the cluster (0: this block).
__device__ int peer_rank(const cg::cluster_group& cluster, int offset) {
  return static_cast<int>((cluster.block_rank() + offset) % cluster.num_blocks());
}

__global__ void chase_kernel(int offset, long long* cycles, int* sink) {
  extern __shared__ int chain[];
  cg::cluster_group cluster = cg::this_cluster();
  // A stride coprime to the length: every load depends on the last, over the whole array.
  for (int i = threadIdx.x; i < chain_length; i += blockDim.x) chain[i] = (i + 733) % chain_length;
  cluster.sync();
  const int* target = cluster.map_shared_rank(chain, peer_rank(cluster, offset));
  if (threadIdx.x == 0 && cluster.block_rank() == 0) {
    int j = 0;
    const long long t0 = clock64();
#pragma unroll 8
    for (int h = 0; h < hops; ++h) j = target[j];
    const long long t1 = clock64();
    *cycles = t1 - t0;
    *sink = j;
  }
  cluster.sync();  // the peer's shared memory lives until its readers are done
}

__global__ void stream_kernel(int offset, int repeats, float* sink) {
  extern __shared__ float4 packs[];
  cg::cluster_group cluster = cg::this_cluster();
  for (int i = threadIdx.x; i < stream_packs; i += blockDim.x)
    packs[i] = make_float4(static_cast<float>(i), 1.0f, 2.0f, 3.0f);
  cluster.sync();
  const float4* source = cluster.map_shared_rank(packs, peer_rank(cluster, offset));
  float4 sum = make_float4(0, 0, 0, 0);
  for (int r = 0; r < repeats; ++r)
    for (int i = threadIdx.x; i < stream_packs; i += blockDim.x) {
      // The index moves with r: no load is hoisted out of the repeats.
      const float4 v = source[(i + r * 32) & (stream_packs - 1)];
      sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
    }
  cluster.sync();
  if (sum.x + sum.y + sum.z + sum.w == -1.0f) *sink = sum.x;  // never true: keeps the loads
}

enum class Barrier { none, block, cluster, split };

template <Barrier B>
__global__ void barrier_kernel(int iterations, int work, float* sink) {
  cg::cluster_group cluster = cg::this_cluster();
  float x = static_cast<float>(threadIdx.x);
  for (int it = 0; it < iterations; ++it) {
    if constexpr (B == Barrier::split) cluster.barrier_arrive();
    for (int w = 0; w < work; ++w) x = fmaf(x, 1.000001f, 0.5f);
    if constexpr (B == Barrier::block) __syncthreads();
    if constexpr (B == Barrier::cluster) cluster.sync();
    if constexpr (B == Barrier::split) cluster.barrier_wait();
  }
  if (x == -1.0f) *sink = x;
}

// Median milliseconds of `repeats` runs of `launch` (CUDA events) after a
// warm-up; 0 with no repeats.
template <class Launch>
float median_ms(int repeats, Launch&& launch) {
  const cuda::Event start(true), stop(true);
  std::vector<float> ms;
  for (int r = 0; r <= repeats; ++r) {
    HW_CUDA(cudaEventRecord(start));
    launch();
    HW_CUDA(cudaEventRecord(stop));
    HW_CUDA(cudaEventSynchronize(stop));
    float t = 0;
    HW_CUDA(cudaEventElapsedTime(&t, start, stop));
    if (r > 0) ms.push_back(t);
  }
  if (ms.empty()) return 0.0f;
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Whole-GPU synchronisation of a persistent launch (the blocks in a bx-wide
// 2D arrangement, periodic). Flags: this block's count, from `flags[block]`
// at the start (every launch ends with all blocks at the same count).
template <bool Flags>
__global__ void grid_barrier_kernel(int iterations, int work, unsigned* flags, int bx, float* sink) {
  cg::grid_group grid = cg::this_grid();
  float x = static_cast<float>(threadIdx.x);
  const int b = static_cast<int>(blockIdx.x), blocks = static_cast<int>(gridDim.x), by = blocks / bx;
  const int i = b % bx, j = b / bx;
  const int neighbours[4] = {(i + bx - 1) % bx + j * bx, (i + 1) % bx + j * bx, i + ((j + by - 1) % by) * bx,
                             i + ((j + 1) % by) * bx};
  ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_device> mine(flags[b]);
  const unsigned base = Flags && threadIdx.x < 4 ? mine.load(::cuda::memory_order_relaxed) : 0;
  if constexpr (Flags) __syncthreads();  // every waiter has read the count before thread 0 moves it
  for (int it = 1; it <= iterations; ++it) {
    for (int w = 0; w < work; ++w) x = fmaf(x, 1.000001f, 0.5f);
    if constexpr (Flags) {
      __syncthreads();
      if (threadIdx.x == 0) mine.store(base + it, ::cuda::memory_order_release);
      if (threadIdx.x < 4) {  // a thread a neighbour: the four waits overlap
        ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_device> theirs(flags[neighbours[threadIdx.x]]);
        while (theirs.load(::cuda::memory_order_acquire) < base + it) {
        }
      }
      __syncthreads();
    } else {
      grid.sync();
    }
  }
  if (x == -1.0f) *sink = x;
}

// Median milliseconds of `repeats` cooperative launches of `kernel` (one
// block of `threads` on each SM) after a warm-up.
template <class... Params, class... Args>
float time_cooperative(void (*kernel)(Params...), int blocks, int threads, int repeats, Args... args) {
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeCooperative;
  attribute[0].val.cooperative = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.attrs = attribute;
  config.numAttrs = 1;
  return median_ms(repeats, [&] { HW_CUDA(cudaLaunchKernelEx(&config, kernel, args...)); });
}

// Launches `kernel` as clusters of `cluster` blocks along x and returns the
// median milliseconds of `repeats` launches after a warm-up (0 with no
// repeats; `launched` 0 where the clusters cannot be co-scheduled). blocks <
// 0: as many as fit at once.
template <class... Params, class... Args>
float time_launches(void (*kernel)(Params...), int cluster, int blocks, int threads, std::size_t shared, int repeats,
                    int& launched, Args... args) {
  HW_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
  if (cluster > 8) HW_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = static_cast<unsigned>(cluster);
  attribute[0].val.clusterDim.y = attribute[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = shared;
  config.attrs = attribute;
  config.numAttrs = 1;
  config.gridDim = dim3(cluster);
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess || clusters == 0) {
    cudaGetLastError();
    return launched = 0, 0.0f;
  }
  launched = blocks < 0 ? clusters * cluster : blocks;
  config.gridDim = dim3(launched);
  return median_ms(repeats, [&] { HW_CUDA(cudaLaunchKernelEx(&config, kernel, args...)); });
}

}  // namespace

std::vector<DsmemResult> run_dsmem_bench(int repeats) {
  std::vector<DsmemResult> out;
  int device = 0, sms = 0, clock_khz = 0;
  HW_CUDA(cudaGetDevice(&device));
  HW_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  HW_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  DeviceBuffer<long long> cycles;
  DeviceBuffer<int> isink;
  DeviceBuffer<float> fsink;
  cycles.allocate(1), isink.allocate(1), fsink.allocate(1);
  const int sizes[] = {1, 2, 4, 8, 16};

  // Latency: one cluster; the median over repeats of the cycles a hop.
  for (int c : sizes) {
    for (int offset : {0, 1}) {
      if (c == 1 && offset == 1) continue;
      std::vector<double> per_hop;
      int launched = 0;
      for (int r = 0; r < repeats; ++r) {
        time_launches(chase_kernel, c, c, 32, chain_length * sizeof(int), 0, launched, offset, cycles.get(),
                      isink.get());
        if (!launched) break;
        long long host = 0;
        HW_CUDA(cudaMemcpy(&host, cycles.get(), sizeof host, cudaMemcpyDeviceToHost));
        per_hop.push_back(static_cast<double>(host) / hops);
      }
      if (per_hop.empty()) continue;
      std::sort(per_hop.begin(), per_hop.end());
      out.push_back({offset ? "latency, peer's shared memory" : "latency, own shared memory", c,
                     per_hop[per_hop.size() / 2], "cycles a dependent load", "one thread, 8 KiB chain"});
    }
  }

  // Bandwidth: a full GPU of blocks, each reading 32 KiB 64 times.
  constexpr int stream_repeats = 64;
  for (int c : sizes)
    for (int offset : {0, 1}) {
      if (c == 1 && offset == 1) continue;
      int blocks = 0;
      const float ms = time_launches(stream_kernel, c, -1, stream_threads, stream_packs * sizeof(float4), repeats,
                                     blocks, offset, stream_repeats, fsink.get());
      if (!blocks) continue;
      const double bytes = static_cast<double>(blocks) * stream_repeats * stream_packs * sizeof(float4);
      const double per_second = bytes / (ms * 1e-3);
      const std::string where = offset ? "peer's" : "own";
      out.push_back({"bandwidth, " + where + " shared memory", c, per_second / 1e12, "TB/s over the GPU",
                     std::to_string(blocks) + " blocks of " + std::to_string(stream_threads) + " threads"});
      out.push_back({"bandwidth a clock, " + where + " shared memory", c, per_second / sms / (clock_khz * 1e3),
                     "bytes a clock an SM (at the base clock attribute)", ""});
    }

  // Barriers: ns an iteration beyond the work alone, with 0 and 64 FMAs between.
  constexpr int iterations = 20000;
  for (int work : {0, 64}) {
    for (int c : sizes) {
      int blocks = 0;
      auto ns = [&](auto kernel) {
        const float ms = time_launches(kernel, c, -1, sync_threads, 0, repeats, blocks, iterations, work, fsink.get());
        return ms * 1e6 / iterations;
      };
      const double alone = ns(barrier_kernel<Barrier::none>);
      if (!blocks) continue;
      const std::string with = " (" + std::to_string(work) + " FMAs between)";
      out.push_back({"iteration, work alone" + with, c, alone, "ns", std::to_string(blocks) + " blocks"});
      if (c == 1) out.push_back({"__syncthreads" + with, c, ns(barrier_kernel<Barrier::block>) - alone, "ns", ""});
      out.push_back({"cluster.sync" + with, c, ns(barrier_kernel<Barrier::cluster>) - alone, "ns", ""});
      out.push_back({"barrier_arrive, work, barrier_wait" + with, c, ns(barrier_kernel<Barrier::split>) - alone, "ns",
                     "the work between arrive and wait"});
    }
  }

  // A persistent launch, one block an SM, synchronised each iteration:
  // grid.sync against flags with the four neighbours (blocks as bx x by).
  int bx = 1;
  for (int d = 2; d * d <= sms; ++d)
    if (sms % d == 0) bx = d;
  const std::string arrangement = std::to_string(sms) + " blocks of " + std::to_string(sync_threads) +
                                  " threads, one an SM, as " + std::to_string(bx) + " x " + std::to_string(sms / bx);
  DeviceBuffer<unsigned> flags;
  flags.allocate(static_cast<std::size_t>(sms));
  HW_CUDA(cudaMemset(flags.get(), 0, sizeof(unsigned) * sms));
  constexpr int grid_iterations = 4000;
  for (int work : {0, 64}) {
    auto ns = [&](auto kernel) {
      return time_cooperative(kernel, sms, sync_threads, repeats, grid_iterations, work, flags.get(), bx, fsink.get()) *
             1e6 / grid_iterations;
    };
    int blocks = 0;
    const float alone_ms = time_launches(barrier_kernel<Barrier::none>, 1, sms, sync_threads, 0, repeats, blocks,
                                         grid_iterations, work, fsink.get());
    const double alone = alone_ms * 1e6 / grid_iterations;
    const std::string with = " (" + std::to_string(work) + " FMAs between)";
    out.push_back({"iteration, work alone, one block an SM" + with, 1, alone, "ns", arrangement});
    out.push_back({"grid.sync" + with, 1, ns(grid_barrier_kernel<false>) - alone, "ns", arrangement});
    out.push_back({"flags, four neighbours" + with, 1, ns(grid_barrier_kernel<true>) - alone, "ns",
                   arrangement + "; release store, acquire loads"});
  }
  return out;
}

}  // namespace heatwave::bench
