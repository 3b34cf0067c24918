#pragma once
// Deep-halo exchange between neighbour ranks, axis by axis (x, then y
// including x's halos, then z including both), so that edges and corners are
// right for halos deeper than one step.
#include <mpi.h>

#include <memory>
#include <vector>

#include "solver/backend.hpp"
#include "solver/decomposition.hpp"

namespace heatwave {

// Seconds spent in each part of the exchange, on this rank.
struct HaloTimes {
  double pack = 0;         // faces into send buffers
  double communicate = 0;  // posting the messages and waiting for them
  double unpack = 0;       // receive buffers into the halos
};

// Whether MPI reads and writes CUDA device memory itself (OpenMPI's
// MPIX_Query_cuda_support, asked only where the library was built with it).
bool cuda_aware_mpi();

template <int D, class Real>
class HaloExchange {
 public:
  HaloExchange(Backend<D, Real>& backend, const Decomposition& decomposition, const LocalDomain<D>& domain, int levels);

  // Blocking exchange of every level's halo of depth H: start(s), finish(s) for each stage.
  void exchange();

  // The exchange in stages, one per axis with neighbours, in axis order. A
  // stage's sends carry the halos of the stages before it (corners), so stage
  // s starts only after stage s-1 finished. start() packs and posts
  // non-blocking receives and sends; finish() waits and unpacks. Between the
  // two the caller computes what needs no halo.
  int stages() const { return static_cast<int>(stage_faces_.size()); }
  void start(int stage);
  void finish(int stage);

  bool active() const { return !faces_.empty(); }
  const HaloTimes& times() const { return times_; }

 private:
  struct Face {
    int axis, side, neighbor, level;
    Box<D> send_box, recv_box;
    std::shared_ptr<Real[]> send, recv;
  };
  Backend<D, Real>& backend_;
  MPI_Comm comm_;
  std::vector<Face> faces_;                          // grouped by axis, in axis order
  std::vector<std::pair<std::size_t, std::size_t>> stage_faces_;  // [first, last) of faces_ per stage
  std::vector<MPI_Request> requests_;                // of the stage in flight
  HaloTimes times_;
};

}  // namespace heatwave
