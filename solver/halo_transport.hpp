#pragma once
// How one stage of the halo exchange moves between ranks: one small interface,
// three transports (parallel.halo_transport in the config):
//   mpi-host        MPI_Irecv/Isend on host memory (pinned host staging on a GPU)
//   mpi-cuda-aware  MPI_Irecv/Isend on device buffers (MPI reads the GPU itself)
//   nccl            ncclRecv/ncclSend grouped per stage, on a halo stream that
//                   is ordered after the packs and before the unpacks on the
//                   backend's compute stream: the host never waits for it.
// HaloExchange packs and unpacks (through the backend) and picks the messages;
// the transport only moves them.
#include <mpi.h>

#include <memory>
#include <span>
#include <string>

namespace heatwave {

enum class HaloTransportKind { mpi_host, mpi_cuda_aware, nccl };

// "mpi-host", "mpi-cuda-aware", "nccl": the config's names.
std::string to_string(HaloTransportKind);

// Whether this build has the NCCL transport (HEATWAVE_NCCL in CMake).
bool nccl_available();

// One message: `count` elements of `element_bytes` each, to or from `peer`.
// Tags tell apart messages between the same two ranks (MPI matches by tag;
// NCCL in posting order, so both sides post them sorted by tag).
struct HaloMessage {
  void* data;
  long count;
  int peer;
  int tag;
};

class HaloTransport {
 public:
  virtual ~HaloTransport() = default;
  virtual HaloTransportKind kind() const = 0;
  // One stage: receives are posted before the faces are packed, sends after
  // (the send buffers hold the packed faces, or packs queued on the backend's
  // stream for nccl); wait() ends the stage: the receive buffers may then be
  // unpacked (for nccl: by work queued on the backend's stream after it).
  virtual void post_receives(std::span<const HaloMessage> receives) = 0;
  virtual void post_sends(std::span<const HaloMessage> sends) = 0;
  virtual void wait() = 0;
};

// The MPI transports (host memory or CUDA-aware device memory: the same calls).
std::unique_ptr<HaloTransport> make_mpi_transport(HaloTransportKind kind, MPI_Comm comm, int element_bytes);

}  // namespace heatwave
