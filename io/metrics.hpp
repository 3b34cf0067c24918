#pragma once
// The per-run metrics record (JSON) that scaling studies collect.
#include <array>
#include <chrono>
#include <string>

#include "io/config.hpp"

namespace heatwave {

// Wall seconds per phase of the time loop on one rank; RunMetrics holds the
// maximum and the mean over ranks. The halo exchange is three phases, so that
// waiting on the network shows apart from moving halos in memory.
struct PhaseTimes {
  double compute = 0;      // stepping the fields (with overlap: while messages are in flight)
  double pack = 0;         // halo faces into send buffers
  double communicate = 0;  // posting halo messages and waiting for them
  double unpack = 0;       // receive buffers into the halos
  double diagnostics = 0;  // local sums and their reductions
  double io = 0;           // outputs and checkpoints
};

// Seconds on a steady clock: phase times are differences of it.
inline double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct FieldSummary {
  long step = 0;
  double time = 0;
  double min = 0, max = 0, mean = 0, l2 = 0;
  bool has_energy = false;
  double energy = 0;
  long non_finite = 0;
};

struct RunMetrics {
  std::string backend;
  std::string backend_reason;  // why this backend ran (auto choice, fallback)
  int ranks = 1;
  int threads = 1;
  std::array<int, 3> decomposition{1, 1, 1};
  long steps = 0;
  double dt = 0;
  double simulated_time = 0;
  double wall_seconds = 0;
  std::string halo_transport;         // parallel.halo_transport that ran: mpi-host, mpi-cuda-aware, nccl
  std::string halo_path;              // the transport and where its buffers live, e.g. "nccl (device buffers, ...)"
  bool overlap = false;               // halo exchange overlapped with the interior
  int exchange_every = 1;             // steps between halo exchanges (parallel.exchange_every as resolved)
  std::string exchange_every_reason;  // the config's number, or why auto chose it
  PhaseTimes phases;                  // maximum over ranks
  std::string phases_clock = "host";  // what measured them: the host clock, or CUDA events for a GPU's work
  PhaseTimes phases_mean;             // mean over ranks
  double cell_updates = 0;
  double cells_per_second = 0;
  double bytes_per_update = 0;  // the minimum device-memory traffic per cell update
  FieldSummary initial, final;
  FieldSummary first_energy;   // the first diagnostic with an energy (the wave's starts at step 1)
  long first_step = 0;         // > 0 after a restart
  std::string restarted_from;  // the checkpoint, after a restart
  // The clock times come from: time(step) = clock_time + (step - clock_step) * dt
  // (0, 0 unless a restart changed dt, here or earlier).
  long clock_step = 0;
  double clock_time = 0;
  bool interrupted = false;  // stopped by a signal after a checkpoint
};

// Writes atomically (temporary name, then rename). Throws Error(io_error).
void write_metrics_json(const std::string& path, const Config& config, const RunMetrics& metrics);

}  // namespace heatwave
