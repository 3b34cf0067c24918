#pragma once
// The time loop: exchange halos, advance k steps, diagnose when due, report.
#include <mpi.h>

#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include "io/metrics.hpp"
#include "solver/backend.hpp"
#include "solver/decomposition.hpp"
#include "solver/halo_exchange.hpp"
#include "solver/problem.hpp"

namespace heatwave {

// How the outside drives a run: where it restarts, and a stop flag that a
// signal handler sets (SIGTERM/SIGUSR1: checkpoint at the next chunk boundary and stop).
struct RunControl {
  std::string restart;                               // "", "latest" or a checkpoint path
  const volatile std::sig_atomic_t* stop = nullptr;  // nonzero: stop requested
};

template <int D, class Real>
class Simulation {
 public:
  explicit Simulation(const Problem& problem, MPI_Comm comm = MPI_COMM_WORLD);

  // The whole run with progress, diagnostics and a summary in the log.
  // Throws Error(non_finite) when NaN/Inf appears. A stop request ends the
  // run early after a checkpoint, with RunMetrics::interrupted set.
  RunMetrics run(const RunControl& control = {});

  // Checkpoint of the current state in checkpoint.dir, the last `keep` kept
  // (collective). Returns its path.
  std::string write_checkpoint();
  // Restores the fields and the step from a checkpoint path, or from the
  // newest in checkpoint.dir for "latest" (collective). Returns the path used.
  std::string restart(const std::string& checkpoint);
  // Field output of the current state in output.dir, and the XDMF series (collective).
  void write_output();

  // Advance `steps` steps, exchanging halos as needed (no logging).
  void advance(long steps);
  // Diagnostics of the current state, reduced over all ranks.
  FieldSummary diagnose();
  // The global field of a level on rank 0, x fastest (empty on other ranks).
  std::vector<Real> gather(Level level);

  Backend<D, Real>& backend() { return *backend_; }
  // Why this backend runs, and how (device, fallback reason, cluster plan).
  const std::string& backend_reason() const { return backend_reason_; }
  const Problem& problem() const { return problem_; }
  const Decomposition& decomposition() const { return decomposition_; }
  long step() const { return backend_->step(); }

 private:
  long next_chunk(long until) const;
  // Whether chunks overlap their halo exchange with compute (parallel.overlap, and neighbours to talk to).
  bool overlapped() const;
  // One chunk of k steps whose first step computes its interior while the
  // halo exchange is in flight. Why the first step of the chunk: it is the
  // earliest work that can go on without the new halos, for any k; the faces
  // sent are the state the previous chunk left, so the pack reads a finished
  // level and the boundary strips (computed after the wait) are the only work
  // that waits for the network.
  void advance_overlapped(int k);
  // The levels a checkpoint holds: u, and u_previous for the wave equation.
  std::vector<std::pair<std::string, Level>> checkpoint_levels() const;
  void write_levels(const std::string& path, const std::string& kind,
                    const std::vector<std::pair<std::string, Level>>& levels);
  // initial/velocity of type file: read into the backend after initialize().
  void load_initial_files();

  Problem problem_;
  Decomposition decomposition_;
  LocalDomain<D> domain_;
  std::string backend_reason_;  // set while backend_ is made: declared first
  HaloTransportKind transport_ = HaloTransportKind::mpi_host;  // likewise
  std::unique_ptr<Backend<D, Real>> backend_;
  HaloExchange<D, Real> halo_;
  PhaseTimes phases_;
  std::vector<long> output_steps_;  // the steps in the XDMF series
};

// Picks dimension and precision from the config and runs.
RunMetrics run_problem(const Problem& problem, const RunControl& control = {}, MPI_Comm comm = MPI_COMM_WORLD);

}  // namespace heatwave
