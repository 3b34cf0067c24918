#pragma once
// The problem as the numerics see it: the equation and its coefficients, the
// grid and its spacing, the faces, the initial state, the time step and step
// count, derived once from a validated Config and checked for stability.
// Numerics only: how the run goes (backend, ranks, files) is RunSettings.
#include <array>
#include <optional>
#include <string>

#include "io/config.hpp"
#include "solver/equations/equations.hpp"
#include "solver/numerics.hpp"

namespace heatwave {

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
  Coefficients coefficients;
  std::array<std::array<BoundaryFace, 2>, 3> faces{};  // [axis][low, high]
  InitialCondition initial;
  std::optional<InitialCondition> velocity;  // equations second order in time; zero when absent
  double dt = 0;
  long steps = 0;
  double t_end = 0;

  // Builds and checks. Throws Error(unstable) past the stability limit and
  // Error(t_end_mismatch) when an explicit dt does not divide t_end.
  static Problem from(const Config& config);

  long global_points() const;
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

}  // namespace heatwave
