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
  hdf5::write_fields(path, comm, field_io::block_of(domain_),
                     field_io::run_attributes(config_, problem_, kind, backend_.step(), decomposition_.size()), fields);
}

template <int D, class Real>
std::string RunFiles<D, Real>::write_checkpoint() {
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

template <int D, class Real>
std::string RunFiles<D, Real>::restart(const std::string& checkpoint) {
  const double t0 = steady_seconds();
  const std::string& dir = config_.run.checkpoint.dir;
  std::string path;
  long restored_step = 0;
  const auto levels = checkpoint_levels();
  std::vector<std::string> names;
  for (const auto& level : levels) names.push_back(level.first);
  on_every_rank(decomposition_.comm(), [&] {
    path = checkpoint == "latest" ? field_io::latest_checkpoint(dir) : checkpoint;
    const hdf5::Reader file(path);
    restored_step = field_io::check_restart_compatible(file, problem_, names);
    if (std::get<std::string>(file.attribute("config_hash")) != config_hash(config_) && decomposition_.rank() == 0)
      spdlog::warn("{}: the checkpoint's config hash differs from this config's; continuing with this config", path);
    std::vector<Real> values(domain_.layout.owned_box().size());
    for (const auto& [name, level] : levels) {
      file.read(name, field_io::block_of(domain_), values.data());
      backend_.write(level, values.data());
    }
  });
  backend_.set_step(restored_step);
  // The XDMF series continues the outputs written up to this step.
  output_steps_.clear();
  for (long s : field_io::output_steps(config_.run.output.dir))
    if (s <= restored_step) output_steps_.push_back(s);
  seconds_ += steady_seconds() - t0;
  return path;
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
  if (output_steps_.empty() || output_steps_.back() != backend_.step()) output_steps_.push_back(backend_.step());
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
