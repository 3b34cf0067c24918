#include "solver/decomposition.hpp"

#include <string>

#include "io/collective.hpp"
#include "io/errors.hpp"

namespace heatwave {

void Decomposition::split(long points, int parts, int coord, long& first, long& count) {
  const long base = points / parts, extra = points % parts;  // the first `extra` ranks get one more
  count = base + (coord < extra ? 1 : 0);
  first = coord * base + std::min<long>(coord, extra);
}

Decomposition::Decomposition(const Problem& problem, const ParallelSettings& parallel, int halo_depth, MPI_Comm comm)
    : problem_(problem), halo_(halo_depth) {
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
  const int dims = problem.dims;
  const std::string& src = problem.source;
  int requested[3] = {0, 0, 0}, product = 1;
  bool all_given = true;
  for (int a = 0; a < dims; ++a) {
    requested[a] = parallel.decomposition[a];
    if (requested[a] > 0)
      product *= requested[a];
    else
      all_given = false;
  }
  if ((all_given && product != size_) || (!all_given && size_ % product != 0))
    throw Error(ExitCode::mpi_error, src + ": 'parallel.decomposition' asks for " + std::to_string(product) +
                                         " ranks but the job has " + std::to_string(size_) + " (run with mpirun -n " +
                                         std::to_string(product) + ", or use 0 entries)");
  check_mpi(MPI_Dims_create(size_, dims, requested), "MPI_Dims_create");
  int periods[3] = {0, 0, 0};
  for (int a = 0; a < dims; ++a) {
    dims_[a] = requested[a];
    periods[a] = problem.periodic[a] ? 1 : 0;
    if (dims_[a] > problem.points[a])
      throw Error(ExitCode::mpi_error, src + ": " + std::to_string(dims_[a]) + " ranks along axis " + axis_names[a] +
                                           " but the grid has only " + std::to_string(problem.points[a]) +
                                           " points there");
    const long thinnest = problem.points[a] / dims_[a];
    if (dims_[a] > 1 && thinnest < halo_)
      throw Error(ExitCode::mpi_error, src + ": boxes along axis " + std::string(axis_names[a]) + " are " +
                                           std::to_string(thinnest) + " points thin, less than the halo depth " +
                                           std::to_string(halo_) +
                                           " (exchange_every * radius): use fewer ranks or a smaller exchange_every");
    // A box at a face fills its ghosts from its own points up to r inside
    // (their mirror images): r + 1 of them at least.
    if (dims_[a] > 1 && !problem.periodic[a] && thinnest <= problem.radius)
      throw Error(ExitCode::mpi_error, src + ": boxes along axis " + std::string(axis_names[a]) + " are " +
                                           std::to_string(thinnest) + " points thin, but a box at a face needs " +
                                           std::to_string(problem.radius + 1) +
                                           " (radius + 1: its ghosts mirror the points up to the radius inside the "
                                           "face): use fewer ranks along " +
                                           axis_names[a]);
  }
  check_mpi(MPI_Cart_create(comm, dims, requested, periods, /*reorder=*/0, &cart_), "MPI_Cart_create");
  check_mpi(MPI_Comm_rank(cart_, &rank_), "MPI_Comm_rank");
  int coords[3] = {0, 0, 0};
  check_mpi(MPI_Cart_coords(cart_, rank_, dims, coords), "MPI_Cart_coords");
  for (int a = 0; a < 3; ++a) {
    neighbor_[a] = {MPI_PROC_NULL, MPI_PROC_NULL};
    if (a < dims) {
      coords_[a] = coords[a];
      check_mpi(MPI_Cart_shift(cart_, a, 1, &neighbor_[a][0], &neighbor_[a][1]), "MPI_Cart_shift");
    }
  }
}

Decomposition::~Decomposition() {
  if (cart_ != MPI_COMM_NULL) MPI_Comm_free(&cart_);
}

template <int D>
LocalDomain<D> Decomposition::local_domain() const {
  LocalDomain<D> d;
  d.layout.halo = halo_;
  d.spacing = problem_.spacing;
  for (int a = 0; a < D; ++a) {
    long first, count;
    split(problem_.points[a], dims_[a], coords_[a], first, count);
    d.layout.owned[a] = count;
    d.offset[a] = first;
    d.global[a] = problem_.points[a];
    for (int side = 0; side < 2; ++side) {
      const BoundaryFace& bc = problem_.faces[a][side];
      // A periodic axis held by one rank wraps locally rather than through MPI.
      d.exchanged[a][side] = dims_[a] > 1 && neighbor_[a][side] != MPI_PROC_NULL;
      d.face[a][side] = FaceRule{bc.type, bc.value, problem_.spacing[a], count, side};
    }
  }
  return d;
}

template LocalDomain<2> Decomposition::local_domain<2>() const;
template LocalDomain<3> Decomposition::local_domain<3>() const;

}  // namespace heatwave
