#include "solver/run_files.hpp"

#include <spdlog/fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <tuple>

#include "io/collective.hpp"
#include "io/errors.hpp"
#include "io/files.hpp"
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

namespace fs = std::filesystem;

namespace {

const char* stop_marker_name = "stopped";

// What the earlier run left in one place, for the message and the removal.
struct Leftovers {
  std::vector<std::string> paths;
  std::vector<std::string> told;  // "checkpoints holds 3 checkpoints (steps 20 to 60)"
};

// Files in `dir` whose names match `pattern`.
std::vector<std::string> files_matching(const std::string& dir, const std::regex& pattern) {
  std::vector<std::string> out;
  std::error_code error;
  if (!fs::is_directory(dir, error)) return out;
  for (const auto& entry : fs::directory_iterator(dir, error))
    if (std::regex_match(entry.path().filename().string(), pattern)) out.push_back(entry.path().string());
  if (error) throw Error(ExitCode::io_error, dir + ": cannot list the directory: " + error.message());
  std::sort(out.begin(), out.end());
  return out;
}

// The names heatwave gives its own files in a checkpoint or output directory.
const std::regex checkpoint_names(R"(checkpoint_[0-9]+\.h5(\.tmp|\.space)?|stopped|\.heatwave\.lock)");
const std::regex output_names(R"(fields_[0-9]+\.h5(\.tmp|\.space)?|fields\.xmf(\.tmp)?|\.heatwave\.lock)");

}  // namespace

std::string stop_marker_path(const Config& config) {
  return (fs::path(config.run.checkpoint.dir) / stop_marker_name).string();
}

RunClaims::RunClaims(const Config& config, MPI_Comm comm, bool restart, EarlierRun earlier)
    : config_(config), comm_(comm) {
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  const RunSettings& run = config.run;
  const bool checkpoints = run.checkpoint.every > 0 || run.checkpoint.every_seconds > 0 || restart;
  const bool outputs = run.output.every > 0;
  on_every_rank(comm, [&] {
    if (rank_ != 0) return;
    owner_ = "config hash " + config_hash(config) + " (" + config.source + ")";
    if (checkpoints) lock_checkpoints();
    // One directory for both: one lock.
    const bool shared = fs::weakly_canonical(run.output.dir) == fs::weakly_canonical(run.checkpoint.dir);
    if (outputs && !(shared && checkpoint_lock_))
      output_lock_ = std::make_unique<RunLock>(run.output.dir, RunLock::Target::directory, "output.dir", owner_);
    if (run.receivers.any())
      receivers_lock_ =
          std::make_unique<RunLock>(run.receivers.file, RunLock::Target::file, "receivers.file", owner_);
    if (restart || earlier == EarlierRun::keep) return;

    Leftovers left;
    auto look = [&](const std::string& dir, const std::vector<long>& steps, const char* what, const std::regex& names) {
      if (!steps.empty())
        left.told.push_back(
            fmt::format("{} holds {} {}(s) (step {} to {})", dir, steps.size(), what, steps.front(), steps.back()));
      for (const std::string& path : files_matching(dir, names))
        if (!path.ends_with(".heatwave.lock")) left.paths.push_back(path);
    };
    if (checkpoints)
      look(run.checkpoint.dir, field_io::checkpoint_steps(run.checkpoint.dir), "checkpoint", checkpoint_names);
    if (outputs) look(run.output.dir, field_io::output_steps(run.output.dir), "output", output_names);
    if (run.receivers.any() && fs::exists(run.receivers.file)) {
      try {
        const hdf5::Traces traces = hdf5::read_traces(run.receivers.file, false);
        left.told.push_back(fmt::format("{} holds receivers' traces ({} samples)", run.receivers.file, traces.samples));
      } catch (const Error&) {  // a file of the user's own, not what a run left: say what is there
        if (earlier == EarlierRun::refuse && left.told.empty())
          throw Error(ExitCode::earlier_run,
                      run.receivers.file +
                          " (receivers.file) is there and is not a receivers file (not one heatwave wrote, or "
                          "damaged): a fresh run would replace it; give receivers.file another name, or start afresh "
                          "with --overwrite (which removes it)");
        left.told.push_back(run.receivers.file + " is there and is not a receivers file");
      }
      left.paths.push_back(run.receivers.file);
    }
    if (left.told.empty()) {  // stray temporaries or a stop marker only: nothing of a run's results
      for (const std::string& path : left.paths) fs::remove(path);
      return;
    }
    const std::string what = fmt::format("{}", fmt::join(left.told, "; "));
    if (earlier == EarlierRun::refuse)
      throw Error(ExitCode::earlier_run,
                  "an earlier run's files are where this run writes: " + what +
                      ". A fresh run would replace them: continue that run with --restart latest, or start afresh "
                      "with --overwrite (which removes them), or give this run its own checkpoint.dir, output.dir "
                      "and receivers.file");
    for (const std::string& path : left.paths) {
      std::error_code error;
      fs::remove(path, error);
      if (error) throw Error(ExitCode::io_error, path + ": cannot remove it (--overwrite): " + error.message());
    }
    spdlog::warn("--overwrite: removed what an earlier run left: {}", what);
  });
}

void RunClaims::lock_checkpoints() {
  checkpoint_lock_ = std::make_unique<RunLock>(config_.run.checkpoint.dir, RunLock::Target::directory,
                                               "checkpoint.dir", owner_);
  // A stop marker is for the job that was stopped; the run that takes the directory over has consumed it.
  std::error_code ignored;
  fs::remove(stop_marker_path(config_), ignored);
}

void RunClaims::claim_metrics() {
  on_every_rank(comm_, [&] {
    if (rank_ == 0 && !metrics_lock_ && !config_.run.metrics_file.empty())
      metrics_lock_ =
          std::make_unique<RunLock>(config_.run.metrics_file, RunLock::Target::file, "metrics.file", owner_);
  });
}

void RunClaims::claim_checkpoints() {
  on_every_rank(comm_, [&] {
    if (rank_ == 0 && !checkpoint_lock_) lock_checkpoints();
  });
}

void RunClaims::mark_stopped(const std::string& checkpoint) {
  on_every_rank(comm_, [&] {
    if (rank_ != 0) return;
    write_text_file(stop_marker_path(config_),
                    "stopped by a signal after writing " + checkpoint +
                        "; continue with: heatwave run " + config_.source + " --restart latest\n",
                    "stop marker");
  });
}

void check_run_paths(const Config& config, const Problem& problem) {
  struct Place {
    std::string key, path;
    bool directory, output;
  };
  const RunSettings& run = config.run;
  std::vector<Place> places{{"checkpoint.dir", run.checkpoint.dir, true, true}};
  if (run.output.every > 0) places.push_back({"output.dir", run.output.dir, true, true});
  if (run.receivers.any()) places.push_back({"receivers.file", run.receivers.file, false, true});
  if (!run.metrics_file.empty()) places.push_back({"metrics.file", run.metrics_file, false, true});
  if (fs::exists(config.source)) places.push_back({"the config file", config.source, false, false});
  for (const auto* ic : {&problem.initial, problem.velocity ? &*problem.velocity : nullptr})
    if (ic && ic->type == InitialType::file)
      places.push_back({ic == &problem.initial ? "initial.path" : "velocity.path", ic->path, false, false});
  for (const auto& file : field_io::data_files(problem)) places.push_back({file.key + ".path", file.path, false, false});

  auto refuse = [&](const std::string& why) {
    throw Error(ExitCode::invalid_value, config.source + ": " + why + ": give each its own path");
  };
  std::vector<fs::path> where;
  for (const Place& p : places) where.push_back(fs::weakly_canonical(fs::absolute(p.path)));
  for (std::size_t i = 0; i < places.size(); ++i) {
    const Place& a = places[i];
    std::error_code error;
    if (a.output && !a.directory && fs::is_directory(a.path, error))
      refuse(fmt::format("'{}' = {} is a directory, not a file", a.key, a.path));
    if (a.output && a.directory && fs::exists(a.path, error) && !fs::is_directory(a.path, error))
      refuse(fmt::format("'{}' = {} is a file, not a directory", a.key, a.path));
    for (std::size_t j = i + 1; j < places.size(); ++j) {
      const Place& b = places[j];
      if (!a.output && !b.output) continue;
      if (a.directory && b.directory) continue;  // checkpoints and outputs may share a directory
      if (where[i] == where[j])
        refuse(fmt::format("'{}' and {} both name {}: the run would write over {}", a.key,
                           b.output ? "'" + b.key + "'" : b.key, a.path, b.output ? "one with the other" : "what it reads"));
    }
    // A file in a checkpoint or output directory with a name heatwave gives its own files there.
    if (!a.directory) continue;
    const std::regex& names = a.key == "checkpoint.dir" ? checkpoint_names : output_names;
    for (std::size_t j = 0; j < places.size(); ++j)
      if (!places[j].directory && where[j].parent_path() == where[i] &&
          std::regex_match(where[j].filename().string(), names))
        refuse(fmt::format("{} {} is named like the files heatwave writes and removes in '{}' = {}",
                           places[j].output ? "'" + places[j].key + "'" : places[j].key, places[j].path, a.key,
                           a.path));
  }
}

template <int D, class Real>
std::string RunFiles<D, Real>::write_checkpoint() {
  claims_.claim_checkpoints();
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
        const hdf5::Reader file(paths[i]);
        clock = field_io::check_restart_compatible(file, fresh, level_names(fresh));
        field_io::check_receivers_compatible(file, config.run.receivers, fresh.dims);
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
        field_io::check_receivers_compatible(file, config_.run.receivers, problem_.dims);
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
