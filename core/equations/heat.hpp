#pragma once
// The heat equation, u_t = alpha lap u, forward Euler in time (FTCS); its
// host facts that take the Coefficients in heat.cpp.
#include <array>
#include <cmath>

#include "core/central_difference.hpp"
#include "core/equations/equation.hpp"

namespace heatwave {

struct Heat {
  static constexpr const char* name = "heat";
  static constexpr const char* summary = "u_t = alpha lap u (forward Euler)";
  static constexpr int levels = 1;
  static constexpr std::array<const char*, levels> level_names{"u"};
  static constexpr std::array<CoefficientSpec, 1> coefficients{{{"alpha", 1.0, false, "the diffusivity"}}};
  // The coefficient that, varying in space, sits inside the divergence:
  // div(alpha grad u), with one flux per pair of points (solver/stencil.hpp).
  static constexpr const char* flux_coefficient = "alpha";
  static constexpr Conserved conserved = Conserved::mean;
  static constexpr bool has_energy = false;

  // Von Neumann, highest grid mode (core/central_difference.hpp):
  // alpha*dt*sum(1/h^2) <= 2 / highest_mode(radius).
  static double stability_number(const Coefficients& k, double dt, double inverse_h2);
  static double stability_limit(int radius) { return diffusion_limit(radius); }
  static const char* stability_rule(int radius) {
    constexpr const char* rules[max_radius] = {"alpha*dt*sum(1/h^2) <= 1/2", "alpha*dt*sum(1/h^2) <= 3/8",
                                               "alpha*dt*sum(1/h^2) <= 45/136", "alpha*dt*sum(1/h^2) <= 315/1024"};
    return rules[radius - 1];
  }

  //   u' = u + alpha*dt * lap(u)   (u_prev unused: one level)
  // and with a source q (after the step): u' += dt * q.
  template <class Real>
  struct Update {
    Real alpha_dt, dt;
    // From the coefficients' values in `coefficients` order (here alpha), at a point or for the whole grid.
    HW_HD static Update at(const double* k, double dt) {
      return {static_cast<Real>(k[0] * dt), static_cast<Real>(dt)};
    }
    HW_HD static Update at_point(const double* k, double dt) { return at(k, dt); }  // the same at a point of a medium
    HW_HD Real step(Real u, Real /*u_prev*/, Real lap) const { return fused(alpha_dt, lap, u); }
    HW_HD Real start(Real u, Real u_prev, Real lap) const { return step(u, u_prev, lap); }
    HW_HD Real force(Real next, Real q, bool /*start*/) const { return fused(dt, q, next); }
  };

  // A mode with discrete eigenvalue S is multiplied by g = 1 + alpha*dt*S a step;
  // the continuous one (eigenvalue lambda) by exp(alpha*lambda*t).
  static double mode_factor(const Coefficients& k, double dt, double S, long n);
  static double continuous_factor(const Coefficients& k, double lambda, double t);
  static double energy_c2(const Coefficients&) { return 0; }
};

}  // namespace heatwave
