#pragma once
// Manufactured solutions for media and sources (docs/validation.md, the
// `manufactured` check): u_exact, the coefficient (heat: alpha, wave: c) and
// the matching source in closed form, each source f(t) q(x) with one of the
// config's time functions, so that a run through `material:`, `sources:` and
// `initial:`/`velocity:` files has a known answer on every grid.
//
// Per axis the solution is a shape the faces keep exact: sin(pi x/L) between
// homogeneous Dirichlet faces (odd about them, as the ghost rule), cos(pi x/L)
// between homogeneous Neumann faces (even), sin(2 pi x/L) on a periodic axis.
//   heat: steady, u = X(x), q = -div(alpha grad X), time `constant` (no time error at all);
//   wave: u = sin(w t) X(x), u0 = 0, v0 = w X, q = -w^2 X - c^2 lap X, time `sine`,
//         w = 2 pi f with f = 1/(4 t_end), so that u(t_end) = X.
// Problems:
//   smooth:  k = k0 (1 + 1/2 prod_a cos(k_a x_a)), k_a = pi/L_a (2 pi/L_a on a
//            periodic axis): even about every face, as the coefficients' mirror
//            rule, so smooth past them too: order 2 * radius;
//   skewed:  k = k0 (1 + sum_a x_a/(4 L_a) + 1/2 prod_a x_a/L_a) over the axes
//            that are not periodic: no symmetry about any such face (the
//            issue's alpha = 1 + xy/2, with a slope at every face), so its
//            ghosts must continue it (docs/design.md, "Coefficients past the
//            faces"): order 2 * radius;
//   layered: k = k0 below x_I, 4 k0 above, x_I = L/2 + h/2 midway between two
//            grid points on every grid. Heat: X continuous with a continuous
//            flux alpha X' (X = (psi - psi(x_I))/alpha + K), which the harmonic
//            face coefficient carries exactly: order 2 at least. Wave: c(x)^2
//            lap u is per point, so X stays smooth: order 2 * radius.
#include <array>
#include <string>
#include <utility>

#include "solver/problem.hpp"

namespace heatwave::validation {

enum class ManufacturedKind { smooth, skewed, layered };
inline constexpr std::array<std::pair<ManufacturedKind, const char*>, 3> manufactured_names{
    {{ManufacturedKind::smooth, "smooth"}, {ManufacturedKind::skewed, "skewed"}, {ManufacturedKind::layered, "layered"}}};

// A ladder's orders must lie within the tolerance of `order`, or (at_least) not below it.
struct ExpectedOrder {
  double order = 2;
  bool at_least = false;
};

using Point = std::array<double, 3>;

class Manufactured {
 public:
  // Why `kind` cannot be manufactured on this problem ("" when it can).
  static std::string unsupported(ManufacturedKind kind, const Problem& p);
  static ExpectedOrder expected(ManufacturedKind kind, const Problem& p);

  // On the grid of `p` (the layered interface depends on it), for a run to t_end.
  Manufactured(ManufacturedKind kind, const Problem& p, double t_end);

  ManufacturedKind kind() const { return kind_; }
  const char* coefficient_key() const { return heat_ ? "alpha" : "c"; }
  double coefficient(const Point& x) const;
  double source(const Point& x) const;  // q(x)
  TimeFunction time() const;            // f(t)
  double exact(const Point& x, double t) const;
  double initial(const Point& x) const { return exact(x, 0); }
  double velocity(const Point& x) const;  // the wave's v0
  // The layered coefficient as the config's `type: layers` medium.
  Medium layers() const;

 private:
  struct Shape {  // one axis: phi(x) = sin or cos(k x); phi'' = -k^2 phi
    bool cosine = false;
    double k = 0;
    double value(double x) const;
    double slope(double x) const;
  };
  double shape_product(const Point& x, int skip) const;  // prod of phi_a over the axes but `skip`
  double coefficient_slope(const Point& x, int a) const;  // dk/dx_a (smooth, skewed)
  double psi(double x) const;                            // layered heat: the flux potential along x
  double psi_curvature(double x) const;
  double profile(double x) const;  // layered heat: X along x

  ManufacturedKind kind_;
  bool heat_;
  int dims_;
  double k0_;
  std::array<double, 3> length_{};
  std::array<Shape, 3> shapes_{};
  std::array<bool, 3> periodic_{};
  double omega_ = 0;                                   // wave
  double interface_ = 0, below_ = 0, above_ = 0;       // layered
  bool dirichlet_x_ = false;                           // layered heat: psi's kind
  double slope_ = 0, psi_interface_ = 0, offset_ = 0;  // layered heat: m, psi(x_I), K
};

}  // namespace heatwave::validation
