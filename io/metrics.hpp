#pragma once
// The per-run metrics record (JSON) that scaling studies collect.
#include <array>
#include <string>

#include "io/config.hpp"

namespace heatwave {

// Wall seconds per phase of the time loop, maximum over ranks.
struct PhaseTimes {
  double compute = 0;      // advance()
  double exchange = 0;     // halo exchange: pack, communicate, unpack
  double diagnostics = 0;  // reductions for diagnostics
  double io = 0;           // outputs and checkpoints
};

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
  PhaseTimes phases;
  double cell_updates = 0;
  double cells_per_second = 0;
  double bytes_per_update = 0;  // the minimum device-memory traffic per cell update
  FieldSummary initial, final;
  long first_step = 0;       // > 0 after a restart
  bool interrupted = false;  // stopped by a signal after a checkpoint
};

// Writes atomically (temporary name, then rename). Throws Error(io_error).
void write_metrics_json(const std::string& path, const Config& config, const RunMetrics& metrics);

}  // namespace heatwave
