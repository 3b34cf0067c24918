// The Kokkos reference solver. Written to be read against the numerics
// contract (docs/design.md), not to be fast: one 3D View per field level (a 2D problem has a single z plane), the
// stencils spelled out as formulas, and each boundary rule written where it is
// applied. Nothing here comes from solver/stencil.hpp, solver/domain.hpp or
// solver/media.hpp: media and sources ("Media and sources") are re-derived
// here from their definitions in the Problem, files read with io/hdf5.hpp.
#include "validation/reference.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/hdf5.hpp"
#include "solver/initial.hpp"

namespace heatwave::reference {
namespace {

using ExecutionSpace = Kokkos::DefaultExecutionSpace;
using Range3 = Kokkos::MDRangePolicy<ExecutionSpace, Kokkos::Rank<3>>;
// A coefficient or a source's spatial part over the storage, in double.
using Coefficient = Kokkos::View<double***, Kokkos::LayoutLeft, ExecutionSpace>;

constexpr double pi = 3.14159265358979323846;

void ensure_kokkos() {
  if (Kokkos::is_initialized()) return;
  Kokkos::initialize();
  std::atexit([] { Kokkos::finalize(); });
}

// One face's boundary condition as the reference reads it.
struct Face {
  BoundaryType type = BoundaryType::dirichlet;
  double value = 0;  // dirichlet: g; neumann: q = du/dn (outward normal derivative)
};

// The grid: owned points per axis and `ghosts` extra layers on both sides of
// every active axis. Storage index = point index + ghosts.
struct Grid {
  int dims = 2, radius = 1;
  long n[3] = {1, 1, 1};
  int ghosts[3] = {0, 0, 0};
  double h[3] = {1, 1, 1};
  bool periodic[3] = {false, false, false};
  Face face[3][2];

  explicit Grid(const Problem& p) : dims(p.dims), radius(p.radius) {
    for (int a = 0; a < dims; ++a) {
      periodic[a] = p.faces[a][0].type == BoundaryType::periodic;
      n[a] = p.points[a];
      ghosts[a] = radius;
      // Vertex-centred: both faces are grid points, except that a periodic
      // axis drops the duplicate of its first point.
      h[a] = p.length[a] / static_cast<double>(periodic[a] ? n[a] : n[a] - 1);
      for (int side = 0; side < 2; ++side) face[a][side] = {p.faces[a][side].type, p.faces[a][side].value};
    }
  }
  long extent(int a) const { return n[a] + 2 * ghosts[a]; }
  bool dirichlet(int a, int side) const { return a < dims && face[a][side].type == BoundaryType::dirichlet; }
  long points() const { return n[0] * n[1] * n[2]; }
  long linear(const long g[3]) const { return g[0] + n[0] * (g[1] + n[1] * g[2]); }
  // The grid point whose coefficient a point index i (maybe past a face)
  // takes along axis a: the periodic image, or the mirror image about the
  // boundary point (even reflection).
  long image(int a, long i) const {
    if (periodic[a]) return ((i % n[a]) + n[a]) % n[a];
    if (n[a] == 1) return 0;
    while (i < 0 || i > n[a] - 1) i = i < 0 ? -i : 2 * (n[a] - 1) - i;
    return i;
  }
};

// f(t) of a source's time function (core/numerics.hpp).
double time_function(const TimeFunction& f, double t) {
  switch (f.type) {
    case TimeFunctionType::constant:
      return 1;
    case TimeFunctionType::ricker: {
      const double x = pi * f.frequency * (t - f.delay);
      return (1 - 2 * x * x) * std::exp(-x * x);
    }
    case TimeFunctionType::sine:
      return std::sin(2 * pi * f.frequency * t);
    case TimeFunctionType::gaussian:
      return std::exp(-(t - f.delay) * (t - f.delay) / (2 * f.width * f.width));
  }
  return 0;
}

// A dataset of the grid's shape, x fastest (the file holds z, y, x).
std::vector<double> read_grid_field(const std::string& path, const std::string& dataset, const Grid& grid) {
  const hdf5::Reader file(path);
  hdf5::Block all;
  for (int a = grid.dims - 1; a >= 0; --a) all.global.push_back(static_cast<std::uint64_t>(grid.n[a]));
  all.offset.assign(all.global.size(), 0);
  all.count = all.global;
  std::vector<double> values(static_cast<std::size_t>(grid.points()));
  file.read(dataset, all, values.data());
  return values;
}

// A layered medium's value at a position along its axis: values[i] between
// interfaces[i-1] and interfaces[i]; a point on an interface is past it, so
// it takes the upper value (before the first interface, the first layer).
double layer_value(const Medium& m, double position) {
  std::size_t layer = 0;
  while (layer < m.interfaces.size() && position >= m.interfaces[layer]) ++layer;
  return m.values[layer];
}

// A medium's value at every grid point.
std::vector<double> medium_values(const Medium& m, const Grid& grid) {
  if (m.type == MediumType::file) return read_grid_field(m.path, m.dataset, grid);
  std::vector<double> values(static_cast<std::size_t>(grid.points()), m.value);
  if (m.type == MediumType::constant) return values;
  for (long z = 0; z < grid.n[2]; ++z)
    for (long y = 0; y < grid.n[1]; ++y)
      for (long x = 0; x < grid.n[0]; ++x) {
        const long g[3] = {x, y, z};
        values[static_cast<std::size_t>(grid.linear(g))] =
            layer_value(m, static_cast<double>(g[m.axis]) * grid.h[m.axis]);
      }
  return values;
}

// The 2^D grid points around a position and their multilinear shares (point
// sources, receivers). A position on a non-periodic high face has all its
// share on the face point; a periodic axis wraps past its last point.
struct Around {
  long below[3] = {0, 0, 0}, above[3] = {0, 0, 0};
  double share_below[3] = {1, 1, 1}, share_above[3] = {0, 0, 0};

  Around(const std::array<double, 3>& x, const Grid& grid) {
    for (int a = 0; a < grid.dims; ++a) {
      const double at = x[a] / grid.h[a];
      below[a] = static_cast<long>(std::floor(at));
      double frac = at - static_cast<double>(below[a]);
      if (!grid.periodic[a] && below[a] >= grid.n[a] - 1) below[a] = grid.n[a] - 1, frac = 0;
      if (grid.periodic[a]) below[a] %= grid.n[a];
      above[a] = grid.periodic[a] ? (below[a] + 1) % grid.n[a] : below[a] + 1;
      share_below[a] = 1 - frac, share_above[a] = frac;
    }
  }
  // Corner c (bit a set: the point above along axis a): its grid index in g, its share.
  double corner(int c, const Grid& grid, long g[3]) const {
    double share = 1;
    for (int a = 0; a < grid.dims; ++a) {
      const bool up = (c >> a) & 1;
      g[a] = up ? above[a] : below[a];
      share *= up ? share_above[a] : share_below[a];
    }
    return share;
  }
};

// A source's spatial part q(x) at every grid point.
std::vector<double> source_values(const Source& s, const Grid& grid) {
  if (s.type == SourceType::field) return read_grid_field(s.path, s.dataset, grid);
  std::vector<double> q(static_cast<std::size_t>(grid.points()), 0.0);
  if (s.type == SourceType::gaussian) {
    for (long z = 0; z < grid.n[2]; ++z)
      for (long y = 0; y < grid.n[1]; ++y)
        for (long x = 0; x < grid.n[0]; ++x) {
          const long g[3] = {x, y, z};
          double r2 = 0;
          for (int a = 0; a < grid.dims; ++a)
            r2 += (static_cast<double>(g[a]) * grid.h[a] - s.center[a]) *
                  (static_cast<double>(g[a]) * grid.h[a] - s.center[a]);
          q[static_cast<std::size_t>(grid.linear(g))] = s.amplitude * std::exp(-r2 / (2 * s.width * s.width));
        }
    return q;
  }
  // A point source: a delta of strength A, spread with multilinear weights
  // over the 2^D grid points around it, per unit cell volume, and divided by
  // each point's trapezoid weight so that the trapezoid integral of q is A.
  double volume = 1;
  for (int a = 0; a < grid.dims; ++a) volume *= grid.h[a];
  const Around around(s.center, grid);
  for (int corner = 0; corner < (1 << grid.dims); ++corner) {
    long g[3] = {0, 0, 0};
    double weight = s.amplitude / volume * around.corner(corner, grid, g);
    for (int a = 0; a < grid.dims; ++a)
      if (!grid.periodic[a] && (g[a] == 0 || g[a] == grid.n[a] - 1)) weight *= 2;  // trapezoid weight 1/2
    if (weight != 0) q[static_cast<std::size_t>(grid.linear(g))] += weight;
  }
  return q;
}

template <class Real>
class Solver {
 public:
  using Field = Kokkos::View<Real***, Kokkos::LayoutLeft, ExecutionSpace>;  // LayoutLeft: x fastest

  Solver(const Problem& p) : problem_(p), grid_(p) {
    for (Field* f : {&u_, &u_next_, &u_prev_})
      *f = Field("reference field", grid_.extent(0), grid_.extent(1), grid_.extent(2));
    // Heat with alpha in the material takes the flux form; the wave's c and
    // gamma are per-point factors of its update, constant or not.
    flux_form_ = !wave() && problem_.material.count("alpha") > 0;
    if (flux_form_) alpha_ = coefficient("alpha");
    if (wave()) c_ = coefficient("c");
    if (damped()) gamma_ = coefficient("gamma");
    for (const Source& source : problem_.sources) sources_.push_back(with_ghosts(source_values(source, grid_)));
    if (!sources_.empty())
      source_sum_ = Coefficient("reference source sum", grid_.extent(0), grid_.extent(1), grid_.extent(2));
  }

  // u0, and for the wave v0 in u_prev (where the Taylor start step reads it).
  void initialize() {
    set_initial(u_, problem_.initial);
    fill_ghosts(u_);
    if (wave()) set_initial(u_prev_, problem_.velocity.value_or(InitialCondition{InitialType::constant}));
    step_ = 0;
  }

  void advance_to(long step) {
    while (step_ < step) {
      wave() ? wave_step() : heat_step();
      ++step_;
    }
  }

  Fields fields() const {
    Fields f;
    f.step = step_;
    f.current = owned(u_);
    if (wave()) f.previous = owned(u_prev_);
    return f;
  }

  // A level at each position: the sum of share x value over the points
  // around it. One host copy of the level serves every position.
  std::vector<double> sample(const std::vector<Around>& positions, bool previous) const {
    const auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), previous ? u_prev_ : u_);
    std::vector<double> values;
    for (const Around& around : positions) {
      double value = 0;
      for (int corner = 0; corner < (1 << grid_.dims); ++corner) {
        long g[3] = {0, 0, 0};
        const double share = around.corner(corner, grid_, g);
        if (share != 0) value += share * u(g[0] + grid_.ghosts[0], g[1] + grid_.ghosts[1], g[2] + grid_.ghosts[2]);
      }
      values.push_back(value);
    }
    return values;
  }
  const Grid& grid() const { return grid_; }

 private:
  // Second order in time (wave, damped wave): u^{n-1} is a level of its own.
  bool wave() const { return problem_.equation != Equation::heat; }
  bool damped() const { return problem_.equation == Equation::damped_wave; }

  // A coefficient at every grid point: its medium, or its constant.
  std::vector<double> coefficient_values(const char* key) const {
    const auto it = problem_.material.find(key);
    if (it == problem_.material.end())
      return std::vector<double>(static_cast<std::size_t>(grid_.points()), problem_.coefficients.get(key));
    return medium_values(it->second, grid_);
  }

  // Absorbing faces (docs/design.md, "Absorbing faces"), in this solver's own
  // terms: inside a face's layer of w points the damping grows by
  // 12 c_max / (w h) times the square of the depth into the layer, from 0 at
  // its inner edge to 1 at the wall (and on past it, for a point beyond the
  // face); layers of two faces add up.
  double absorbing_extra(const long g[3]) const {
    const double c_max = problem_.coefficients.get("c");
    double extra = 0;
    for (int a = 0; a < grid_.dims; ++a)
      for (int side = 0; side < 2; ++side) {
        const long w = problem_.faces[a][side].absorbing;
        const long inside = side == 0 ? g[a] : grid_.n[a] - 1 - g[a];  // points from the wall
        if (w > 0 && inside < w) {
          const double depth = static_cast<double>(w - inside) / static_cast<double>(w);
          extra += 12.0 * c_max / (static_cast<double>(w) * grid_.h[a]) * depth * depth;
        }
      }
    return extra;
  }

  // A coefficient over the whole storage, ghosts past the faces too
  // (docs/design.md, "Coefficients past the faces"), in this solver's own
  // words: a periodic axis wraps; past another face a constant is itself, a
  // layered medium is the layer where the ghost lies, and a file's data is
  // continued by the polynomial through the 2r+1 grid points nearest the
  // face, at least 5 (its Lagrange form, axis by axis), never below half the
  // data's least value.
  Coefficient coefficient(const char* key) const {
    const auto it = problem_.material.find(key);
    const Medium* medium = it == problem_.material.end() ? nullptr : &it->second;
    const std::vector<double> values = coefficient_values(key);
    const double floor = *std::min_element(values.begin(), values.end()) / 2;
    return over_storage([&](long g[3]) {
      for (int a = 0; a < grid_.dims; ++a)
        if (grid_.periodic[a]) g[a] = grid_.image(a, g[a]);
      double v = 0;
      if (medium && medium->type == MediumType::layers) {
        v = layer_value(*medium, static_cast<double>(g[medium->axis]) * grid_.h[medium->axis]);
      } else if (medium && medium->type == MediumType::file) {
        v = std::max(floor, continued(values, g, 0));
      } else {
        v = values[0];  // a constant
      }
      if (std::string(key) == "gamma") v += absorbing_extra(g);
      return v;
    });
  }

  // A field over the whole storage: at(g) at each point, g its global index
  // (negative or past n in the ghosts).
  template <class At>
  Coefficient over_storage(At&& at) const {
    Coefficient k("reference coefficient", grid_.extent(0), grid_.extent(1), grid_.extent(2));
    auto host = Kokkos::create_mirror_view(k);
    for (long z = 0; z < grid_.extent(2); ++z)
      for (long y = 0; y < grid_.extent(1); ++y)
        for (long x = 0; x < grid_.extent(0); ++x) {
          long g[3] = {x - grid_.ghosts[0], y - grid_.ghosts[1], z - grid_.ghosts[2]};
          host(x, y, z) = at(g);
        }
    Kokkos::deep_copy(k, host);
    return k;
  }

  // Grid values at g, continued past a non-periodic face from axis `a` on
  // by the polynomial through the 2r+1 points nearest it, at least 5 (the
  // quartic; weights: Lagrange's).
  double continued(const std::vector<double>& values, long g[3], int a) const {
    for (; a < grid_.dims; ++a)
      if (g[a] < 0 || g[a] >= grid_.n[a]) break;
    if (a == grid_.dims) return values[static_cast<std::size_t>(grid_.linear(g))];
    const long nodes = std::max(5, 2 * grid_.radius + 1);
    const long m = std::min<long>(nodes, grid_.n[a]), first = g[a] < 0 ? 0 : grid_.n[a] - m, at = g[a];
    double sum = 0;
    for (long node = 0; node < m; ++node) {
      double weight = 1;
      for (long other = 0; other < m; ++other)
        if (other != node) weight *= static_cast<double>(at - (first + other)) / static_cast<double>(node - other);
      g[a] = first + node;
      sum += weight * continued(values, g, a + 1);
    }
    g[a] = at;
    return sum;
  }

  // A source's grid-point values over the whole storage: a ghost takes the
  // value of its mirror or periodic image (no step reads it there).
  Coefficient with_ghosts(const std::vector<double>& values) const {
    return over_storage([&](long g[3]) {
      for (int a = 0; a < grid_.dims; ++a) g[a] = grid_.image(a, g[a]);
      return values[static_cast<std::size_t>(grid_.linear(g))];
    });
  }

  // lap(u) at storage point (x, y, z): the 1D second differences summed over
  // the active axes, radius 1 to 4 (order 2 to 8), in this file's own
  // numbers: integer numerators over a common denominator.
  static constexpr double numerators[4][5] = {
      {-2, 1}, {-30, 16, -1}, {-490, 270, -27, 2}, {-14350, 8064, -1008, 128, -9}};
  static constexpr double denominators[4] = {1, 12, 180, 5040};
  struct Laplacian {
    Field u;
    int dims, radius;
    Real inv_h2[3];
    KOKKOS_INLINE_FUNCTION Real operator()(int x, int y, int z) const {
      Real lap = 0;
      for (int a = 0; a < dims; ++a) {
        auto at = [&](int offset) {
          return u(x + (a == 0 ? offset : 0), y + (a == 1 ? offset : 0), z + (a == 2 ? offset : 0));
        };
        Real d2;
        if (radius == 1) {
          d2 = at(-1) - 2 * at(0) + at(1);
        } else if (radius == 2) {
          d2 = (-at(-2) + 16 * at(-1) - 30 * at(0) + 16 * at(1) - at(2)) / 12;
        } else {  // numerators over a common denominator, from the centre out
          d2 = static_cast<Real>(numerators[radius - 1][0]) * at(0);
          for (int j = 1; j <= radius; ++j) d2 += static_cast<Real>(numerators[radius - 1][j]) * (at(-j) + at(j));
          d2 /= static_cast<Real>(denominators[radius - 1]);
        }
        lap += d2 * inv_h2[a];
      }
      return lap;
    }
  };
  Laplacian laplacian(const Field& u) const {
    Laplacian L{u, grid_.dims, grid_.radius, {0, 0, 0}};
    for (int a = 0; a < grid_.dims; ++a) L.inv_h2[a] = static_cast<Real>(1.0 / (grid_.h[a] * grid_.h[a]));
    return L;
  }

  // div(alpha grad u) at storage point (x, y, z) in flux form: from each
  // point j = 1..r apart along an axis a flux c_j/h^2 * 2ab/(a+b) * (u_q - u_p),
  // a and b alpha at the two points (the harmonic mean: the exact
  // conductance of an interface midway); c_j the Laplacian's weights above
  // (r 1: c_1 = 1; r 2: 16/12 and -1/12). Each pair's flux is the same seen
  // from either end.
  struct FluxForm {
    Field u;
    Coefficient alpha;
    int dims, radius;
    double inv_h2[3];
    KOKKOS_INLINE_FUNCTION Real operator()(int x, int y, int z) const {
      const Real centre = u(x, y, z);
      const double here = alpha(x, y, z);
      Real sum = 0;
      for (int a = 0; a < dims; ++a)
        for (int j = 1; j <= radius; ++j) {
          const double c_j = numerators[radius - 1][j] / denominators[radius - 1];
          for (int side = -1; side <= 1; side += 2) {
            const int dx = a == 0 ? side * j : 0, dy = a == 1 ? side * j : 0, dz = a == 2 ? side * j : 0;
            const double there = alpha(x + dx, y + dy, z + dz);
            const Real conductance = static_cast<Real>(c_j * inv_h2[a] * 2 * here * there / (here + there));
            sum += conductance * (u(x + dx, y + dy, z + dz) - centre);
          }
        }
      return sum;
    }
  };
  FluxForm flux_form(const Field& u) const {
    FluxForm D{u, alpha_, grid_.dims, grid_.radius, {0, 0, 0}};
    for (int a = 0; a < grid_.dims; ++a) D.inv_h2[a] = 1.0 / (grid_.h[a] * grid_.h[a]);
    return D;
  }

  // The points a step updates: all owned points except Dirichlet face points,
  // which hold g.
  Range3 interior() const {
    Kokkos::Array<long, 3> lo, hi;
    for (int a = 0; a < 3; ++a) {
      lo[a] = grid_.ghosts[a] + (grid_.dirichlet(a, 0) ? 1 : 0);
      hi[a] = grid_.ghosts[a] + grid_.n[a] - (grid_.dirichlet(a, 1) ? 1 : 0);
    }
    return Range3(lo, hi);
  }

  // Heat, FTCS: u' = u + alpha*dt*lap(u); with alpha in the material
  // u' = u + dt*div(alpha grad u). Then the sources.
  void heat_step() {
    const Field u = u_, next = u_next_;
    if (flux_form_) {
      const FluxForm div = flux_form(u_);
      const Real dt = static_cast<Real>(problem_.dt);
      Kokkos::parallel_for(
          "reference heat flux step", interior(),
          KOKKOS_LAMBDA(int x, int y, int z) { next(x, y, z) = u(x, y, z) + dt * div(x, y, z); });
    } else {
      const Laplacian lap = laplacian(u_);
      const Real alpha_dt = static_cast<Real>(problem_.coefficients.get("alpha") * problem_.dt);
      Kokkos::parallel_for(
          "reference heat step", interior(),
          KOKKOS_LAMBDA(int x, int y, int z) { next(x, y, z) = u(x, y, z) + alpha_dt * lap(x, y, z); });
    }
    add_sources(u_next_);
    std::swap(u_, u_next_);
    fill_ghosts(u_);
  }

  // Wave, leapfrog: u' = 2u - u_prev + (c*dt)^2 lap(u); the first step is the
  // Taylor expansion u' = u + dt*v0 + (c*dt)^2/2 lap(u), with v0 in u_prev.
  // Damped wave: the damping term gamma*u_t taken centred in time,
  //   (u' - 2u + u_prev)/dt^2 + gamma (u' - u_prev)/(2 dt) = c^2 lap(u),
  // solved for u'; the Taylor start uses u_tt(0) = c^2 lap(u0) - gamma v0.
  // c and gamma are each point's own (c(x)^2 lap u: not a flux form).
  // Then the sources.
  void wave_step() {
    const Laplacian lap = laplacian(u_);
    const Field u = u_, prev = u_prev_, next = u_next_;
    const Coefficient c = c_, gamma = gamma_;
    const double dt = problem_.dt;
    const Real dt_r = static_cast<Real>(dt);
    if (step_ == 0 && damped())
      Kokkos::parallel_for(
          "reference damped wave start", interior(), KOKKOS_LAMBDA(int x, int y, int z) {
            const double c_dt = c(x, y, z) * dt;
            const Real half_c2dt2 = static_cast<Real>(0.5 * c_dt * c_dt);
            const Real half_gamma_dt2 = static_cast<Real>(0.5 * gamma(x, y, z) * dt * dt);
            next(x, y, z) =
                u(x, y, z) + dt_r * prev(x, y, z) + half_c2dt2 * lap(x, y, z) - half_gamma_dt2 * prev(x, y, z);
          });
    else if (step_ == 0)
      Kokkos::parallel_for(
          "reference wave start", interior(), KOKKOS_LAMBDA(int x, int y, int z) {
            const double c_dt = c(x, y, z) * dt;
            const Real half_c2dt2 = static_cast<Real>(0.5 * c_dt * c_dt);
            next(x, y, z) = u(x, y, z) + dt_r * prev(x, y, z) + half_c2dt2 * lap(x, y, z);
          });
    else if (damped())
      Kokkos::parallel_for(
          "reference damped wave step", interior(), KOKKOS_LAMBDA(int x, int y, int z) {
            const double c_dt = c(x, y, z) * dt;
            const Real c2dt2 = static_cast<Real>(c_dt * c_dt);
            const Real half_gamma_dt = static_cast<Real>(0.5 * gamma(x, y, z) * dt);
            next(x, y, z) = (2 * u(x, y, z) - prev(x, y, z) + c2dt2 * lap(x, y, z) + half_gamma_dt * prev(x, y, z)) /
                            (1 + half_gamma_dt);
          });
    else
      Kokkos::parallel_for(
          "reference wave step", interior(), KOKKOS_LAMBDA(int x, int y, int z) {
            const double c_dt = c(x, y, z) * dt;
            const Real c2dt2 = static_cast<Real>(c_dt * c_dt);
            next(x, y, z) = 2 * u(x, y, z) - prev(x, y, z) + c2dt2 * lap(x, y, z);
          });
    add_sources(u_next_);
    // u_prev <- u, u <- next; the old u_prev becomes the next scratch buffer.
    std::swap(u_prev_, u_);
    std::swap(u_, u_next_);
    fill_ghosts(u_);
  }

  // After the step, at the points it updated: u' += w s with the source sum
  // s = sum_i f_i(t_n) q_i(x) (config order, t_n the step's start time) and
  // w = dt (heat), dt^2 (wave), dt^2/(1+d) (damped wave, d = gamma(x) dt/2);
  // on the first step of a wave dt^2/2.
  void add_sources(const Field& next) {
    if (sources_.empty()) return;
    const Coefficient s = source_sum_;
    Kokkos::deep_copy(s, 0.0);
    const double t = problem_.time_at(step_);
    for (std::size_t i = 0; i < sources_.size(); ++i) {
      const Coefficient q = sources_[i];
      const double f = time_function(problem_.sources[i].time, t);
      Kokkos::parallel_for(
          "reference source sum", interior(), KOKKOS_LAMBDA(int x, int y, int z) { s(x, y, z) += f * q(x, y, z); });
    }
    const double dt = problem_.dt;
    const bool heat = !wave(), start = wave() && step_ == 0, damped_step = damped() && !start;
    const Coefficient gamma = gamma_;
    Kokkos::parallel_for(
        "reference sources", interior(), KOKKOS_LAMBDA(int x, int y, int z) {
          double weight = dt * dt;
          if (heat) weight = dt;
          if (start) weight = 0.5 * dt * dt;
          if (damped_step) weight = dt * dt / (1 + 0.5 * gamma(x, y, z) * dt);
          next(x, y, z) += static_cast<Real>(weight * s(x, y, z));
        });
  }

  // The boundary, face by face (docs/design.md, "Boundary ghosts"), for the ghost
  // layers j = 1..r outside a face whose boundary point is b:
  //   dirichlet: u(b -+ j) = 2g - u(b +- j), and u(b) = g
  //   neumann:   u(b -+ j) = u(b +- j) + 2*j*h*q     (q = du/dn, outward)
  //   periodic:  u(-j) = u(n-j), u(n-1+j) = u(j-1)
  // Only the owned span of the other axes is filled: the Laplacian is a sum of
  // 1D differences and never reads a ghost corner.
  void fill_ghosts(const Field& u) {
    for (int a = 0; a < grid_.dims; ++a)
      for (int side = 0; side < 2; ++side) {
        const Face face = grid_.face[a][side];
        const long n = grid_.n[a];
        const int g0 = grid_.ghosts[a];
        const double h = grid_.h[a];
        const Real g = static_cast<Real>(face.value);
        Kokkos::Array<long, 3> lo, hi;
        for (int b = 0; b < 3; ++b) lo[b] = grid_.ghosts[b], hi[b] = grid_.ghosts[b] + grid_.n[b];
        if (face.type == BoundaryType::dirichlet) {  // the face point holds g
          lo[a] = g0 + (side == 0 ? 0 : n - 1), hi[a] = lo[a] + 1;
          Kokkos::parallel_for(
              "reference dirichlet face", Range3(lo, hi), KOKKOS_LAMBDA(int x, int y, int z) { u(x, y, z) = g; });
        }
        // Along axis a the range runs over j = 1..r (the ghost distance).
        lo[a] = 1, hi[a] = grid_.radius + 1;
        Kokkos::parallel_for(
            "reference ghosts", Range3(lo, hi), KOKKOS_LAMBDA(int x, int y, int z) {
              int ghost[3] = {x, y, z}, source[3] = {x, y, z};
              const int j = ghost[a];
              const long boundary = side == 0 ? 0 : n - 1;
              const long outward = side == 0 ? -1 : 1;
              ghost[a] = static_cast<int>(g0 + boundary + outward * j);
              if (face.type == BoundaryType::periodic)
                source[a] = static_cast<int>(g0 + (side == 0 ? n - j : j - 1));
              else
                source[a] = static_cast<int>(g0 + boundary - outward * j);
              const Real inside = u(source[0], source[1], source[2]);
              Real value = inside;
              if (face.type == BoundaryType::dirichlet) value = 2 * g - inside;
              if (face.type == BoundaryType::neumann) value = inside + static_cast<Real>(2 * j * h * face.value);
              u(ghost[0], ghost[1], ghost[2]) = value;
            });
      }
    Kokkos::fence();
  }

  // Initial values at the owned points, computed on the host from the shared
  // definition (solver/initial.hpp) and copied to the execution space.
  void set_initial(const Field& u, const InitialCondition& ic) {
    std::array<long, 3> points{grid_.n[0], grid_.n[1], grid_.n[2]};
    std::array<double, 3> spacing{grid_.h[0], grid_.h[1], grid_.h[2]};
    const InitialSpec spec = InitialSpec::make(ic, grid_.dims, points, problem_.length, spacing);
    auto host = Kokkos::create_mirror_view(u);
    for (long z = 0; z < grid_.n[2]; ++z)
      for (long y = 0; y < grid_.n[1]; ++y)
        for (long x = 0; x < grid_.n[0]; ++x) {
          const long g[3] = {x, y, z};
          host(x + grid_.ghosts[0], y + grid_.ghosts[1], z + grid_.ghosts[2]) =
              static_cast<Real>(initial_value(spec, g));
        }
    Kokkos::deep_copy(u, host);
  }

  std::vector<double> owned(const Field& u) const {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(grid_.n[0] * grid_.n[1] * grid_.n[2]));
    for (long z = 0; z < grid_.n[2]; ++z)
      for (long y = 0; y < grid_.n[1]; ++y)
        for (long x = 0; x < grid_.n[0]; ++x)
          out.push_back(host(x + grid_.ghosts[0], y + grid_.ghosts[1], z + grid_.ghosts[2]));
    return out;
  }

  Problem problem_;
  Grid grid_;
  Field u_, u_next_, u_prev_;
  // Media: alpha (heat in flux form only), c and gamma (wave, damped wave),
  // ghosts included; each source's q(x) and the scratch for their sum.
  bool flux_form_ = false;
  Coefficient alpha_, c_, gamma_;
  std::vector<Coefficient> sources_;
  Coefficient source_sum_;
  long step_ = 0;
};

template <class Real>
std::vector<Fields> run_in(const Problem& problem, const std::vector<long>& at_steps) {
  std::vector<long> order(at_steps);
  std::sort(order.begin(), order.end());
  Solver<Real> solver(problem);
  solver.initialize();
  std::vector<Fields> sorted;
  for (long s : order) {
    solver.advance_to(s);
    sorted.push_back(solver.fields());
  }
  // Back in the caller's order.
  std::vector<Fields> out;
  for (long s : at_steps)
    out.push_back(*std::find_if(sorted.begin(), sorted.end(), [&](const Fields& f) { return f.step == s; }));
  return out;
}

template <class Real>
Traces traces_in(const Problem& problem, const std::vector<std::array<double, 3>>& positions, long every,
                 bool previous) {
  Solver<Real> solver(problem);
  solver.initialize();
  std::vector<Around> around;
  for (const auto& x : positions) around.emplace_back(x, solver.grid());
  Traces out;
  for (long s = 0; s <= problem.steps; s += every) out.steps.push_back(s);
  out.values.resize(positions.size() * out.steps.size());
  for (std::size_t k = 0; k < out.steps.size(); ++k) {
    solver.advance_to(out.steps[k]);
    const std::vector<double> values = solver.sample(around, previous);
    for (std::size_t r = 0; r < values.size(); ++r) out.values[r * out.steps.size() + k] = values[r];
  }
  return out;
}

}  // namespace

Traces traces(const Problem& problem, const std::vector<std::array<double, 3>>& positions, long every, bool previous) {
  ensure_kokkos();
  return problem.precision == Precision::float32 ? traces_in<float>(problem, positions, every, previous)
                                                 : traces_in<double>(problem, positions, every, previous);
}

std::vector<Fields> run(const Problem& problem, const std::vector<long>& at_steps) {
  ensure_kokkos();
  return problem.precision == Precision::float32 ? run_in<float>(problem, at_steps) : run_in<double>(problem, at_steps);
}

bool available() { return true; }

std::string description() {
  return "Kokkos " + std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) + "." +
         std::to_string(KOKKOS_VERSION % 100) + " (" + ExecutionSpace::name() + ")";
}

}  // namespace heatwave::reference
