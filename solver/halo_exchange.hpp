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

template <int D, class Real>
class HaloExchange {
 public:
  HaloExchange(Backend<D, Real>& backend, const Decomposition& decomposition, const LocalDomain<D>& domain, int levels);

  // Blocking exchange of every level's halo of depth H.
  void exchange();
  bool active() const { return !faces_.empty(); }

 private:
  struct Face {
    int axis, side, neighbor, level;
    Box<D> send_box, recv_box;
    std::shared_ptr<Real[]> send, recv;
  };
  Backend<D, Real>& backend_;
  MPI_Comm comm_;
  std::vector<Face> faces_;  // grouped by axis, in axis order
};

}  // namespace heatwave
