#pragma once
// Deep-halo exchange between neighbour ranks, axis by axis (x, then y
// including x's halos, then z including both), so that edges and corners are
// right for halos deeper than one step.
#include <mpi.h>

#include <memory>
#include <vector>

#include "solver/backend.hpp"
#include "solver/decomposition.hpp"
#include "solver/halo_transport.hpp"

namespace heatwave {

// Seconds spent in each part of the exchange, on this rank.
struct HaloTimes {
  double pack = 0;         // faces into send buffers
  double communicate = 0;  // posting the messages and waiting for them
  double unpack = 0;       // receive buffers into the halos
  // (With nccl the host only queues all three on the GPU: these are launch
  // times, and the GPU's time shows in the compute phase, which waits for it.)
};

template <int D, class Real>
class HaloExchange {
 public:
  // Collective (nccl makes its communicator here). The transport must suit
  // the backend (the registry chose it): nccl and mpi-cuda-aware need a GPU backend.
  HaloExchange(Backend<D, Real>& backend, const Decomposition& decomposition, const LocalDomain<D>& domain, int levels,
               HaloTransportKind transport);

  // Blocking exchange of every level's halo of depth H: start(s), finish(s) for each stage.
  void exchange();

  // The exchange in stages, one per axis with neighbours, in axis order. A
  // stage's sends carry the halos of the stages before it (corners), so stage
  // s starts only after stage s-1 finished. start() packs and posts
  // receives and sends (through the transport); finish() waits and unpacks.
  // Between the two the caller computes what needs no halo.
  int stages() const { return static_cast<int>(stage_faces_.size()); }
  void start(int stage);
  void finish(int stage);

  bool active() const { return !faces_.empty(); }
  const HaloTimes& times() const { return times_; }
  HaloTransportKind transport() const { return transport_->kind(); }
  // The transport and where its buffers live, for the run log and metrics
  // ("none" where no face is exchanged: one rank, no periodic neighbour).
  std::string path() const {
    if (!active()) return "none (no face exchanged)";
    return std::string(to_string(transport())) + " (" + transport_->path() + ")";
  }

 private:
  struct Face {
    int axis, side, neighbor, level;
    Box<D> send_box, recv_box;
    Real *send, *recv;  // the transport's buffers
  };
  // One stage's messages in tag order (NCCL matches messages between two
  // ranks in posting order, MPI by tag: sorted, both mean the same).
  std::vector<HaloMessage> messages(int stage, bool receives) const;

  Backend<D, Real>& backend_;
  std::vector<Face> faces_;                                       // grouped by axis, in axis order
  std::vector<std::pair<std::size_t, std::size_t>> stage_faces_;  // [first, last) of faces_ per stage
  std::unique_ptr<HaloTransport> transport_;
  HaloTimes times_;
};

}  // namespace heatwave
