#pragma once
// What a run says about itself: the log lines at its start, after each
// diagnostic and at its end (the conservation lines, as a mini-app should
// end), the NaN check, and the metrics record they fill.
#include <mpi.h>

#include <array>
#include <string>

#include "io/metrics.hpp"
#include "solver/problem.hpp"

namespace heatwave {

// How a run is set up, as its first log lines say.
struct RunSetup {
  std::string backend, reason;
  int ranks = 1, threads = 1, halo_depth = 0;
  std::array<int, 3> decomposition{1, 1, 1};
  std::string halo_transport, halo_path;
  bool overlap = false;
  bool overlap_inner = false;  // overlapped with a split chunk's inner part (Backend::splits_chunks)
  int exchange_every = 1;
  std::string exchange_why;  // the config's number, or why auto chose it
};

// Logs the setup and the time step; the metrics it starts.
RunMetrics start_report(const Problem& problem, const RunSetup& setup);
void log_diagnostics(const FieldSummary& f);
// Error(non_finite) naming the step and the last finite one, when f holds NaN/Inf.
void check_finite(const Problem& problem, const FieldSummary& f, long last_good);
// Phase times over the ranks of `comm` (slowest and mean), rates, the
// summary and conservation lines (the energy's from m.first_energy).
void finish_report(RunMetrics& m, const Problem& problem, const PhaseTimes& local, long step, MPI_Comm comm);

}  // namespace heatwave
