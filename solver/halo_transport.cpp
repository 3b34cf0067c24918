#include "solver/halo_transport.hpp"

#include <vector>

#include "io/collective.hpp"

namespace heatwave {

std::string to_string(HaloTransportKind kind) {
  switch (kind) {
    case HaloTransportKind::mpi_host: return "mpi-host";
    case HaloTransportKind::mpi_cuda_aware: return "mpi-cuda-aware";
    case HaloTransportKind::nccl: return "nccl";
  }
  return "?";
}

bool nccl_available() {
#ifdef HEATWAVE_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

namespace {

// Host or device buffers alike: a CUDA-aware MPI tells them apart itself.
class MpiTransport final : public HaloTransport {
 public:
  MpiTransport(HaloTransportKind kind, MPI_Comm comm, int element_bytes)
      : kind_(kind), comm_(comm), type_(element_bytes == 4 ? MPI_FLOAT : MPI_DOUBLE) {}
  HaloTransportKind kind() const override { return kind_; }

  void post_receives(std::span<const HaloMessage> receives) override {
    for (const HaloMessage& m : receives) {
      requests_.push_back(MPI_REQUEST_NULL);
      check_mpi(MPI_Irecv(m.data, static_cast<int>(m.count), type_, m.peer, m.tag, comm_, &requests_.back()), "MPI_Irecv");
    }
  }
  void post_sends(std::span<const HaloMessage> sends) override {
    for (const HaloMessage& m : sends) {
      requests_.push_back(MPI_REQUEST_NULL);
      check_mpi(MPI_Isend(m.data, static_cast<int>(m.count), type_, m.peer, m.tag, comm_, &requests_.back()), "MPI_Isend");
    }
  }
  void wait() override {
    check_mpi(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    requests_.clear();
  }

 private:
  HaloTransportKind kind_;
  MPI_Comm comm_;
  MPI_Datatype type_;
  std::vector<MPI_Request> requests_;  // of the stage in flight
};

}  // namespace

std::unique_ptr<HaloTransport> make_mpi_transport(HaloTransportKind kind, MPI_Comm comm, int element_bytes) {
  return std::make_unique<MpiTransport>(kind, comm, element_bytes);
}

}  // namespace heatwave
