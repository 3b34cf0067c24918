#pragma once
// The wave equation, u_tt = c^2 lap u: leapfrog in time, first step by Taylor
// expansion from u0 and v0; its host facts that take the Coefficients in wave.cpp.
#include <array>
#include <cmath>

#include "core/central_difference.hpp"
#include "core/equations/equation.hpp"

namespace heatwave {

#ifdef HEATWAVE_TEST_HALVED_START_VELOCITY
// Test-only (tests/CMakeLists.txt builds a mutant with it): half the v0 term
// of the first step, which the exact velocity modes must catch.
inline constexpr double start_velocity_scale = 0.5;
#else
inline constexpr double start_velocity_scale = 1;
#endif

struct Wave {
  static constexpr const char* name = "wave";
  static constexpr const char* summary = "u_tt = c^2 lap u (leapfrog, Taylor start)";
  static constexpr int levels = 2;
  static constexpr std::array<const char*, levels> level_names{"u", "u_previous"};
  static constexpr std::array<CoefficientSpec, 1> coefficients{{{"c", 1.0, false, "the wave speed"}}};
  // No coefficient goes inside the Laplacian: c varying in space is c(x)^2 lap u,
  // a factor per point of the update.
  static constexpr const char* flux_coefficient = nullptr;
  static constexpr Conserved conserved = Conserved::energy;
  static constexpr bool has_energy = true;

  // Von Neumann, highest grid mode (core/central_difference.hpp):
  // c*dt*sqrt(sum(1/h^2)) <= 2 / sqrt(highest_mode(radius)).
  static double stability_number(const Coefficients& k, double dt, double inverse_h2);
  static double stability_limit(int radius) { return leapfrog_limit(radius); }
  static const char* stability_rule(int radius) {
    constexpr const char* rules[max_radius] = {"c*dt*sqrt(sum(1/h^2)) <= 1", "c*dt*sqrt(sum(1/h^2)) <= sqrt(3)/2",
                                               "c*dt*sqrt(sum(1/h^2)) <= sqrt(45/68)",
                                               "c*dt*sqrt(sum(1/h^2)) <= sqrt(315/512)"};
    return rules[radius - 1];
  }

  //   u' = 2u - u_prev + (c*dt)^2 * lap(u)
  //   first step: u' = u + dt*v0 + (c*dt)^2/2 * lap(u)   (v0 sits where u_prev will)
  // and with a source s (after the step): u' += dt^2 s, on the first step dt^2/2 s.
  template <class Real>
  struct Update {
    Real c2dt2, half_c2dt2, dt, dt2, half_dt2;
    // From the coefficients' values in `coefficients` order (here c), at a point or for the whole grid.
    HW_HD static Update at(const double* k, double dt) {
      const double c = k[0];
      return {static_cast<Real>(c * c * dt * dt), static_cast<Real>(0.5 * c * c * dt * dt),
              static_cast<Real>(start_velocity_scale * dt), static_cast<Real>(dt * dt),
              static_cast<Real>(0.5 * dt * dt)};
    }
    HW_HD static Update at_point(const double* k, double dt) { return at(k, dt); }  // the same at a point of a medium
    HW_HD Real step(Real u, Real u_prev, Real lap) const { return fused(c2dt2, lap, Real(2) * u - u_prev); }
    HW_HD Real start(Real u, Real v0, Real lap) const { return fused(half_c2dt2, lap, fused(dt, v0, u)); }
    HW_HD Real force(Real next, Real s, bool start) const { return fused(start ? half_dt2 : dt2, s, next); }
  };

  // With v0 = 0 a mode of eigenvalue S goes as cos(n*theta), cos(theta) =
  // 1 + (c*dt)^2*S/2 (the Taylor start gives cos(theta) exactly); the
  // continuous one as cos(c*sqrt(-lambda)*t).
  static double mode_factor(const Coefficients& k, double dt, double S, long n);
  // u^n of the mode for u0 = 0 and a unit v0 mode: u^1 = dt v0 starts the same recurrence.
  static double velocity_mode_factor(const Coefficients& k, double dt, double S, long n);
  static double continuous_factor(const Coefficients& k, double lambda, double t);
  // E = 1/2 ||(u^n - u^{n-1})/dt||^2 - c^2/2 <u^{n-1}, L u^n>: the weight of the second term.
  static double energy_c2(const Coefficients& k);
};

}  // namespace heatwave
