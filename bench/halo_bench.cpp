// heatwave_halo_bench: halo-exchange bandwidth per transport against message
// size, between 2 ranks on 2 GPUs, and the peer-to-peer copy (cudaMemcpyPeer)
// as the reference. Each exchange is what a halo stage does: both ranks send
// `bytes` to each other at once; bandwidth = bytes / time per exchange (per
// direction), the slower rank's time. The transports are the solver's own
// (solver/halo_transport.hpp, kernels/transport/) on device buffers, as a GPU
// backend hands them faces; mpi-host includes its device <-> pinned host staging.
//   mpirun -n 2 heatwave_halo_bench OUT.json [MAX_BYTES]
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/collective.hpp"
#include "io/errors.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/device.hpp"
#include "solver/halo_transport.hpp"

namespace heatwave {
namespace {

// Exchanges per size: enough bytes for a steady time, never fewer than 20.
int repeats(std::size_t bytes) {
  return static_cast<int>(std::clamp<std::size_t>((std::size_t(1) << 31) / bytes, 20, 2000));
}

// Seconds per call of `exchange`, the slower rank's (MPI_MAX), after warm-ups.
double time_exchange(MPI_Comm comm, int n, const std::function<void()>& exchange) {
  for (int i = 0; i < 5; ++i) exchange();
  check_mpi(MPI_Barrier(comm), "MPI_Barrier");
  const double t0 = MPI_Wtime();
  for (int i = 0; i < n; ++i) exchange();
  double t = (MPI_Wtime() - t0) / n;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  return t;
}

int run(int argc, char** argv) {
  int rank = 0, size = 0;
  MPI_Comm comm = MPI_COMM_WORLD;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size != 2 || argc < 2) {
    if (rank == 0) std::fprintf(stderr, "usage: mpirun -n 2 heatwave_halo_bench OUT.json [MAX_BYTES]\n");
    return 2;
  }
  const std::size_t max_bytes = argc > 2 ? std::stoull(argv[2]) : std::size_t(256) << 20;
  const auto devices = cuda::devices();
  if (devices.size() < 2) throw Error(ExitCode::cuda_error, "heatwave_halo_bench needs 2 GPUs (one per rank)");
  const cuda::DeviceInfo device = cuda::select_device(rank);
  const int peer = 1 - rank;

  float *send = nullptr, *recv = nullptr;  // the p2p reference's
  HW_CUDA(cudaMalloc(&send, max_bytes));
  HW_CUDA(cudaMalloc(&recv, max_bytes));
  HW_CUDA(cudaMemset(send, rank + 1, max_bytes));
  cudaStream_t stream;
  HW_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  std::vector<std::size_t> sizes;
  for (std::size_t b = 4096; b <= max_bytes; b *= 4) sizes.push_back(b);

  nlohmann::json out;
  out["device"] = device.name;
  out["ranks"] = 2;
  out["bandwidth"] = "bytes per exchange / seconds per exchange: each direction, both at once";
  if (const char* nvls = std::getenv("NCCL_NVLS_ENABLE")) out["NCCL_NVLS_ENABLE"] = nvls;

  // One transport over every size: an exchange of `bytes` each way, from and
  // into its own device buffers; the stream is waited for after each exchange
  // (the solver queues its packs and unpacks there).
  auto measure = [&](HaloTransportKind kind) {
    auto transport = make_halo_transport(kind, comm, sizeof(float), {MemorySpace::device, stream});
    void* s = transport->buffer(max_bytes / sizeof(float));
    void* r = transport->buffer(max_bytes / sizeof(float));
    HW_CUDA(cudaMemset(s, rank + 1, max_bytes));
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t bytes : sizes) {
      const long count = static_cast<long>(bytes / sizeof(float));
      const HaloMessage in{r, count, peer, 0}, away{s, count, peer, 0};
      const double t = time_exchange(comm, repeats(bytes), [&] {
        transport->post_receives({&in, 1});
        transport->post_sends({&away, 1});
        transport->wait();
        transport->unpacked();
        HW_CUDA(cudaStreamSynchronize(stream));
      });
      rows.push_back({{"bytes", bytes}, {"seconds", t}, {"GBps", bytes / t / 1e9}});
      if (rank == 0)
        std::printf("%-15s %10zu B  %9.2f us  %8.2f GB/s\n", to_string(kind), bytes, t * 1e6, bytes / t / 1e9);
    }
    out["transports"][to_string(kind)] = rows;
  };
  for (HaloTransportKind kind :
       {HaloTransportKind::nccl, HaloTransportKind::mpi_host, HaloTransportKind::mpi_cuda_aware}) {
    if (kind == HaloTransportKind::nccl && !nccl_available()) continue;
    if (kind == HaloTransportKind::mpi_cuda_aware && !cuda_aware_mpi()) continue;
    measure(kind);
  }

  // The reference: peer-to-peer copies by one process between the two GPUs,
  // one way, and both ways at once (two streams), the same bytes per direction.
  check_mpi(MPI_Barrier(comm), "MPI_Barrier");
  if (rank == 0) {
    const int a = device.index, b = devices[1 % devices.size()].index;
    int can = 0;
    HW_CUDA(cudaDeviceCanAccessPeer(&can, a, b));
    out["p2p_access"] = can != 0;
    float* remote[2] = {nullptr, nullptr};
    cudaStream_t remote_stream;
    HW_CUDA(cudaSetDevice(b));
    if (can) cudaDeviceEnablePeerAccess(a, 0), cudaGetLastError();
    HW_CUDA(cudaMalloc(&remote[0], max_bytes));
    HW_CUDA(cudaMalloc(&remote[1], max_bytes));
    HW_CUDA(cudaStreamCreateWithFlags(&remote_stream, cudaStreamNonBlocking));
    HW_CUDA(cudaSetDevice(a));
    if (can) cudaDeviceEnablePeerAccess(b, 0), cudaGetLastError();
    nlohmann::json one = nlohmann::json::array(), both = nlohmann::json::array();
    for (std::size_t bytes : sizes) {
      auto timed = [&](bool two_ways) {
        auto copy = [&] {
          HW_CUDA(cudaMemcpyPeerAsync(remote[0], b, send, a, bytes, stream));
          if (two_ways) HW_CUDA(cudaMemcpyPeerAsync(recv, a, remote[1], b, bytes, remote_stream));
          HW_CUDA(cudaStreamSynchronize(stream));
          if (two_ways) HW_CUDA(cudaStreamSynchronize(remote_stream));
        };
        for (int i = 0; i < 5; ++i) copy();
        const int n = repeats(bytes);
        const double t0 = MPI_Wtime();
        for (int i = 0; i < n; ++i) copy();
        return (MPI_Wtime() - t0) / n;
      };
      const double t1 = timed(false), t2 = timed(true);
      one.push_back({{"bytes", bytes}, {"seconds", t1}, {"GBps", bytes / t1 / 1e9}});
      both.push_back({{"bytes", bytes}, {"seconds", t2}, {"GBps", bytes / t2 / 1e9}});
      std::printf("%-15s %10zu B  %8.2f GB/s one way, %8.2f GB/s each way both at once\n", "p2p (memcpy)", bytes,
                  bytes / t1 / 1e9, bytes / t2 / 1e9);
    }
    out["p2p_one_way"] = one;
    out["p2p_both_ways"] = both;
    std::ofstream(argv[1]) << out.dump(2) << "\n";
    std::printf("written to %s\n", argv[1]);
  }
  check_mpi(MPI_Barrier(comm), "MPI_Barrier");
  return 0;
}

}  // namespace
}  // namespace heatwave

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int code = 0;
  try {
    code = heatwave::run(argc, argv);
  } catch (const heatwave::Error& e) {
    std::fprintf(stderr, "heatwave_halo_bench: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, static_cast<int>(e.code()));
  }
  MPI_Finalize();
  return code;
}
