// The convergence and manufactured checks: ladders of grids that halve h, a
// run on each grid, the order between neighbouring grids.
#include "validation/checks.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include "io/hdf5.hpp"
#include "validation/analytic.hpp"

namespace heatwave::validation::detail {

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace heatwave::validation::detail
