#pragma once
// The time loop: exchange halos, advance k steps, diagnose, checkpoint and
// write outputs when due. The backend comes from the registry, the files from
// RunFiles, the reductions from diagnostics, the log lines from run_report.
#include <mpi.h>

#include <csignal>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "io/metrics.hpp"
#include "solver/backend.hpp"
#include "solver/decomposition.hpp"
#include "solver/diagnostics.hpp"
#include "solver/halo_exchange.hpp"
#include "solver/receivers.hpp"
#include "solver/registry.hpp"
#include "solver/run_files.hpp"

namespace heatwave {

// How the outside drives a run: where it restarts, and a stop flag that a
// signal handler sets (SIGTERM/SIGUSR1: checkpoint at the next chunk boundary and stop).
struct RunControl {
  std::string restart;                               // "", "latest" or a checkpoint path
  bool new_dt = false;                               // the restart may change the time step (--new-dt)
  const volatile std::sig_atomic_t* stop = nullptr;  // nonzero: stop requested
  EarlierRun earlier = EarlierRun::keep;             // a fresh run's look at earlier files (heatwave run: refuse)
};

// parallel.exchange_every as a run resolves it, and why.
struct ExchangeChoice {
  int every = 1;
  std::string why;
};

// Steps of the next chunk, `left` to go: up to the halos' depth in steps
// where a face is exchanged, else up to 64 in a multiple of the backend's
// steps a launch (Backend::preferred_exchange_every).
long chunk_steps(long halo_steps, bool exchanged, int launch_steps, long left);

template <int D, class Real>
class Simulation {
 public:
  // From the config's initial state, or, where `control` names a checkpoint,
  // from it (collective; the problem's clock is the checkpoint's).
  explicit Simulation(const Config& config, MPI_Comm comm = MPI_COMM_WORLD, const RunControl& control = {});

  // The whole run with progress, diagnostics and a summary in the log.
  // Throws Error(non_finite) when NaN/Inf appears. A stop request ends the
  // run early after a checkpoint, with RunMetrics::interrupted set.
  RunMetrics run(const RunControl& control = {});

  // Advance `steps` steps, exchanging halos as needed (no logging).
  void advance(long steps);
  // The same with the receivers sampled as run() samples them (chunks end
  // where they sample, unless the backend records them as it goes): what a
  // benchmark of a case with receivers times.
  void advance_with_receivers(long steps);
  // Diagnostics of the current state, reduced over all ranks.
  FieldSummary diagnose();
  // The global field of a level on rank 0, x fastest (empty on other ranks).
  std::vector<Real> gather(Level level) {
    return gather_level(*chosen_.backend, level, problem_, decomposition_, domain_);
  }
  // Checkpoints and outputs (collective): RunFiles.
  // The receivers' samples so far go to their file first: a restart from the
  // checkpoint finds every sample up to its step there.
  std::string write_checkpoint() {
    receivers_.flush();
    return files_.write_checkpoint();
  }
  std::string restart(const std::string& checkpoint) { return files_.restart(checkpoint); }  // on this run's schedule
  void write_output() { files_.write_output(); }

  Backend<D, Real>& backend() { return *chosen_.backend; }
  RunClaims& claims() { return claims_; }
  // Why this backend runs, and how (device, fallback reason, cluster plan).
  const std::string& backend_reason() const { return chosen_.reason; }
  const Problem& problem() const { return problem_; }
  const Decomposition& decomposition() const { return decomposition_; }
  long step() const { return chosen_.backend->step(); }

 private:
  long next_chunk(long until) const;
  // Whether chunks overlap their halo exchange with compute (parallel.overlap,
  // auto: on, and neighbours to talk to).
  bool overlapped() const { return config_.run.parallel.overlap.value_or(true) && halo_.active(); }
  // One chunk of k steps with its halo exchange in flight while it computes
  // what needs no new halo. A backend that splits chunks (cuda-cluster) runs
  // the k steps of its inner tiles meanwhile; the others compute the interior
  // of the chunk's first step: the earliest work that goes on without the new
  // halos, for any k. Either way the faces sent are the state the previous
  // chunk left, and the boundary work after the wait is all that waits for the network.
  void advance_overlapped(int k);
  // One chunk towards step `until` (ending where the receivers sample,
  // unless the backend records them), then the receivers' samples it made.
  void advance_chunk(long until);

  Config config_;
  RunClaims claims_;  // what this run writes, locked before any work
  Problem problem_;
  ExchangeChoice exchange_;  // parallel.exchange_every as resolved (auto: the backend's)
  Decomposition decomposition_;
  LocalDomain<D> domain_;
  ChosenBackend<D, Real> chosen_;
  HaloExchange<D, Real> halo_;
  RunFiles<D, Real> files_;
  Receivers<D, Real> receivers_;
  PhaseTimes phases_;
  std::string restored_from_;  // the checkpoint the constructor restored, if any
};

// Picks dimension and precision from the config and runs; rank 0 writes the
// metrics JSON (metrics.file) of a run that was not stopped, while the run
// still holds its lock.
RunMetrics run_config(const Config& config, const RunControl& control = {}, MPI_Comm comm = MPI_COMM_WORLD);

}  // namespace heatwave
