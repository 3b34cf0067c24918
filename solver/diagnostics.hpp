#pragma once
// Diagnostics over all ranks: a backend's local sums reduced into the run's
// FieldSummary (min, max, trapezoid mean, L2 norm, energy, non-finite count),
// and a level gathered into the global field on rank 0.
#include <vector>

#include "io/metrics.hpp"
#include "solver/backend.hpp"
#include "solver/decomposition.hpp"

namespace heatwave {

// Collective over `comm`.
FieldSummary reduce_stats(const LocalStats& local, const Problem& problem, long step, MPI_Comm comm);

// The global field of a level on rank 0, x fastest (empty on other ranks). Collective.
template <int D, class Real>
std::vector<Real> gather_level(Backend<D, Real>& backend, Level level, const Problem& problem,
                               const Decomposition& decomposition, const LocalDomain<D>& domain);

}  // namespace heatwave
