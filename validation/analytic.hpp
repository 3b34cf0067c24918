#pragma once
// Exact answers (docs/design.md, "Exact answers"): for sine/cosine modes the
// fully discrete solution (holds to rounding) and the continuous one (for
// convergence orders); for linear fields with matching faces, the steady state. The mode's eigenvalue is the grid's;
// how the amplitude evolves is the equation's (Eq::mode_factor, Eq::continuous_factor).
#include <algorithm>
#include <cmath>
#include <string>

#include "solver/problem.hpp"

namespace heatwave::analytic {

inline constexpr double pi = 3.14159265358979323846;

// s(p): the symbol of the radius-r second difference at phase p = k*pi*h/L.
// Written out here, apart from the solver's weights (core/central_difference.hpp).
inline double symbol(int radius, double p) {
  using std::cos;
  switch (radius) {
    case 1:
      return 2 * cos(p) - 2;
    case 2:
      return (-2 * cos(2 * p) + 32 * cos(p) - 30) / 12;
    case 3:
      return (2 * cos(3 * p) - 27 * cos(2 * p) + 270 * cos(p) - 245) / 90;
    default:
      return (-18 * cos(4 * p) + 256 * cos(3 * p) - 2016 * cos(2 * p) + 16128 * cos(p) - 14350) / 5040;
  }
}

// Why `ic` is not an exact mode of this problem's grid and faces ("" if it
// is): sine modes need homogeneous Dirichlet faces, cosine modes homogeneous
// Neumann faces, and a periodic axis needs an even mode number.
inline std::string mode_shape_problem(const Problem& p, const InitialCondition& ic) {
  if (ic.type != InitialType::sine && ic.type != InitialType::cosine) return "is not a sine/cosine mode";
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
  return "";
}

inline bool is_zero(const InitialCondition& ic) { return ic.type == InitialType::constant && ic.value == 0; }
inline bool zero_velocity(const Problem& p) { return p.levels() == 1 || !p.velocity || is_zero(*p.velocity); }

// Why the problem is not a sine/cosine mode in u0 with v0 = 0 ("" if it is):
// the case with a continuous solution too (convergence orders).
inline std::string mode_problem(const Problem& p) {
  if (std::string why = mode_shape_problem(p, p.initial); !why.empty()) return "the initial condition " + why;
  if (!zero_velocity(p)) return std::string("the exact ") + to_string(p.equation) + " solution assumes v0 = 0";
  return "";
}

// Why a linear u0 (v0 = 0) is not a steady state of this problem ("" if it
// is): the discrete Laplacian of a linear field is zero, and the ghost rules
// extend it exactly when every Dirichlet face holds its value (so the field is
// constant on that face) and every Neumann face its outward slope.
inline std::string linear_problem(const Problem& p) {
  const InitialCondition& ic = p.initial;
  if (ic.type != InitialType::linear) return "the initial condition is not linear";
  if (!zero_velocity(p)) return "a linear steady state needs v0 = 0";
  double scale = std::abs(ic.value);
  for (int a = 0; a < p.dims; ++a) scale += std::abs(ic.gradient[a]) * p.length[a];
  const auto differs = [&](double x, double y) { return std::abs(x - y) > 1e-12 * std::max(scale, 1.0); };
  for (int a = 0; a < p.dims; ++a) {
    const std::string axis = std::string("axis ") + axis_names[a];
    if (p.periodic[a]) {
      if (ic.gradient[a] != 0) return "periodic " + axis + " needs a zero gradient";
      continue;
    }
    for (int side = 0; side < 2; ++side) {
      const BoundaryFace& f = p.faces[a][side];
      const std::string face = std::string(axis_names[a]) + (side ? "_high" : "_low");
      if (f.type == BoundaryType::neumann && differs(f.value, side ? ic.gradient[a] : -ic.gradient[a]))
        return "face " + face + " needs the Neumann value (outward slope) " +
               std::to_string(side ? ic.gradient[a] : -ic.gradient[a]);
      if (f.type == BoundaryType::dirichlet) {
        for (int b = 0; b < p.dims; ++b)
          if (b != a && ic.gradient[b] != 0)
            return "face " + face + " is Dirichlet, so the gradient along the other axes must be zero";
        const double on_face = ic.value + (side ? ic.gradient[a] * p.length[a] : 0.0);
        if (differs(f.value, on_face))
          return "face " + face + " needs the Dirichlet value " + std::to_string(on_face) + " (u on that face)";
      }
    }
  }
  return "";
}

// The exact discrete solutions the suite checks, each u^n = factor(n) * shape(x):
// a mode in u0 (v0 = 0), a mode in v0 (u0 = 0), or a linear steady state.
enum class ExactKind { displacement_mode, velocity_mode, steady_linear };

// Which of them the initial state asks for (whether it qualifies: exact_problem).
inline ExactKind exact_kind(const Problem& p) {
  if (p.initial.type == InitialType::linear) return ExactKind::steady_linear;
  if (p.levels() == 2 && p.velocity && is_zero(p.initial) && !is_zero(*p.velocity)) return ExactKind::velocity_mode;
  return ExactKind::displacement_mode;
}

// Why the problem does not qualify for its kind ("" if it does).
inline std::string exact_problem(const Problem& p) {
  switch (exact_kind(p)) {
    case ExactKind::steady_linear:
      return linear_problem(p);
    case ExactKind::velocity_mode:
      if (std::string why = mode_shape_problem(p, *p.velocity); !why.empty()) return "the velocity " + why;
      return "";
    case ExactKind::displacement_mode:
      return mode_problem(p);
  }
  return "";
}

// The field the solution is a multiple of.
inline const InitialCondition& exact_shape(const Problem& p) {
  return exact_kind(p) == ExactKind::velocity_mode ? *p.velocity : p.initial;
}

// S: the discrete Laplacian's eigenvalue for the mode; lambda: the continuous one (-|k pi / L|^2).
inline double discrete_eigenvalue(const Problem& p, const InitialCondition& mode) {
  double S = 0;
  for (int a = 0; a < p.dims; ++a) {
    const double h = p.spacing[a];
    S += symbol(p.radius, mode.modes[a] * pi * h / p.length[a]) / (h * h);
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

// The u0 mode's amplitude factor after n steps, fully discrete (heat: g^n with
// g = 1 + alpha*dt*S; the wave with v0 = 0: cos(n*theta), cos(theta) = 1 + (c*dt)^2*S/2).
inline double discrete_factor(const Problem& p, long n) {
  return with_equation(p.equation, [&]<class Eq>() {
    return Eq::mode_factor(p.coefficients, p.dt, discrete_eigenvalue(p, p.initial), n);
  });
}

// The factor of exact_shape(p) in u^n (a velocity mode's is the wave's
// dt*sin(n*theta)/sin(theta), or the damped wave's; a steady state's is 1).
inline double exact_factor(const Problem& p, long n) {
  switch (exact_kind(p)) {
    case ExactKind::steady_linear:
      return 1;
    case ExactKind::displacement_mode:
      return discrete_factor(p, n);
    case ExactKind::velocity_mode:
      return with_equation(p.equation, [&]<class Eq>() {
        if constexpr (Eq::levels == 2)
          return Eq::velocity_mode_factor(p.coefficients, p.dt, discrete_eigenvalue(p, *p.velocity), n);
        else
          return 0.0;  // unreachable: a first-order equation has no velocity mode
      });
  }
  return 0;
}

// ... and of the continuous solution at time t.
inline double continuous_factor(const Problem& p, double t) {
  return with_equation(p.equation,
                       [&]<class Eq>() { return Eq::continuous_factor(p.coefficients, continuous_eigenvalue(p), t); });
}

}  // namespace heatwave::analytic
