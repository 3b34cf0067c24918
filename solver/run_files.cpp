#include "solver/run_files.hpp"

#include <filesystem>
#include <tuple>

#include "io/collective.hpp"
#include "io/errors.hpp"
#include "io/hdf5.hpp"
#include "io/log.hpp"
#include "io/metrics.hpp"
#include "solver/field_io.hpp"

namespace heatwave {

template <int D, class Real>
std::vector<std::pair<std::string, Level>> RunFiles<D, Real>::checkpoint_levels() const {
  const EquationInfo equation = info(problem_.equation);
  std::vector<std::pair<std::string, Level>> levels;
  for (int l = 0; l < equation.levels; ++l) levels.emplace_back(equation.level_names[l], static_cast<Level>(l));
  return levels;
}

template <int D, class Real>
void RunFiles<D, Real>::write_levels(const std::string& path, const std::string& kind,
                                     const std::vector<std::pair<std::string, Level>>& levels) {
  MPI_Comm comm = decomposition_.comm();
  on_every_rank(comm, [&] {
    if (decomposition_.rank() == 0) field_io::make_directory(std::filesystem::path(path).parent_path().string());
  });
  std::vector<std::vector<Real>> data;
  std::vector<hdf5::FieldView<Real>> fields;
  for (const auto& [name, level] : levels) {
    data.emplace_back(domain_.layout.owned_box().size());
    backend_.read(level, data.back().data());
  }
  for (std::size_t i = 0; i < levels.size(); ++i) fields.push_back({levels[i].first, data[i].data()});
  hdf5::write_fields(
      path, comm, field_io::block_of(domain_),
      field_io::run_attributes(config_, problem_, kind, backend_.step(), decomposition_.size(), media_record_), fields);
}

template <int D, class Real>
void RunFiles<D, Real>::claim_directories(bool checkpoints, bool outputs) {
  on_every_rank(decomposition_.comm(), [&] {
    if (decomposition_.rank() != 0) return;
    const std::string owner = "config hash " + config_hash(config_) + " (" + config_.source + ")";
    const RunSettings& run = config_.run;
    if (checkpoints && !checkpoint_lock_) checkpoint_lock_ = std::make_unique<DirectoryLock>(run.checkpoint.dir, owner);
    // One directory for both: one lock.
    const bool shared =
        std::filesystem::weakly_canonical(run.output.dir) == std::filesystem::weakly_canonical(run.checkpoint.dir);
    if (outputs && !output_lock_ && !(shared && checkpoint_lock_))
      output_lock_ = std::make_unique<DirectoryLock>(run.output.dir, owner);
  });
}

template <int D, class Real>
std::string RunFiles<D, Real>::write_checkpoint() {
  claim_directories(true, false);
  const double t0 = steady_seconds();
  const CheckpointSettings& settings = config_.run.checkpoint;
  const std::string path = field_io::checkpoint_path(settings.dir, backend_.step());
  write_levels(path, "checkpoint", checkpoint_levels());
  on_every_rank(decomposition_.comm(), [&] {
    if (decomposition_.rank() == 0) field_io::prune_checkpoints(settings.dir, settings.keep);
  });
  seconds_ += steady_seconds() - t0;
  spdlog::info("checkpoint at step {} written to {} in {}", backend_.step(), path,
               format_duration(steady_seconds() - t0));
  return path;
}

namespace {

// The checkpoints "latest" may mean, newest first; the file itself otherwise.
std::vector<std::string> restart_candidates(const std::string& checkpoint, const std::string& dir) {
  if (checkpoint != "latest") return {checkpoint};
  std::vector<std::string> paths{field_io::latest_checkpoint(dir)};  // none: a named error
  const std::vector<long> steps = field_io::checkpoint_steps(dir);
  for (auto step = steps.rbegin() + 1; step < steps.rend(); ++step)
    paths.push_back(field_io::checkpoint_path(dir, *step));
  return paths;
}

std::vector<std::string> level_names(const Problem& problem) {
  const EquationInfo equation = info(problem.equation);
  return {equation.level_names.begin(), equation.level_names.end()};
}

}  // namespace

RestartClock restart_clock(const Config& config, const std::string& checkpoint, MPI_Comm comm) {
  const Problem fresh = Problem::from(config);
  RestartClock clock;
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  on_every_rank(comm, [&] {
    if (rank != 0) return;
    const std::vector<std::string> paths = restart_candidates(checkpoint, config.run.checkpoint.dir);
    for (std::size_t i = 0; i < paths.size(); ++i) {
      try {
        clock = field_io::check_restart_compatible(hdf5::Reader(paths[i]), fresh, level_names(fresh));
        return;
      } catch (const Error& e) {
        if (e.code() != ExitCode::corrupt_file || i + 1 == paths.size()) throw;
        spdlog::warn("skipping {}: {}", paths[i], e.what());
      }
    }
  });
  check_mpi(MPI_Bcast(&clock.step, 1, MPI_LONG, 0, comm), "MPI_Bcast");
  double values[2] = {clock.time, clock.dt};
  check_mpi(MPI_Bcast(values, 2, MPI_DOUBLE, 0, comm), "MPI_Bcast");
  clock.time = values[0], clock.dt = values[1];
  return clock;
}

template <int D, class Real>
std::string RunFiles<D, Real>::restart(const std::string& checkpoint, bool new_dt) {
  const double t0 = steady_seconds();
  const auto levels = checkpoint_levels();
  std::vector<std::string> paths;
  on_every_rank(decomposition_.comm(), [&] { paths = restart_candidates(checkpoint, config_.run.checkpoint.dir); });
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    RestartClock clock;
    try {
      on_every_rank(decomposition_.comm(), [&] {
        const hdf5::Reader file(path);
        clock = field_io::check_restart_compatible(file, problem_, level_names(problem_));
        if (!Problem::from(config_, clock, new_dt).same_schedule(problem_))
          throw Error(
              ExitCode::incompatible_checkpoint,
              path + ": resumes at step " + std::to_string(clock.step) + ", t = " + std::to_string(clock.time) +
                  " on another time schedule than the checkpoint this run was set up from: restart from it by name");
        if (std::get<std::string>(file.attribute("config_hash")) != config_hash(config_) && decomposition_.rank() == 0)
          spdlog::warn("{}: the checkpoint's config hash differs from this config's; continuing with this config",
                       path);
        std::vector<Real> values(domain_.layout.owned_box().size());
        for (const auto& [name, level] : levels) {
          file.read(name, field_io::block_of(domain_), values.data());  // every chunk's checksum on the way
          backend_.write(level, values.data());
        }
      });
    } catch (const Error& e) {
      if (checkpoint != "latest" || e.code() != ExitCode::corrupt_file || i + 1 == paths.size()) throw;
      if (decomposition_.rank() == 0)
        spdlog::warn("skipping {}, which does not verify: {}; trying the next older checkpoint", path, e.what());
      continue;
    }
    backend_.set_step(clock.step);
    // The XDMF series continues the outputs written up to this step, with their own times.
    output_steps_.clear();
    on_every_rank(decomposition_.comm(), [&] {
      if (decomposition_.rank() != 0) return;
      for (long s : field_io::output_steps(config_.run.output.dir)) {
        if (s > clock.step) continue;
        double time = problem_.time_at(s);  // an output that does not read keeps its place in the series
        try {
          const auto value = hdf5::Reader(field_io::output_path(config_.run.output.dir, s)).attribute("time");
          if (std::holds_alternative<double>(value)) time = std::get<double>(value);
        } catch (const Error&) {
        }
        output_steps_.emplace_back(s, time);
      }
    });
    seconds_ += steady_seconds() - t0;
    return path;
  }
  return {};  // not reached: the last candidate rethrows
}

template <int D, class Real>
void RunFiles<D, Real>::write_output() {
  claim_directories(false, true);
  const double t0 = steady_seconds();
  const OutputSettings& settings = config_.run.output;
  const auto names = info(problem_.equation).level_names;
  std::vector<std::pair<std::string, Level>> levels;
  for (const std::string& field : settings.fields)
    levels.emplace_back(field, field == names[0] ? Level::current : Level::previous);
  write_levels(field_io::output_path(settings.dir, backend_.step()), "output", levels);
  if (output_steps_.empty() || output_steps_.back().first != backend_.step())
    output_steps_.emplace_back(backend_.step(), problem_.time_at(backend_.step()));
  on_every_rank(decomposition_.comm(), [&] {
    if (decomposition_.rank() == 0) field_io::write_output_series(problem_, settings, output_steps_);
  });
  seconds_ += steady_seconds() - t0;
}

template <int D, class Real>
double load_initial_files(const Problem& problem, const Decomposition& decomposition, const LocalDomain<D>& domain,
                          Backend<D, Real>& backend) {
  std::vector<std::tuple<const char*, const InitialCondition*, Level>> files;
  if (problem.initial.type == InitialType::file) files.emplace_back("initial", &problem.initial, Level::current);
  if (problem.velocity && problem.velocity->type == InitialType::file)
    files.emplace_back("velocity", &*problem.velocity, Level::previous);
  if (files.empty()) return 0;
  const double t0 = steady_seconds();
  const hdf5::Block block = field_io::block_of(domain);
  on_every_rank(decomposition.comm(), [&] {
    for (const auto& [key, ic, level] : files) {
      if (!std::filesystem::exists(ic->path))
        throw Error(ExitCode::file_not_found, problem.source + ": '" + key + ".path' = " + ic->path + ": no such file");
      const hdf5::Reader file(ic->path);
      if (!file.has_dataset(ic->dataset))
        throw Error(ExitCode::invalid_value,
                    problem.source + ": '" + key + ".dataset': " + ic->path + " has no dataset '" + ic->dataset + "'");
      const auto found = file.shape(ic->dataset);
      if (found != block.global)
        throw Error(ExitCode::invalid_value,
                    fmt::format("{}: '{}': dataset '{}' of {} has shape [{}], but the grid needs [{}] (z, y, x order: "
                                "x fastest, grid.points reversed)",
                                problem.source, key, ic->dataset, ic->path, fmt::join(found, ", "),
                                fmt::join(block.global, ", ")));
      std::vector<Real> values(domain.layout.owned_box().size());
      file.read(ic->dataset, block, values.data());
      backend.write(level, values.data());
    }
  });
  return steady_seconds() - t0;
}

#define HW_RUN_FILES(D, Real)       \
  template class RunFiles<D, Real>; \
  template double load_initial_files(const Problem&, const Decomposition&, const LocalDomain<D>&, Backend<D, Real>&);
HW_RUN_FILES(2, float)
HW_RUN_FILES(2, double)
HW_RUN_FILES(3, float)
HW_RUN_FILES(3, double)

}  // namespace heatwave
