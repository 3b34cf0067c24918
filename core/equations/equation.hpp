#pragma once
// What every equation type (heat.hpp, wave.hpp, ...) is made of. An equation
// type is a struct of static facts and functions, read at compile time by the
// kernels (templated on it) and at run time through EquationInfo
// (equations.hpp). What takes the problem's Coefficients is host code, defined
// in the equation's .cpp (heat.cpp, ...): the kernels include these headers.
//   name, summary                    the config's `equation:` value, the math
//   levels, level_names              field levels a step reads: u^n (1), or u^n and u^{n-1} (2);
//                                    their checkpoint/output dataset names
//   coefficients                     the config keys it takes (CoefficientSpec)
//   stability_number/limit/rule      the von Neumann limit dt must respect
//   Update<Real>                     the time update of one point from lap(u^n):
//                                    step(u, u_prev, lap), start(u, v0, lap) (first step);
//                                    at(values, dt) from the coefficients' values
//                                    (make_update: from a problem's Coefficients)
//   conserved, has_energy, energy_c2 what its diagnostics watch
//   mode_factor, continuous_factor   the exact amplitude of a Laplacian eigenmode
#include "core/hd.hpp"

namespace heatwave {

// A coefficient an equation takes from the config (a top-level key).
struct CoefficientSpec {
  const char* key;
  double fallback;    // when the config does not give it
  bool zero_allowed;  // > 0 required, or >= 0
  const char* meaning;
};

// The coefficients of a problem by name (core/equations/coefficients.hpp):
// what the host facts take. An equation's header declares them and its .cpp
// defines them, so that device code sees the type without host-only headers.
class Coefficients;

// What the diagnostics watch: the trapezoid mean (heat, with periodic or
// zero-flux faces), the discrete energy (wave), or an energy that may only
// decrease (damped wave).
enum class Conserved { mean, energy, decaying_energy };

}  // namespace heatwave
