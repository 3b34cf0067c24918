#pragma once
// MPI Cartesian decomposition of the global grid into per-rank boxes.
#include <mpi.h>

#include <array>

#include "solver/domain.hpp"
#include "solver/problem.hpp"
#include "core/run_settings.hpp"

namespace heatwave {

class Decomposition {
 public:
  // Every rank runs the same checks and throws the same Error(mpi_error), so a
  // bad decomposition never leaves one rank waiting for another.
  // `parallel.decomposition` fixes ranks per axis where non-zero.
  Decomposition(const Problem& problem, const ParallelSettings& parallel, int halo_depth,
                MPI_Comm comm = MPI_COMM_WORLD);
  ~Decomposition();
  Decomposition(const Decomposition&) = delete;
  Decomposition& operator=(const Decomposition&) = delete;

  MPI_Comm comm() const { return cart_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int halo_depth() const { return halo_; }
  const std::array<int, 3>& dims() const { return dims_; }
  const std::array<int, 3>& coords() const { return coords_; }
  // Neighbour rank across face (axis, side), MPI_PROC_NULL on a physical face.
  int neighbor(int axis, int side) const { return neighbor_[axis][side]; }

  // The owned range of `coord` along `axis`: [first, first + count).
  static void split(long points, int parts, int coord, long& first, long& count);

  template <int D>
  LocalDomain<D> local_domain() const;

 private:
  const Problem& problem_;
  MPI_Comm cart_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, halo_ = 1;
  std::array<int, 3> dims_{1, 1, 1}, coords_{0, 0, 0};
  std::array<std::array<int, 2>, 3> neighbor_{};
};

}  // namespace heatwave
