#include "solver/diagnostics.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "io/collective.hpp"

namespace heatwave {

FieldSummary reduce_stats(const LocalStats& s, const Problem& problem, long step, MPI_Comm comm) {
  double mins[1] = {s.min}, maxs[1] = {s.max}, mn, mx;
  double sums[5] = {s.weight, s.sum, s.sum_squares, s.kinetic, s.potential}, total[5];
  long bad = s.non_finite, all_bad = 0;
  check_mpi(MPI_Allreduce(mins, &mn, 1, MPI_DOUBLE, MPI_MIN, comm), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(maxs, &mx, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(sums, total, 5, MPI_DOUBLE, MPI_SUM, comm), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, comm), "MPI_Allreduce");
  double volume = 1;
  for (int a = 0; a < problem.dims; ++a) volume *= problem.spacing[a];
  FieldSummary f;
  f.step = step;
  f.time = problem.time_at(f.step);
  f.min = mn, f.max = mx;
  f.mean = total[0] > 0 ? total[1] / total[0] : 0;
  f.l2 = std::sqrt(total[2] * volume);
  f.has_energy = info(problem.equation).has_energy && f.step > 0;
  f.energy = 0.5 * (total[3] + total[4]) * volume;
  f.non_finite = all_bad;
  return f;
}

template <int D, class Real>
std::vector<Real> gather_level(Backend<D, Real>& backend, Level level, const Problem& problem,
                               const Decomposition& decomposition, const LocalDomain<D>& domain) {
  const Layout<D>& layout = domain.layout;
  std::vector<Real> mine(layout.owned_box().size());
  backend.read(level, mine.data());
  MPI_Comm comm = decomposition.comm();
  const int size = decomposition.size(), rank = decomposition.rank();
  const MPI_Datatype type = std::is_same_v<Real, float> ? MPI_FLOAT : MPI_DOUBLE;
  std::vector<int> counts(size), displs(size);
  const int count = static_cast<int>(mine.size());
  check_mpi(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm), "MPI_Gather");
  std::vector<Real> all;
  if (rank == 0) {
    for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
    all.resize(static_cast<std::size_t>(displs[size - 1]) + counts[size - 1]);
  }
  check_mpi(MPI_Gatherv(mine.data(), count, type, all.data(), counts.data(), displs.data(), type, 0, comm),
            "MPI_Gatherv");
  if (rank != 0) return {};
  // Place each rank's box into the global array.
  std::vector<Real> global(static_cast<std::size_t>(problem.global_points()));
  for (int r = 0; r < size; ++r) {
    int coords[3] = {0, 0, 0};
    check_mpi(MPI_Cart_coords(comm, r, D, coords), "MPI_Cart_coords");
    Index<D> first, extent;
    for (int a = 0; a < D; ++a)
      Decomposition::split(problem.points[a], decomposition.dims()[a], coords[a], first[a], extent[a]);
    const Real* src = all.data() + displs[r];
    long rows = 1;
    for (int a = 1; a < D; ++a) rows *= extent[a];
    for (long row = 0; row < rows; ++row) {
      long rest = row, g = first[0], scale = problem.points[0];
      for (int a = 1; a < D; ++a) {
        g += (first[a] + rest % extent[a]) * scale;
        rest /= extent[a];
        scale *= problem.points[a];
      }
      std::copy(src + row * extent[0], src + (row + 1) * extent[0], global.begin() + g);
    }
  }
  return global;
}

template std::vector<float> gather_level(Backend<2, float>&, Level, const Problem&, const Decomposition&,
                                         const LocalDomain<2>&);
template std::vector<double> gather_level(Backend<2, double>&, Level, const Problem&, const Decomposition&,
                                          const LocalDomain<2>&);
template std::vector<float> gather_level(Backend<3, float>&, Level, const Problem&, const Decomposition&,
                                         const LocalDomain<3>&);
template std::vector<double> gather_level(Backend<3, double>&, Level, const Problem&, const Decomposition&,
                                          const LocalDomain<3>&);

}  // namespace heatwave
