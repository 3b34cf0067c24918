#include "solver/field_io.hpp"

#include <spdlog/fmt/fmt.h>
#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "build_info.hpp"
#include "io/errors.hpp"
#include "io/fnv.hpp"
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

// The hash of a dataset's shape and values read as double in C order: the
// same values written again, in another layout or type, keep it.
std::string values_hash(const std::string& path, const std::string& dataset) {
  return hdf5::summarize(path, dataset).hash;
}

const char* media_attribute = "media_hashes";
const char* receivers_attribute = "receivers";

// A receivers record's fields: every, field, count, positions.
std::map<std::string, std::string> record_fields(const std::string& record) {
  std::map<std::string, std::string> fields;
  std::istringstream words(record);
  for (std::string word; words >> word;)
    if (const auto eq = word.find('='); eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
  return fields;
}

}  // namespace

std::vector<DataFile> data_files(const Problem& p) {
  std::vector<DataFile> files;
  for (const auto& [key, m] : p.material)
    if (m.type == MediumType::file) files.push_back({"material." + key, m.path, m.dataset});
  for (std::size_t i = 0; i < p.sources.size(); ++i)
    if (p.sources[i].type == SourceType::field)
      files.push_back({fmt::format("sources[{}]", i), p.sources[i].path, p.sources[i].dataset});
  return files;
}

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

std::string media_record(const Problem& p) {
  std::string record;
  for (const DataFile& f : data_files(p))
    record += fmt::format("{} {}#{} {}\n", f.key, f.path, f.dataset, values_hash(f.path, f.dataset));
  return record;
}

std::string receivers_record(const ReceiverSettings& receivers, int dims) {
  if (!receivers.any()) return "none";
  Fnv1a positions;
  for (const auto& x : receivers.positions())
    for (int a = 0; a < dims; ++a) positions(std::bit_cast<std::uint64_t>(x[a]));
  return fmt::format("every={} field={} count={} positions={}", receivers.every, receivers.field, receivers.count(),
                     positions.hex());
}

void check_receivers_compatible(const hdf5::Reader& checkpoint, const ReceiverSettings& receivers, int dims) {
  if (!checkpoint.has_attribute(receivers_attribute)) return;  // written before heatwave recorded them: the traces file's own check
  const hdf5::AttributeValue value = checkpoint.attribute(receivers_attribute);
  const std::string* recorded = std::get_if<std::string>(&value);
  const std::string now = receivers_record(receivers, dims);
  if (!recorded || *recorded == now) return;
  auto refuse = [&](const std::string& why) {
    throw Error(ExitCode::incompatible_checkpoint,
                checkpoint.path() + ": cannot restart with these receivers: " + why +
                    ": a restart continues the traces the checkpoint's run began; restore its receivers, or start "
                    "afresh (--overwrite)");
  };
  if (*recorded == "none")
    throw Error(ExitCode::incompatible_checkpoint,
                checkpoint.path() + ": the run that wrote this checkpoint recorded no receivers, so traces from step 0 "
                                    "cannot be made: start afresh (--overwrite), or restart without receivers:");
  if (now == "none") {
    spdlog::warn("{}: the checkpoint's run recorded receivers ({}); this config has none, so no more samples are taken",
                 checkpoint.path(), *recorded);
    return;
  }
  const auto old = record_fields(*recorded), fresh = record_fields(now);
  for (const char* key : {"every", "field"})
    if (old.count(key) && old.at(key) != fresh.at(key))
      refuse(fmt::format("receivers.{} is {} in the config but was {} when the checkpoint was written", key,
                         fresh.at(key), old.at(key)));
  if (old.count("count") && old.at("count") != fresh.at("count"))
    refuse(fmt::format("the config has {} receivers, the checkpoint's run had {}", fresh.at("count"), old.at("count")));
  // Same count, other places: name the first that moved, from the traces file where it reads.
  std::string moved;
  try {
    const hdf5::Traces file = hdf5::read_traces(receivers.file, false);
    const auto positions = receivers.positions();
    for (std::size_t r = 0; r < positions.size() && file.dims == dims && r < file.receivers && moved.empty(); ++r)
      for (int a = 0; a < dims; ++a)
        if (positions[r][a] != file.positions[r * dims + a]) {
          std::vector<double> config(positions[r].begin(), positions[r].begin() + dims),
              recorded_at(file.positions.begin() + r * dims, file.positions.begin() + (r + 1) * dims);
          moved = fmt::format(" (receiver {} is at ({:.6g}) in the config, at ({:.6g}) in {})", r,
                              fmt::join(config, ", "), fmt::join(recorded_at, ", "), receivers.file);
          break;
        }
  } catch (const Error&) {
  }
  refuse("the receivers' positions differ from those the checkpoint's run sampled" + moved);
}

std::vector<hdf5::Attribute> run_attributes(const Config& c, const Problem& p, const std::string& kind, long step,
                                            int ranks, const std::string& media) {
  std::vector<double> spacing(p.spacing.begin(), p.spacing.begin() + p.dims);
  std::vector<hdf5::Attribute> attributes{
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
  if (!media.empty()) attributes.push_back({media_attribute, media});
  attributes.push_back({receivers_attribute, receivers_record(c.run.receivers, p.dims)});
  return attributes;
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
  // The media and sources read from files must hold the values the steps so far were taken with.
  const std::vector<DataFile> files = data_files(p);
  if (files.empty()) return clock;
  if (!checkpoint.has_attribute(media_attribute))
    refuse(
        fmt::format("it records no content hash of media or source files (written before heatwave recorded "
                    "them, or for a config without such files), so whether '{}' = {}, dataset '{}', changed "
                    "since cannot be checked: start afresh",
                    files[0].key, files[0].path, files[0].dataset));
  const hdf5::AttributeValue media = checkpoint.attribute(media_attribute);
  if (!std::holds_alternative<std::string>(media)) refuse(std::string("its '") + media_attribute + "' is not text");
  std::map<std::string, std::pair<std::string, std::string>> recorded;  // key -> (path#dataset, hash)
  std::istringstream lines(std::get<std::string>(media));
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find(' '), last = line.rfind(' ');
    if (first == std::string::npos || first == last) refuse(std::string("its '") + media_attribute + "' does not read");
    recorded[line.substr(0, first)] = {line.substr(first + 1, last - first - 1), line.substr(last + 1)};
  }
  for (const DataFile& f : files) {
    const auto it = recorded.find(f.key);
    if (it == recorded.end())
      refuse(
          fmt::format("'{}' = {}, dataset '{}', was not read from a file when the checkpoint was written (it "
                      "records no content hash for it): start afresh",
                      f.key, f.path, f.dataset));
    const auto& [where, hash] = it->second;
    const std::string now = values_hash(f.path, f.dataset);
    if (now != hash)
      refuse(fmt::format(
          "'{}' = {}, dataset '{}', holds other values than when the checkpoint was written (content "
          "hash {}, the checkpoint's {}{}): the steps so far were taken with the old ones; restore "
          "the file or start afresh",
          f.key, f.path, f.dataset, now, hash, where != f.path + "#" + f.dataset ? " for " + where : std::string()));
  }
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
