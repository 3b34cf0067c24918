// The Kokkos reference solver. Written to be read against the numerics
// contract (docs/design.md), not to be fast: one 3D View per field level (a 2D problem has a single z plane), the
// stencils spelled out as formulas, and each boundary rule written where it is
// applied. Nothing here comes from solver/stencil.hpp or solver/domain.hpp.
#include "validation/reference.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdlib>

#include "solver/initial.hpp"

namespace heatwave::reference {
namespace {

using ExecutionSpace = Kokkos::DefaultExecutionSpace;
using Range3 = Kokkos::MDRangePolicy<ExecutionSpace, Kokkos::Rank<3>>;

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
  Face face[3][2];

  explicit Grid(const Problem& p) : dims(p.dims), radius(p.radius) {
    for (int a = 0; a < dims; ++a) {
      const bool periodic = p.faces[a][0].type == BoundaryType::periodic;
      n[a] = p.points[a];
      ghosts[a] = radius;
      // Vertex-centred: both faces are grid points, except that a periodic
      // axis drops the duplicate of its first point.
      h[a] = p.length[a] / static_cast<double>(periodic ? n[a] : n[a] - 1);
      for (int side = 0; side < 2; ++side) face[a][side] = {p.faces[a][side].type, p.faces[a][side].value};
    }
  }
  long extent(int a) const { return n[a] + 2 * ghosts[a]; }
  bool dirichlet(int a, int side) const { return a < dims && face[a][side].type == BoundaryType::dirichlet; }
};

template <class Real>
class Solver {
 public:
  using Field = Kokkos::View<Real***, Kokkos::LayoutLeft, ExecutionSpace>;  // LayoutLeft: x fastest

  Solver(const Problem& p) : problem_(p), grid_(p) {
    for (Field* f : {&u_, &u_next_, &u_prev_})
      *f = Field("reference field", grid_.extent(0), grid_.extent(1), grid_.extent(2));
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

 private:
  // Second order in time (wave, damped wave): u^{n-1} is a level of its own.
  bool wave() const { return problem_.equation != Equation::heat; }

  // lap(u) at storage point (x, y, z): the 1D second differences summed over
  // the active axes, radius 1 (order 2) or radius 2 (order 4).
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
        const Real d2 =
            radius == 1 ? at(-1) - 2 * at(0) + at(1) : (-at(-2) + 16 * at(-1) - 30 * at(0) + 16 * at(1) - at(2)) / 12;
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

  // Heat, FTCS: u' = u + alpha*dt*lap(u).
  void heat_step() {
    const Laplacian lap = laplacian(u_);
    const Field u = u_, next = u_next_;
    const Real alpha_dt = static_cast<Real>(problem_.coefficients.get("alpha") * problem_.dt);
    Kokkos::parallel_for(
        "reference heat step", interior(),
        KOKKOS_LAMBDA(int x, int y, int z) { next(x, y, z) = u(x, y, z) + alpha_dt * lap(x, y, z); });
    std::swap(u_, u_next_);
    fill_ghosts(u_);
  }

  // Wave, leapfrog: u' = 2u - u_prev + (c*dt)^2 lap(u); the first step is the
  // Taylor expansion u' = u + dt*v0 + (c*dt)^2/2 lap(u), with v0 in u_prev.
  // Damped wave: the damping term gamma*u_t taken centred in time,
  //   (u' - 2u + u_prev)/dt^2 + gamma (u' - u_prev)/(2 dt) = c^2 lap(u),
  // solved for u'; the Taylor start uses u_tt(0) = c^2 lap(u0) - gamma v0.
  void wave_step() {
    const Laplacian lap = laplacian(u_);
    const Field u = u_, prev = u_prev_, next = u_next_;
    const double c_dt = problem_.coefficients.get("c") * problem_.dt;
    const Real c2dt2 = static_cast<Real>(c_dt * c_dt), half_c2dt2 = static_cast<Real>(0.5 * c_dt * c_dt);
    const Real dt = static_cast<Real>(problem_.dt);
    const bool damped = problem_.equation == Equation::damped_wave;
    const double gamma = damped ? problem_.coefficients.get("gamma") : 0.0;
    const Real half_gamma_dt = static_cast<Real>(0.5 * gamma * problem_.dt);
    const Real half_gamma_dt2 = static_cast<Real>(0.5 * gamma * problem_.dt * problem_.dt);
    if (step_ == 0 && damped)
      Kokkos::parallel_for(
          "reference damped wave start", interior(), KOKKOS_LAMBDA(int x, int y, int z) {
            next(x, y, z) =
                u(x, y, z) + dt * prev(x, y, z) + half_c2dt2 * lap(x, y, z) - half_gamma_dt2 * prev(x, y, z);
          });
    else if (step_ == 0)
      Kokkos::parallel_for(
          "reference wave start", interior(), KOKKOS_LAMBDA(int x, int y, int z) {
            next(x, y, z) = u(x, y, z) + dt * prev(x, y, z) + half_c2dt2 * lap(x, y, z);
          });
    else if (damped)
      Kokkos::parallel_for(
          "reference damped wave step", interior(), KOKKOS_LAMBDA(int x, int y, int z) {
            next(x, y, z) = (2 * u(x, y, z) - prev(x, y, z) + c2dt2 * lap(x, y, z) + half_gamma_dt * prev(x, y, z)) /
                            (1 + half_gamma_dt);
          });
    else
      Kokkos::parallel_for(
          "reference wave step", interior(), KOKKOS_LAMBDA(int x, int y, int z) {
            next(x, y, z) = 2 * u(x, y, z) - prev(x, y, z) + c2dt2 * lap(x, y, z);
          });
    // u_prev <- u, u <- next; the old u_prev becomes the next scratch buffer.
    std::swap(u_prev_, u_);
    std::swap(u_, u_next_);
    fill_ghosts(u_);
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

}  // namespace

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
