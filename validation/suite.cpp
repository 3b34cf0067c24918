#include "validation/suite.hpp"

#include <mpi.h>
#include <omp.h>
#include <spdlog/fmt/fmt.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "io/hdf5.hpp"
#include "io/log.hpp"
#include "io/yaml_file.hpp"
#include "io/yaml_section.hpp"
#include "solver/initial.hpp"
#include "solver/receivers.hpp"
#include "solver/simulation.hpp"
#include "validation/analytic.hpp"
#include "validation/reference.hpp"
#include "validation/report.hpp"

namespace heatwave::validation {

const char* to_string(CheckKind k) {
  switch (k) {
    case CheckKind::exact:
      return "exact";
    case CheckKind::convergence:
      return "convergence";
    case CheckKind::reference:
      return "reference";
    case CheckKind::conservation:
      return "conservation";
    case CheckKind::manufactured:
      return "manufactured";
  }
  return "?";
}

namespace {

using yaml::Section;

// ---------------------------------------------------------------- reading

// Overrides: maps merge key by key, null removes a key, anything else replaces.
void merge(YAML::Node target, const YAML::Node& patch) {
  for (const auto& kv : patch) {
    const std::string key = kv.first.Scalar();
    if (kv.second.IsNull()) {
      target.remove(key);
      continue;
    }
    YAML::Node existing = target[key];
    if (existing.IsMap() && kv.second.IsMap())
      merge(existing, kv.second);
    else
      target[key] = YAML::Clone(kv.second);
  }
}

// "stencil.radius", 2 -> {stencil: {radius: 2}}
YAML::Node nested_patch(const std::string& dotted, const YAML::Node& value) {
  YAML::Node patch = YAML::Clone(value);
  std::string path = dotted;
  for (auto dot = path.rfind('.');; dot = path.rfind('.')) {
    YAML::Node outer(YAML::NodeType::Map);
    outer[path.substr(dot == std::string::npos ? 0 : dot + 1)] = patch;
    patch = outer;
    if (dot == std::string::npos) break;
    path.resize(dot);
  }
  return patch;
}

struct Variant {
  std::string name;
  YAML::Node patch;
};

// The matrix: per axis either `config.path: [values]` or `name: {overrides}`;
// the cases are the Cartesian product, named by their variants.
std::vector<std::vector<Variant>> matrix_axes(const Section& c) {
  std::vector<std::vector<Variant>> axes;
  if (!c.has("matrix")) return axes;
  YAML::Node m = c.raw("matrix");
  if (!m.IsMap()) c.fail(ExitCode::wrong_type, m, "'" + c.qualified("matrix") + "'", "expects a map of axes");
  for (const auto& axis : m) {
    const std::string key = axis.first.Scalar();
    std::vector<Variant> variants;
    if (axis.second.IsSequence()) {
      const std::string last = key.substr(key.rfind('.') == std::string::npos ? 0 : key.rfind('.') + 1);
      for (const auto& value : axis.second) {
        if (!value.IsScalar())
          c.fail(ExitCode::wrong_type, value, "'" + c.qualified("matrix." + key) + "'", "expects a list of values");
        const std::string text = value.Scalar();
        const bool numeric = !text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) != 0);
        variants.push_back({numeric ? last + text : text, nested_patch(key, value)});
      }
    } else if (axis.second.IsMap()) {
      for (const auto& v : axis.second) {
        if (!v.second.IsMap())
          c.fail(ExitCode::wrong_type, v.second, "'" + c.qualified("matrix." + key + "." + v.first.Scalar()) + "'",
                 "expects a map of config overrides");
        variants.push_back({v.first.Scalar(), v.second});
      }
    } else {
      c.fail(ExitCode::wrong_type, axis.second, "'" + c.qualified("matrix." + key) + "'",
             "expects a list of values or a map of named overrides");
    }
    if (variants.empty())
      c.fail(ExitCode::invalid_value, axis.second, "'" + c.qualified("matrix." + key) + "'", "is empty");
    axes.push_back(std::move(variants));
  }
  return axes;
}

// The base config of a case: inline, one of the suite's named `configs`, or a
// file (relative to the suite file).
YAML::Node base_config(const Section& c, const std::map<std::string, YAML::Node>& named, const std::string& suite_dir) {
  YAML::Node n = c.raw("config");
  if (n.IsMap()) return YAML::Clone(n);
  if (!n.IsScalar())
    c.fail(ExitCode::wrong_type, n, "'" + c.qualified("config") + "'",
           "expects a config map, a name from 'configs' or a file path");
  if (auto it = named.find(n.Scalar()); it != named.end()) return YAML::Clone(it->second);
  const std::filesystem::path path = std::filesystem::path(suite_dir) / n.Scalar();
  YAML::Node file = yaml::load_file(path.string(), "case config");
  if (!file.IsMap())
    c.fail(ExitCode::wrong_type, n, "'" + c.qualified("config") + "'", "names a file that is not a config map");
  return file;
}

// Radius 3 and 4: more terms a point round (fp32: exact modes measured to
// 1.13e-5 at radius 3), and orders 6 and 8 reach their asymptote later.
double default_tolerance(CheckKind kind, Precision precision, int radius) {
  const bool f32 = precision == Precision::float32;
  const double terms = std::max(1.0, (2 * radius + 1) / 5.0);  // 1 for radius 1 and 2
  switch (kind) {
    case CheckKind::exact:
      return f32 ? 1e-5 * terms : 1e-12;
    // Two implementations round differently, and the differences grow with the steps.
    case CheckKind::reference:
      return f32 ? 1e-4 : 1e-11;
    case CheckKind::conservation:
      return f32 ? 1e-5 : 1e-12;
    case CheckKind::convergence:
    case CheckKind::manufactured:
      return radius <= 2 ? 0.1 : 0.15;
  }
  return 0;
}

// The grid of ladder level `level`: h halved `level` times.
Config refined(const Config& base, int level) {
  Config cfg = base;
  for (int a = 0; a < base.dims; ++a)
    cfg.points[a] = base.boundary[a][0].type == BoundaryType::periodic ? base.points[a] << level
                                                                       : ((base.points[a] - 1) << level) + 1;
  return cfg;
}

// Calls f(global linear index, coordinates) at every grid point, x fastest.
template <class F>
void for_each_grid_point(const Problem& p, F&& f) {
  const long n = p.global_points();
  for (long i = 0; i < n; ++i) {
    Point x{0, 0, 0};
    long rest = i;
    for (int a = 0; a < p.dims; ++a) x[a] = static_cast<double>(rest % p.points[a]) * p.spacing[a], rest /= p.points[a];
    f(i, x);
  }
}

// The problem of `cfg` with the manufactured coefficient's largest grid
// value as its constant: the run's stability limit and dt: auto, which take
// it from the material, without its file. Throws Error(unstable) saying so.
Problem at_coefficient_max(Config cfg, const Manufactured& m) {
  double max = 0;
  for_each_grid_point(Problem::from(cfg), [&](long, const Point& x) { max = std::max(max, m.coefficient(x)); });
  cfg.coefficients.set(m.coefficient_key(), max);
  try {
    return Problem::from(cfg);
  } catch (const Error& e) {
    throw Error(e.code(),
                fmt::format("{}; the manufactured '{}' problem's {} reaches {:g} on the grid of {} points", e.what(),
                            name_of(manufactured_names, m.kind()), m.coefficient_key(), max, cfg.points[0]));
  }
}

// One grid of a manufactured ladder: its config (grid, dt, steps; no files
// yet) and its manufactured solution.
struct ManufacturedLevel {
  Config config;
  Manufactured solution;
};

// The ladder: grids that halve h, to the base run's end time T; the base
// grid's dt is the config's (with the coefficient's largest value), and each
// level's is dt0 (h/h0)^time_power, shrunk to land on T. Throws Error when a
// level is unstable.
std::vector<ManufacturedLevel> manufactured_ladder(const Config& config, const Check& check) {
  const auto geometry = [](Config cfg) {
    cfg.steps = 1, cfg.t_end.reset(), cfg.dt.reset();
    return Problem::from(cfg);
  };
  // The coefficient does not depend on the end time, which is not known yet.
  const Problem base = at_coefficient_max(config, Manufactured(check.problem, geometry(config), 1.0));
  const double t_end = base.t_end;
  std::vector<ManufacturedLevel> ladder;
  for (int level = 0; level < check.levels; ++level) {
    Config cfg = refined(config, level);
    const double dt = base.dt * std::pow(0.5, level * check.time_power);
    const long steps = static_cast<long>(std::ceil(t_end / dt - 1e-9));
    cfg.dt = t_end / static_cast<double>(steps), cfg.steps = steps, cfg.t_end.reset();
    Manufactured solution(check.problem, geometry(cfg), t_end);
    at_coefficient_max(cfg, solution);  // the stability check of the run
    ladder.push_back({cfg, solution});
  }
  return ladder;
}

// Why `check` cannot be measured on this problem ("" when it can).
std::string inapplicable(CheckKind kind, const Problem& p) {
  if (kind == CheckKind::exact) return analytic::exact_problem(p);
  if (kind == CheckKind::convergence) return analytic::mode_problem(p);
  if (kind != CheckKind::conservation) return "";
  const bool mean = info(p.equation).conserved == Conserved::mean;
  for (int a = 0; a < p.dims; ++a)
    for (const auto& f : p.faces[a]) {
      if (f.type == BoundaryType::periodic) continue;
      if (mean && f.type != BoundaryType::neumann)
        return std::string("the mean of the ") + to_string(p.equation) +
               " equation is conserved with periodic or zero-flux neumann faces only";
      if (f.value != 0) return "conservation needs homogeneous faces (value 0)";
    }
  return "";
}

Check parse_check(const Section& checks, const std::string& key, CheckKind kind, const Config& config,
                  const Problem& p) {
  YAML::Node n = checks.raw(key);
  const bool convergence = kind == CheckKind::convergence, manufactured = kind == CheckKind::manufactured;
  std::vector<std::string> allowed{"tolerance"};
  if (convergence) allowed.insert(allowed.end(), {"levels", "time_power", "nu", "order"});
  if (manufactured) allowed.insert(allowed.end(), {"problem", "levels", "time_power", "error"});
  Section s(n.IsNull() ? YAML::Node(YAML::NodeType::Map) : n, checks.qualified(key), checks.file(), allowed);
  Check c;
  c.kind = kind;
  c.tolerance = s.get<double>("tolerance", default_tolerance(kind, p.precision, p.radius));
  if (c.tolerance <= 0) s.invalid("tolerance", "must be > 0");
  if (convergence) {
    c.levels = s.get<int>("levels", c.levels);
    if (c.levels < 2) s.invalid("levels", "must be >= 2 (an order needs two grids)");
    c.time_power = s.get<double>("time_power", c.time_power);
    if (c.time_power <= 0) s.invalid("time_power", "must be > 0 (dt = nu * h^time_power)");
    c.nu = s.get<double>("nu", c.nu);
    if (c.nu <= 0) s.invalid("nu", "must be > 0");
    c.order = s.get<double>("order", 2.0 * p.radius);
    if (c.order <= 0) s.invalid("order", "must be > 0");
  }
  if (manufactured) {
    if (!s.has("problem")) s.invalid("problem", "is required (smooth, skewed or layered)");
    c.problem = s.named("problem", ManufacturedKind::smooth, manufactured_names);
    if (const std::string why = Manufactured::unsupported(c.problem, p); !why.empty())
      checks.fail(
          ExitCode::invalid_value, n, "'" + checks.qualified(key) + "'",
          std::string("cannot make the '") + name_of(manufactured_names, c.problem) + "' problem on this case: " + why);
    c.levels = s.get<int>("levels", c.levels);
    if (c.levels < 2) s.invalid("levels", "must be >= 2 (an order needs two grids)");
    // Heat: steady, no time error; the stability limit needs dt ~ h^2. Wave:
    // leapfrog's O(dt^2) below the O(h^(2r)) space error needs dt ~ h^r.
    const bool heat = p.equation == Equation::heat;
    c.time_power = s.get<double>("time_power", heat ? 2.0 : p.radius);
    if (c.time_power < (heat ? 2 : 1))
      s.invalid("time_power", heat ? "must be >= 2 (the heat's stability limit shrinks as h^2)"
                                   : "must be >= 1 (the wave's stability limit shrinks as h)");
    c.error = s.get<double>("error", c.error);
    if (c.error <= 0) s.invalid("error", "must be > 0");
    const ExpectedOrder expected = Manufactured::expected(c.problem, p);
    c.order = expected.order, c.at_least = expected.at_least;
    manufactured_ladder(config, c);  // refuses an unstable level now, not midway through the suite
  }
  if (const std::string why = inapplicable(kind, p); !why.empty())
    checks.fail(ExitCode::invalid_value, n, "'" + checks.qualified(key) + "'",
                "cannot be checked on this case: " + why);
  return c;
}

Case make_case(const Section& c, const std::string& name, YAML::Node config_node, const std::string& backend, int ranks,
               const std::string& source) {
  YAML::Emitter e;
  e << config_node;
  Case out;
  out.name = name;
  out.config = load_config_text(e.c_str(), source + ": case '" + name + "' (merged config)");
  if (!backend.empty()) out.config.run.backend = kind_named(backend_names, backend);
  out.ranks = ranks;
  const Problem p = Problem::from(out.config);
  if (c.has("steps")) {
    out.steps = c.list<long>("steps");
    for (long s : out.steps)
      if (s < 1 || s > p.steps)
        c.invalid("steps", "must lie in [1, " + std::to_string(p.steps) + "] (the run's steps)");
  }
  Section checks = c.section("checks", {"exact", "convergence", "reference", "conservation", "manufactured"});
  const std::pair<const char*, CheckKind> kinds[] = {{"exact", CheckKind::exact},
                                                     {"convergence", CheckKind::convergence},
                                                     {"reference", CheckKind::reference},
                                                     {"conservation", CheckKind::conservation},
                                                     {"manufactured", CheckKind::manufactured}};
  for (const auto& [key, kind] : kinds)
    if (checks.has(key)) out.checks.push_back(parse_check(checks, key, kind, out.config, p));
  if (out.checks.empty())
    c.invalid("checks", "names no check (exact, convergence, reference, conservation, manufactured)");
  return out;
}

// The backend names a suite or case may give ("": the case config's own).
std::vector<std::pair<std::string, std::string>> backend_choices() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& name : choices_with_auto(backend_names)) out.emplace_back(name, name);
  return out;
}

}  // namespace

Suite load_suite(const std::string& path) {
  const YAML::Node root = yaml::load_file(path, "validation suite");
  if (!root.IsDefined() || root.IsNull()) throw Error(ExitCode::invalid_value, path + ": the suite is empty");
  Section top(root, "", path, {"suite", "output", "backend", "ranks", "configs", "cases"});
  Suite suite;
  suite.source = path;
  suite.name = top.get<std::string>("suite", std::filesystem::path(path).stem().string());
  suite.output_dir = top.get<std::string>("output", "validation-report");
  const std::string suite_backend = top.choice<std::string>("backend", "", backend_choices());
  const int suite_ranks = top.get<int>("ranks", 1);
  if (suite_ranks < 1) top.invalid("ranks", "must be >= 1");
  const std::string suite_dir = std::filesystem::path(path).parent_path().string();

  std::map<std::string, YAML::Node> named;
  if (top.has("configs")) {
    YAML::Node configs = top.raw("configs");
    if (!configs.IsMap()) top.fail(ExitCode::wrong_type, configs, "'configs'", "expects a map of named base configs");
    for (const auto& kv : configs) named[kv.first.Scalar()] = kv.second;
  }

  YAML::Node cases = top.raw("cases");
  if (!cases.IsSequence() || cases.size() == 0)
    top.fail(ExitCode::wrong_type, cases, "'cases'", "expects a non-empty list of cases");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    Section c(cases[i], "cases[" + std::to_string(i) + "]", path,
              {"name", "config", "overrides", "matrix", "backend", "ranks", "steps", "checks"});
    const std::string name = c.require<std::string>("name");
    const std::string backend = c.choice<std::string>("backend", suite_backend, backend_choices());
    const int ranks = c.get<int>("ranks", suite_ranks);
    if (ranks < 1) c.invalid("ranks", "must be >= 1");
    if (!c.has("config")) c.invalid("config", "is required (an inline map, a name from 'configs' or a file)");
    YAML::Node base = base_config(c, named, suite_dir);
    if (c.has("overrides")) {
      if (!c.raw("overrides").IsMap())
        c.fail(ExitCode::wrong_type, c.raw("overrides"), "'" + c.qualified("overrides") + "'", "expects a map");
      merge(base, c.raw("overrides"));
    }
    // Expand the matrix: one case per combination of variants.
    std::vector<std::pair<std::string, YAML::Node>> expanded{{name, base}};
    for (const auto& axis : matrix_axes(c)) {
      std::vector<std::pair<std::string, YAML::Node>> next;
      for (const auto& [case_name, node] : expanded)
        for (const Variant& v : axis) {
          YAML::Node copy = YAML::Clone(node);
          merge(copy, v.patch);
          next.emplace_back(case_name + "-" + v.name, copy);
        }
      expanded = std::move(next);
    }
    for (const auto& [case_name, node] : expanded) {
      for (const Case& existing : suite.cases)
        if (existing.name == case_name)
          c.invalid("name", "makes case '" + case_name + "' a second time; case names must be unique");
      suite.cases.push_back(make_case(c, case_name, node, backend, ranks, path));
    }
  }
  return suite;
}

namespace {

// ---------------------------------------------------------------- running

// The state of a backend run at one step, on rank 0 of the case's ranks.
struct Snapshot {
  long step = 0;
  std::vector<double> current, previous;  // previous: wave only
  FieldSummary summary;
};

template <int D, class Real>
std::vector<Snapshot> run_backend_typed(const Config& config, const std::vector<long>& steps, MPI_Comm comm) {
  Simulation<D, Real> sim(config, comm);
  const auto widen = [](const std::vector<Real>& v) { return std::vector<double>(v.begin(), v.end()); };
  std::vector<Snapshot> out;
  for (long s : steps) {
    sim.advance(s - sim.step());
    Snapshot snap;
    snap.step = s;
    snap.summary = sim.diagnose();
    snap.current = widen(sim.gather(Level::current));
    if (sim.problem().levels() == 2) snap.previous = widen(sim.gather(Level::previous));
    out.push_back(std::move(snap));
  }
  return out;
}

// The case's `threads` hold while `run` runs, as for `heatwave run`.
template <class Run>
auto with_case_threads(const Config& config, Run&& run) {
  const int threads = omp_get_max_threads();
  if (config.run.threads > 0) omp_set_num_threads(config.run.threads);
  struct Restore {
    int threads;
    ~Restore() { omp_set_num_threads(threads); }
  } restore{threads};
  return run();
}

// `steps` ascending. These runs record no traces: the reference check runs
// the case once more as `heatwave run` does to compare its receivers' file.
std::vector<Snapshot> run_backend(Config config, const std::vector<long>& steps, MPI_Comm comm) {
  config.run.receivers = {};
  return with_case_threads(config, [&] {
    return with_dims_and_precision(config.dims, config.precision == Precision::float32, [&]<int D, class Real>() {
      return run_backend_typed<D, Real>(config, steps, comm);
    });
  });
}

const Snapshot& at_step(const std::vector<Snapshot>& snaps, long step) {
  return *std::find_if(snaps.begin(), snaps.end(), [&](const Snapshot& s) { return s.step == step; });
}

// max |u - factor*shape| and max |factor*shape| over the global grid.
std::pair<double, double> mode_error(const Problem& p, const std::vector<double>& u, double factor,
                                     const InitialCondition& shape) {
  const auto spec = InitialSpec::make(shape, p.dims, p.points, p.length, p.spacing);
  double err = 0, ref = 0;
  long g[3] = {0, 0, 0};
  for (std::size_t i = 0; i < u.size(); ++i) {
    long rest = static_cast<long>(i);
    for (int a = 0; a < p.dims; ++a) g[a] = rest % p.points[a], rest /= p.points[a];
    const double exact = factor * initial_value(spec, g);
    err = std::max(err, std::abs(u[i] - exact));
    ref = std::max(ref, std::abs(exact));
  }
  return {err, ref};
}

// NaN measures fail: the comparison is written so that only a number passes.
Outcome judge(double measured, double limit) { return measured <= limit ? Outcome::pass : Outcome::fail; }

std::string at_text(long step) { return "@ step " + std::to_string(step); }

Row row(const Case& c, CheckKind kind, std::string quantity, double measured, double tolerance, std::string note = "") {
  return {c.name,
          to_string(kind),
          std::move(quantity),
          measured,
          fmt::format("<= {:.0e}", tolerance),
          judge(measured, tolerance),
          std::move(note)};
}

void exact_rows(const Case& c, const Check& check, const Problem& p, const std::vector<Snapshot>& snaps,
                const std::vector<long>& steps, Report& report) {
  // A mode decayed below 1% of its size after one step measures rounding, not the scheme.
  const InitialCondition& shape = analytic::exact_shape(p);
  const bool can_decay = analytic::exact_kind(p) != analytic::ExactKind::steady_linear;
  const double floor = 1e-2 * std::abs(shape.amplitude) * std::abs(analytic::exact_factor(p, 1));
  for (long s : steps) {
    const auto [err, ref] = mode_error(p, at_step(snaps, s).current, analytic::exact_factor(p, s), shape);
    Row r = row(c, check.kind, "max rel " + at_text(s), err / ref, check.tolerance);
    if (can_decay && ref < floor)
      r.outcome = Outcome::fail, r.note = "the mode decayed below 1% of its amplitude: check earlier steps";
    report.rows.push_back(r);
  }
}

// The largest |a - b| and the sum of its squares over the points added. A NaN
// keeps the largest NaN, so its `<=` judgement fails.
struct Difference {
  double max = 0, sum_sq = 0;
  void add(double a, double b) {
    const double d = std::abs(a - b);
    max = std::isnan(d) || std::isnan(max) ? NAN : std::max(max, d);
    sum_sq += d * d;
  }
};

// Relative differences of every level against the reference. Both levels are
// measured against the larger of the two levels' norms (the solution's size at
// that time): one wave level alone can pass through zero.
void reference_rows(const Case& c, const Check& check, const Problem& p, const std::vector<Snapshot>& snaps,
                    const std::vector<long>& steps, Report& report) {
  if (!reference::available()) {
    for (long step : steps)
      report.rows.push_back({c.name, to_string(check.kind), at_text(step), 0, "-", Outcome::skip,
                             "this build has no Kokkos reference (configure with -DHEATWAVE_KOKKOS=ON)"});
    return;
  }
  const std::vector<reference::Fields> ref = reference::run(p, steps);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Snapshot& mine = at_step(snaps, steps[i]);
    const std::pair<const char*, std::pair<const std::vector<double>*, const std::vector<double>*>> levels[] = {
        {"current", {&mine.current, &ref[i].current}}, {"previous", {&mine.previous, &ref[i].previous}}};
    double scale_max = 0, scale_sq = 0;
    for (const auto& level : levels) {
      double sq = 0;
      for (double v : *level.second.second) scale_max = std::max(scale_max, std::abs(v)), sq += v * v;
      scale_sq = std::max(scale_sq, sq);
    }
    for (const auto& [level, fields] : levels) {
      const std::vector<double>&a = *fields.first, &b = *fields.second;
      if (b.empty()) continue;  // heat: no previous level
      Difference diff;
      for (std::size_t k = 0; k < b.size(); ++k) diff.add(a[k], b[k]);
      const std::string at = " " + at_text(steps[i]);
      report.rows.push_back(
          row(c, check.kind, level + std::string(" max rel") + at, diff.max / scale_max, check.tolerance));
      report.rows.push_back(
          row(c, check.kind, level + std::string(" L2 rel") + at, std::sqrt(diff.sum_sq / scale_sq), check.tolerance));
    }
  }
}

// The receivers' file of the whole run (Simulation::run, as `heatwave run`
// writes it, in `scratch`) against the reference's own samples at the same
// positions and steps: the largest difference relative to the largest
// reference sample, and the L2 difference relative to the reference's L2 norm.
void trace_rows(const Case& c, const Check& check, const Problem& p, const std::string& scratch, MPI_Comm comm,
                bool reporter, Report& report) {
  if (!reference::available()) {
    if (reporter)
      report.rows.push_back({c.name, to_string(check.kind), "traces", 0, "-", Outcome::skip,
                             "this build has no Kokkos reference (configure with -DHEATWAVE_KOKKOS=ON)"});
    return;
  }
  Config cfg = c.config;
  cfg.run.receivers.file = scratch + "/receivers.h5";
  cfg.run.progress_seconds = 0, cfg.run.diagnostics_every = 0;
  cfg.run.checkpoint = {}, cfg.run.output = {}, cfg.run.metrics_file = "";
  if (reporter) std::filesystem::create_directories(scratch);
  RunControl control;
  control.earlier = EarlierRun::replace;  // the suite's own scratch, from an earlier validate
  with_case_threads(cfg, [&] { return run_config(cfg, control, comm); });
  if (!reporter) return;
  const hdf5::Traces mine = hdf5::read_traces(cfg.run.receivers.file);
  std::vector<std::array<double, 3>> positions;
  for (const auto& x : cfg.run.receivers.positions()) positions.push_back({x[0], x[1], x[2]});
  const reference::Traces ref = reference::traces(p, positions, cfg.run.receivers.every,
                                                  receiver_level(cfg.run.receivers, p.equation) == Level::previous);
  const std::vector<long long> steps(ref.steps.begin(), ref.steps.end());
  if (mine.step != steps || mine.receivers != positions.size()) {
    report.rows.push_back(
        {c.name, to_string(check.kind), "traces", 0, "-", Outcome::fail,
         fmt::format("the file has {} receivers x {} samples, the reference {} x {} (steps 0 to {} "
                     "every {})",
                     mine.receivers, mine.samples, positions.size(), steps.size(), p.steps, cfg.run.receivers.every)});
    return;
  }
  Difference diff;
  double scale_max = 0, scale_sq = 0;
  const std::size_t samples = steps.size();
  for (std::size_t k = 0; k < ref.values.size(); ++k) {  // the reference's [receiver][sample], the file's [sample][receiver]
    diff.add(mine.traces[(k % samples) * positions.size() + k / samples], ref.values[k]);
    scale_max = std::max(scale_max, std::abs(ref.values[k]));
    scale_sq += ref.values[k] * ref.values[k];
  }
  const std::string what = fmt::format("{} receivers x {} samples", positions.size(), steps.size());
  report.rows.push_back(row(c, check.kind, "traces max rel", diff.max / scale_max, check.tolerance, what));
  report.rows.push_back(row(c, check.kind, "traces L2 rel", std::sqrt(diff.sum_sq / scale_sq), check.tolerance, what));
}

// What the equation conserves: the mean (relative to the initial max |u|),
// or the discrete energy (relative to its value at step 1, where it is first
// defined); an energy that may only decay must not grow between the checked
// steps.
void conservation_rows(const Case& c, const Check& check, const Problem& p, const std::vector<Snapshot>& snaps,
                       const std::vector<long>& steps, Report& report) {
  const Conserved conserved = info(p.equation).conserved;
  const bool mean = conserved == Conserved::mean;
  const FieldSummary& start = at_step(snaps, mean ? 0 : 1).summary;
  const FieldSummary* before = &start;
  for (long s : steps) {
    const FieldSummary& f = at_step(snaps, s).summary;
    if (conserved == Conserved::decaying_energy) {
      const double growth = std::max(0.0, f.energy - before->energy) / std::abs(start.energy);
      report.rows.push_back(row(c, check.kind, "energy growth " + at_text(s), growth, check.tolerance,
                                fmt::format("energy {:.6e} -> {:.6e}", before->energy, f.energy)));
      before = &f;
      continue;
    }
    const double change = mean ? std::abs(f.mean - start.mean) / std::max(std::abs(start.min), std::abs(start.max))
                               : std::abs(f.energy - start.energy) / std::abs(start.energy);
    report.rows.push_back(
        row(c, check.kind, std::string(mean ? "mean" : "energy") + " change " + at_text(s), change, check.tolerance));
  }
}

// Grids that halve h, dt = nu*h^time_power to the same end time, error
// against the continuous solution; the order between neighbouring grids.
void convergence_rows(const Case& c, const Check& check, MPI_Comm comm, bool reporter, Report& report) {
  const Problem base = Problem::from(c.config);
  Ladder ladder{c.name, check.order, {}, {}, {}};
  for (int level = 0; level < check.levels; ++level) {
    Config cfg = refined(c.config, level);
    cfg.steps = 1, cfg.t_end.reset(), cfg.dt.reset();
    const Problem grid = Problem::from(cfg);
    const double h = *std::min_element(grid.spacing.begin(), grid.spacing.begin() + grid.dims);
    const long steps = static_cast<long>(std::ceil(base.t_end / (check.nu * std::pow(h, check.time_power))));
    cfg.steps = steps, cfg.dt = base.t_end / static_cast<double>(steps);
    const Problem p = Problem::from(cfg);
    const std::vector<Snapshot> end = run_backend(cfg, {p.steps}, comm);
    if (!reporter) continue;
    ladder.points.push_back(p.points[0]);
    ladder.spacing.push_back(p.spacing[0]);
    ladder.error.push_back(mode_error(p, end[0].current, analytic::continuous_factor(p, p.t_end), p.initial).first);
  }
  if (!reporter) return;
  for (int level = 1; level < check.levels; ++level) {
    const double order = std::log(ladder.error[level - 1] / ladder.error[level]) /
                         std::log(ladder.spacing[level - 1] / ladder.spacing[level]);
    Row r{c.name,
          "convergence",
          fmt::format("order {}->{} pts", ladder.points[level - 1], ladder.points[level]),
          order,
          fmt::format("{:g} +- {:g}", check.order, check.tolerance),
          judge(std::abs(order - check.order), check.tolerance),
          fmt::format("errors {:.3e} -> {:.3e}", ladder.error[level - 1], ladder.error[level])};
    report.rows.push_back(r);
  }
  report.ladders.push_back(ladder);
}

// Writes a level's fields to `file` on the writer (the coefficient where it
// is a field, the source's q, u0 or v0, and u_exact at t_end for whoever
// looks), and points the config at them through the user-facing keys.
Config with_manufactured_files(Config cfg, const Manufactured& m, const std::string& file, bool writer, MPI_Comm comm) {
  const Problem p = Problem::from(cfg);
  // A smooth or skewed coefficient is a field from the file; the layered one the config's layers.
  const bool heat = p.equation == Equation::heat, smooth = m.kind() != ManufacturedKind::layered;
  if (smooth) {
    Medium medium;
    medium.type = MediumType::file, medium.path = file, medium.dataset = m.coefficient_key();
    cfg.material[m.coefficient_key()] = medium;
  } else {
    cfg.material[m.coefficient_key()] = m.layers();
  }
  Source source;
  source.type = SourceType::field, source.path = file, source.dataset = "q", source.time = m.time();
  cfg.sources = {source};
  InitialCondition from_file;
  from_file.type = InitialType::file, from_file.path = file;
  if (heat) {
    from_file.dataset = "u0", cfg.initial = from_file;
  } else {
    cfg.initial = InitialCondition{};
    cfg.initial.type = InitialType::constant, cfg.initial.value = 0;
    from_file.dataset = "v0", cfg.velocity = from_file;
  }
  int ok = 1;
  std::string why;
  if (writer) {
    try {
      const std::size_t n = static_cast<std::size_t>(p.global_points());
      std::vector<double> k(n), q(n), start(n), exact(n);
      for_each_grid_point(p, [&](long i, const Point& x) {
        k[i] = m.coefficient(x), q[i] = m.source(x), start[i] = heat ? m.initial(x) : m.velocity(x);
        exact[i] = m.exact(x, p.t_end);
      });
      hdf5::Block block;
      for (int a = p.dims - 1; a >= 0; --a) block.global.push_back(static_cast<std::uint64_t>(p.points[a]));
      block.offset.assign(block.global.size(), 0), block.count = block.global;
      std::vector<hdf5::FieldView<double>> fields{
          {"q", q.data()}, {heat ? "u0" : "v0", start.data()}, {"u_exact", exact.data()}};
      if (smooth) fields.push_back({m.coefficient_key(), k.data()});
      std::filesystem::create_directories(std::filesystem::path(file).parent_path());
      hdf5::write_fields<double>(file, MPI_COMM_SELF, block, {}, fields);
      // The level as a config of its own: `heatwave run` redoes it by hand.
      const std::string yaml = std::filesystem::path(file).replace_extension(".yaml").string();
      std::ofstream out(yaml);
      out << to_yaml(cfg);
      out.close();
      if (!out) throw Error(ExitCode::io_error, yaml + ": cannot write the manufactured level's config");
    } catch (const Error& e) {
      ok = 0, why = e.what();
    }
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
  if (!ok) throw Error(ExitCode::io_error, writer ? why : file + ": the manufactured fields were not written");
  return cfg;
}

// A manufactured ladder (validation/manufactured.hpp): each grid run through
// material, sources and initial files, its max error against u_exact at
// t_end; the order between neighbouring grids, and the finest grid's error.
void manufactured_rows(const Case& c, const Check& check, const std::string& scratch, MPI_Comm comm, bool reporter,
                       Report& report) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Ladder ladder{c.name, check.order, {}, {}, {}};
  double finest_error = 0, finest_size = 0;
  for (const ManufacturedLevel& level : manufactured_ladder(c.config, check)) {
    const std::string file = fmt::format("{}/grid-{}.h5", scratch, level.config.points[0]);
    const Config cfg = with_manufactured_files(level.config, level.solution, file, rank == 0, comm);
    const Problem p = Problem::from(cfg);
    const std::vector<Snapshot> end = run_backend(cfg, {p.steps}, comm);
    if (!reporter) continue;
    Difference diff;
    double size = 0;
    for_each_grid_point(p, [&](long i, const Point& x) {
      const double exact = level.solution.exact(x, p.t_end);
      diff.add(end[0].current[static_cast<std::size_t>(i)], exact);
      size = std::max(size, std::abs(exact));
    });
    const double err = diff.max;
    ladder.points.push_back(p.points[0]);
    ladder.spacing.push_back(p.spacing[0]);
    ladder.error.push_back(err);
    finest_error = err, finest_size = size;
  }
  if (!reporter) return;
  const std::string kind = to_string(check.kind);
  for (int level = 1; level < check.levels; ++level) {
    const double order = std::log(ladder.error[level - 1] / ladder.error[level]) /
                         std::log(ladder.spacing[level - 1] / ladder.spacing[level]);
    const double floor = check.order - check.tolerance;
    report.rows.push_back(
        {c.name, kind, fmt::format("order {}->{} pts", ladder.points[level - 1], ladder.points[level]), order,
         check.at_least ? fmt::format(">= {:g}", floor) : fmt::format("{:g} +- {:g}", check.order, check.tolerance),
         check.at_least ? judge(-order, -floor) : judge(std::abs(order - check.order), check.tolerance),
         fmt::format("errors {:.3e} -> {:.3e}", ladder.error[level - 1], ladder.error[level])});
  }
  report.rows.push_back(row(c, check.kind, fmt::format("max rel error @ {} pts", ladder.points.back()),
                            finest_error / finest_size, check.error));
  report.ladders.push_back(ladder);
}

// A case name as a file name.
std::string file_name(std::string name) {
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') ch = '_';
  return name;
}

void run_case(const Case& c, const std::string& scratch, Report& report) {
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  const bool reporter = world_rank == 0;
  if (c.ranks > world_size) {
    for (const Check& check : c.checks)
      report.rows.push_back(
          {c.name, to_string(check.kind), "-", 0, "-", Outcome::skip,
           fmt::format("needs {} ranks, the job has {}: run under mpirun -n {}", c.ranks, world_size, c.ranks)});
    return;
  }
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank < c.ranks ? 0 : MPI_UNDEFINED, world_rank, &comm);
  if (comm == MPI_COMM_NULL) return;

  const Problem p = Problem::from(c.config);
  std::vector<long> steps = c.steps.empty() ? std::vector<long>{p.steps} : c.steps;
  // Every step any check needs, ascending: the checked ones, and where
  // conservation starts (heat: 0; wave: 1, where the energy is first defined).
  std::vector<long> needed = steps;
  needed.push_back(info(p.equation).conserved == Conserved::mean ? 0 : 1);
  std::sort(needed.begin(), needed.end());
  needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
  // Convergence and manufactured ladders make their own runs.
  const bool one_run = std::any_of(c.checks.begin(), c.checks.end(), [](const Check& k) {
    return k.kind != CheckKind::convergence && k.kind != CheckKind::manufactured;
  });
  const std::vector<Snapshot> snaps = one_run ? run_backend(c.config, needed, comm) : std::vector<Snapshot>{};
  for (const Check& check : c.checks) {
    switch (check.kind) {
      case CheckKind::exact:
        if (reporter) exact_rows(c, check, p, snaps, steps, report);
        break;
      case CheckKind::reference:
        if (reporter) reference_rows(c, check, p, snaps, steps, report);
        if (c.config.run.receivers.any())
          trace_rows(c, check, p, scratch + "/traces/" + file_name(c.name), comm, reporter, report);
        break;
      case CheckKind::conservation:
        if (reporter) conservation_rows(c, check, p, snaps, steps, report);
        break;
      case CheckKind::convergence:
        convergence_rows(c, check, comm, reporter, report);
        break;
      case CheckKind::manufactured:
        manufactured_rows(c, check, scratch + "/manufactured/" + file_name(c.name), comm, reporter, report);
        break;
    }
  }
  MPI_Comm_free(&comm);
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

ExitCode run_suite(const Options& o) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Suite suite = load_suite(o.suite_path);
  if (!o.backend.empty())
    for (Case& c : suite.cases) c.config.run.backend = kind_named(backend_names, o.backend);
  const std::string dir = o.output_dir.empty() ? suite.output_dir : o.output_dir;

  Report report;
  report.suite = suite.name;
  report.source = suite.source;
  report.reference = reference::description();
  // Manufactured ladders write their fields under manufactured/ (every rank of
  // a case reads them), the reference check its receivers' files under traces/.
  const std::string scratch = std::filesystem::absolute(dir).string();
  const double start = now();
  for (const Case& c : suite.cases) {
    const double t0 = now();
    const std::size_t first = report.rows.size();
    run_case(c, scratch, report);
    const bool failed = std::any_of(report.rows.begin() + first, report.rows.end(),
                                    [](const Row& r) { return r.outcome == Outcome::fail; });
    spdlog::info("case {} ({}, {} rank(s)): {} in {:.2f} s", c.name, backend_choice_name(c.config.run.backend), c.ranks,
                 failed ? "FAIL" : "done", now() - t0);
  }
  report.seconds = now() - start;

  int passed = report.passed() ? 1 : 0;
  if (rank == 0) {
    std::filesystem::create_directories(dir);
    if (o.plots)
      make_plots(report, dir);
    else if (!report.ladders.empty())
      report.plot_note = "plots turned off (--no-plots)";
    if (!report.plot_note.empty()) spdlog::warn("no convergence plots: {}", report.plot_note);
    const std::string json = o.json_path.empty() ? dir + "/report.json" : o.json_path;
    const std::string markdown = o.markdown_path.empty() ? dir + "/report.md" : o.markdown_path;
    write_json(report, json);
    write_markdown(report, markdown);
    print_table(report);
    spdlog::info("report written to {} and {}{}", json, markdown,
                 report.plots.empty() ? "" : fmt::format(", {} plot(s) in {}", report.plots.size(), dir));
  }
  MPI_Bcast(&passed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return passed ? ExitCode::ok : ExitCode::validation_failed;
}

}  // namespace heatwave::validation
