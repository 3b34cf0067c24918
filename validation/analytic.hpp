#pragma once
// Exact answers for sine/cosine modes (docs/design.md, "Exact answers"): the
// fully discrete solution (holds to rounding) and the continuous one (for
// convergence orders). The mode's eigenvalue is the grid's; how the amplitude
// evolves is the equation's (Eq::mode_factor, Eq::continuous_factor).
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
// Neumann faces, and a periodic axis needs an even mode number; an equation
// second order in time also needs v0 = 0.
inline std::string mode_problem(const Problem& p) {
  const InitialCondition& ic = p.initial;
  if (ic.type != InitialType::sine && ic.type != InitialType::cosine)
    return "the initial condition is not a sine/cosine mode";
  const BoundaryType wanted = ic.type == InitialType::sine ? BoundaryType::dirichlet : BoundaryType::neumann;
  for (int a = 0; a < p.dims; ++a) {
    if (p.periodic[a]) {
      if (ic.modes[a] % 2 != 0) return std::string("periodic axis ") + axis_names[a] + " needs an even mode number";
      continue;
    }
    for (const auto& f : p.faces[a])
      if (f.type != wanted || f.value != 0)
        return std::string("axis ") + axis_names[a] + " needs homogeneous " + to_string(wanted) + " faces for a " +
               to_string(ic.type) + " mode";
  }
  if (p.levels() == 2 && p.velocity && !(p.velocity->type == InitialType::constant && p.velocity->value == 0))
    return std::string("the exact ") + to_string(p.equation) + " solution assumes v0 = 0";
  return "";
}

// S: the discrete Laplacian's eigenvalue for the mode; lambda: the continuous one (-|k pi / L|^2).
inline double discrete_eigenvalue(const Problem& p) {
  double S = 0;
  for (int a = 0; a < p.dims; ++a) {
    const double h = p.spacing[a];
    S += symbol(p.radius, p.initial.modes[a] * pi * h / p.length[a]) / (h * h);
  }
  return S;
}
inline double continuous_eigenvalue(const Problem& p) {
  double lambda = 0;
  for (int a = 0; a < p.dims; ++a) {
    const double k = p.initial.modes[a] * pi / p.length[a];
    lambda -= k * k;
  }
  return lambda;
}

// The mode's amplitude factor after n steps, fully discrete (heat: g^n with
// g = 1 + alpha*dt*S; the wave with v0 = 0: cos(n*theta), cos(theta) = 1 + (c*dt)^2*S/2).
inline double discrete_factor(const Problem& p, long n) {
  return with_equation(p.equation,
                       [&]<class Eq>() { return Eq::mode_factor(p.coefficients, p.dt, discrete_eigenvalue(p), n); });
}

// ... and of the continuous solution at time t.
inline double continuous_factor(const Problem& p, double t) {
  return with_equation(p.equation,
                       [&]<class Eq>() { return Eq::continuous_factor(p.coefficients, continuous_eigenvalue(p), t); });
}

}  // namespace heatwave::analytic
