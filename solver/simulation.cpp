#include "solver/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "io/errors.hpp"
#include "io/log.hpp"
#include "solver/host_backend.hpp"
#ifdef HEATWAVE_HAVE_CUDA
#include "kernels/cuda_backend.hpp"
#endif

namespace heatwave {

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// This rank's index among the ranks of its node: it picks the GPU.
int node_local_rank(MPI_Comm comm) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int rank = 0;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_free(&node);
  return rank;
}

// The backend the config asks for; `reason` says why it is the one that runs.
template <int D, class Real>
std::unique_ptr<Backend<D, Real>> make_backend(const Problem& p, const LocalDomain<D>& domain, MPI_Comm comm,
                                               std::string& reason) {
  const std::string& name = p.config.backend;
  if (name == "host") {
    reason = "requested in the config";
    return make_host_backend<D, Real>(p, domain);
  }
#ifdef HEATWAVE_HAVE_CUDA
  const bool have_gpu = !cuda::devices().empty();
  if (name == "cuda" || (name == "auto" && have_gpu)) {
    if (!have_gpu)
      throw Error(ExitCode::cuda_error, p.config.source + ": 'backend' = 'cuda' but no CUDA device is visible");
    const cuda::DeviceInfo device = cuda::select_device(node_local_rank(comm));
    reason = (name == "auto" ? "auto: " : "requested: ") + device.name + " (device " + std::to_string(device.index) +
             ", sm_" + std::to_string(device.compute_major) + std::to_string(device.compute_minor) + ")";
    return cuda::make_backend<D, Real>(p, domain);
  }
  if (name == "auto") {
    reason = "auto: no CUDA device visible";
    return make_host_backend<D, Real>(p, domain);
  }
#else
  (void)comm;
  if (name == "auto") {
    reason = "auto: this build has no CUDA backend";
    return make_host_backend<D, Real>(p, domain);
  }
#endif
  throw Error(ExitCode::invalid_value, p.config.source + ": 'backend' = '" + name +
                                           "' is not available in this build (heatwave info lists the backends)");
}

// Halo depth: exchange_every steps of the stencil radius, never more steps than the run has.
int halo_depth(const Problem& p) {
  return static_cast<int>(std::min<long>(p.config.exchange_every, std::max<long>(p.steps, 1))) * p.config.radius;
}

}  // namespace

template <int D, class Real>
Simulation<D, Real>::Simulation(const Problem& problem, MPI_Comm comm)
    : problem_(problem),
      decomposition_(problem_, halo_depth(problem_), comm),
      domain_(decomposition_.template local_domain<D>()),
      backend_(make_backend<D, Real>(problem_, domain_, decomposition_.comm(), backend_reason_)),
      halo_(*backend_, decomposition_, domain_, problem_.config.equation == Equation::wave ? 2 : 1) {
  backend_->initialize();
}

template <int D, class Real>
long Simulation<D, Real>::next_chunk(long until) const {
  const long k = domain_.layout.halo / problem_.config.radius;
  return std::min(k, until - backend_->step());
}

template <int D, class Real>
void Simulation<D, Real>::advance(long steps) {
  const long until = backend_->step() + steps;
  while (backend_->step() < until) {
    const long k = next_chunk(until);
    double t0 = now();
    halo_.exchange();
    double t1 = now();
    backend_->advance(static_cast<int>(k));
    phases_.exchange += t1 - t0;
    phases_.compute += now() - t1;
  }
}

template <int D, class Real>
FieldSummary Simulation<D, Real>::diagnose() {
  const double t0 = now();
  halo_.exchange();  // energy needs lap(u) at owned points: halos of depth r
  const LocalStats s = backend_->stats();
  double mins[1] = {s.min}, maxs[1] = {s.max}, mn, mx;
  double sums[5] = {s.weight, s.sum, s.sum_squares, s.kinetic, s.potential}, total[5];
  long bad = s.non_finite, all_bad = 0;
  MPI_Comm comm = decomposition_.comm();
  MPI_Allreduce(mins, &mn, 1, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(maxs, &mx, 1, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(sums, total, 5, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, comm);
  double volume = 1;
  for (int a = 0; a < D; ++a) volume *= problem_.spacing[a];
  FieldSummary f;
  f.step = backend_->step();
  f.time = f.step * problem_.dt;
  f.min = mn, f.max = mx;
  f.mean = total[0] > 0 ? total[1] / total[0] : 0;
  f.l2 = std::sqrt(total[2] * volume);
  f.has_energy = problem_.config.equation == Equation::wave && f.step > 0;
  f.energy = 0.5 * (total[3] + total[4]) * volume;
  f.non_finite = all_bad;
  phases_.diagnostics += now() - t0;
  return f;
}

template <int D, class Real>
std::vector<Real> Simulation<D, Real>::gather(Level level) {
  const Layout<D>& layout = domain_.layout;
  std::vector<Real> mine(layout.owned_box().size());
  backend_->read(level, mine.data());
  MPI_Comm comm = decomposition_.comm();
  const int size = decomposition_.size(), rank = decomposition_.rank();
  const MPI_Datatype type = std::is_same_v<Real, float> ? MPI_FLOAT : MPI_DOUBLE;
  std::vector<int> counts(size), displs(size);
  const int count = static_cast<int>(mine.size());
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  std::vector<Real> all;
  if (rank == 0) {
    for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
    all.resize(static_cast<std::size_t>(displs[size - 1]) + counts[size - 1]);
  }
  MPI_Gatherv(mine.data(), count, type, all.data(), counts.data(), displs.data(), type, 0, comm);
  if (rank != 0) return {};
  // Place each rank's box into the global array.
  std::vector<Real> global(static_cast<std::size_t>(problem_.global_points()));
  for (int r = 0; r < size; ++r) {
    int coords[3] = {0, 0, 0};
    MPI_Cart_coords(comm, r, D, coords);
    Index<D> first, extent;
    for (int a = 0; a < D; ++a) Decomposition::split(problem_.points[a], decomposition_.dims()[a], coords[a], first[a], extent[a]);
    const Real* src = all.data() + displs[r];
    long rows = 1;
    for (int a = 1; a < D; ++a) rows *= extent[a];
    for (long row = 0; row < rows; ++row) {
      long rest = row, g = first[0], scale = problem_.points[0];
      for (int a = 1; a < D; ++a) {
        g += (first[a] + rest % extent[a]) * scale;
        rest /= extent[a];
        scale *= problem_.points[a];
      }
      std::copy(src + row * extent[0], src + (row + 1) * extent[0], global.begin() + g);
    }
  }
  return global;
}

template <int D, class Real>
RunMetrics Simulation<D, Real>::run() {
  const Config& c = problem_.config;
  const long total_steps = problem_.steps;
  RunMetrics m;
  m.backend = backend_->name();
  m.backend_reason = backend_reason_;
  m.ranks = decomposition_.size();
  m.threads = host_threads();
  for (int a = 0; a < D; ++a) m.decomposition[a] = decomposition_.dims()[a];
  m.steps = total_steps;
  m.dt = problem_.dt;
  m.simulated_time = total_steps * problem_.dt;
  m.bytes_per_update = sizeof(Real) * (c.equation == Equation::heat ? 2 : 3);

  spdlog::info("backend {} ({}), {} rank(s) as {}, {} thread(s) per rank, halo depth {}", m.backend, m.backend_reason,
               m.ranks, fmt::join(std::vector<int>(m.decomposition.begin(), m.decomposition.begin() + D), " x "),
               m.threads, domain_.layout.halo);
  spdlog::info("dt = {:.6g} ({:.3g} of the stability limit: {}), {} steps to t = {:.6g}", problem_.dt,
               problem_.stability_number() / problem_.stability_limit(), problem_.stability_rule(), total_steps,
               m.simulated_time);

  auto log_diagnostics = [&](const FieldSummary& f) {
    if (f.has_energy)
      spdlog::info("step {:>8} t={:<11.5g} min {:+.6e} max {:+.6e} mean {:+.6e} L2 {:.6e} energy {:.9e}", f.step,
                   f.time, f.min, f.max, f.mean, f.l2, f.energy);
    else
      spdlog::info("step {:>8} t={:<11.5g} min {:+.6e} max {:+.6e} mean {:+.6e} L2 {:.6e}", f.step, f.time, f.min,
                   f.max, f.mean, f.l2);
  };
  auto check_finite = [&](const FieldSummary& f, long last_good) {
    if (f.non_finite > 0)
      throw Error(ExitCode::non_finite,
                  c.source + ": " + std::to_string(f.non_finite) + " non-finite values (NaN/Inf) in u at step " +
                      std::to_string(f.step) + " (t = " + std::to_string(f.time) +
                      "): the solution blew up or the input holds NaN; the last finite state was at step " +
                      std::to_string(last_good));
  };

  m.initial = diagnose();
  log_diagnostics(m.initial);
  check_finite(m.initial, 0);
  FieldSummary last = m.initial, first_energy;

  const double start = now();
  double last_progress = start;
  const long diag_every = c.diagnostics_every;
  const double cells = static_cast<double>(problem_.global_points());
  while (step() < total_steps) {
    // One exchange chunk at a time, so that progress lines come on time.
    long until = total_steps;
    if (diag_every > 0) until = std::min(until, (step() / diag_every + 1) * diag_every);
    advance(next_chunk(until));
    if (diag_every > 0 && step() % diag_every == 0 && step() < total_steps) {
      FieldSummary f = diagnose();
      log_diagnostics(f);
      check_finite(f, last.step);
      if (f.has_energy && !first_energy.has_energy) first_energy = f;
      last = f;
    }
    const double t = now();
    if (c.progress_seconds > 0 && t - last_progress >= c.progress_seconds && step() < total_steps) {
      const double elapsed = t - start, done = static_cast<double>(step()) / total_steps;
      spdlog::info("progress: step {}/{} ({:.1f}%), t = {:.5g}, {:.3g} Gcells/s, elapsed {}, ETA {}", step(),
                   total_steps, 100 * done, step() * problem_.dt, cells * step() / elapsed / 1e9,
                   format_duration(elapsed), format_duration(elapsed / done - elapsed));
      last_progress = t;
    }
  }
  m.wall_seconds = now() - start;
  m.final = diagnose();
  log_diagnostics(m.final);
  check_finite(m.final, last.step);
  if (m.final.has_energy && !first_energy.has_energy) first_energy = m.final;

  // Phase times: the slowest rank's.
  double local[4] = {phases_.compute, phases_.exchange, phases_.diagnostics, phases_.io}, worst[4];
  MPI_Allreduce(local, worst, 4, MPI_DOUBLE, MPI_MAX, decomposition_.comm());
  m.phases = {worst[0], worst[1], worst[2], worst[3]};
  m.cell_updates = cells * total_steps;
  m.cells_per_second = m.wall_seconds > 0 ? m.cell_updates / m.wall_seconds : 0;

  spdlog::info("done: {} steps of {:.4g} cells in {} ({:.4g} Gcells/s; compute {}, exchange {}, diagnostics {})",
               total_steps, cells, format_duration(m.wall_seconds), m.cells_per_second / 1e9,
               format_duration(m.phases.compute), format_duration(m.phases.exchange),
               format_duration(m.phases.diagnostics));
  // Conservation, as a mini-app should end (miniWeather's habit).
  const double mean_drift = m.final.mean - m.initial.mean;
  spdlog::info("conservation: mean {:+.6e} -> {:+.6e} (change {:+.3e})", m.initial.mean, m.final.mean, mean_drift);
  if (first_energy.has_energy)
    spdlog::info("conservation: energy {:.12e} (step {}) -> {:.12e} (relative change {:+.3e})", first_energy.energy,
                 first_energy.step, m.final.energy,
                 (m.final.energy - first_energy.energy) / std::max(std::abs(first_energy.energy), 1e-300));
  return m;
}

template class Simulation<2, float>;
template class Simulation<2, double>;
template class Simulation<3, float>;
template class Simulation<3, double>;

RunMetrics run_problem(const Problem& problem, MPI_Comm comm) {
  const bool f32 = problem.config.precision == Precision::float32;
  if (problem.dims == 2) return f32 ? Simulation<2, float>(problem, comm).run() : Simulation<2, double>(problem, comm).run();
  return f32 ? Simulation<3, float>(problem, comm).run() : Simulation<3, double>(problem, comm).run();
}

}  // namespace heatwave
