// Config -> YAML: the resolved config a run logs and its files record, and
// the case's hash (io/config.hpp). Reading a config is io/config.cpp.
#include <spdlog/fmt/fmt.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <type_traits>
#include <vector>

#include "io/config.hpp"
#include "io/fnv.hpp"

namespace heatwave {

// Numbers in their shortest exact form (0.9, not 0.90000000000000002): the
// resolved config re-reads to the same doubles and stays readable.
struct Num {
  double v;
};
YAML::Emitter& operator<<(YAML::Emitter& e, Num n) { return e << fmt::format("{}", n.v); }

std::string to_yaml(const Config& c) {
  auto axes = [&](const auto& arr) {
    std::vector<std::decay_t<decltype(arr[0])>> v(arr.begin(), arr.begin() + c.dims);
    return v;
  };
  auto num_axes = [&](const std::array<double, max_dims>& arr) {
    std::vector<std::string> v;
    for (int a = 0; a < c.dims; ++a) v.push_back(fmt::format("{}", arr[a]));
    return v;
  };
  auto emit_initial = [&](YAML::Emitter& e, const InitialCondition& ic) {
    e << YAML::BeginMap << YAML::Key << "type" << YAML::Value << to_string(ic.type);
    switch (ic.type) {
      case InitialType::sine:
      case InitialType::cosine:
        e << YAML::Key << "amplitude" << YAML::Value << Num{ic.amplitude};
        e << YAML::Key << "modes" << YAML::Value << YAML::Flow << axes(ic.modes);
        break;
      case InitialType::gaussian:
        e << YAML::Key << "amplitude" << YAML::Value << Num{ic.amplitude};
        e << YAML::Key << "center" << YAML::Value << YAML::Flow << num_axes(ic.center);
        e << YAML::Key << "width" << YAML::Value << Num{ic.width};
        break;
      case InitialType::constant:
        e << YAML::Key << "value" << YAML::Value << Num{ic.value};
        break;
      case InitialType::linear:
        e << YAML::Key << "value" << YAML::Value << Num{ic.value};
        e << YAML::Key << "gradient" << YAML::Value << YAML::Flow << num_axes(ic.gradient);
        break;
      case InitialType::random:
        e << YAML::Key << "amplitude" << YAML::Value << Num{ic.amplitude};
        e << YAML::Key << "seed" << YAML::Value << ic.seed;
        break;
      case InitialType::file:
        e << YAML::Key << "path" << YAML::Value << ic.path;
        e << YAML::Key << "dataset" << YAML::Value << ic.dataset;
        break;
    }
    e << YAML::EndMap;
  };
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "equation" << YAML::Value << to_string(c.equation);
  e << YAML::Key << "precision" << YAML::Value << to_string(c.precision);
  e << YAML::Key << "grid" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "points" << YAML::Value << YAML::Flow << axes(c.points);
  e << YAML::Key << "length" << YAML::Value << YAML::Flow << num_axes(c.length) << YAML::EndMap;
  e << YAML::Key << "stencil" << YAML::Value << YAML::BeginMap << YAML::Key << "radius" << YAML::Value << c.radius
    << YAML::EndMap;
  for (const CoefficientSpec& k : info(c.equation).coefficients)
    if (!c.material.count(k.key)) e << YAML::Key << k.key << YAML::Value << Num{c.coefficients.get(k.key)};
  if (!c.material.empty()) {
    e << YAML::Key << "material" << YAML::Value << YAML::BeginMap;
    for (const auto& [key, m] : c.material) {
      e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "type" << YAML::Value
        << to_string(m.type);
      if (m.type == MediumType::file)
        e << YAML::Key << "path" << YAML::Value << m.path << YAML::Key << "dataset" << YAML::Value << m.dataset;
      if (m.type == MediumType::layers) {
        std::vector<std::string> interfaces, values;
        for (double x : m.interfaces) interfaces.push_back(fmt::format("{}", x));
        for (double x : m.values) values.push_back(fmt::format("{}", x));
        e << YAML::Key << "axis" << YAML::Value << axis_names[m.axis] << YAML::Key << "interfaces" << YAML::Value
          << YAML::Flow << interfaces << YAML::Key << "values" << YAML::Value << YAML::Flow << values;
      }
      e << YAML::EndMap;
    }
    e << YAML::EndMap;
  }
  if (!c.sources.empty()) {
    e << YAML::Key << "sources" << YAML::Value << YAML::BeginSeq;
    for (const Source& s : c.sources) {
      e << YAML::Flow << YAML::BeginMap << YAML::Key << "type" << YAML::Value << to_string(s.type);
      switch (s.type) {
        case SourceType::field:
          e << YAML::Key << "path" << YAML::Value << s.path << YAML::Key << "dataset" << YAML::Value << s.dataset;
          break;
        case SourceType::gaussian:
          e << YAML::Key << "center" << YAML::Value << YAML::Flow << num_axes(s.center) << YAML::Key << "width"
            << YAML::Value << Num{s.width} << YAML::Key << "amplitude" << YAML::Value << Num{s.amplitude};
          break;
        case SourceType::point:
          e << YAML::Key << "position" << YAML::Value << YAML::Flow << num_axes(s.center) << YAML::Key << "amplitude"
            << YAML::Value << Num{s.amplitude};
          break;
      }
      const TimeFunction& f = s.time;
      e << YAML::Key << "time" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "type" << YAML::Value
        << to_string(f.type);
      if (f.type == TimeFunctionType::ricker || f.type == TimeFunctionType::sine)
        e << YAML::Key << "frequency" << YAML::Value << Num{f.frequency};
      if (f.type == TimeFunctionType::ricker || f.type == TimeFunctionType::gaussian)
        e << YAML::Key << "delay" << YAML::Value << Num{f.delay};
      if (f.type == TimeFunctionType::gaussian) e << YAML::Key << "width" << YAML::Value << Num{f.width};
      e << YAML::EndMap << YAML::EndMap;
    }
    e << YAML::EndSeq;
  }
  e << YAML::Key << "time" << YAML::Value << YAML::BeginMap;
  if (c.dt)
    e << YAML::Key << "dt" << YAML::Value << Num{*c.dt};
  else
    e << YAML::Key << "dt" << YAML::Value << "auto" << YAML::Key << "safety" << YAML::Value << Num{c.dt_safety};
  if (c.steps) e << YAML::Key << "steps" << YAML::Value << *c.steps;
  if (c.t_end) e << YAML::Key << "t_end" << YAML::Value << Num{*c.t_end};
  e << YAML::EndMap;
  e << YAML::Key << "boundary" << YAML::Value << YAML::BeginMap;
  for (int a = 0; a < c.dims; ++a)
    for (int side = 0; side < 2; ++side) {
      const auto& f = c.boundary[a][side];
      e << YAML::Key << std::string(axis_names[a]) + (side ? "_high" : "_low") << YAML::Value << YAML::Flow
        << YAML::BeginMap << YAML::Key << "type" << YAML::Value << f.name();
      if (f.absorbing > 0)
        e << YAML::Key << "width" << YAML::Value << f.absorbing;
      else if (f.type != BoundaryType::periodic)
        e << YAML::Key << "value" << YAML::Value << Num{f.value};
      e << YAML::EndMap;
    }
  e << YAML::EndMap;
  e << YAML::Key << "initial" << YAML::Value;
  emit_initial(e, c.initial);
  if (c.velocity) {
    e << YAML::Key << "velocity" << YAML::Value;
    emit_initial(e, *c.velocity);
  }
  const RunSettings& run = c.run;
  e << YAML::Key << "backend" << YAML::Value << backend_choice_name(run.backend);
  e << YAML::Key << "threads" << YAML::Value << run.threads;
  e << YAML::Key << "parallel" << YAML::Value << YAML::BeginMap;
  const auto auto_or = [&](const char* key, const auto& value) {
    e << YAML::Key << key << YAML::Value;
    if (value)
      e << *value;
    else
      e << "auto";
  };
  auto_or("exchange_every", run.parallel.exchange_every);
  auto_or("overlap", run.parallel.overlap);
  e << YAML::Key << "halo_transport" << YAML::Value
    << (run.parallel.halo_transport ? to_string(*run.parallel.halo_transport) : "auto");
  e << YAML::Key << "decomposition" << YAML::Value << YAML::Flow << axes(run.parallel.decomposition) << YAML::EndMap;
  const ClusterSettings& cluster = run.cluster;
  e << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "autotune" << YAML::Value << cluster.autotune;
  e << YAML::Key << "cache" << YAML::Value << cluster.cache;
  // Plan overrides only where given (0 means tuned, which is no valid value to read back).
  if (cluster.shape[0])
    e << YAML::Key << "shape" << YAML::Value << YAML::Flow
      << std::vector<int>(cluster.shape.begin(), cluster.shape.end());
  if (cluster.tile[0])
    e << YAML::Key << "tile" << YAML::Value << YAML::Flow
      << std::vector<int>(cluster.tile.begin(), cluster.tile.begin() + (cluster.mode == "deep" ? 2 : c.dims));
  if (cluster.k) e << YAML::Key << "k" << YAML::Value << cluster.k;
  if (cluster.threads_y) e << YAML::Key << "threads_y" << YAML::Value << cluster.threads_y;
  if (!cluster.mode.empty()) e << YAML::Key << "mode" << YAML::Value << cluster.mode;
  e << YAML::EndMap;
  e << YAML::Key << "diagnostics" << YAML::Value << YAML::BeginMap << YAML::Key << "every" << YAML::Value
    << run.diagnostics_every << YAML::EndMap;
  e << YAML::Key << "progress" << YAML::Value << YAML::BeginMap << YAML::Key << "seconds" << YAML::Value
    << run.progress_seconds << YAML::EndMap;
  e << YAML::Key << "metrics" << YAML::Value << YAML::BeginMap << YAML::Key << "file" << YAML::Value << run.metrics_file
    << YAML::EndMap;
  e << YAML::Key << "checkpoint" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "every" << YAML::Value << run.checkpoint.every;
  e << YAML::Key << "every_seconds" << YAML::Value << Num{run.checkpoint.every_seconds};
  e << YAML::Key << "keep" << YAML::Value << run.checkpoint.keep;
  e << YAML::Key << "dir" << YAML::Value << run.checkpoint.dir << YAML::EndMap;
  e << YAML::Key << "output" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "every" << YAML::Value << run.output.every;
  e << YAML::Key << "fields" << YAML::Value << YAML::Flow << run.output.fields;
  e << YAML::Key << "dir" << YAML::Value << run.output.dir << YAML::EndMap;
  if (run.receivers.any()) {
    const ReceiverSettings& r = run.receivers;
    e << YAML::Key << "receivers" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "every" << YAML::Value << r.every;
    e << YAML::Key << "file" << YAML::Value << r.file;
    e << YAML::Key << "field" << YAML::Value << r.field;
    e << YAML::Key << "points" << YAML::Value << YAML::BeginSeq;
    for (const auto& x : r.points) e << YAML::Flow << num_axes(x);
    e << YAML::EndSeq << YAML::Key << "lines" << YAML::Value << YAML::BeginSeq;
    for (const ReceiverLine& line : r.lines)
      e << YAML::Flow << YAML::BeginMap << YAML::Key << "from" << YAML::Value << YAML::Flow << num_axes(line.from)
        << YAML::Key << "to" << YAML::Value << YAML::Flow << num_axes(line.to) << YAML::Key << "count" << YAML::Value
        << line.count << YAML::EndMap;
    e << YAML::EndSeq << YAML::EndMap;
  }
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

std::string config_hash(const Config& c) {
  // The hash names the case (physics and numerics), not how or where it ran:
  // run settings go back to their defaults first, so the same case on another
  // backend, rank count or thread count keeps its hash.
  Config k = c;
  k.run = RunSettings{};
  Fnv1a hash;  // stable across platforms and runs
  for (unsigned char ch : to_yaml(k)) hash.byte(ch);
  return hash.hex();
}

}  // namespace heatwave
