#pragma once
// The problem as the numerics see it: the equation and its coefficients, the
// grid and its spacing, the faces, the initial state, the time step and step
// count, derived once from a validated Config and checked for stability.
// Numerics only: how the run goes (backend, ranks, files) is RunSettings.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "core/equations/equations.hpp"
#include "core/numerics.hpp"

namespace heatwave {

// Where a restart resumes: the checkpoint's step, time and time step.
struct RestartClock {
  long step = 0;
  double time = 0;
  double dt = 0;
};

struct Problem {
  std::string source;  // the config file, for messages
  Equation equation = Equation::heat;
  Precision precision = Precision::float64;
  int dims = 2;
  int radius = 1;
  std::array<long, 3> points{1, 1, 1};
  std::array<double, 3> length{1, 1, 1};
  std::array<double, 3> spacing{1, 1, 1};  // vertex-centred: L/(N-1); periodic axes L/N
  std::array<bool, 3> periodic{false, false, false};
  // The equation's coefficients: a constant each, or for one that varies in
  // space (in `material`) its largest value, which the stability limit takes.
  Coefficients coefficients;
  std::map<std::string, Medium, std::less<>> material;
  std::map<std::string, std::pair<double, double>, std::less<>> material_range;  // (min, max) of each
  std::vector<Source> sources;
  std::array<std::array<BoundaryFace, 2>, 3> faces{};  // [axis][low, high]
  InitialCondition initial;
  std::optional<InitialCondition> velocity;  // equations second order in time; zero when absent
  double dt = 0;
  long steps = 0;  // the step the run ends at
  double t_end = 0;
  // The clock: step n is at time start_time + (n - start_step) dt. A run from
  // t = 0, or restarted on its own schedule, has 0 and 0 (time = n dt).
  long start_step = 0;
  double start_time = 0;

  // Builds and checks. Throws Error(unstable) past the stability limit,
  // Error(t_end_mismatch) when an explicit dt does not divide t_end, and
  // Error(invalid_value) for lengths whose spacing a double cannot step with.
  static Problem from(const Config& config);
  // The problem as it continues from a checkpoint. On the checkpoint's own
  // schedule (the same dt, its time = step x dt) it is from(config), bit for
  // bit. Otherwise time goes on from the checkpoint's (step, time): with the
  // checkpoint's dt where the config gives the same one to rounding, or, when
  // `new_dt` allows it, with the config's (dt: auto lands on t_end from the
  // checkpoint's time); a dt that changes without `new_dt` is refused
  // (Error(incompatible_checkpoint)), since every later time would be off.
  static Problem from(const Config& config, const RestartClock& clock, bool new_dt);

  double time_at(long step) const { return start_time + static_cast<double>(step - start_step) * dt; }
  // Whether two problems step alike: the same dt and end step, and clocks
  // that agree (to rounding) on the time of every step.
  bool same_schedule(const Problem& other) const {
    const double t = time_at(other.start_step);
    return dt == other.dt && steps == other.steps &&
           std::abs(t - other.start_time) <= 1e-12 * std::max(std::abs(t), std::abs(other.start_time));
  }

  long global_points() const;
  // Whether a coefficient varies in space (the backends' variable-coefficient path).
  bool varies() const { return !material.empty(); }
  int levels() const { return info(equation).levels; }
  // The fewest bytes a cell update moves through memory: every level read
  // once and u^{n+1} written once (the roofline's unit).
  double bytes_per_update() const { return (precision == Precision::float32 ? 4.0 : 8.0) * (levels() + 1); }
  // The equation's stability number for this grid and dt (e.g. alpha*dt*sum(1/h^2)), its limit and its rule.
  double stability_number() const { return stability_number_for(dt); }
  double stability_number_for(double dt) const;
  double stability_limit() const;
  std::string stability_rule() const;
};

// Sources against what the run resolves: a Gaussian bump narrower than the
// grid spacing, or a Gaussian pulse narrower than dt, falls between the
// samples and injects nothing (Error(invalid_value) naming it). Sources
// with a frequency (ricker, sine) against what the run resolves (a
// user's run: `heatwave run`; validation cases test the numerics on grids
// that need not resolve anything): in time, samples a period against dt's
// Nyquist limit 1/(2 dt); for the wave equations, grid points a wavelength
// (at the slowest c and the coarsest spacing) against the grid's c_min/(2 h).
// Past either limit: Error(invalid_value) naming the source, the frequency
// and the limit. Below the usual rule of thumb (10 points a wavelength at
// radius 1, 6 at radius 2; 10 samples a period): a warning, returned.
std::vector<std::string> check_sources(const Problem& problem);

}  // namespace heatwave
