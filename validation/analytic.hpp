#pragma once
// Exact answers for sine/cosine modes (DESIGN.md, "Exact answers"): the fully
// discrete solution (holds to rounding) and the continuous one (for
// convergence orders).
#include <cmath>
#include <string>

#include "solver/problem.hpp"

namespace heatwave::analytic {

inline constexpr double pi = 3.14159265358979323846;

// s(p): the symbol of the radius-r second difference at phase p = k*pi*h/L.
inline double symbol(int radius, double p) {
  return radius == 1 ? 2 * std::cos(p) - 2 : (-2 * std::cos(2 * p) + 32 * std::cos(p) - 30) / 12;
}

// Why the initial condition is not an exact mode of this problem ("" if it is):
// sine modes need homogeneous Dirichlet faces, cosine modes homogeneous
// Neumann faces, and a periodic axis needs an even mode number; the wave also
// needs v0 = 0.
inline std::string mode_problem(const Problem& p) {
  const InitialCondition& ic = p.config.initial;
  if (ic.type != InitialType::sine && ic.type != InitialType::cosine) return "the initial condition is not a sine/cosine mode";
  const BoundaryType wanted = ic.type == InitialType::sine ? BoundaryType::dirichlet : BoundaryType::neumann;
  for (int a = 0; a < p.dims; ++a) {
    if (p.periodic[a]) {
      if (ic.modes[a] % 2 != 0) return std::string("periodic axis ") + axis_names[a] + " needs an even mode number";
      continue;
    }
    for (const auto& f : p.config.boundary[a])
      if (f.type != wanted || f.value != 0)
        return std::string("axis ") + axis_names[a] + " needs homogeneous " + to_string(wanted) + " faces for a " +
               to_string(ic.type) + " mode";
  }
  if (p.config.equation == Equation::wave && p.config.velocity &&
      !(p.config.velocity->type == InitialType::constant && p.config.velocity->value == 0))
    return "the exact wave solution assumes v0 = 0";
  return "";
}

// S: the discrete Laplacian's eigenvalue for the mode; lambda: the continuous one (-|k pi / L|^2).
inline double discrete_eigenvalue(const Problem& p) {
  double S = 0;
  for (int a = 0; a < p.dims; ++a) {
    const double h = p.spacing[a];
    S += symbol(p.config.radius, p.config.initial.modes[a] * pi * h / p.config.length[a]) / (h * h);
  }
  return S;
}
inline double continuous_eigenvalue(const Problem& p) {
  double lambda = 0;
  for (int a = 0; a < p.dims; ++a) {
    const double k = p.config.initial.modes[a] * pi / p.config.length[a];
    lambda -= k * k;
  }
  return lambda;
}

// The mode's amplitude factor after n steps, fully discrete (heat: g^n with
// g = 1 + alpha*dt*S; wave with v0 = 0: cos(n*theta), cos(theta) = 1 + (c*dt)^2*S/2).
inline double discrete_factor(const Problem& p, long n) {
  const double S = discrete_eigenvalue(p), dt = p.dt;
  if (p.config.equation == Equation::heat) return std::pow(1 + p.config.alpha * dt * S, static_cast<double>(n));
  const double c = p.config.c;
  return std::cos(n * std::acos(1 + c * c * dt * dt * S / 2));
}

// ... and of the continuous solution at time t.
inline double continuous_factor(const Problem& p, double t) {
  const double lambda = continuous_eigenvalue(p);
  if (p.config.equation == Equation::heat) return std::exp(p.config.alpha * lambda * t);
  return std::cos(p.config.c * std::sqrt(-lambda) * t);
}

}  // namespace heatwave::analytic
