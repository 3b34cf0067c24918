#pragma once
// The damped wave equation, u_tt + gamma u_t = c^2 lap u: leapfrog with the
// damping term centred in time, first step by Taylor expansion from u0 and v0.
// gamma = 0 is the wave equation; the absorbing layers of a boundary grow
// gamma towards the face. Its host facts that take the Coefficients: damped_wave.cpp.
#include <array>
#include <cmath>

#include "core/equations/wave.hpp"

namespace heatwave {

// A wave with damping: it keeps the wave's levels, energy and stability limit
// (damping only shrinks every mode's amplification) and has its own update.
struct DampedWave : Wave {
  static constexpr const char* name = "damped_wave";
  static constexpr const char* summary = "u_tt + gamma u_t = c^2 lap u (leapfrog, damping centred)";
  static constexpr std::array<CoefficientSpec, 2> coefficients{
      {{"c", 1.0, false, "the wave speed"}, {"gamma", 0.0, true, "the damping rate"}}};
  // The wave's energy, which decreases by gamma*dt ||(u^{n+1} - u^{n-1})/(2 dt)||^2 a step.
  static constexpr Conserved conserved = Conserved::decaying_energy;

  // (u' - 2u + u_prev)/dt^2 + gamma (u' - u_prev)/(2 dt) = c^2 lap(u), so with
  // d = gamma*dt/2:   u' = (2u - (1 - d) u_prev + (c*dt)^2 lap(u)) / (1 + d)
  // first step:       u' = u + (dt - gamma*dt^2/2) v0 + (c*dt)^2/2 lap(u)
  // A source s adds dt^2/(1+d) s (first step: dt^2/2 s) after the step.
  template <class Real>
  struct Update {
    Real two_u, prev, lap_weight;  // 2/(1+d), (1-d)/(1+d), (c*dt)^2/(1+d)
    Real start_v0, half_c2dt2;     // dt - gamma*dt^2/2, (c*dt)^2/2
    Real source, start_source;     // dt^2/(1+d), dt^2/2
    // From the coefficients' values in `coefficients` order (c, gamma), at a
    // point or for the whole grid. Undamped (gamma = 0, most points of an
    // absorbing run) it needs no division: the same values, bit for bit.
    HW_HD static Update at(const double* k, double dt) {
      const double c = k[0], d = 0.5 * k[1] * dt;
      if (d == 0)
        return {Real(2), Real(1), static_cast<Real>(c * c * dt * dt), static_cast<Real>(dt),
                static_cast<Real>(0.5 * c * c * dt * dt), static_cast<Real>(dt * dt), static_cast<Real>(0.5 * dt * dt)};
      return {static_cast<Real>(2 / (1 + d)),
              static_cast<Real>((1 - d) / (1 + d)),
              static_cast<Real>(c * c * dt * dt / (1 + d)),
              static_cast<Real>(dt - d * dt),
              static_cast<Real>(0.5 * c * c * dt * dt),
              static_cast<Real>(dt * dt / (1 + d)),
              static_cast<Real>(0.5 * dt * dt)};
    }
    // At a point of a medium (gamma varying: absorbing layers, often a fifth
    // of the points): the same where undamped; damped, one division in the
    // working precision for the three factors of 1/(1+d), instead of a
    // division in double for each, which would take most of a kernel's time
    // there. (The uniform update, made once, keeps `at`.)
    HW_HD static Update at_point(const double* k, double dt) {
      const double c = k[0], d = 0.5 * k[1] * dt;
      if (d == 0) return at(k, dt);
      const Real inv = Real(1) / static_cast<Real>(1 + d);
      return {Real(2) * inv,
              static_cast<Real>(1 - d) * inv,
              static_cast<Real>(c * c * dt * dt) * inv,
              static_cast<Real>(dt - d * dt),
              static_cast<Real>(0.5 * c * c * dt * dt),
              static_cast<Real>(dt * dt) * inv,
              static_cast<Real>(0.5 * dt * dt)};
    }
    HW_HD Real step(Real u, Real u_prev, Real lap) const {
      return fused(lap_weight, lap, fused(two_u, u, -prev * u_prev));
    }
    HW_HD Real start(Real u, Real v0, Real lap) const { return fused(half_c2dt2, lap, fused(start_v0, v0, u)); }
    HW_HD Real force(Real next, Real s, bool start) const { return fused(start ? start_source : source, s, next); }
  };

  // A mode of eigenvalue S obeys u^{n+1} = (a + e S) u^n - b u^{n-1} (a, b, e
  // as in Update): u^n = r^n (cos(n theta) + B sin(n theta)) with r = sqrt(b),
  // cos(theta) = (a + e S)/(2r), and B from the Taylor start (v0 = 0):
  // u^1 = 1 + (c*dt)^2 S/2. In complex arithmetic this holds overdamped too.
  static double mode_factor(const Coefficients& k, double dt, double S, long n);
  // u0 = 0, a unit v0 mode: u^1 = (dt - gamma dt^2/2) v0 = dt (1-d) v0, and
  // u^n = u^1 r^(n-1) sin(n theta)/sin(theta) solves the recurrence (u^0 = 0).
  static double velocity_mode_factor(const Coefficients& k, double dt, double S, long n);
  // Continuous, with w^2 = -c^2 lambda - gamma^2/4 (w imaginary when
  // overdamped): exp(-gamma t/2) (cos(w t) + gamma/(2w) sin(w t)).
  static double continuous_factor(const Coefficients& k, double lambda, double t);
};

}  // namespace heatwave
