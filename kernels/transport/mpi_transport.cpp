// The MPI transports: MPI_Irecv/Isend, on host memory (the host backend's, or
// a GPU backend's staged through pinned host buffers) or on device memory
// (CUDA-aware MPI). MPI reads and writes outside any CUDA stream, so with a
// GPU backend the sends wait for the packs queued on its stream, and a
// receive buffer is reused only after the unpacks that read it ran.
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#ifdef HEATWAVE_HAVE_CUDA
#include <cuda_runtime.h>

#include "kernels/cuda/check.hpp"
#endif

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "io/collective.hpp"
#include "io/errors.hpp"
#include "kernels/transport/nccl_transport.hpp"
#include "solver/halo_transport.hpp"

namespace heatwave {

bool cuda_aware_mpi() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

bool nccl_available() {
#ifdef HEATWAVE_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

namespace {

class MpiTransport final : public HaloTransport {
 public:
  MpiTransport(HaloTransportKind kind, MPI_Comm comm, int element_bytes, const BackendMemory& memory)
      : kind_(kind),
        comm_(comm),
        type_(element_bytes == 4 ? MPI_FLOAT : MPI_DOUBLE),
        element_bytes_(element_bytes),
        memory_(memory),
        staged_(memory.space == MemorySpace::device && kind == HaloTransportKind::mpi_host) {
#ifdef HEATWAVE_HAVE_CUDA
    if (memory_.stream) HW_CUDA(cudaEventCreateWithFlags(&unpacked_, cudaEventDisableTiming));
#endif
  }
  ~MpiTransport() override {
#ifdef HEATWAVE_HAVE_CUDA
    if (memory_.stream) {
      cudaStreamSynchronize(memory_.stream);
      cudaEventDestroy(unpacked_);
    }
    for (void* p : device_) cudaFree(p);
    for (const auto& [device, host] : pinned_) cudaFreeHost(host);
#endif
  }
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  HaloTransportKind kind() const override { return kind_; }
  std::string path() const override {
    if (memory_.space == MemorySpace::host) return "host memory";
    return staged_ ? "pinned host staging" : "device buffers";
  }

  void* buffer(std::size_t count) override {
    const std::size_t bytes = std::max<std::size_t>(count, 1) * element_bytes_;
    if (memory_.space == MemorySpace::host) {
      host_.emplace_back(new char[bytes]);
      return host_.back().get();
    }
#ifdef HEATWAVE_HAVE_CUDA
    void* device = nullptr;
    HW_CUDA(cudaMalloc(&device, bytes));
    device_.push_back(device);
    if (staged_) {  // MPI without CUDA support moves the faces through pinned host memory
      void* host = nullptr;
      HW_CUDA(cudaMallocHost(&host, bytes));
      pinned_[device] = host;
    }
    return device;
#else
    throw Error(ExitCode::internal, "device halo buffers in a build without CUDA");
#endif
  }

  void post_receives(std::span<const HaloMessage> receives) override {
#ifdef HEATWAVE_HAVE_CUDA
    if (memory_.stream && unpacks_queued_) HW_CUDA(cudaEventSynchronize(unpacked_));  // the buffers were read
    unpacks_queued_ = false;
#endif
    for (const HaloMessage& m : receives) {
      requests_.push_back(MPI_REQUEST_NULL);
      check_mpi(MPI_Irecv(where(m), static_cast<int>(m.count), type_, m.peer, m.tag, comm_, &requests_.back()),
                "MPI_Irecv");
      if (staged_) staged_receives_.push_back(m);
    }
  }
  void post_sends(std::span<const HaloMessage> sends) override {
#ifdef HEATWAVE_HAVE_CUDA
    if (memory_.stream) {  // the packs are queued on the backend's stream: the bytes leave once they ran
      if (staged_)
        for (const HaloMessage& m : sends)
          HW_CUDA(cudaMemcpyAsync(where(m), m.data, bytes(m), cudaMemcpyDeviceToHost, memory_.stream));
      HW_CUDA(cudaStreamSynchronize(memory_.stream));
    }
#endif
    for (const HaloMessage& m : sends) {
      requests_.push_back(MPI_REQUEST_NULL);
      check_mpi(MPI_Isend(where(m), static_cast<int>(m.count), type_, m.peer, m.tag, comm_, &requests_.back()),
                "MPI_Isend");
    }
  }
  void wait() override {
    check_mpi(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    requests_.clear();
#ifdef HEATWAVE_HAVE_CUDA
    for (const HaloMessage& m : staged_receives_)  // ahead of the unpacks on the stream
      HW_CUDA(cudaMemcpyAsync(m.data, where(m), bytes(m), cudaMemcpyHostToDevice, memory_.stream));
#endif
    staged_receives_.clear();
  }
  void unpacked() override {
#ifdef HEATWAVE_HAVE_CUDA
    if (memory_.stream) {
      HW_CUDA(cudaEventRecord(unpacked_, memory_.stream));
      unpacks_queued_ = true;
    }
#endif
  }

 private:
  // The memory MPI reads or writes for a message: its buffer, or the buffer's pinned twin.
  void* where(const HaloMessage& m) const { return staged_ ? pinned_.at(m.data) : m.data; }
  std::size_t bytes(const HaloMessage& m) const { return static_cast<std::size_t>(m.count) * element_bytes_; }

  HaloTransportKind kind_;
  MPI_Comm comm_;
  MPI_Datatype type_;
  int element_bytes_;
  BackendMemory memory_;
  bool staged_;                        // device fields, MPI on host memory
  std::vector<MPI_Request> requests_;  // of the stage in flight
  std::vector<std::unique_ptr<char[]>> host_;
  std::vector<void*> device_;
  std::map<void*, void*> pinned_;  // device buffer -> its pinned host twin
  std::vector<HaloMessage> staged_receives_;
#ifdef HEATWAVE_HAVE_CUDA
  cudaEvent_t unpacked_ = nullptr;
  bool unpacks_queued_ = false;
#endif
};

}  // namespace

std::unique_ptr<HaloTransport> make_halo_transport(HaloTransportKind kind, MPI_Comm comm, int element_bytes,
                                                   const BackendMemory& memory) {
  int ranks = 1;
  check_mpi(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
  // One rank has no neighbour to talk to: no NCCL communicator for nothing.
  if (kind != HaloTransportKind::nccl || ranks == 1)
    return std::make_unique<MpiTransport>(kind, comm, element_bytes, memory);
#ifdef HEATWAVE_HAVE_NCCL
  if (!memory.stream) throw Error(ExitCode::internal, "the nccl transport needs a GPU backend");
  return cuda::make_nccl_transport(comm, memory.stream, element_bytes);
#else
  throw Error(ExitCode::internal, "the nccl transport is not in this build");
#endif
}

}  // namespace heatwave
