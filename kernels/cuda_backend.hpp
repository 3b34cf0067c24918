#pragma once
// The CUDA backends behind a plain C++ header: the host code includes this
// and never sees CUDA types, so it builds with or without CUDA.
#include <memory>
#include <string>
#include <vector>

#include "solver/backend.hpp"
#include "solver/halo_transport.hpp"

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

// The baseline CUDA backend: one step per launch, fields in device memory.
// The halo transport decides where exchange buffers live: device memory for
// nccl (packs and unpacks queued on the compute stream, never waited for) and
// mpi-cuda-aware (handed to MPI as they are, so packs wait for the stream);
// pinned host memory that halos are staged through for mpi-host.
template <int D, class Real>
std::unique_ptr<Backend<D, Real>> make_backend(const Problem& problem, const LocalDomain<D>& domain,
                                               HaloTransportKind transport = HaloTransportKind::mpi_host);

// backend: cuda-cluster. 2D: temporal blocking over thread-block clusters with
// DSMEM halos. Where it cannot run (3D, exchanged faces, no cluster launch,
// a plan that does not fit) it returns the baseline backend (name() "cuda").
// `reason` says which, for the run log. Experimental: not yet run on a GPU
// (docs/performance.md, issue 7); `auto` never picks it.
template <int D, class Real>
std::unique_ptr<Backend<D, Real>> make_cluster_backend(const Problem& problem, const LocalDomain<D>& domain,
                                                       HaloTransportKind transport, std::string& reason);

// Device-to-device copy bandwidth in bytes/s (bytes read + bytes written),
// median of `repeats` copies of `bytes` bytes: the roofline for the benchmarks.
double copy_bandwidth(std::size_t bytes, int repeats);

}  // namespace heatwave::cuda
