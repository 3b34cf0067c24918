// heatwave_halo_bench: halo-exchange bandwidth per transport against message
// size, between 2 ranks on 2 GPUs, and the peer-to-peer copy (cudaMemcpyPeer)
// as the reference. Each exchange is what a halo stage does: both ranks send
// `bytes` to each other at once; bandwidth = bytes / time per exchange (per
// direction), the slower rank's time. The transports are the solver's own
// (solver/halo_transport.hpp); mpi-host includes the device <-> pinned host
// copies the solver's staging does.
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
#include "kernels/cuda_backend.hpp"
#include "kernels/cuda_check.hpp"
#include "solver/halo_exchange.hpp"
#include "solver/halo_transport.hpp"
#ifdef HEATWAVE_HAVE_NCCL
#include "kernels/nccl_transport.hpp"
#endif

namespace heatwave {
namespace {

// Exchanges per size: enough bytes for a steady time, never fewer than 20.
int repeats(std::size_t bytes) { return static_cast<int>(std::clamp<std::size_t>((std::size_t(1) << 31) / bytes, 20, 2000)); }

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

  float *send = nullptr, *recv = nullptr, *host_send = nullptr, *host_recv = nullptr;
  HW_CUDA(cudaMalloc(&send, max_bytes));
  HW_CUDA(cudaMalloc(&recv, max_bytes));
  HW_CUDA(cudaMemset(send, rank + 1, max_bytes));
  HW_CUDA(cudaMallocHost(&host_send, max_bytes));
  HW_CUDA(cudaMallocHost(&host_recv, max_bytes));
  cudaStream_t stream;
  HW_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  std::vector<std::size_t> sizes;
  for (std::size_t b = 4096; b <= max_bytes; b *= 4) sizes.push_back(b);

  nlohmann::json out;
  out["device"] = device.name;
  out["ranks"] = 2;
  out["bandwidth"] = "bytes per exchange / seconds per exchange: each direction, both at once";
  if (const char* nvls = std::getenv("NCCL_NVLS_ENABLE")) out["NCCL_NVLS_ENABLE"] = nvls;

  // One transport over every size: an exchange of `bytes` each way.
  auto measure = [&](HaloTransport& transport, void* s, void* r, const std::function<void(std::size_t)>& before,
                     const std::function<void(std::size_t)>& after) {
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t bytes : sizes) {
      const long count = static_cast<long>(bytes / sizeof(float));
      const HaloMessage in{r, count, peer, 0}, away{s, count, peer, 0};
      const double t = time_exchange(comm, repeats(bytes), [&] {
        before(bytes);
        transport.post_receives({&in, 1});
        transport.post_sends({&away, 1});
        transport.wait();
        after(bytes);
      });
      rows.push_back({{"bytes", bytes}, {"seconds", t}, {"GBps", bytes / t / 1e9}});
      if (rank == 0) std::printf("%-15s %10zu B  %9.2f us  %8.2f GB/s\n", to_string(transport.kind()).c_str(), bytes, t * 1e6, bytes / t / 1e9);
    }
    out["transports"][to_string(transport.kind())] = rows;
  };
  auto sync = [&](std::size_t) { HW_CUDA(cudaStreamSynchronize(stream)); };
  auto nothing = [](std::size_t) {};

#ifdef HEATWAVE_HAVE_NCCL
  {  // The packs and unpacks are kernels on the stream in the solver; here the stream is waited for after each exchange.
    auto nccl = cuda::make_nccl_transport(comm, stream, sizeof(float));
    measure(*nccl, send, recv, nothing, sync);
  }
#endif
  {
    auto mpi = make_mpi_transport(HaloTransportKind::mpi_host, comm, sizeof(float));
    measure(
        *mpi, host_send, host_recv,
        [&](std::size_t bytes) {
          HW_CUDA(cudaMemcpyAsync(host_send, send, bytes, cudaMemcpyDeviceToHost, stream));
          HW_CUDA(cudaStreamSynchronize(stream));
        },
        [&](std::size_t bytes) {
          HW_CUDA(cudaMemcpyAsync(recv, host_recv, bytes, cudaMemcpyHostToDevice, stream));
          HW_CUDA(cudaStreamSynchronize(stream));
        });
  }
  if (cuda_aware_mpi()) {
    auto mpi = make_mpi_transport(HaloTransportKind::mpi_cuda_aware, comm, sizeof(float));
    measure(*mpi, send, recv, nothing, nothing);
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
