#include "solver/run_report.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "io/collective.hpp"
#include "io/errors.hpp"
#include "io/log.hpp"

namespace heatwave {

RunMetrics start_report(const Problem& problem, const RunSetup& setup) {
  RunMetrics m;
  m.backend = setup.backend;
  m.backend_reason = setup.reason;
  m.ranks = setup.ranks;
  m.threads = setup.threads;
  m.decomposition = setup.decomposition;
  m.steps = problem.steps;
  m.dt = problem.dt;
  m.simulated_time = problem.time_at(problem.steps);
  m.bytes_per_update = problem.bytes_per_update();
  m.halo_transport = setup.halo_transport;
  m.halo_path = setup.halo_path;
  m.overlap = setup.overlap;
  m.exchange_every = setup.exchange_every;
  m.exchange_every_reason = setup.exchange_why;
  spdlog::info("backend {} ({}), {} rank(s) as {}, {} thread(s) per rank, halo depth {}", m.backend, m.backend_reason,
               m.ranks,
               fmt::join(std::vector<int>(m.decomposition.begin(), m.decomposition.begin() + problem.dims), " x "),
               m.threads, setup.halo_depth);
  if (m.ranks > 1)
    spdlog::info("halos exchanged every {} step(s) ({}) through {}, {}", m.exchange_every, m.exchange_every_reason,
                 m.halo_path,
                 !m.overlap            ? "then compute (parallel.overlap: false)"
                 : setup.overlap_inner ? "overlapped with the k steps of each chunk's inner points"
                                       : "overlapped with the interior of the first step of each chunk");
  spdlog::info("dt = {:.6g} ({:.3g} of the stability limit: {}), {} steps to t = {:.6g}", problem.dt,
               problem.stability_number() / problem.stability_limit(), problem.stability_rule(), problem.steps,
               m.simulated_time);
  return m;
}

void log_diagnostics(const FieldSummary& f) {
  if (f.has_energy)
    spdlog::info("step {:>8} t={:<11.5g} min {:+.6e} max {:+.6e} mean {:+.6e} L2 {:.6e} energy {:.9e}", f.step, f.time,
                 f.min, f.max, f.mean, f.l2, f.energy);
  else
    spdlog::info("step {:>8} t={:<11.5g} min {:+.6e} max {:+.6e} mean {:+.6e} L2 {:.6e}", f.step, f.time, f.min, f.max,
                 f.mean, f.l2);
}

void check_finite(const Problem& p, const FieldSummary& f, long last_good) {
  if (f.non_finite > 0)
    throw Error(ExitCode::non_finite,
                p.source + ": " + std::to_string(f.non_finite) + " non-finite values (NaN/Inf) in u at step " +
                    std::to_string(f.step) + " (t = " + std::to_string(f.time) +
                    "): the solution blew up or the input holds NaN; the last finite state was at step " +
                    std::to_string(last_good));
}

void finish_report(RunMetrics& m, const Problem& problem, const PhaseTimes& phases, long step, MPI_Comm comm) {
  // Phase times: the slowest rank's, and the mean (their gap is load imbalance).
  double local[6] = {phases.compute, phases.pack, phases.communicate, phases.unpack, phases.diagnostics, phases.io};
  double worst[6], total[6];
  check_mpi(MPI_Allreduce(local, worst, 6, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(local, total, 6, MPI_DOUBLE, MPI_SUM, comm), "MPI_Allreduce");
  const double ranks = m.ranks;
  m.phases = {worst[0], worst[1], worst[2], worst[3], worst[4], worst[5]};
  m.phases_mean = {total[0] / ranks, total[1] / ranks, total[2] / ranks,
                   total[3] / ranks, total[4] / ranks, total[5] / ranks};
  const double cells = static_cast<double>(problem.global_points());
  m.cell_updates = cells * static_cast<double>(step - m.first_step);
  m.cells_per_second = m.wall_seconds > 0 ? m.cell_updates / m.wall_seconds : 0;
  spdlog::info("done: {} steps of {:.4g} cells in {} ({:.4g} Gcells/s)", step - m.first_step, cells,
               format_duration(m.wall_seconds), m.cells_per_second / 1e9);
  spdlog::info("phases (slowest rank): compute {}, pack {}, communicate {}, unpack {}, diagnostics {}, io {}{}",
               format_duration(m.phases.compute), format_duration(m.phases.pack), format_duration(m.phases.communicate),
               format_duration(m.phases.unpack), format_duration(m.phases.diagnostics), format_duration(m.phases.io),
               m.phases_clock == "host" ? "" : " (compute, pack, unpack: GPU time by CUDA events)");
  // Sources add to the mean and the energy on purpose: the change is theirs, not a leak.
  const char* forced = problem.sources.empty() ? "" : "; sources act, so it is not conserved";
  spdlog::info("conservation: mean {:+.6e} -> {:+.6e} (change {:+.3e}{})", m.initial.mean, m.final.mean,
               m.final.mean - m.initial.mean, forced);
  const FieldSummary& first = m.first_energy;
  if (first.has_energy && first.step == m.final.step)
    spdlog::info("conservation: energy {:.12e} at step {} (no earlier energy to compare with: diagnostics.every "
                 "measured none before the last step)",
                 m.final.energy, m.final.step);
  else if (first.has_energy)
    spdlog::info("conservation: energy {:.12e} (step {}) -> {:.12e} (relative change {:+.3e}{})", first.energy,
                 first.step, m.final.energy,
                 (m.final.energy - first.energy) / std::max(std::abs(first.energy), 1e-300), forced);
}

}  // namespace heatwave
