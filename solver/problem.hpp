#pragma once
// The problem as the numerics see it: grid spacing, time step, step count and
// the stability check, derived once from a validated Config.
#include <array>
#include <string>

#include "io/config.hpp"

namespace heatwave {

struct Problem {
  Config config;
  int dims = 2;
  std::array<long, 3> points{1, 1, 1};
  std::array<double, 3> spacing{1, 1, 1};  // vertex-centred: L/(N-1); periodic axes L/N
  std::array<bool, 3> periodic{false, false, false};
  double dt = 0;
  long steps = 0;
  double t_end = 0;

  // Builds and checks. Throws Error(unstable) past the stability limit and
  // Error(t_end_mismatch) when an explicit dt does not divide t_end.
  static Problem from(const Config& config);

  long global_points() const;
  // The fewest bytes a cell update moves through memory: heat reads u and
  // writes u'; the wave also reads u_prev (the roofline's unit).
  double bytes_per_update() const {
    const double value = config.precision == Precision::float32 ? 4 : 8;
    return value * (config.equation == Equation::heat ? 2 : 3);
  }
  // alpha*dt*sum(1/h^2) (heat) or c*dt*sqrt(sum 1/h^2) (wave), and its limit.
  double stability_number() const { return stability_number_for(dt); }
  double stability_number_for(double dt) const;
  double stability_limit() const;
  std::string stability_rule() const;
};

}  // namespace heatwave
