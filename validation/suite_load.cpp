// Reading a suite (load_suite): base configs, overrides and the matrix
// expanded into cases, each check parsed and refused early where it cannot be measured.
#include "validation/suite.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "core/central_difference.hpp"
#include "io/yaml_file.hpp"
#include "io/yaml_section.hpp"
#include "validation/analytic.hpp"
#include "validation/checks.hpp"

namespace heatwave::validation {

namespace {

using detail::manufactured_ladder;
using yaml::Section;

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
  const double terms = rounding_terms(radius);
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

}  // namespace heatwave::validation
