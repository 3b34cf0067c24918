#pragma once
// How one stage of the halo exchange moves between ranks: one small interface,
// three transports (parallel.halo_transport in the config), in kernels/transport/:
//   mpi-host        MPI_Irecv/Isend on host memory (a GPU backend's faces are
//                   staged through pinned host buffers)
//   mpi-cuda-aware  MPI_Irecv/Isend on device buffers (MPI reads the GPU itself)
//   nccl            ncclRecv/ncclSend grouped per stage, on a halo stream that
//                   is ordered after the packs and before the unpacks on the
//                   backend's stream: the host never waits for it.
// HaloExchange packs and unpacks (through the backend) and picks the messages;
// the transport owns the buffers and knows when the bytes may leave and when a
// buffer may be reused.
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "solver/backend.hpp"
#include "core/run_settings.hpp"

namespace heatwave {

// One message: `count` elements to or from `peer`, in a buffer the transport
// handed out. Tags tell apart messages between the same two ranks (MPI
// matches by tag; NCCL in posting order, so both sides post them sorted by tag).
struct HaloMessage {
  void* data;
  long count;
  int peer;
  int tag;
};

// Where a backend's fields live and the stream its packs and unpacks are queued on.
struct BackendMemory {
  MemorySpace space = MemorySpace::host;
  GpuStream stream = nullptr;
};

class HaloTransport {
 public:
  virtual ~HaloTransport() = default;
  virtual HaloTransportKind kind() const = 0;
  // Where the bytes travel, for the run log (e.g. "pinned host staging").
  virtual std::string path() const = 0;
  // A face buffer of `count` elements in the backend's memory, owned by the transport.
  virtual void* buffer(std::size_t count) = 0;
  // One stage: receives are posted before the faces are packed, sends after
  // the packs are queued (the transport lets the bytes leave only once they
  // are packed); wait() ends the stage: the receive buffers may then be
  // unpacked (for nccl: by work queued on the backend's stream after it);
  // unpacked() says the unpacks are queued (a buffer is reused only after they ran).
  virtual void post_receives(std::span<const HaloMessage> receives) = 0;
  virtual void post_sends(std::span<const HaloMessage> sends) = 0;
  virtual void wait() = 0;
  virtual void unpacked() {}
};

// The transport of `kind` for a backend's memory (collective over `comm` for
// nccl). Throws Error where this build has no such transport.
std::unique_ptr<HaloTransport> make_halo_transport(HaloTransportKind kind, MPI_Comm comm, int element_bytes,
                                                   const BackendMemory& memory);

// Whether this build has the NCCL transport (HEATWAVE_NCCL in CMake).
bool nccl_available();
// Whether MPI reads and writes CUDA device memory itself (OpenMPI's
// MPIX_Query_cuda_support, asked only where the library was built with it).
bool cuda_aware_mpi();

}  // namespace heatwave
