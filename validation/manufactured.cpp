#include "validation/manufactured.hpp"

#include <cmath>

namespace heatwave::validation {

namespace {

constexpr double pi = 3.14159265358979323846;
constexpr double wiggle = 0.5;    // smooth: k = k0 (1 + wiggle prod_a cos(k_a x_a))
constexpr double contrast = 4.0;  // layered: k0 below the interface, contrast * k0 above

}  // namespace

std::string Manufactured::unsupported(ManufacturedKind kind, const Problem& p) {
  if (p.equation != Equation::heat && p.equation != Equation::wave)
    return "it is made for heat and wave (the damped wave's source would need cos(2 pi f t), which no time "
           "function gives)";
  if (!p.material.empty() || !p.sources.empty())
    return "it sets 'material' and 'sources' itself: remove them from the case's config";
  for (int a = 0; a < p.dims; ++a) {
    if (p.periodic[a]) continue;
    const auto& f = p.faces[a];
    if (f[0].type != f[1].type || f[0].value != 0 || f[1].value != 0)
      return std::string("axis ") + axis_names[a] +
             " needs homogeneous faces of one type (dirichlet or neumann, value 0) or periodic faces";
  }
  if (kind == ManufacturedKind::layered && p.periodic[0])
    return "the layers stack along x, which must not be periodic (the wrap would be a second interface)";
  return "";
}

ExpectedOrder Manufactured::expected(ManufacturedKind kind, const Problem& p) {
  // Only the heat's flux crosses an interface; the wave's c(x)^2 is a factor per point.
  if (kind == ManufacturedKind::layered && p.equation == Equation::heat) return {2.0, true};
  return {2.0 * p.radius, false};
}

Manufactured::Manufactured(ManufacturedKind kind, const Problem& p, double t_end)
    : kind_(kind), heat_(p.equation == Equation::heat), dims_(p.dims), k0_(p.coefficients.get(heat_ ? "alpha" : "c")) {
  for (int a = 0; a < dims_; ++a) {
    length_[a] = p.length[a];
    periodic_[a] = p.periodic[a];
    const bool neumann = !p.periodic[a] && p.faces[a][0].type == BoundaryType::neumann;
    // The smooth coefficient's cos(k x) takes the same k: cos(pi x/L) is even
    // about both faces (not periodic), cos(2 pi x/L) is even and periodic.
    shapes_[a] = {neumann, (p.periodic[a] ? 2 : 1) * pi / p.length[a]};
  }
  if (!heat_) omega_ = 2 * pi / (4 * t_end);  // a quarter period: u(t_end) = X
  if (kind_ != ManufacturedKind::layered) return;
  // Midway between the grid points around the middle of x, on every grid.
  const long intervals = p.points[0] - 1;
  interface_ = (static_cast<double>(intervals / 2) + 0.5) * p.spacing[0];
  below_ = k0_, above_ = contrast * k0_;
  if (!heat_) return;
  // X = (psi - psi(x_I))/alpha + K is continuous and alpha X' = psi' is too.
  // Neumann x faces: psi = cos(pi x/L), K = 0. Dirichlet: psi = sin(pi x/L) + m x/L
  // with m and K such that X(0) = X(L) = 0 (and X stays odd about both faces).
  dirichlet_x_ = !shapes_[0].cosine;
  const double L = length_[0], zeta = interface_ / L;
  if (dirichlet_x_) {
    const double r = above_ / below_, s = std::sin(pi * zeta);
    slope_ = s * (1 - r) / (1 - zeta * (1 - r));
  }
  psi_interface_ = psi(interface_);
  offset_ = dirichlet_x_ ? psi_interface_ / below_ : 0.0;
}

double Manufactured::Shape::value(double x) const { return cosine ? std::cos(k * x) : std::sin(k * x); }
double Manufactured::Shape::slope(double x) const { return cosine ? -k * std::sin(k * x) : k * std::cos(k * x); }

double Manufactured::shape_product(const Point& x, int skip) const {
  double v = 1;
  for (int a = 0; a < dims_; ++a)
    if (a != skip) v *= shapes_[a].value(x[a]);
  return v;
}

double Manufactured::psi(double x) const {
  const double L = length_[0];
  return dirichlet_x_ ? std::sin(pi * x / L) + slope_ * x / L : std::cos(pi * x / L);
}

double Manufactured::psi_curvature(double x) const {
  const double L = length_[0], k = pi / L;
  return -k * k * (dirichlet_x_ ? std::sin(k * x) : std::cos(k * x));
}

double Manufactured::profile(double x) const {
  return (psi(x) - psi_interface_) / (x < interface_ ? below_ : above_) + offset_;
}

double Manufactured::coefficient(const Point& x) const {
  if (kind_ == ManufacturedKind::layered) return x[0] < interface_ ? below_ : above_;
  if (kind_ == ManufacturedKind::skewed) {
    double sum = 0, product = 1;
    for (int a = 0; a < dims_; ++a)
      if (!periodic_[a]) sum += x[a] / (4 * length_[a]), product *= x[a] / length_[a];
    return k0_ * (1 + sum + 0.5 * product);
  }
  double v = 1;
  for (int a = 0; a < dims_; ++a) v *= std::cos(shapes_[a].k * x[a]);
  return k0_ * (1 + wiggle * v);
}

double Manufactured::coefficient_slope(const Point& x, int a) const {
  if (kind_ == ManufacturedKind::skewed) {
    if (periodic_[a]) return 0;
    double product = 1 / length_[a];
    for (int b = 0; b < dims_; ++b)
      if (b != a && !periodic_[b]) product *= x[b] / length_[b];
    return k0_ * (1 / (4 * length_[a]) + 0.5 * product);
  }
  double dk = -k0_ * wiggle * shapes_[a].k * std::sin(shapes_[a].k * x[a]);
  for (int b = 0; b < dims_; ++b)
    if (b != a) dk *= std::cos(shapes_[b].k * x[b]);
  return dk;
}

double Manufactured::source(const Point& x) const {
  double k2 = 0;  // lap of a product of shapes: -k2 times it
  for (int a = 0; a < dims_; ++a) k2 += shapes_[a].k * shapes_[a].k;
  const double k = coefficient(x);
  if (!heat_) return (-omega_ * omega_ + k * k * k2) * shape_product(x, -1);  // u_tt - c^2 lap u at sin(w t) = 1
  if (kind_ == ManufacturedKind::layered) {
    // -div(alpha grad u) = -psi'' P + alpha X(x) k2_perp P, P the shapes across x.
    const double across = shape_product(x, 0), k2_across = k2 - shapes_[0].k * shapes_[0].k;
    return -psi_curvature(x[0]) * across + k * profile(x[0]) * k2_across * across;
  }
  // -div(alpha grad X) = -grad alpha . grad X - alpha lap X.
  double flux = 0;
  for (int a = 0; a < dims_; ++a) flux += coefficient_slope(x, a) * shapes_[a].slope(x[a]) * shape_product(x, a);
  return -flux + k * k2 * shape_product(x, -1);
}

TimeFunction Manufactured::time() const {
  if (heat_) return {};
  TimeFunction f;
  f.type = TimeFunctionType::sine;
  f.frequency = omega_ / (2 * pi);
  return f;
}

double Manufactured::exact(const Point& x, double t) const {
  if (!heat_) return std::sin(omega_ * t) * shape_product(x, -1);
  if (kind_ == ManufacturedKind::layered) return profile(x[0]) * shape_product(x, 0);
  return shape_product(x, -1);
}

double Manufactured::velocity(const Point& x) const { return heat_ ? 0.0 : omega_ * shape_product(x, -1); }

Medium Manufactured::layers() const {
  Medium m;
  m.type = MediumType::layers;
  m.axis = 0;
  m.interfaces = {interface_};
  m.values = {below_, above_};
  return m;
}

}  // namespace heatwave::validation
