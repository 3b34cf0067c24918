// The checks of one case's run: the backend runs (snapshots at the checked
// steps) and the rows of the exact, reference, trace and conservation checks.
#include "validation/checks.hpp"

#include <omp.h>
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>

#include "io/hdf5.hpp"
#include "solver/initial.hpp"
#include "solver/receivers.hpp"
#include "solver/simulation.hpp"
#include "validation/analytic.hpp"
#include "validation/reference.hpp"

namespace heatwave::validation::detail {

namespace {

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

const Snapshot& at_step(const std::vector<Snapshot>& snaps, long step) {
  return *std::find_if(snaps.begin(), snaps.end(), [&](const Snapshot& s) { return s.step == step; });
}

std::string at_text(long step) { return "@ step " + std::to_string(step); }

}  // namespace

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

Row row(const Case& c, CheckKind kind, std::string quantity, double measured, double tolerance, std::string note) {
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
  // the reference's [receiver][sample], the file's [sample][receiver]
  for (std::size_t k = 0; k < ref.values.size(); ++k) {
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

}  // namespace heatwave::validation::detail
