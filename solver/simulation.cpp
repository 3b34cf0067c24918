#include "solver/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <tuple>

#include "io/collective.hpp"
#include "io/errors.hpp"
#include "io/hdf5.hpp"
#include "io/log.hpp"
#include "solver/field_io.hpp"
#include "solver/host_backend.hpp"
#ifdef HEATWAVE_HAVE_CUDA
#include "kernels/cuda_backend.hpp"
#endif

namespace heatwave {

namespace {

// This rank's index among the ranks of its node (it picks the GPU), and their count.
std::pair<int, int> node_local_rank(MPI_Comm comm) {
  MPI_Comm node;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int rank = 0, size = 1;
  check_mpi(MPI_Comm_rank(node, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(node, &size), "MPI_Comm_size");
  check_mpi(MPI_Comm_free(&node), "MPI_Comm_free");
  return {rank, size};
}

// The halo transport (parallel.halo_transport): what the config asks for if
// this build, this MPI and the backend can do it (else a clear error), or for
// auto: nccl on a GPU backend with several ranks, one GPU each; else CUDA-aware
// MPI where the MPI says so; else host memory.
HaloTransportKind choose_transport(const Config& c, bool gpu_backend, bool gpu_per_rank, int ranks) {
  const std::string& name = c.halo_transport;
  const std::string key = c.source + ": 'parallel.halo_transport' = '" + name + "'";
  if (name == "mpi-host") return HaloTransportKind::mpi_host;
  if (name != "auto" && !gpu_backend)
    throw Error(ExitCode::invalid_value, key + " moves device memory, but the " + c.backend +
                                             " backend runs on the host (its halos are host memory: use mpi-host or auto)");
  if (name == "nccl") {
    if (!nccl_available())
      throw Error(ExitCode::invalid_value, key + ": this build has no NCCL (built with HEATWAVE_NCCL=OFF or NCCL not "
                                                 "found; heatwave info lists it): use auto or an mpi transport");
    return HaloTransportKind::nccl;
  }
  if (name == "mpi-cuda-aware") {
    if (!cuda_aware_mpi())
      throw Error(ExitCode::invalid_value, key + ": this MPI is not CUDA-aware (MPIX_Query_cuda_support): use auto, nccl "
                                                 "or mpi-host");
    return HaloTransportKind::mpi_cuda_aware;
  }
  if (!gpu_backend) return HaloTransportKind::mpi_host;
  if (nccl_available() && ranks > 1 && gpu_per_rank) return HaloTransportKind::nccl;
  return cuda_aware_mpi() ? HaloTransportKind::mpi_cuda_aware : HaloTransportKind::mpi_host;
}

// The backend the config asks for; `reason` says why it is the one that runs,
// `transport` how its halos move.
template <int D, class Real>
std::unique_ptr<Backend<D, Real>> make_backend(const Problem& p, const LocalDomain<D>& domain, MPI_Comm comm,
                                               std::string& reason, HaloTransportKind& transport) {
  const std::string& name = p.config.backend;
  int ranks = 1;
  check_mpi(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
  if (name == "host") {
    reason = "requested in the config";
    transport = choose_transport(p.config, false, false, ranks);
    return make_host_backend<D, Real>(p, domain);
  }
#ifdef HEATWAVE_HAVE_CUDA
  const auto gpus = cuda::devices();
  const bool gpu_backend = name == "cuda" || name == "cuda-cluster" || (name == "auto" && !gpus.empty());
  if (gpu_backend) {
    if (gpus.empty())
      throw Error(ExitCode::cuda_error, p.config.source + ": 'backend' = '" + name + "' but no CUDA device is visible");
    const auto [local_rank, local_ranks] = node_local_rank(comm);
    // All ranks agree whether each has a GPU of its own (NCCL needs it): nodes may differ.
    int shared = local_ranks > static_cast<int>(gpus.size()) ? 1 : 0;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &shared, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
    transport = choose_transport(p.config, true, shared == 0, ranks);
    const cuda::DeviceInfo device = cuda::select_device(local_rank);
    reason = (name == "auto" ? "auto: " : "requested: ") + device.name + " (device " + std::to_string(device.index) +
             ", sm_" + std::to_string(device.compute_major) + std::to_string(device.compute_minor) + ")";
    if (name != "cuda-cluster") return cuda::make_backend<D, Real>(p, domain, transport);
    std::string why;
    auto backend = cuda::make_cluster_backend<D, Real>(p, domain, transport, why);
    reason += "; " + why;
    if (backend->name() != "cuda-cluster") spdlog::warn("backend cuda-cluster: {}", why);
    return backend;
  }
  if (name == "auto") {
    reason = "auto: no CUDA device visible";
    transport = choose_transport(p.config, false, false, ranks);
    return make_host_backend<D, Real>(p, domain);
  }
#else
  if (name == "auto") {
    reason = "auto: this build has no CUDA backend";
    transport = choose_transport(p.config, false, false, ranks);
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

// The levels whose halos the steps read. The wave's u^{n-1} is read only at
// the points a step updates, which reach into neighbour halos only with deep
// halos: one step per exchange sends u alone, half the messages.
int exchanged_levels(const Problem& p, int halo) {
  return p.config.equation == Equation::wave && halo > p.config.radius ? 2 : 1;
}

}  // namespace

template <int D, class Real>
Simulation<D, Real>::Simulation(const Problem& problem, MPI_Comm comm)
    : problem_(problem),
      decomposition_(problem_, halo_depth(problem_), comm),
      domain_(decomposition_.template local_domain<D>()),
      backend_(make_backend<D, Real>(problem_, domain_, decomposition_.comm(), backend_reason_, transport_)),
      halo_(*backend_, decomposition_, domain_, exchanged_levels(problem_, domain_.layout.halo), transport_) {
  backend_->initialize();
  load_initial_files();
}

template <int D, class Real>
void Simulation<D, Real>::load_initial_files() {
  const Config& c = problem_.config;
  std::vector<std::tuple<const char*, const InitialCondition*, Level>> files;
  if (c.initial.type == InitialType::file) files.emplace_back("initial", &c.initial, Level::current);
  if (c.velocity && c.velocity->type == InitialType::file) files.emplace_back("velocity", &*c.velocity, Level::previous);
  if (files.empty()) return;
  const double t0 = steady_seconds();
  const hdf5::Block block = field_io::block_of(domain_);
  on_every_rank(decomposition_.comm(), [&] {
    for (const auto& [key, ic, level] : files) {
      if (!std::filesystem::exists(ic->path))
        throw Error(ExitCode::file_not_found, c.source + ": '" + key + ".path' = " + ic->path + ": no such file");
      const hdf5::Reader file(ic->path);
      if (!file.has_dataset(ic->dataset))
        throw Error(ExitCode::invalid_value, c.source + ": '" + key + ".dataset': " + ic->path + " has no dataset '" +
                                                 ic->dataset + "'");
      const auto found = file.shape(ic->dataset);
      if (found != block.global)
        throw Error(ExitCode::invalid_value,
                    fmt::format("{}: '{}': dataset '{}' of {} has shape [{}], but the grid needs [{}] (z, y, x order: "
                                "x fastest, grid.points reversed)",
                                c.source, key, ic->dataset, ic->path, fmt::join(found, ", "), fmt::join(block.global, ", ")));
      std::vector<Real> values(domain_.layout.owned_box().size());
      file.read(ic->dataset, block, values.data());
      backend_->write(level, values.data());
    }
  });
  phases_.io += steady_seconds() - t0;
}

template <int D, class Real>
std::vector<std::pair<std::string, Level>> Simulation<D, Real>::checkpoint_levels() const {
  if (problem_.config.equation == Equation::wave) return {{"u", Level::current}, {"u_previous", Level::previous}};
  return {{"u", Level::current}};
}

template <int D, class Real>
void Simulation<D, Real>::write_levels(const std::string& path, const std::string& kind,
                                       const std::vector<std::pair<std::string, Level>>& levels) {
  MPI_Comm comm = decomposition_.comm();
  on_every_rank(comm, [&] {
    if (decomposition_.rank() == 0) field_io::make_directory(std::filesystem::path(path).parent_path().string());
  });
  std::vector<std::vector<Real>> data;
  std::vector<hdf5::FieldView<Real>> fields;
  for (const auto& [name, level] : levels) {
    data.emplace_back(domain_.layout.owned_box().size());
    backend_->read(level, data.back().data());
  }
  for (std::size_t i = 0; i < levels.size(); ++i) fields.push_back({levels[i].first, data[i].data()});
  hdf5::write_fields(path, comm, field_io::block_of(domain_),
                     field_io::run_attributes(problem_, kind, step(), decomposition_.size()), fields);
}

template <int D, class Real>
std::string Simulation<D, Real>::write_checkpoint() {
  const double t0 = steady_seconds();
  const CheckpointSettings& settings = problem_.config.checkpoint;
  const std::string path = field_io::checkpoint_path(settings.dir, step());
  write_levels(path, "checkpoint", checkpoint_levels());
  on_every_rank(decomposition_.comm(), [&] {
    if (decomposition_.rank() == 0) field_io::prune_checkpoints(settings.dir, settings.keep);
  });
  phases_.io += steady_seconds() - t0;
  spdlog::info("checkpoint at step {} written to {} in {}", step(), path, format_duration(steady_seconds() - t0));
  return path;
}

template <int D, class Real>
std::string Simulation<D, Real>::restart(const std::string& checkpoint) {
  const double t0 = steady_seconds();
  const std::string& dir = problem_.config.checkpoint.dir;
  std::string path;
  long restored_step = 0;
  const auto levels = checkpoint_levels();
  std::vector<std::string> names;
  for (const auto& level : levels) names.push_back(level.first);
  on_every_rank(decomposition_.comm(), [&] {
    path = checkpoint == "latest" ? field_io::latest_checkpoint(dir) : checkpoint;
    const hdf5::Reader file(path);
    restored_step = field_io::check_restart_compatible(file, problem_, names);
    if (std::get<std::string>(file.attribute("config_hash")) != config_hash(problem_.config) && decomposition_.rank() == 0)
      spdlog::warn("{}: the checkpoint's config hash differs from this config's; continuing with this config", path);
    std::vector<Real> values(domain_.layout.owned_box().size());
    for (const auto& [name, level] : levels) {
      file.read(name, field_io::block_of(domain_), values.data());
      backend_->write(level, values.data());
    }
  });
  backend_->set_step(restored_step);
  // The XDMF series continues the outputs written up to this step.
  output_steps_.clear();
  for (long s : field_io::output_steps(problem_.config.output.dir))
    if (s <= restored_step) output_steps_.push_back(s);
  phases_.io += steady_seconds() - t0;
  return path;
}

template <int D, class Real>
void Simulation<D, Real>::write_output() {
  const double t0 = steady_seconds();
  const OutputSettings& settings = problem_.config.output;
  std::vector<std::pair<std::string, Level>> levels;
  for (const std::string& field : settings.fields) levels.emplace_back(field, field == "u" ? Level::current : Level::previous);
  write_levels(field_io::output_path(settings.dir, step()), "output", levels);
  if (output_steps_.empty() || output_steps_.back() != step()) output_steps_.push_back(step());
  on_every_rank(decomposition_.comm(), [&] {
    if (decomposition_.rank() == 0) field_io::write_output_series(problem_, output_steps_);
  });
  phases_.io += steady_seconds() - t0;
}

template <int D, class Real>
long Simulation<D, Real>::next_chunk(long until) const {
  long k = domain_.layout.halo / problem_.config.radius;
  // With no face exchanged the halo depth limits nothing: chunks of up to 64
  // steps let a temporal-blocking backend (cuda-cluster) run k steps a launch,
  // and keep progress lines on time. Bitwise neutral: with no exchanged face,
  // advance(k) is k single steps on every backend.
  if (!halo_.active()) k = std::max<long>(k, 64);
  return std::min(k, until - backend_->step());
}

template <int D, class Real>
bool Simulation<D, Real>::overlapped() const {
  return problem_.config.overlap && halo_.active();
}

template <int D, class Real>
void Simulation<D, Real>::advance(long steps) {
  const long until = backend_->step() + steps;
  while (backend_->step() < until) {
    const int k = static_cast<int>(next_chunk(until));
    if (overlapped()) {
      advance_overlapped(k);
    } else {
      halo_.exchange();
      const double t0 = steady_seconds();
      backend_->advance(k);
      backend_->synchronize();
      phases_.compute += steady_seconds() - t0;
    }
  }
}

template <int D, class Real>
void Simulation<D, Real>::advance_overlapped(int k) {
  const int r = problem_.config.radius;
  const long H = domain_.layout.halo;
  // The interior: owned points at least H from every neighbour. Their stencil
  // reads no halo, and no face sent in this exchange holds them (the wave
  // updates u^{n-1} in place, and the later stages still send it).
  Box<D> interior = domain_.update_box(r, 0);
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
    backend_->update(slab);
    compute += steady_seconds() - t0;
    halo_.finish(s);
  }
  // With the halos in: the rest of the first step's update box (deep halos
  // included), then the chunk's other steps.
  const double t0 = steady_seconds();
  for (const Box<D>& rim : box_difference(domain_.update_box(r, k - 1), interior)) backend_->update(rim);
  backend_->finish_step();
  if (k > 1) backend_->advance(k - 1);
  backend_->synchronize();
  phases_.compute += compute + steady_seconds() - t0;
}

template <int D, class Real>
FieldSummary Simulation<D, Real>::diagnose() {
  halo_.exchange();  // energy needs lap(u) at owned points: halos of depth r
  const double t0 = steady_seconds();
  const LocalStats s = backend_->stats();
  double mins[1] = {s.min}, maxs[1] = {s.max}, mn, mx;
  double sums[5] = {s.weight, s.sum, s.sum_squares, s.kinetic, s.potential}, total[5];
  long bad = s.non_finite, all_bad = 0;
  MPI_Comm comm = decomposition_.comm();
  check_mpi(MPI_Allreduce(mins, &mn, 1, MPI_DOUBLE, MPI_MIN, comm), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(maxs, &mx, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(sums, total, 5, MPI_DOUBLE, MPI_SUM, comm), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, comm), "MPI_Allreduce");
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
  phases_.diagnostics += steady_seconds() - t0;
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
  check_mpi(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm), "MPI_Gather");
  std::vector<Real> all;
  if (rank == 0) {
    for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
    all.resize(static_cast<std::size_t>(displs[size - 1]) + counts[size - 1]);
  }
  check_mpi(MPI_Gatherv(mine.data(), count, type, all.data(), counts.data(), displs.data(), type, 0, comm), "MPI_Gatherv");
  if (rank != 0) return {};
  // Place each rank's box into the global array.
  std::vector<Real> global(static_cast<std::size_t>(problem_.global_points()));
  for (int r = 0; r < size; ++r) {
    int coords[3] = {0, 0, 0};
    check_mpi(MPI_Cart_coords(comm, r, D, coords), "MPI_Cart_coords");
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
RunMetrics Simulation<D, Real>::run(const RunControl& control) {
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
  m.bytes_per_update = problem_.bytes_per_update();

  m.halo_transport = to_string(halo_.transport());
  m.halo_path = halo_.path();
  m.overlap = overlapped();
  spdlog::info("backend {} ({}), {} rank(s) as {}, {} thread(s) per rank, halo depth {}", m.backend, m.backend_reason,
               m.ranks, fmt::join(std::vector<int>(m.decomposition.begin(), m.decomposition.begin() + D), " x "),
               m.threads, domain_.layout.halo);
  if (decomposition_.size() > 1)
    spdlog::info("halo exchange through {}, {}", m.halo_path,
                 m.overlap ? "overlapped with the interior of the first step of each chunk"
                           : "then compute (parallel.overlap: false)");
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

  if (!control.restart.empty()) {
    const std::string path = restart(control.restart);
    spdlog::info("restarted from {} at step {} (t = {:.6g})", path, step(), step() * problem_.dt);
  }
  m.first_step = step();
  m.initial = diagnose();
  log_diagnostics(m.initial);
  check_finite(m.initial, m.first_step);
  FieldSummary last = m.initial, first_energy;

  const CheckpointSettings& checkpoint = c.checkpoint;
  const OutputSettings& output = c.output;
  if (output.every > 0 && step() == 0) write_output();
  const double start = steady_seconds();
  double last_progress = start, last_checkpoint = start;
  const long diag_every = c.diagnostics_every;
  const double cells = static_cast<double>(problem_.global_points());
  auto due = [&](long every) { return every > 0 && step() % every == 0; };
  while (step() < total_steps) {
    // One exchange chunk at a time, so that progress lines, checkpoints and outputs come on time.
    long until = total_steps;
    for (long every : {diag_every, checkpoint.every, output.every})
      if (every > 0) until = std::min(until, (step() / every + 1) * every);
    advance(next_chunk(until));
    if (due(diag_every) && step() < total_steps) {
      FieldSummary f = diagnose();
      log_diagnostics(f);
      check_finite(f, last.step);
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
      check_finite(f, last.step);
      last = f;
      write_checkpoint();
      last_checkpoint = steady_seconds();
    }
    if (due(output.every)) write_output();
    if (stop) {
      m.interrupted = true;
      spdlog::info("stop requested (SIGTERM/SIGUSR1): stopped at step {} after a checkpoint; continue with --restart latest",
                   step());
      break;
    }
    const double t = steady_seconds();
    if (c.progress_seconds > 0 && t - last_progress >= c.progress_seconds && step() < total_steps) {
      const double elapsed = t - start, done = static_cast<double>(step() - m.first_step) / (total_steps - m.first_step);
      spdlog::info("progress: step {}/{} ({:.1f}%), t = {:.5g}, {:.3g} Gcells/s, elapsed {}, ETA {}", step(),
                   total_steps, 100.0 * step() / total_steps, step() * problem_.dt,
                   cells * (step() - m.first_step) / elapsed / 1e9, format_duration(elapsed),
                   format_duration(elapsed / done - elapsed));
      last_progress = t;
    }
  }
  m.wall_seconds = steady_seconds() - start;
  m.final = diagnose();
  log_diagnostics(m.final);
  check_finite(m.final, last.step);
  if (m.final.has_energy && !first_energy.has_energy) first_energy = m.final;

  // Phase times: the slowest rank's, and the mean (their gap is load imbalance).
  const HaloTimes& halo = halo_.times();
  double local[6] = {phases_.compute, halo.pack, halo.communicate, halo.unpack, phases_.diagnostics, phases_.io};
  double worst[6], total[6];
  check_mpi(MPI_Allreduce(local, worst, 6, MPI_DOUBLE, MPI_MAX, decomposition_.comm()), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(local, total, 6, MPI_DOUBLE, MPI_SUM, decomposition_.comm()), "MPI_Allreduce");
  m.phases = {worst[0], worst[1], worst[2], worst[3], worst[4], worst[5]};
  const double ranks = decomposition_.size();
  m.phases_mean = {total[0] / ranks, total[1] / ranks, total[2] / ranks, total[3] / ranks, total[4] / ranks, total[5] / ranks};
  m.cell_updates = cells * static_cast<double>(step() - m.first_step);
  m.cells_per_second = m.wall_seconds > 0 ? m.cell_updates / m.wall_seconds : 0;

  spdlog::info("done: {} steps of {:.4g} cells in {} ({:.4g} Gcells/s)", step() - m.first_step, cells,
               format_duration(m.wall_seconds), m.cells_per_second / 1e9);
  spdlog::info("phases (slowest rank): compute {}, pack {}, communicate {}, unpack {}, diagnostics {}, io {}",
               format_duration(m.phases.compute), format_duration(m.phases.pack), format_duration(m.phases.communicate),
               format_duration(m.phases.unpack), format_duration(m.phases.diagnostics), format_duration(m.phases.io));
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

RunMetrics run_problem(const Problem& problem, const RunControl& control, MPI_Comm comm) {
  const bool f32 = problem.config.precision == Precision::float32;
  if (problem.dims == 2)
    return f32 ? Simulation<2, float>(problem, comm).run(control) : Simulation<2, double>(problem, comm).run(control);
  return f32 ? Simulation<3, float>(problem, comm).run(control) : Simulation<3, double>(problem, comm).run(control);
}

}  // namespace heatwave
