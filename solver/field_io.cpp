#include "solver/field_io.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <filesystem>
#include <regex>

#include "build_info.hpp"
#include "io/errors.hpp"
#include "io/xdmf.hpp"

namespace heatwave::field_io {

namespace fs = std::filesystem;

namespace {

const char* checkpoint_prefix = "checkpoint_";
const char* output_prefix = "fields_";

std::string step_path(const std::string& dir, const char* prefix, long step) {
  return (fs::path(dir) / fmt::format("{}{:09d}.h5", prefix, step)).string();
}

std::vector<long> steps_in(const std::string& dir, const char* prefix) {
  std::vector<long> steps;
  std::error_code error;
  if (!fs::is_directory(dir, error)) return steps;
  const std::regex name(std::string(prefix) + "([0-9]+)\\.h5");
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    std::smatch m;
    const std::string file = entry.path().filename().string();
    if (std::regex_match(file, m, name)) steps.push_back(std::stol(m[1]));
  }
  if (error) throw Error(ExitCode::io_error, dir + ": cannot list the directory: " + error.message());
  std::sort(steps.begin(), steps.end());
  return steps;
}

template <class T>
std::vector<long long> axes(const T& values, int dims, bool c_order) {
  std::vector<long long> v;
  for (int a = 0; a < dims; ++a) v.push_back(static_cast<long long>(values[c_order ? dims - 1 - a : a]));
  return v;
}

}  // namespace

std::string checkpoint_path(const std::string& dir, long step) { return step_path(dir, checkpoint_prefix, step); }
std::string output_path(const std::string& dir, long step) { return step_path(dir, output_prefix, step); }
std::vector<long> checkpoint_steps(const std::string& dir) { return steps_in(dir, checkpoint_prefix); }
std::vector<long> output_steps(const std::string& dir) { return steps_in(dir, output_prefix); }

std::string latest_checkpoint(const std::string& dir) {
  const auto steps = checkpoint_steps(dir);
  if (steps.empty())
    throw Error(ExitCode::file_not_found, "--restart latest: no complete checkpoint (checkpoint_<step>.h5) in '" + dir +
                                              "' (checkpoint.dir of the config)");
  return checkpoint_path(dir, steps.back());
}

void prune_checkpoints(const std::string& dir, int keep) {
  const auto steps = checkpoint_steps(dir);
  for (std::size_t i = 0; i + keep < steps.size(); ++i) {
    std::error_code error;
    fs::remove(checkpoint_path(dir, steps[i]), error);
    if (error)
      throw Error(ExitCode::io_error,
                  checkpoint_path(dir, steps[i]) + ": cannot remove an old checkpoint: " + error.message());
  }
}

void make_directory(const std::string& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) throw Error(ExitCode::io_error, dir + ": cannot create the directory: " + error.message());
}

std::vector<hdf5::Attribute> run_attributes(const Config& c, const Problem& p, const std::string& kind, long step,
                                            int ranks) {
  std::vector<double> spacing(p.spacing.begin(), p.spacing.begin() + p.dims);
  return {
      {"kind", kind},
      {"step", static_cast<long long>(step)},
      {"time", p.time_at(step)},
      {"dt", p.dt},
      {"equation", std::string(to_string(p.equation))},
      {"precision", std::string(to_string(p.precision))},
      {"dims", static_cast<long long>(p.dims)},
      {"radius", static_cast<long long>(p.radius)},
      {"points", axes(p.points, p.dims, false)},
      {"spacing", spacing},
      {"global_shape", axes(p.points, p.dims, true)},
      {"config", to_yaml(c)},
      {"config_hash", config_hash(c)},
      {"heatwave_version", std::string(build::version)},
      {"heatwave_commit", std::string(build::git_commit)},
      {"hdf5_writes", std::string(hdf5::collective_writes() ? "collective (parallel HDF5)" : "in turn (serial HDF5)")},
      {"ranks", static_cast<long long>(ranks)},
  };
}

RestartClock check_restart_compatible(const hdf5::Reader& checkpoint, const Problem& p,
                                      const std::vector<std::string>& datasets) {
  const std::string& file = checkpoint.path();
  auto refuse = [&](const std::string& why) {
    throw Error(ExitCode::incompatible_checkpoint,
                file + ": cannot restart " + p.source + " from this checkpoint: " + why);
  };
  for (const char* name : {"kind", "step", "equation", "precision", "dims", "radius", "points"})
    if (!checkpoint.has_attribute(name))
      refuse(std::string("it is not a heatwave checkpoint (no attribute '") + name + "')");
  if (checkpoint.attribute("kind") != hdf5::AttributeValue(std::string("checkpoint")))
    refuse("it is a heatwave " + std::get<std::string>(checkpoint.attribute("kind")) + " file, not a checkpoint");
  auto compare = [&](const char* setting, const char* attribute, const hdf5::AttributeValue& expected, auto show) {
    const hdf5::AttributeValue found = checkpoint.attribute(attribute);
    if (found != expected)
      refuse(fmt::format("'{}' is {} in the checkpoint but {} in the config", setting, show(found), show(expected)));
  };
  auto text = [](const hdf5::AttributeValue& v) {
    return std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : "?";
  };
  auto integer = [](const hdf5::AttributeValue& v) {
    return std::holds_alternative<long long>(v) ? std::to_string(std::get<long long>(v)) : "?";
  };
  auto list = [](const hdf5::AttributeValue& v) {
    return std::holds_alternative<std::vector<long long>>(v)
               ? fmt::format("[{}]", fmt::join(std::get<std::vector<long long>>(v), ", "))
               : "?";
  };
  compare("equation", "equation", std::string(to_string(p.equation)), text);
  compare("precision", "precision", std::string(to_string(p.precision)), text);
  compare("dims", "dims", static_cast<long long>(p.dims), integer);
  compare("grid.points", "points", axes(p.points, p.dims, false), list);
  compare("stencil.radius", "radius", static_cast<long long>(p.radius), integer);
  for (const std::string& name : datasets)
    if (!checkpoint.has_dataset(name)) refuse("it has no dataset '" + name + "'");
  const hdf5::AttributeValue step = checkpoint.attribute("step");
  if (!std::holds_alternative<long long>(step) || std::get<long long>(step) < 0)
    refuse("its 'step' is not a step number");
  RestartClock clock;
  clock.step = static_cast<long>(std::get<long long>(step));
  for (const auto& [name, value] : {std::pair{"time", &clock.time}, std::pair{"dt", &clock.dt}}) {
    if (!checkpoint.has_attribute(name)) refuse(std::string("it has no attribute '") + name + "'");
    const hdf5::AttributeValue v = checkpoint.attribute(name);
    if (!std::holds_alternative<double>(v)) refuse(std::string("its '") + name + "' is not a number");
    *value = std::get<double>(v);
  }
  if (!(clock.dt > 0)) refuse("its 'dt' is not positive");
  return clock;
}

void write_output_series(const Problem& p, const OutputSettings& output,
                         const std::vector<std::pair<long, double>>& steps) {
  XdmfGrid grid;
  for (int a = p.dims - 1; a >= 0; --a) {
    grid.shape.push_back(static_cast<std::uint64_t>(p.points[a]));
    grid.origin.push_back(0.0);
    grid.spacing.push_back(p.spacing[a]);
  }
  grid.precision_bytes = p.precision == Precision::float32 ? 4 : 8;
  std::vector<XdmfStep> series;
  for (const auto& [step, time] : steps)
    series.push_back({time, fs::path(output_path(".", step)).filename().string(), output.fields});
  write_xdmf((fs::path(output.dir) / "fields.xmf").string(), grid, series);
}

}  // namespace heatwave::field_io
