// YAML -> Config (the way back, and the case's hash: io/config_yaml.cpp).
// Every message names the file, the line, the key path and the offending
// value; every kind of problem has its own exit code (io/errors.hpp).
#include "io/config.hpp"

#include <spdlog/fmt/fmt.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "build_info.hpp"
#include "core/central_difference.hpp"
#include "io/errors.hpp"
#include "io/yaml_file.hpp"
#include "io/yaml_section.hpp"
#include "quickstart_config.hpp"  // generated from configs/quickstart.yaml

namespace heatwave {

namespace {

using yaml::Section;

const std::vector<std::string> initial_keys{"type",  "amplitude", "modes", "center", "width",
                                            "value", "gradient",  "seed",  "path",   "dataset"};

// An initial field (u0, or v0 for the wave). Gaussian centres default to the domain centre.
InitialCondition parse_initial(const Section& s, const Config& cfg) {
  const int dims = cfg.dims;
  InitialCondition ic;
  for (int a = 0; a < max_dims; ++a) ic.center[a] = 0.5 * cfg.length[a];
  ic.type = s.named("type", InitialType::sine, initial_names);
  ic.amplitude = s.get<double>("amplitude", 1.0);
  if (s.has("modes")) {
    auto modes = s.list<int>("modes");
    if (static_cast<int>(modes.size()) != dims)
      s.invalid("modes", "needs one mode number per axis (" + std::to_string(dims) + ")");
    for (int a = 0; a < dims; ++a) {
      if (modes[a] < 0) s.invalid("modes", "mode numbers must be >= 0");
      ic.modes[a] = modes[a];
    }
  }
  if (s.has("center")) {
    auto c = s.list<double>("center");
    if (static_cast<int>(c.size()) != dims)
      s.invalid("center", "needs one coordinate per axis (" + std::to_string(dims) + ")");
    std::copy(c.begin(), c.end(), ic.center.begin());
  }
  ic.width = s.get<double>("width", ic.width);
  if (ic.width <= 0) s.invalid("width", "must be > 0");
  ic.value = s.get<double>("value", 0.0);
  if (s.has("gradient")) {
    if (ic.type != InitialType::linear) s.invalid("gradient", "applies only to 'type: linear'");
    auto g = s.list<double>("gradient");
    if (static_cast<int>(g.size()) != dims)
      s.invalid("gradient", "needs one slope per axis (" + std::to_string(dims) + ")");
    std::copy(g.begin(), g.end(), ic.gradient.begin());
  }
  ic.seed = s.get<std::uint64_t>("seed", 1);
  if (ic.type == InitialType::file) {
    ic.path = s.require<std::string>("path");
    if (ic.path.empty()) s.invalid("path", "must name an HDF5 file");
    ic.dataset = s.get<std::string>("dataset", ic.dataset);
    if (ic.dataset.empty()) s.invalid("dataset", "must name a dataset in the file");
  } else {
    for (const char* key : {"path", "dataset"})
      if (s.has(key)) s.invalid(key, "applies only to 'type: file'");
  }
  return ic;
}

// A coefficient over space: a number, or {type: constant | file | layers, ...}.
Medium parse_medium(const Section& material, const std::string& key, const CoefficientSpec& spec, const Config& cfg) {
  Medium m;
  const auto check_value = [&](const Section& s, const std::string& k, double v) {
    if (!coefficient_ok(spec, v))
      s.invalid(k, std::string("holds ") + spec.meaning + ", which must be " + coefficient_rule(spec));
  };
  if (material.raw(key).IsScalar()) {
    m.value = material.get<double>(key, 0.0);
    check_value(material, key, m.value);
    return m;
  }
  Section s = material.section(key, {"type", "value", "path", "dataset", "axis", "interfaces", "values"});
  m.type = s.named("type", MediumType::constant, medium_names);
  const auto only = [&](std::initializer_list<const char*> keys, MediumType type) {
    for (const char* k : keys)
      if (s.has(k) && m.type != type) s.invalid(k, std::string("applies only to 'type: ") + to_string(type) + "'");
  };
  only({"value"}, MediumType::constant);
  only({"path", "dataset"}, MediumType::file);
  only({"axis", "interfaces", "values"}, MediumType::layers);
  switch (m.type) {
    case MediumType::constant:
      m.value = s.require<double>("value");
      check_value(s, "value", m.value);
      break;
    case MediumType::file:
      m.path = s.require<std::string>("path");
      if (m.path.empty()) s.invalid("path", "must name an HDF5 file");
      m.dataset = s.get<std::string>("dataset", key);
      if (m.dataset.empty()) s.invalid("dataset", "must name a dataset in the file");
      break;
    case MediumType::layers: {
      std::vector<std::pair<std::string, int>> axes;
      for (int a = 0; a < cfg.dims; ++a) axes.emplace_back(axis_names[a], a);
      if (!s.has("axis")) s.invalid("axis", "is required (the axis the layers stack along)");
      m.axis = s.choice<int>("axis", 0, axes);
      m.interfaces = s.has("interfaces") ? s.list<double>("interfaces") : std::vector<double>{};
      m.values = s.list<double>("values");
      const double length = cfg.length[m.axis];
      for (std::size_t i = 0; i < m.interfaces.size(); ++i) {
        if (!(m.interfaces[i] > 0 && m.interfaces[i] < length))
          s.invalid("interfaces", fmt::format("has {} at position {}, outside the domain's (0, {}) along {}",
                                              m.interfaces[i], i, length, axis_names[m.axis]));
        if (i > 0 && !(m.interfaces[i] > m.interfaces[i - 1]))
          s.invalid("interfaces", fmt::format("must increase: {} at position {} follows {}", m.interfaces[i], i,
                                              m.interfaces[i - 1]));
      }
      if (m.values.size() != m.interfaces.size() + 1)
        s.invalid("values", fmt::format("has {} values for {} interfaces: layers need one value more than interfaces",
                                        m.values.size(), m.interfaces.size()));
      for (double v : m.values) check_value(s, "values", v);
      break;
    }
  }
  return m;
}

// The position of a source (`center`, `position`): one coordinate per axis,
// inside the domain (a periodic axis's length is its 0): a Gaussian centred
// outside injects nothing, as a point there would not.
std::array<double, max_dims> parse_position(const Section& s, const std::string& key, const Config& cfg) {
  const auto v = s.list<double>(key);
  if (static_cast<int>(v.size()) != cfg.dims)
    s.invalid(key, "needs one coordinate per axis (" + std::to_string(cfg.dims) + ")");
  std::array<double, max_dims> x{0, 0, 0};
  std::copy(v.begin(), v.end(), x.begin());
  for (int a = 0; a < cfg.dims; ++a) {
    const bool periodic = cfg.boundary[a][0].type == BoundaryType::periodic;
    const double length = cfg.length[a];
    if (!(x[a] >= 0 && (periodic ? x[a] < length : x[a] <= length)))
      s.invalid(key, fmt::format("is outside the domain: {} = {} is not in [0, {}{}", axis_names[a], x[a], length,
                                 periodic ? ") (periodic)" : "]"));
  }
  return x;
}

// A receiver's position `what` (a list of one coordinate per axis), inside the domain.
std::array<double, max_dims> parse_point(const Section& s, const YAML::Node& n, const std::string& what,
                                         const Config& cfg) {
  if (!n.IsSequence() || static_cast<int>(n.size()) != cfg.dims)
    s.fail(ExitCode::wrong_type, n, "'" + what + "'",
           "needs one coordinate per axis (" + std::to_string(cfg.dims) + "), got " + yaml::scalar_text(n));
  std::array<double, max_dims> x{0, 0, 0};
  for (int a = 0; a < cfg.dims; ++a) {
    try {
      x[a] = n[a].as<double>();
    } catch (const YAML::Exception&) {
      s.fail(ExitCode::wrong_type, n[a], "'" + what + "'", "expects numbers, got " + yaml::scalar_text(n[a]));
    }
    if (!std::isfinite(x[a]) || x[a] < 0 || x[a] > cfg.length[a])
      s.fail(ExitCode::invalid_value, n, "'" + what + "'",
             fmt::format("is outside the domain: {} = {} is not in [0, {}]", axis_names[a], x[a], cfg.length[a]));
  }
  return x;
}

void parse_receivers(const Section& r, Config& cfg, const EquationInfo& equation) {
  ReceiverSettings& out = cfg.run.receivers;
  out.every = r.get<long>("every", out.every);
  if (out.every < 1) r.invalid("every", "must be >= 1 step (the steps between samples)");
  out.file = r.get<std::string>("file", out.file);
  if (out.file.empty()) r.invalid("file", "must name a file");
  out.field = r.get<std::string>("field", out.field);
  if (std::find(equation.level_names.begin(), equation.level_names.end(), out.field) == equation.level_names.end())
    r.invalid("field", "names '" + out.field + "', not a field of the " + equation.name + " equation");
  if (r.has("points")) {
    const YAML::Node list = r.raw("points");
    if (!list.IsSequence())
      r.fail(ExitCode::wrong_type, list, "'" + r.qualified("points") + "'",
             "expects a list of positions, got " + yaml::scalar_text(list));
    for (std::size_t i = 0; i < list.size(); ++i)
      out.points.push_back(parse_point(r, list[i], r.qualified("points") + "[" + std::to_string(i) + "]", cfg));
  }
  if (r.has("lines")) {
    const YAML::Node list = r.raw("lines");
    if (!list.IsSequence())
      r.fail(ExitCode::wrong_type, list, "'" + r.qualified("lines") + "'",
             "expects a list of lines {from, to, count}, got " + yaml::scalar_text(list));
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string path = r.qualified("lines") + "[" + std::to_string(i) + "]";
      const Section l(list[i], path, r.file(), {"from", "to", "count"});
      ReceiverLine line;
      if (!l.has("from")) l.invalid("from", "is required");
      if (!l.has("to")) l.invalid("to", "is required");
      line.from = parse_point(l, l.raw("from"), path + ".from", cfg);
      line.to = parse_point(l, l.raw("to"), path + ".to", cfg);
      line.count = l.require<int>("count");
      if (line.count < 1) l.invalid("count", "must be >= 1 receiver");
      out.lines.push_back(line);
    }
  }
  if (!out.any()) r.invalid("points", "or 'lines' must give at least one receiver");
  // Rank 0 gathers 2^D interpolation points a receiver in one MPI call, whose counts are ints.
  const std::size_t most = static_cast<std::size_t>(std::numeric_limits<int>::max()) >> cfg.dims;
  if (out.count() > most)
    r.invalid(out.lines.empty() ? "points" : "lines",
              fmt::format("give {} receivers, more than heatwave gathers ({} in {}D)", out.count(), most, cfg.dims));
}

TimeFunction parse_time_function(const Section& source) {
  TimeFunction f;
  if (!source.has("time")) return f;
  Section s = source.section("time", {"type", "frequency", "delay", "width"});
  f.type = s.named("type", TimeFunctionType::constant, time_function_names);
  const bool frequency = f.type == TimeFunctionType::ricker || f.type == TimeFunctionType::sine;
  const bool delay = f.type == TimeFunctionType::ricker || f.type == TimeFunctionType::gaussian;
  const bool width = f.type == TimeFunctionType::gaussian;
  const auto applies = [&](const char* key, bool takes) {
    if (s.has(key) && !takes) s.invalid(key, std::string("does not apply to 'type: ") + to_string(f.type) + "'");
  };
  applies("frequency", frequency), applies("delay", delay), applies("width", width);
  if (frequency) {
    f.frequency = s.require<double>("frequency");
    if (f.frequency <= 0) s.invalid("frequency", "must be > 0");
  }
  // A Ricker wavelet starts near zero one period after t = 0 (as in Devito).
  if (delay) f.delay = s.get<double>("delay", f.type == TimeFunctionType::ricker ? 1 / f.frequency : 0.0);
  if (f.delay < 0)
    s.invalid("delay", "puts the pulse's peak (at t = delay) before t = 0, where the run starts: it injects the "
                       "pulse's tail only, or nothing; give delay >= 0");
  if (width) {
    f.width = s.require<double>("width");
    if (f.width <= 0) s.invalid("width", "must be > 0");
  }
  return f;
}

Source parse_source(const Section& s, const Config& cfg) {
  Source src;
  src.type = s.named("type", SourceType::gaussian, source_names);
  if (!s.has("type")) s.invalid("type", "is required (field, gaussian or point)");
  const auto only = [&](std::initializer_list<const char*> keys, std::initializer_list<SourceType> types) {
    for (const char* k : keys) {
      if (!s.has(k) || std::find(types.begin(), types.end(), src.type) != types.end()) continue;
      s.invalid(k, std::string("does not apply to 'type: ") + to_string(src.type) + "'");
    }
  };
  only({"path", "dataset"}, {SourceType::field});
  only({"center", "width"}, {SourceType::gaussian});
  only({"position"}, {SourceType::point});
  only({"amplitude"}, {SourceType::gaussian, SourceType::point});
  for (int a = 0; a < max_dims; ++a) src.center[a] = 0.5 * cfg.length[a];
  switch (src.type) {
    case SourceType::field:
      src.path = s.require<std::string>("path");
      if (src.path.empty()) s.invalid("path", "must name an HDF5 file");
      src.dataset = s.get<std::string>("dataset", "q");
      if (src.dataset.empty()) s.invalid("dataset", "must name a dataset in the file");
      break;
    case SourceType::gaussian:
      if (s.has("center")) src.center = parse_position(s, "center", cfg);
      src.width = s.get<double>("width", src.width);
      if (src.width <= 0) s.invalid("width", "must be > 0");
      break;
    case SourceType::point: {
      if (!s.has("position")) s.invalid("position", "is required");
      src.center = parse_position(s, "position", cfg);
      for (int a = 0; a < cfg.dims; ++a) {
        const double x = src.center[a], length = cfg.length[a];
        for (int side = 0; side < 2; ++side)
          if (cfg.boundary[a][side].type == BoundaryType::dirichlet && x == (side ? length : 0.0))
            s.invalid("position", fmt::format("lies in the Dirichlet face {}_{} (which holds its value: a source "
                                              "there would inject nothing)",
                                              axis_names[a], side ? "high" : "low"));
      }
      break;
    }
  }
  src.amplitude = s.get<double>("amplitude", src.amplitude);
  src.time = parse_time_function(s);
  return src;
}

// The damping layer's width where a face's type is absorbing and none is given (docs/design.md).
constexpr int default_absorbing_width = 24;

BoundaryFace parse_face(const Section& parent, const std::string& key) {
  YAML::Node n = parent.raw(key);
  BoundaryFace f;
  // `absorbing` is a layer in front of a Dirichlet 0 wall, not a face rule of its own.
  std::vector<std::pair<std::string, int>> types;
  for (const auto& [type, name] : boundary_names) types.emplace_back(name, static_cast<int>(type));
  types.emplace_back("absorbing", -1);
  if (n.IsScalar()) {  // shorthand: "x_low: periodic"
    Section wrapper(YAML::Load("{type: " + n.Scalar() + "}"), parent.qualified(key), parent.file(), {"type"});
    const int type = wrapper.choice<int>("type", 0, types);
    if (type < 0) f.absorbing = default_absorbing_width;
    f.type = type < 0 ? BoundaryType::dirichlet : static_cast<BoundaryType>(type);
    return f;
  }
  Section s = parent.section(key, {"type", "value", "width"});
  const int type = s.choice<int>("type", 0, types);
  if (type < 0) {
    if (s.has("value")) s.invalid("value", "has no meaning on an absorbing face (its wall holds 0)");
    f.absorbing = s.get<int>("width", default_absorbing_width);
    if (f.absorbing < 1) s.invalid("width", "must be >= 1 point");
    return f;
  }
  if (s.has("width")) s.invalid("width", "applies to absorbing faces only");
  f.type = static_cast<BoundaryType>(type);
  f.value = s.get<double>("value", 0.0);
  if (f.type == BoundaryType::periodic && s.has("value")) s.invalid("value", "has no meaning on a periodic face");
  return f;
}

Config parse(const YAML::Node& root, const std::string& file) {
  Config cfg;
  cfg.source = file;
  if (!root.IsDefined() || root.IsNull()) throw Error(ExitCode::invalid_value, file + ": the config is empty");
  // Every equation's coefficient keys are known keys; the chosen equation's are read below.
  std::vector<std::string> keys{"equation", "precision",  "grid",    "stencil",  "time",    "boundary",    "initial",
                                "velocity", "backend",    "threads", "parallel", "cluster", "diagnostics", "progress",
                                "metrics",  "checkpoint", "output",  "material", "sources", "receivers"};
  std::vector<std::string> coefficient_keys;
  for (std::size_t e = 0; e < equation_count; ++e)
    for (const CoefficientSpec& k : info(static_cast<Equation>(e)).coefficients)
      if (std::find(coefficient_keys.begin(), coefficient_keys.end(), k.key) == coefficient_keys.end())
        coefficient_keys.push_back(k.key);
  keys.insert(keys.end(), coefficient_keys.begin(), coefficient_keys.end());
  Section top(root, "", file, keys);

  std::vector<std::pair<std::string, Equation>> equations;
  for (std::size_t e = 0; e < equation_count; ++e)
    equations.emplace_back(info(static_cast<Equation>(e)).name, static_cast<Equation>(e));
  cfg.equation = top.choice<Equation>("equation", Equation::heat, equations);
  const EquationInfo equation = info(cfg.equation);
  cfg.precision = top.named("precision", Precision::float64, precision_names);

  // Grid
  Section grid = top.section("grid", {"points", "length"});
  auto points = grid.list<long>("points");
  if (points.size() != 2 && points.size() != 3) grid.invalid("points", "needs 2 or 3 entries (one per axis)");
  cfg.dims = static_cast<int>(points.size());
  for (int a = 0; a < cfg.dims; ++a) {
    if (points[a] <= 0)
      grid.invalid("points",
                   "has " + std::to_string(points[a]) + " points on axis " + axis_names[a] + "; sizes must be > 0");
    cfg.points[a] = points[a];
  }
  // Counted in double, before any product of longs can wrap.
  double total_points = 1;
  for (int a = 0; a < cfg.dims; ++a) total_points *= static_cast<double>(points[a]);
  if (total_points > max_exact_count)
    grid.invalid("points", fmt::format("gives {:.4g} points in all, more than heatwave counts (at most 2^53 = {:.4g}): "
                                       "use a smaller grid",
                                       total_points, max_exact_count));
  if (grid.has("length")) {
    if (grid.raw("length").IsSequence()) {
      auto len = grid.list<double>("length");
      if (static_cast<int>(len.size()) != cfg.dims)
        grid.invalid("length", "needs one length per axis (" + std::to_string(cfg.dims) + ")");
      std::copy(len.begin(), len.end(), cfg.length.begin());
    } else {
      cfg.length.fill(grid.get<double>("length", 1.0));
    }
    for (int a = 0; a < cfg.dims; ++a)
      if (cfg.length[a] <= 0) grid.invalid("length", "must be > 0 on every axis");
  }

  if (top.has("stencil")) {
    Section st = top.section("stencil", {"radius"});
    cfg.radius = st.get<int>("radius", 1);
    if (cfg.radius < 1 || cfg.radius > max_radius) st.invalid("radius", "must be 1, 2, 3 or 4 (order 2, 4, 6 or 8)");
  }

  // Physics: the chosen equation's coefficients only, at the top level or in `material:`.
  std::optional<Section> material;
  if (top.has("material")) material.emplace(top.section("material", coefficient_keys));
  for (const std::string& key : coefficient_keys) {
    const Section* where = top.has(key) ? &top : material && material->has(key) ? &*material : nullptr;
    if (!where) continue;
    bool known = false;
    for (const CoefficientSpec& k : equation.coefficients) known = known || key == k.key;
    for (std::size_t e = 0; e < equation_count && !known; ++e) {
      const EquationInfo other = info(static_cast<Equation>(e));
      for (const CoefficientSpec& k : other.coefficients)
        if (key == k.key) {
          std::string takes;
          for (const CoefficientSpec& mine : equation.coefficients)
            takes += std::string(takes.empty() ? "'" : ", '") + mine.key + "'";
          where->invalid(key, std::string("is ") + k.meaning + " of the " + other.name + " equation; the " +
                                  equation.name + " equation takes " + takes);
        }
    }
  }
  for (const CoefficientSpec& k : equation.coefficients) {
    if (material && material->has(k.key)) {
      if (top.has(k.key))
        top.invalid(k.key, std::string("is given twice: here and as 'material.") + k.key + "' (keep one)");
      Medium m = parse_medium(*material, k.key, k, cfg);
      if (m.type == MediumType::constant) {
        cfg.coefficients.set(k.key, m.value);
      } else {
        // Stands for the field where a constant is asked for (its largest value is set by Problem::from).
        cfg.coefficients.set(k.key, k.fallback);
        cfg.material.emplace(k.key, std::move(m));
      }
      continue;
    }
    const double value = top.get<double>(k.key, k.fallback);
    if (!coefficient_ok(k, value)) top.invalid(k.key, "must be " + coefficient_rule(k));
    cfg.coefficients.set(k.key, value);
  }

  // Time
  Section time = top.section("time", {"dt", "safety", "steps", "t_end"});
  if (time.has("dt") && !(time.raw("dt").IsScalar() && time.raw("dt").Scalar() == "auto")) {
    cfg.dt = time.get<double>("dt", 0.0);
    if (*cfg.dt <= 0) time.invalid("dt", "must be > 0 (or 'auto')");
  }
  cfg.dt_safety = time.get<double>("safety", cfg.dt_safety);
  if (cfg.dt_safety <= 0 || cfg.dt_safety > 1) time.invalid("safety", "must be in (0, 1]");
  if (time.has("steps") == time.has("t_end"))
    time.fail(ExitCode::invalid_value, time.raw(time.has("steps") ? "steps" : "dt"), "'time'",
              "needs exactly one of 'steps' and 't_end'");
  if (time.has("steps")) {
    cfg.steps = time.get<long>("steps", 0);
    if (*cfg.steps <= 0) time.invalid("steps", "must be > 0");
  } else {
    cfg.t_end = time.get<double>("t_end", 0.0);
    if (*cfg.t_end <= 0) time.invalid("t_end", "must be > 0");
  }

  // Boundaries: a string for every face, or default + per-face entries.
  std::array<std::array<BoundaryFace, 2>, max_dims> faces{};
  if (top.has("boundary")) {
    YAML::Node b = top.raw("boundary");
    if (b.IsScalar()) {
      Section wrapper(YAML::Load("{default: " + b.Scalar() + "}"), "boundary", file, {"default"});
      BoundaryFace all = parse_face(wrapper, "default");
      for (auto& axis : faces) axis = {all, all};
    } else {
      std::vector<std::string> keys{"default"};
      for (int a = 0; a < cfg.dims; ++a) {
        keys.push_back(std::string(axis_names[a]) + "_low");
        keys.push_back(std::string(axis_names[a]) + "_high");
      }
      // A face's own keys at the top of `boundary:` (the form `boundary: periodic` suggests): they go under a face.
      for (const char* face_key : {"type", "value", "width"})
        if (b[face_key])
          top.fail(ExitCode::unknown_key, b[face_key], "",
                   std::string("unknown key 'boundary.") + face_key +
                       "': a face's settings go under a face; for every face, put it under 'default:' (boundary: "
                       "{default: {type: absorbing, width: 4}}), or under x_low, x_high, ...");
      Section bs = top.section("boundary", keys);
      BoundaryFace def = bs.has("default") ? parse_face(bs, "default") : BoundaryFace{};
      for (int a = 0; a < cfg.dims; ++a)
        for (int side = 0; side < 2; ++side) {
          const std::string key = keys[1 + 2 * a + side];
          faces[a][side] = bs.has(key) ? parse_face(bs, key) : def;
        }
    }
  }
  for (int a = 0; a < cfg.dims; ++a) {
    bool lo = faces[a][0].type == BoundaryType::periodic, hi = faces[a][1].type == BoundaryType::periodic;
    if (lo != hi)
      throw Error(ExitCode::periodic_mismatch, file + ": 'boundary." + axis_names[a] + "_" + (lo ? "low" : "high") +
                                                   "' is periodic but 'boundary." + axis_names[a] + "_" +
                                                   (lo ? "high" : "low") + "' is " + faces[a][lo ? 1 : 0].name() +
                                                   ": periodic must be set on both faces of an axis");
  }
  for (int a = 0; a < cfg.dims; ++a)
    for (int side = 0; side < 2; ++side) {
      const int width = faces[a][side].absorbing;
      if (width == 0) continue;
      const std::string face = std::string("'boundary.") + axis_names[a] + (side ? "_high" : "_low") + "'";
      if (equation.levels != 2)
        throw Error(ExitCode::invalid_value, file + ": " + face + " is absorbing, but the " + equation.name +
                                                 " equation has no waves to absorb (absorbing faces take the wave "
                                                 "and damped_wave equations)");
      if (3L * width > cfg.points[a])
        throw Error(ExitCode::invalid_value,
                    file + ": " + face + " has an absorbing layer " + std::to_string(width) + " points wide" +
                        (width == default_absorbing_width ? " (the default width)" : "") +
                        ", more than a third of the " + std::to_string(cfg.points[a]) + " points along " +
                        axis_names[a] + "; write {type: absorbing, width: N} with N at most " +
                        std::to_string(cfg.points[a] / 3) + ", or give the axis more points");
    }
  cfg.boundary = faces;

  if (top.has("sources")) {
    const YAML::Node list = top.raw("sources");
    if (!list.IsSequence())
      top.fail(ExitCode::wrong_type, list, "'sources'", "expects a list of sources, got " + yaml::scalar_text(list));
    for (std::size_t i = 0; i < list.size(); ++i)
      cfg.sources.push_back(
          parse_source(Section(list[i], "sources[" + std::to_string(i) + "]", file,
                               {"type", "path", "dataset", "center", "width", "amplitude", "position", "time"}),
                       cfg));
  }

  // Stencil fit: a radius-r stencil needs 2r+1 points on an axis.
  for (int a = 0; a < cfg.dims; ++a)
    if (cfg.points[a] < 2 * cfg.radius + 1)
      grid.invalid("points",
                   "has " + std::to_string(cfg.points[a]) + " points on axis " + axis_names[a] +
                       ", too few for stencil radius " + std::to_string(cfg.radius) + " (needs at least " +
                       std::to_string(2 * cfg.radius + 1) + ")",
                   ExitCode::grid_too_small);

  // Initial conditions: u0, and v0 for the wave (zero when absent).
  if (!top.has("initial")) top.invalid("initial", "is required");
  cfg.initial = parse_initial(top.section("initial", initial_keys), cfg);
  if (top.has("velocity")) {
    if (equation.levels != 2)
      top.invalid("velocity", std::string("is the initial velocity of an equation second order in time; ") +
                                  equation.name + " has none");
    cfg.velocity = parse_initial(top.section("velocity", initial_keys), cfg);
  }

  RunSettings& run = cfg.run;
  run.backend = top.auto_or("backend", run.backend, backend_names);
  run.threads = top.get<int>("threads", 0);
  if (run.threads < 0) top.invalid("threads", "must be >= 0 (0: OpenMP's default)");

  if (top.has("parallel")) {
    Section par = top.section("parallel", {"exchange_every", "decomposition", "overlap", "halo_transport"});
    ParallelSettings& parallel = run.parallel;
    parallel.exchange_every = par.get_or_auto<int>("exchange_every", parallel.exchange_every);
    parallel.overlap = par.get_or_auto<bool>("overlap", parallel.overlap);
    // Whether the build, the MPI and the backend can do it is known when the run starts (the backend registry).
    parallel.halo_transport = par.auto_or("halo_transport", parallel.halo_transport, transport_names);
    if (parallel.exchange_every && *parallel.exchange_every < 1)
      par.invalid("exchange_every", "must be >= 1 (or auto: the backend's choice)");
    if (par.has("decomposition")) {
      auto d = par.list<int>("decomposition");
      if (static_cast<int>(d.size()) != cfg.dims)
        par.invalid("decomposition", "needs one rank count per axis (" + std::to_string(cfg.dims) + ")");
      for (int a = 0; a < cfg.dims; ++a) {
        if (d[a] < 0) par.invalid("decomposition", "rank counts must be >= 0 (0: let MPI choose)");
        parallel.decomposition[a] = d[a];
      }
    }
  }
  if (top.has("cluster")) {
    Section cl = top.section("cluster", {"autotune", "cache", "mode", "shape", "tile", "k", "threads_y"});
    ClusterSettings& c = run.cluster;
    c.autotune = cl.get<bool>("autotune", c.autotune);
    c.cache = cl.get<std::string>("cache", c.cache);
    if (cl.has("mode")) {
      c.mode = cl.choice<std::string>(
          "mode", "streaming",
          {{"streaming", "streaming"}, {"resident", "resident"}, {"deep", "deep"}, {"columns", "columns"}});
      if (c.mode == "resident" && cfg.dims != 2)
        cl.invalid("mode", "resident mode is 2D only (3D domains stream along z)");
      if (c.mode == "deep" && cfg.dims != 3)
        cl.invalid("mode", "deep mode is 3D only (a block marches its x-y tile along z)");
      if (c.mode == "columns" && cfg.dims != 2)
        cl.invalid("mode", "columns mode is 2D only (a thread streams its column along y)");
    }
    if (cl.has("shape")) {
      const auto v = cl.list<int>("shape");
      if (v.size() != 2) cl.invalid("shape", "needs 2 numbers: blocks per cluster along x and y");
      if (v[0] < 1 || v[1] < 1 || v[0] * v[1] > 16)
        cl.invalid("shape", "blocks per cluster must be >= 1 along each axis, at most 16 in all");
      if (cfg.dims == 2 && v[0] != 1) cl.invalid("shape", "2D clusters stack blocks along y only: use [1, n]");
      if (cfg.dims == 3 && v[0] * v[1] > 8) cl.invalid("shape", "3D clusters are at most 8 blocks over x-y");
      c.shape = {v[0], v[1]};
    }
    if (cl.has("tile")) {
      const auto v = cl.list<int>("tile");
      // Deep mode: a block's x-y tile (it marches the whole z extent).
      const int sizes = c.mode == "deep" ? 2 : cfg.dims;
      if (static_cast<int>(v.size()) != sizes)
        cl.invalid("tile", c.mode == "deep" ? "needs 2 sizes in deep mode (x and y: a block marches all of z)"
                                            : "needs one size per axis (" + std::to_string(cfg.dims) + ")");
      for (int a = 0; a < sizes; ++a) {
        if (v[a] < 2 * cfg.radius)
          cl.invalid("tile", "sizes must be >= 2 * stencil radius (" + std::to_string(2 * cfg.radius) + ")");
        c.tile[a] = v[a];
      }
    }
    c.k = cl.get<int>("k", c.k);
    if (cl.has("k") && (c.k < 1 || c.k > 64)) cl.invalid("k", "steps per launch must be in 1..64");
    c.threads_y = cl.get<int>("threads_y", c.threads_y);
    if (cl.has("threads_y") && (c.threads_y < 1 || c.threads_y > 32 || (c.threads_y & (c.threads_y - 1)) != 0))
      cl.invalid("threads_y", "must be a power of 2 in 1..32");
    // 3D plans of the kernel families the default build leaves out (no
    // measured plan picked them: docs/performance.md, "What the build leaves out").
    auto left_out = [](const char* what, const char* option) {
      return std::string("needs ") + what + ", which this build leaves out (configure with -DHEATWAVE_CLUSTER_3D_" +
             option + "=ON)";
    };
    if (c.mode == "deep" && !build::cluster_3d_deep) cl.invalid("mode", left_out("the deep family's kernels", "DEEP"));
    if (cfg.dims == 3 && c.shape[0] * c.shape[1] > 1 && !build::cluster_3d_dsmem)
      cl.invalid("shape", left_out("3D kernels for clusters of several blocks (DSMEM)", "DSMEM"));
    if (cfg.dims == 3 && cfg.radius > build::cluster_3d_max_radius && c.mode != "deep")
      for (const char* key : {"mode", "tile", "k", "shape", "threads_y"})
        if (cl.has(key))
          cl.invalid(key, left_out("3D cluster kernels past radius 2 (the one-step kernel runs radius 3 and 4)",
                                   "HIGH_RADIUS"));
  }
  if (top.has("diagnostics")) {
    Section d = top.section("diagnostics", {"every"});
    run.diagnostics_every = d.get<long>("every", run.diagnostics_every);
    if (run.diagnostics_every < 0) d.invalid("every", "must be >= 0 (0: only at the end)");
  }
  if (top.has("progress")) {
    Section p = top.section("progress", {"seconds"});
    run.progress_seconds = p.get<double>("seconds", run.progress_seconds);
    if (run.progress_seconds < 0) p.invalid("seconds", "must be >= 0");
  }
  if (top.has("metrics")) {
    Section m = top.section("metrics", {"file"});
    run.metrics_file = m.get<std::string>("file", run.metrics_file);
  }
  if (top.has("checkpoint")) {
    Section ck = top.section("checkpoint", {"every", "every_seconds", "keep", "dir"});
    run.checkpoint.every = ck.get<long>("every", 0);
    if (run.checkpoint.every < 0) ck.invalid("every", "must be >= 0 steps (0: off)");
    run.checkpoint.every_seconds = ck.get<double>("every_seconds", 0.0);
    if (run.checkpoint.every_seconds < 0) ck.invalid("every_seconds", "must be >= 0 seconds (0: off)");
    run.checkpoint.keep = ck.get<int>("keep", run.checkpoint.keep);
    if (run.checkpoint.keep < 1) ck.invalid("keep", "must be >= 1 (checkpoints kept on disk)");
    run.checkpoint.dir = ck.get<std::string>("dir", run.checkpoint.dir);
    if (run.checkpoint.dir.empty()) ck.invalid("dir", "must name a directory");
  }
  if (top.has("output")) {
    Section out = top.section("output", {"every", "fields", "dir"});
    run.output.every = out.get<long>("every", 0);
    if (run.output.every < 0) out.invalid("every", "must be >= 0 steps (0: off)");
    if (out.has("fields")) {
      run.output.fields = out.list<std::string>("fields");
      const std::vector<std::string> known(equation.level_names.begin(), equation.level_names.end());
      std::string names;
      for (const std::string& level : known) names += (names.empty() ? "" : ", ") + level;
      if (run.output.fields.empty()) out.invalid("fields", "needs at least one field");
      for (std::size_t i = 0; i < run.output.fields.size(); ++i) {
        const std::string& f = run.output.fields[i];
        if (std::find(known.begin(), known.end(), f) == known.end())
          out.invalid("fields",
                      "names '" + f + "', not a field of the " + equation.name + " equation (fields: " + names + ")");
        if (std::find(run.output.fields.begin(), run.output.fields.begin() + i, f) != run.output.fields.begin() + i)
          out.invalid("fields", "names '" + f + "' twice");
      }
    }
    run.output.dir = out.get<std::string>("dir", run.output.dir);
    if (run.output.dir.empty()) out.invalid("dir", "must name a directory");
  }
  if (top.has("receivers"))
    parse_receivers(top.section("receivers", {"every", "file", "field", "points", "lines"}), cfg, equation);
  return cfg;
}

}  // namespace

bool coefficient_ok(const CoefficientSpec& spec, double value) {
  if (!std::isfinite(value) || value < 0 || (value == 0 && !spec.zero_allowed)) return false;
  return value == 0 || (value >= 1 / max_coefficient_magnitude && value <= max_coefficient_magnitude);
}

std::string coefficient_rule(const CoefficientSpec& spec) {
  return fmt::format("{} and finite, within {:g} to {:g}{} (its square and the dt it sets must be normal "
                     "doubles: give it in other units)",
                     spec.zero_allowed ? ">= 0" : "> 0", 1 / max_coefficient_magnitude, max_coefficient_magnitude,
                     spec.zero_allowed ? " where not 0" : "");
}

Config load_config_text(const std::string& text, const std::string& source) {
  return parse(yaml::parse_document(text, source), source);
}

Config load_config_file(const std::string& path) {
  Config c = load_config_text(yaml::read_input_file(path, "config file"), path);
  // Data files named in a config sit beside it: a case folder runs from anywhere.
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  const auto resolve = [&](std::string& file) {
    if (!file.empty() && std::filesystem::path(file).is_relative()) file = (folder / file).lexically_normal().string();
  };
  if (c.initial.type == InitialType::file) resolve(c.initial.path);
  if (c.velocity && c.velocity->type == InitialType::file) resolve(c.velocity->path);
  for (auto& [key, medium] : c.material) resolve(medium.path);
  for (Source& s : c.sources) resolve(s.path);
  return c;
}

Config default_config() { return load_config_text(quickstart_yaml, "<built-in quickstart>"); }

}  // namespace heatwave
