#include "solver/simulation.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "io/collective.hpp"
#include "io/errors.hpp"
#include "io/log.hpp"
#include "solver/diagnostics.hpp"

namespace heatwave {

namespace {

// Halo depth: exchange_every steps of the stencil radius, never more steps than the run has.
int halo_depth(const Problem& p, const RunSettings& run) {
  return static_cast<int>(std::min<long>(run.parallel.exchange_every, std::max<long>(p.steps, 1))) * p.radius;
}

// The levels whose halos the steps read. u^{n-1} is read only at the points a
// step updates, which reach into neighbour halos only with deep halos: one
// step per exchange sends u alone, half the messages.
int exchanged_levels(const Problem& p, int halo) { return p.levels() == 2 && halo > p.radius ? 2 : 1; }

void check_finite(const Problem& p, const FieldSummary& f, long last_good) {
  if (f.non_finite > 0)
    throw Error(ExitCode::non_finite,
                p.source + ": " + std::to_string(f.non_finite) + " non-finite values (NaN/Inf) in u at step " + std::to_string(f.step) +
                    " (t = " + std::to_string(f.time) + "): the solution blew up or the input holds NaN; the last finite state was at step " +
                    std::to_string(last_good));
}

void log_diagnostics(const FieldSummary& f) {
  if (f.has_energy)
    spdlog::info("step {:>8} t={:<11.5g} min {:+.6e} max {:+.6e} mean {:+.6e} L2 {:.6e} energy {:.9e}", f.step, f.time, f.min,
                 f.max, f.mean, f.l2, f.energy);
  else
    spdlog::info("step {:>8} t={:<11.5g} min {:+.6e} max {:+.6e} mean {:+.6e} L2 {:.6e}", f.step, f.time, f.min, f.max, f.mean, f.l2);
}

}  // namespace

template <int D, class Real>
Simulation<D, Real>::Simulation(const Config& config, MPI_Comm comm)
    : config_(config),
      problem_(Problem::from(config_)),
      decomposition_(problem_, config_.run.parallel, halo_depth(problem_, config_.run), comm),
      domain_(decomposition_.template local_domain<D>()),
      chosen_(make_backend<D, Real>(problem_, config_.run, domain_, decomposition_.comm())),
      halo_(*chosen_.backend, decomposition_, domain_, exchanged_levels(problem_, domain_.layout.halo), chosen_.transport),
      files_(config_, problem_, decomposition_, domain_, *chosen_.backend) {
  chosen_.backend->initialize();
  phases_.io += load_initial_files(problem_, decomposition_, domain_, *chosen_.backend);
}

template <int D, class Real>
long Simulation<D, Real>::next_chunk(long until) const {
  long k = domain_.layout.halo / problem_.radius;
  // With no face exchanged the halo depth limits nothing: chunks of up to 64
  // steps let a temporal-blocking backend (cuda-cluster) run k steps a launch,
  // and keep progress lines on time. Bitwise neutral: with no exchanged face,
  // advance(k) is k single steps on every backend.
  if (!halo_.active()) k = std::max<long>(k, 64);
  return std::min(k, until - step());
}

template <int D, class Real>
void Simulation<D, Real>::advance(long steps) {
  const long until = step() + steps;
  while (step() < until) {
    const int k = static_cast<int>(next_chunk(until));
    if (overlapped()) {
      advance_overlapped(k);
    } else {
      halo_.exchange();
      const double t0 = steady_seconds();
      backend().advance(k);
      backend().synchronize();
      phases_.compute += steady_seconds() - t0;
    }
  }
}

template <int D, class Real>
void Simulation<D, Real>::advance_overlapped(int k) {
  const long H = domain_.layout.halo;
  // The interior: owned points at least H from every neighbour. Their stencil
  // reads no halo, and no face sent in this exchange holds them (u^{n-1} is
  // updated in place, and the later stages still send it).
  Box<D> interior = domain_.update_box(problem_.radius, 0);
  for (int a = 0; a < D; ++a) {
    if (domain_.exchanged[a][0]) interior.lo[a] += H;
    if (domain_.exchanged[a][1]) interior.hi[a] -= H;
  }
  // One slab of the interior (split along the slowest axis) per exchange stage,
  // computed while that stage's messages are in flight.
  const int stages = halo_.stages();
  double compute = 0;
  for (int s = 0; s < stages; ++s) {
    halo_.start(s);
    Box<D> slab = interior;
    long first = 0, count = 0;
    Decomposition::split(interior.extent(D - 1), stages, s, first, count);
    slab.lo[D - 1] = interior.lo[D - 1] + first;
    slab.hi[D - 1] = slab.lo[D - 1] + count;
    const double t0 = steady_seconds();
    backend().update(slab);
    compute += steady_seconds() - t0;
    halo_.finish(s);
  }
  // With the halos in: the rest of the first step's update box (deep halos
  // included), then the chunk's other steps.
  const double t0 = steady_seconds();
  for (const Box<D>& rim : box_difference(domain_.update_box(problem_.radius, k - 1), interior)) backend().update(rim);
  backend().finish_step();
  if (k > 1) backend().advance(k - 1);
  backend().synchronize();
  phases_.compute += compute + steady_seconds() - t0;
}

template <int D, class Real>
FieldSummary Simulation<D, Real>::diagnose() {
  halo_.exchange();  // energy needs lap(u) at owned points: halos of depth r
  const double t0 = steady_seconds();
  const FieldSummary f = reduce_stats(backend().stats(), problem_, step(), decomposition_.comm());
  phases_.diagnostics += steady_seconds() - t0;
  return f;
}

template <int D, class Real>
RunMetrics Simulation<D, Real>::run(const RunControl& control) {
  const RunSettings& settings = config_.run;
  const long total_steps = problem_.steps;
  RunMetrics m = start_metrics();
  if (!control.restart.empty()) {
    const std::string path = restart(control.restart);
    spdlog::info("restarted from {} at step {} (t = {:.6g})", path, step(), step() * problem_.dt);
  }
  m.first_step = step();
  m.initial = diagnose();
  log_diagnostics(m.initial);
  check_finite(problem_, m.initial, m.first_step);
  FieldSummary last = m.initial, first_energy;

  const CheckpointSettings& checkpoint = settings.checkpoint;
  if (settings.output.every > 0 && step() == 0) write_output();
  const double start = steady_seconds();
  double last_progress = start, last_checkpoint = start;
  auto due = [&](long every) { return every > 0 && step() % every == 0; };
  while (step() < total_steps) {
    // One exchange chunk at a time, so that progress lines, checkpoints and outputs come on time.
    long until = total_steps;
    for (long every : {settings.diagnostics_every, checkpoint.every, settings.output.every})
      if (every > 0) until = std::min(until, (step() / every + 1) * every);
    advance(next_chunk(until));
    if (due(settings.diagnostics_every) && step() < total_steps) {
      FieldSummary f = diagnose();
      log_diagnostics(f);
      check_finite(problem_, f, last.step);
      if (f.has_energy && !first_energy.has_energy) first_energy = f;
      last = f;
    }
    // A signal or a wall clock may be seen by some ranks only: all ranks agree here.
    int events[2] = {control.stop && *control.stop ? 1 : 0,
                     checkpoint.every_seconds > 0 && steady_seconds() - last_checkpoint >= checkpoint.every_seconds ? 1 : 0};
    if (control.stop || checkpoint.every_seconds > 0)
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, events, 2, MPI_INT, MPI_MAX, decomposition_.comm()), "MPI_Allreduce");
    const bool stop = events[0] != 0 && step() < total_steps;  // a finished run just finishes
    if (stop || events[1] || due(checkpoint.every)) {
      const FieldSummary f = diagnose();  // never checkpoint a blown-up state
      check_finite(problem_, f, last.step);
      last = f;
      write_checkpoint();
      last_checkpoint = steady_seconds();
    }
    if (due(settings.output.every)) write_output();
    if (stop) {
      m.interrupted = true;
      spdlog::info("stop requested (SIGTERM/SIGUSR1): stopped at step {} after a checkpoint; continue with --restart latest", step());
      break;
    }
    const double t = steady_seconds();
    if (settings.progress_seconds > 0 && t - last_progress >= settings.progress_seconds && step() < total_steps) {
      const double elapsed = t - start, done = static_cast<double>(step() - m.first_step) / (total_steps - m.first_step);
      spdlog::info("progress: step {}/{} ({:.1f}%), t = {:.5g}, {:.3g} Gcells/s, elapsed {}, ETA {}", step(), total_steps,
                   100.0 * step() / total_steps, step() * problem_.dt,
                   problem_.global_points() * static_cast<double>(step() - m.first_step) / elapsed / 1e9, format_duration(elapsed),
                   format_duration(elapsed / done - elapsed));
      last_progress = t;
    }
  }
  m.wall_seconds = steady_seconds() - start;
  m.final = diagnose();
  log_diagnostics(m.final);
  check_finite(problem_, m.final, last.step);
  if (m.final.has_energy && !first_energy.has_energy) first_energy = m.final;
  finish_metrics(m, first_energy);
  return m;
}

template <int D, class Real>
RunMetrics Simulation<D, Real>::start_metrics() const {
  RunMetrics m;
  m.backend = chosen_.backend->name();
  m.backend_reason = chosen_.reason;
  m.ranks = decomposition_.size();
  m.threads = omp_get_max_threads();
  for (int a = 0; a < D; ++a) m.decomposition[a] = decomposition_.dims()[a];
  m.steps = problem_.steps;
  m.dt = problem_.dt;
  m.simulated_time = problem_.steps * problem_.dt;
  m.bytes_per_update = problem_.bytes_per_update();
  m.halo_transport = to_string(halo_.transport());
  m.halo_path = halo_.path();
  m.overlap = overlapped();
  spdlog::info("backend {} ({}), {} rank(s) as {}, {} thread(s) per rank, halo depth {}", m.backend, m.backend_reason, m.ranks,
               fmt::join(std::vector<int>(m.decomposition.begin(), m.decomposition.begin() + D), " x "), m.threads,
               domain_.layout.halo);
  if (decomposition_.size() > 1)
    spdlog::info("halo exchange through {}, {}", m.halo_path,
                 m.overlap ? "overlapped with the interior of the first step of each chunk" : "then compute (parallel.overlap: false)");
  spdlog::info("dt = {:.6g} ({:.3g} of the stability limit: {}), {} steps to t = {:.6g}", problem_.dt,
               problem_.stability_number() / problem_.stability_limit(), problem_.stability_rule(), problem_.steps, m.simulated_time);
  return m;
}

template <int D, class Real>
void Simulation<D, Real>::finish_metrics(RunMetrics& m, const FieldSummary& first_energy) const {
  // Phase times: the slowest rank's, and the mean (their gap is load imbalance).
  const HaloTimes& halo = halo_.times();
  double local[6] = {phases_.compute, halo.pack, halo.communicate, halo.unpack, phases_.diagnostics, phases_.io + files_.seconds()};
  double worst[6], total[6];
  check_mpi(MPI_Allreduce(local, worst, 6, MPI_DOUBLE, MPI_MAX, decomposition_.comm()), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(local, total, 6, MPI_DOUBLE, MPI_SUM, decomposition_.comm()), "MPI_Allreduce");
  const double ranks = decomposition_.size();
  m.phases = {worst[0], worst[1], worst[2], worst[3], worst[4], worst[5]};
  m.phases_mean = {total[0] / ranks, total[1] / ranks, total[2] / ranks, total[3] / ranks, total[4] / ranks, total[5] / ranks};
  const double cells = static_cast<double>(problem_.global_points());
  m.cell_updates = cells * static_cast<double>(step() - m.first_step);
  m.cells_per_second = m.wall_seconds > 0 ? m.cell_updates / m.wall_seconds : 0;
  spdlog::info("done: {} steps of {:.4g} cells in {} ({:.4g} Gcells/s)", step() - m.first_step, cells, format_duration(m.wall_seconds),
               m.cells_per_second / 1e9);
  spdlog::info("phases (slowest rank): compute {}, pack {}, communicate {}, unpack {}, diagnostics {}, io {}",
               format_duration(m.phases.compute), format_duration(m.phases.pack), format_duration(m.phases.communicate),
               format_duration(m.phases.unpack), format_duration(m.phases.diagnostics), format_duration(m.phases.io));
  // Conservation, as a mini-app should end (miniWeather's habit).
  spdlog::info("conservation: mean {:+.6e} -> {:+.6e} (change {:+.3e})", m.initial.mean, m.final.mean, m.final.mean - m.initial.mean);
  if (first_energy.has_energy)
    spdlog::info("conservation: energy {:.12e} (step {}) -> {:.12e} (relative change {:+.3e})", first_energy.energy, first_energy.step,
                 m.final.energy, (m.final.energy - first_energy.energy) / std::max(std::abs(first_energy.energy), 1e-300));
}

template class Simulation<2, float>;
template class Simulation<2, double>;
template class Simulation<3, float>;
template class Simulation<3, double>;

RunMetrics run_config(const Config& config, const RunControl& control, MPI_Comm comm) {
  return with_dims_and_precision(config.dims, config.precision == Precision::float32, [&]<int D, class Real>() {
    return Simulation<D, Real>(config, comm).run(control);
  });
}

}  // namespace heatwave
