#include "kernels/transport/nccl_transport.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <string>
#include <vector>

#include "io/collective.hpp"
#include "io/errors.hpp"
#include "kernels/cuda/check.hpp"

namespace heatwave::cuda {

namespace {

void check_nccl(ncclResult_t status, const char* call, ncclComm_t comm, const char* file, int line) {
  if (status == ncclSuccess) return;
  const char* last = ncclGetLastError(comm);
  throw Error(ExitCode::mpi_error, std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                                       ncclGetErrorString(status) + (last && *last ? std::string(": ") + last : "") +
                                       (std::string(call).starts_with("ncclCommInitRank")
                                            ? " (the nccl transport needs a GPU of its own for each rank; "
                                              "parallel.halo_transport: mpi-host works with shared GPUs)"
                                            : ""));
}
#define HW_NCCL(call, comm) check_nccl((call), #call, (comm), __FILE__, __LINE__)

class NcclTransport final : public HaloTransport {
 public:
  NcclTransport(MPI_Comm comm, cudaStream_t compute, int element_bytes)
      : compute_(compute), type_(element_bytes == 4 ? ncclFloat32 : ncclFloat64), element_bytes_(element_bytes) {
    int rank = 0, size = 0;
    check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    // The id and whether rank 0 got one travel together: no rank waits for an id that never comes.
    struct {
      int status;
      ncclUniqueId id;
    } root{ncclSuccess, {}};
    if (rank == 0) root.status = ncclGetUniqueId(&root.id);
    check_mpi(MPI_Bcast(&root, sizeof root, MPI_BYTE, 0, comm), "MPI_Bcast");
    HW_NCCL(static_cast<ncclResult_t>(root.status), nullptr);
    HW_NCCL(ncclCommInitRank(&comm_, size, root.id, rank), nullptr);
    HW_CUDA(cudaStreamCreateWithPriority(&halo_, cudaStreamNonBlocking, greatest_stream_priority()));
    HW_CUDA(cudaEventCreateWithFlags(&packed_, cudaEventDisableTiming));
    HW_CUDA(cudaEventCreateWithFlags(&moved_, cudaEventDisableTiming));
  }
  ~NcclTransport() override {
    cudaStreamSynchronize(halo_);
    ncclCommDestroy(comm_);  // finalizes it first (NCCL >= 2.14)
    cudaEventDestroy(packed_);
    cudaEventDestroy(moved_);
    cudaStreamDestroy(halo_);
    for (void* p : buffers_) cudaFree(p);
  }
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;

  HaloTransportKind kind() const override { return HaloTransportKind::nccl; }
  std::string path() const override { return "device buffers, stream-ordered on a halo stream"; }
  void* buffer(std::size_t count) override {
    void* p = nullptr;
    HW_CUDA(cudaMalloc(&p, std::max<std::size_t>(count, 1) * element_bytes_));
    buffers_.push_back(p);
    return p;
  }

  // NCCL has no tags: the receives wait for the sends' group.
  void post_receives(std::span<const HaloMessage> receives) override {
    receives_.assign(receives.begin(), receives.end());
  }
  // The halo stream waits for the packs on the compute stream, then the whole
  // stage moves as one group (sends and receives to one peer are matched in
  // posting order, and both sides post in tag order).
  void post_sends(std::span<const HaloMessage> sends) override {
    HW_CUDA(cudaEventRecord(packed_, compute_));
    HW_CUDA(cudaStreamWaitEvent(halo_, packed_, 0));
    HW_NCCL(ncclGroupStart(), comm_);
    for (const HaloMessage& m : receives_)
      HW_NCCL(ncclRecv(m.data, static_cast<std::size_t>(m.count), type_, m.peer, comm_, halo_), comm_);
    for (const HaloMessage& m : sends)
      HW_NCCL(ncclSend(m.data, static_cast<std::size_t>(m.count), type_, m.peer, comm_, halo_), comm_);
    HW_NCCL(ncclGroupEnd(), comm_);
    HW_CUDA(cudaEventRecord(moved_, halo_));
    receives_.clear();
  }
  // Work queued on the compute stream from now on (the unpacks, the rim)
  // comes after the messages; the host goes on at once.
  void wait() override { HW_CUDA(cudaStreamWaitEvent(compute_, moved_, 0)); }

 private:
  cudaStream_t compute_;
  ncclDataType_t type_;
  int element_bytes_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t halo_ = nullptr;
  cudaEvent_t packed_ = nullptr, moved_ = nullptr;
  std::vector<HaloMessage> receives_;
  std::vector<void*> buffers_;
};

}  // namespace

std::unique_ptr<HaloTransport> make_nccl_transport(MPI_Comm comm, GpuStream compute, int element_bytes) {
  return std::make_unique<NcclTransport>(comm, compute, element_bytes);
}

}  // namespace heatwave::cuda
