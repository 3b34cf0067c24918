#include "solver/simulation.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "io/collective.hpp"
#include "io/errors.hpp"
#include "io/log.hpp"
#include "solver/box_difference.hpp"
#include "solver/diagnostics.hpp"
#include "solver/run_report.hpp"

namespace heatwave {

namespace {

// parallel.exchange_every: the config's number, or for auto the backend's
// preferred depth (Backend::preferred_exchange_every). The host backend takes
// 1, without building anything: its messages cost microseconds. A GPU backend
// is asked through a probe of it on the run's decomposition: cuda-cluster's
// plan k (an autotune is cached, so the run's own backend finds the same
// plan), or the cuda backend's deep-halo depth (also where cuda-cluster falls
// back to it). k is capped by the thinnest box (k*r halo points must fit) and
// agreed by all ranks.
template <int D, class Real>
ExchangeChoice choose_exchange_every(const Problem& p, const RunSettings& run, MPI_Comm comm) {
  if (run.parallel.exchange_every) return {*run.parallel.exchange_every, "parallel.exchange_every"};
  int ranks = 1;
  check_mpi(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
  if (ranks == 1) return {1, "auto: one rank exchanges no halos"};
  if (!gpu_backend_runs(run))
    return {1, "auto: the host backend's messages cost microseconds, deeper halos would only add redundant work"};
  const Decomposition probe(p, run.parallel, p.radius, comm);
  const LocalDomain<D> domain = probe.template local_domain<D>();
  int k = 1;
  BackendKind kind = BackendKind::cuda;
  std::string plan;
  {
    const ChosenBackend<D, Real> chosen = make_backend<D, Real>(p, run, domain, probe.comm());
    k = chosen.backend->preferred_exchange_every(), kind = chosen.backend->kind(), plan = chosen.backend->plan();
  }
  for (int a = 0; a < D; ++a)
    if (probe.dims()[a] > 1) k = static_cast<int>(std::min<long>(k, p.points[a] / probe.dims()[a] / p.radius));
  k = std::max(k, 1);
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &k, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (kind == BackendKind::cuda_cluster) return {k, "auto: the cuda-cluster plan's k (" + plan + ")"};
  return {k,
          "auto: the cuda backend's deep halos (a GPU exchange costs launches and a message latency whatever its "
          "size, paid once every k steps)"};
}

// Halo depth: exchange_every steps of the stencil radius, never more steps than the run has.
int halo_depth(const Problem& p, int exchange_every) {
  return static_cast<int>(std::min<long>(exchange_every, std::max<long>(p.steps, 1))) * p.radius;
}

// The levels whose halos the steps read. u^{n-1} is read only at the points a
// step updates, which reach into neighbour halos only with deep halos: one
// step per exchange sends u alone, half the messages.
int exchanged_levels(const Problem& p, int halo) { return p.levels() == 2 && halo > p.radius ? 2 : 1; }

}  // namespace

template <int D, class Real>
Simulation<D, Real>::Simulation(const Config& config, MPI_Comm comm, const RunControl& control)
    : config_(config),
      claims_(config_, comm, !control.restart.empty(), control.earlier),
      problem_(control.restart.empty()
                   ? Problem::from(config_)
                   : Problem::from(config_, restart_clock(config_, control.restart, comm), control.new_dt)),
      exchange_(choose_exchange_every<D, Real>(problem_, config_.run, comm)),
      decomposition_(problem_, config_.run.parallel, halo_depth(problem_, exchange_.every), comm),
      domain_(decomposition_.template local_domain<D>()),
      chosen_(make_backend<D, Real>(problem_, config_.run, domain_, decomposition_.comm())),
      halo_(*chosen_.backend, decomposition_, domain_, exchanged_levels(problem_, domain_.layout.halo),
            chosen_.transport),
      files_(config_, claims_, problem_, decomposition_, domain_, *chosen_.backend),
      receivers_(config_, problem_, domain_, decomposition_.comm()) {
  startup_progress(fmt::format("{} backend ready", backend().name()));
  chosen_.backend->initialize();
  startup_progress("initial condition set");
  phases_.io += load_initial_files(problem_, decomposition_, domain_, *chosen_.backend);
  if (!control.restart.empty()) {
    startup_progress(fmt::format("restoring {}", control.restart));
    restored_from_ = files_.restart(control.restart, control.new_dt);
  }
  receivers_.start(step(), !control.restart.empty());
  receivers_.record_with(backend());
  startup_progress("receivers ready");
  // --log-level debug: how the run is laid out (rank 0's view).
  std::vector<long> owned(domain_.layout.owned.begin(), domain_.layout.owned.end()),
      offset(domain_.offset.begin(), domain_.offset.end());
  std::string neighbours;
  for (int a = 0; a < D; ++a)
    for (int side = 0; side < 2; ++side)
      if (domain_.exchanged[a][side])
        neighbours += std::string(neighbours.empty() ? "" : ", ") + axis_names[a] + (side ? "_high" : "_low");
  spdlog::debug(
      "decomposition: {} rank(s) as {}; this rank owns {} points from global index [{}], halo depth {}, faces from "
      "neighbours: {}",
      decomposition_.size(),
      fmt::join(std::vector<int>(decomposition_.dims().begin(), decomposition_.dims().begin() + D), " x "),
      fmt::join(owned, " x "), fmt::join(offset, ", "), domain_.layout.halo, neighbours.empty() ? "none" : neighbours);
  spdlog::debug("halo transport: {}; levels exchanged: {}", halo_.path(),
                exchanged_levels(problem_, domain_.layout.halo));
  spdlog::debug("backend {}: {}{}", backend().name(), chosen_.reason,
                backend().plan().empty() ? "" : "; launch plan: " + backend().plan());
}

long chunk_steps(long halo_steps, bool exchanged, int launch_steps, long left) {
  long k = halo_steps;
  // With no face exchanged the halo depth limits nothing: chunks of up to 64
  // steps let a temporal-blocking backend (cuda-cluster) run k steps a launch,
  // and keep progress lines on time; a multiple of its k, so that no chunk
  // but the run's last ends in shorter launches (the deep plans' k 7: a chunk
  // of 64 ran 9 launches of 7 and one of a step, whose sweep costs as much
  // as a launch of 7's). Bitwise neutral: with no exchanged face, advance(k)
  // is k single steps on every backend.
  if (!exchanged) {
    const long every = std::max(1, launch_steps);
    k = std::max(k, every < 64 ? 64 / every * every : every);
  }
  return std::min(k, left);
}

template <int D, class Real>
long Simulation<D, Real>::next_chunk(long until) const {
  return chunk_steps(domain_.layout.halo / problem_.radius, halo_.active(), chosen_.backend->preferred_exchange_every(),
                     until - step());
}

template <int D, class Real>
void Simulation<D, Real>::advance(long steps) {
  const long until = step() + steps;
  while (step() < until) {
    const int k = static_cast<int>(next_chunk(until));
    const double start = steady_seconds(), compute = phases_.compute;
    if (overlapped()) {
      advance_overlapped(k);
    } else {
      halo_.exchange();
      const double t0 = steady_seconds();
      backend().span_begin();
      backend().advance(k);
      backend().span_end(Backend<D, Real>::Span::compute);
      backend().synchronize();
      phases_.compute += steady_seconds() - t0;
    }
    spdlog::debug("chunk of {} step(s) to step {}: {} ({} computing)", k, step(),
                  format_duration(steady_seconds() - start), format_duration(phases_.compute - compute));
  }
}

template <int D, class Real>
void Simulation<D, Real>::advance_chunk(long until) {
  const long every = receivers_.active() ? receivers_.every() : 0;
  if (every > 0 && !receivers_.recorded()) until = std::min(until, (step() / every + 1) * every);
  advance(next_chunk(until));
  if (receivers_.recorded())
    receivers_.collect(backend());
  else if (every > 0 && step() % every == 0)
    receivers_.sample(backend(), step(), problem_.time_at(step()));
}

template <int D, class Real>
void Simulation<D, Real>::advance_with_receivers(long steps) {
  const long until = step() + steps;
  while (step() < until) advance_chunk(until);
}

template <int D, class Real>
void Simulation<D, Real>::advance_overlapped(int k) {
  if (backend().splits_chunks()) {
    // The inner launch is queued apart from the exchange's stream: the GPU
    // runs both at once, and the host waits only for the messages.
    const double t0 = steady_seconds();
    backend().advance_inner(k);
    const double t1 = steady_seconds();
    halo_.exchange();
    const double t2 = steady_seconds();
    backend().span_begin();
    backend().advance_outer();
    backend().span_end(Backend<D, Real>::Span::compute);
    backend().synchronize();
    phases_.compute += t1 - t0 + steady_seconds() - t2;
    return;
  }
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
    backend().span_begin();
    backend().update(slab);
    backend().span_end(Backend<D, Real>::Span::compute);
    compute += steady_seconds() - t0;
    halo_.finish(s);
  }
  // With the halos in: the rest of the first step's update box (deep halos
  // included), then the chunk's other steps.
  const double t0 = steady_seconds();
  backend().span_begin();
  for (const Box<D>& rim : box_difference(domain_.update_box(problem_.radius, k - 1), interior)) backend().update(rim);
  backend().finish_step();
  if (k > 1) backend().advance(k - 1);
  backend().span_end(Backend<D, Real>::Span::compute);
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
  RunMetrics m =
      start_report(problem_, {backend().name(), chosen_.reason, decomposition_.size(), omp_get_max_threads(),
                              domain_.layout.halo, decomposition_.dims(), to_string(halo_.transport()), halo_.path(),
                              overlapped(), backend().splits_chunks(), exchange_.every, exchange_.why});
  if (!restored_from_.empty()) {
    spdlog::info("restarted from {} at step {} (t = {:.6g})", restored_from_, step(), problem_.time_at(step()));
    if (problem_.start_step != 0)  // on a clock of its own: a dt changed here or at an earlier restart
      spdlog::info("time goes on from t = {:.10g} with dt = {:.10g}, {} steps to t = {:.10g}", problem_.time_at(step()),
                   problem_.dt, problem_.steps - step(), problem_.time_at(problem_.steps));
  }
  m.first_step = step();
  m.restarted_from = restored_from_;
  m.clock_step = problem_.start_step, m.clock_time = problem_.start_time;
  m.initial = diagnose();
  log_diagnostics(m.initial);
  check_finite(problem_, m.initial, m.first_step);
  FieldSummary last = m.initial;

  const CheckpointSettings& checkpoint = settings.checkpoint;
  if (settings.output.every > 0 && step() == 0) write_output();
  const double start = steady_seconds();
  double last_progress = start, last_checkpoint = start;
  long checkpointed = restored_from_.empty() ? -1 : step();  // the step of the newest checkpoint
  std::string stop_checkpoint;
  auto due = [&](long every) { return every > 0 && step() % every == 0; };
  const long sample_every = receivers_.active() ? receivers_.every() : 0;
  // A restart's own step was sampled before its checkpoint was written.
  if (restored_from_.empty() && due(sample_every)) receivers_.sample(backend(), step(), problem_.time_at(step()));
  while (step() < total_steps) {
    // One exchange chunk at a time, so that progress lines, checkpoints,
    // outputs and receiver samples come on time.
    long until = total_steps;
    for (long every : {settings.diagnostics_every, checkpoint.every, settings.output.every})
      if (every > 0) until = std::min(until, (step() / every + 1) * every);
    advance_chunk(until);
    if (due(settings.diagnostics_every) && step() < total_steps) {
      FieldSummary f = diagnose();
      log_diagnostics(f);
      check_finite(problem_, f, last.step);
      if (f.has_energy && !m.first_energy.has_energy) m.first_energy = f;
      last = f;
    }
    // A signal or a wall clock may be seen by some ranks only: all ranks agree here.
    int events[2] = {
        control.stop && *control.stop ? 1 : 0,
        checkpoint.every_seconds > 0 && steady_seconds() - last_checkpoint >= checkpoint.every_seconds ? 1 : 0};
    if (control.stop || checkpoint.every_seconds > 0)
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, events, 2, MPI_INT, MPI_MAX, decomposition_.comm()), "MPI_Allreduce");
    const bool stop = events[0] != 0 && step() < total_steps;  // a finished run just finishes
    if (stop || events[1] || due(checkpoint.every)) {
      const FieldSummary f = diagnose();  // never checkpoint a blown-up state
      check_finite(problem_, f, last.step);
      last = f;
      stop_checkpoint = write_checkpoint();
      checkpointed = step();
      last_checkpoint = steady_seconds();
    }
    if (due(settings.output.every)) write_output();
    if (stop) {
      m.interrupted = true;
      claims_.mark_stopped(stop_checkpoint);
      spdlog::info(
          "stop requested (SIGTERM/SIGUSR1): stopped at step {} after a checkpoint; continue with --restart latest",
          step());
      break;
    }
    const double t = steady_seconds();
    if (settings.progress_seconds > 0 && t - last_progress >= settings.progress_seconds && step() < total_steps) {
      const double elapsed = t - start,
                   done = static_cast<double>(step() - m.first_step) / (total_steps - m.first_step);
      spdlog::info("progress: step {}/{} ({:.1f}%), t = {:.5g}, {:.3g} Gcells/s, elapsed {}, ETA {}", step(),
                   total_steps, 100.0 * step() / total_steps, problem_.time_at(step()),
                   problem_.global_points() * static_cast<double>(step() - m.first_step) / elapsed / 1e9,
                   format_duration(elapsed), format_duration(elapsed / done - elapsed));
      last_progress = t;
    }
  }
  receivers_.flush();
  m.wall_seconds = steady_seconds() - start;
  m.final = diagnose();
  log_diagnostics(m.final);
  check_finite(problem_, m.final, last.step);
  // The final state is checkpointed where checkpoints are on, whether or not
  // `every` divides `steps`: a run extended later goes on from here.
  if (!m.interrupted && checkpointed != step() && (checkpoint.every > 0 || checkpoint.every_seconds > 0))
    write_checkpoint();
  if (m.final.has_energy && !m.first_energy.has_energy) m.first_energy = m.final;
  const HaloTimes& halo = halo_.times();
  PhaseTimes local{phases_.compute, halo.pack,           halo.communicate,
                   halo.unpack,     phases_.diagnostics, phases_.io + files_.seconds() + receivers_.seconds()};
  // On a GPU, what the kernels took (CUDA events), not what the host waited.
  if (const auto device = backend().device_seconds()) {
    local.compute = (*device)[0], local.pack = (*device)[1], local.unpack = (*device)[2];
    m.phases_clock = "device (CUDA events) for compute, pack, unpack; host for communicate, diagnostics, io";
  }
  finish_report(m, problem_, local, step(), decomposition_.comm());
  return m;
}

template class Simulation<2, float>;
template class Simulation<2, double>;
template class Simulation<3, float>;
template class Simulation<3, double>;

RunMetrics run_config(const Config& config, const RunControl& control, MPI_Comm comm) {
  return with_dims_and_precision(config.dims, config.precision == Precision::float32, [&]<int D, class Real>() {
    Simulation<D, Real> simulation(config, comm, control);
    simulation.claims().claim_metrics();
    const RunMetrics metrics = simulation.run(control);
    int rank = 0;
    check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    const std::string& file = config.run.metrics_file;
    if (!metrics.interrupted && !file.empty())
      on_every_rank(comm, [&] {
        if (rank != 0) return;
        write_metrics_json(file, config, metrics);
        spdlog::info("metrics written to {}", file);
      });
    return metrics;
  });
}

}  // namespace heatwave
