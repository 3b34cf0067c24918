#pragma once
// The time loop: exchange halos, advance k steps, diagnose when due, report.
#include <mpi.h>

#include <memory>
#include <vector>

#include "io/metrics.hpp"
#include "solver/backend.hpp"
#include "solver/decomposition.hpp"
#include "solver/halo_exchange.hpp"
#include "solver/problem.hpp"

namespace heatwave {

template <int D, class Real>
class Simulation {
 public:
  explicit Simulation(const Problem& problem, MPI_Comm comm = MPI_COMM_WORLD);

  // The whole run with progress, diagnostics and a summary in the log.
  // Throws Error(non_finite) when NaN/Inf appears.
  RunMetrics run();

  // Advance `steps` steps, exchanging halos as needed (no logging).
  void advance(long steps);
  // Diagnostics of the current state, reduced over all ranks.
  FieldSummary diagnose();
  // The global field of a level on rank 0, x fastest (empty on other ranks).
  std::vector<Real> gather(Level level);

  Backend<D, Real>& backend() { return *backend_; }
  const Problem& problem() const { return problem_; }
  const Decomposition& decomposition() const { return decomposition_; }
  long step() const { return backend_->step(); }

 private:
  long next_chunk(long until) const;

  Problem problem_;
  Decomposition decomposition_;
  LocalDomain<D> domain_;
  std::string backend_reason_;  // set while backend_ is made: declared first
  std::unique_ptr<Backend<D, Real>> backend_;
  HaloExchange<D, Real> halo_;
  PhaseTimes phases_;
};

// Picks dimension and precision from the config and runs.
RunMetrics run_problem(const Problem& problem, MPI_Comm comm = MPI_COMM_WORLD);

}  // namespace heatwave
