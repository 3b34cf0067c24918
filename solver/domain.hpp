#pragma once
// One rank's piece of the grid: which points it owns, how wide its halo is,
// and for each face whether the halo comes from a neighbour rank (MPI) or from
// the boundary condition. Every backend steps the same boxes this defines.
#include <array>

#include "solver/box.hpp"
#include "core/hd.hpp"
#include "core/kinds.hpp"

namespace heatwave {

#ifdef HEATWAVE_TEST_FLIPPED_NEUMANN_FLUX
// Test-only (tests/CMakeLists.txt builds a mutant with it): the Neumann flux
// with the wrong sign, which the exact steady states must catch.
inline constexpr double neumann_flux_sign = -1;
#else
inline constexpr double neumann_flux_sign = 1;
#endif

// How a ghost value follows from the owned field across a physical face:
// ghost = sign * u[source] + shift (docs/design.md, "Boundary ghosts").
//   dirichlet: odd reflection about the face value g:   u(b-j) = 2g - u(b+j)
//   neumann:   even reflection plus the flux q = du/dn: u(b-j) = u(b+j) + 2 j h q
//   periodic:  wrap around the axis (only when one rank spans the axis)
struct FaceRule {
  BoundaryType type = BoundaryType::dirichlet;
  double value = 0;  // g or q
  double h = 1;      // spacing along the face normal
  long n = 1;        // owned points along the axis
  int side = 0;      // 0: low face (boundary point 0), 1: high face (boundary point n-1)

  // Ghost at local coordinate i (i < 0 on the low side, i >= n on the high side).
  HW_HD long source(long i) const {
    if (type == BoundaryType::periodic) return side == 0 ? i + n : i - n;
    return side == 0 ? -i : 2 * (n - 1) - i;
  }
  // The boundary point of the face, and whether local point i is the one a
  // Dirichlet face holds at g (no step writes it).
  HW_HD long boundary_point() const { return side == 0 ? 0 : n - 1; }
  HW_HD bool fixed_point(long i) const { return type == BoundaryType::dirichlet && i == boundary_point(); }
  // The ghost value from u[source(i)]. A Dirichlet face point itself is g.
  template <class Real>
  HW_HD Real ghost(long i, Real source_value) const {
    return layer<Real>(i)(source_value);
  }
  // What ghost(i, .) does, made once for a whole layer of the face's ghosts.
  template <class Real>
  struct Layer {
    long source;  // the point along the axis a ghost takes its value from
    bool fixed;   // a Dirichlet face point: g itself
    Real value, sign, shift;
    HW_HD Real operator()(Real source_value) const { return fixed ? value : sign * source_value + shift; }
  };
  template <class Real>
  HW_HD Layer<Real> layer(long i) const {
    return {source(i), fixed_point(i), static_cast<Real>(value), static_cast<Real>(sign()), static_cast<Real>(shift(i))};
  }
  HW_HD double sign() const { return type == BoundaryType::dirichlet ? -1.0 : 1.0; }
  HW_HD double shift(long i) const {
    const long j = side == 0 ? -i : i - (n - 1);  // distance from the boundary point
    switch (type) {
      case BoundaryType::dirichlet:
        return 2 * value;
      case BoundaryType::neumann:
        return neumann_flux_sign * 2.0 * static_cast<double>(j) * h * value;
      case BoundaryType::periodic:
        return 0.0;
    }
    return 0.0;
  }
};

template <int D>
struct LocalDomain {
  Layout<D> layout;   // owned points and halo width H
  Index<D> offset{};  // global index of local point 0
  Index<D> global{};  // global points per axis
  std::array<double, 3> spacing{1, 1, 1};
  std::array<std::array<bool, 2>, D> exchanged{};  // halo filled by a neighbour rank
  std::array<std::array<FaceRule, 2>, D> face{};   // rule where !exchanged

  HW_HD bool dirichlet(int a, int side) const {
    return !exchanged[a][side] && face[a][side].type == BoundaryType::dirichlet;
  }

  // Points one step updates when `ahead` more steps follow before the next
  // halo exchange: owned points (less Dirichlet face points, which hold g), grown
  // by ahead*radius into halos that came from neighbours (deep-halo redundancy).
  HW_HD Box<D> update_box(int radius, int ahead) const {
    Box<D> b;
    for (int a = 0; a < D; ++a) {
      b.lo[a] = exchanged[a][0] ? -static_cast<long>(ahead) * radius : (dirichlet(a, 0) ? 1 : 0);
      b.hi[a] = exchanged[a][1] ? layout.owned[a] + static_cast<long>(ahead) * radius
                                : layout.owned[a] - (dirichlet(a, 1) ? 1 : 0);
    }
    return b;
  }

  // The `radius` ghost layers outside physical face (a, side), across the full
  // storage extent of the other axes so halo rows from neighbours get ghosts too.
  // Dirichlet faces include the face layer itself, which is reset to g.
  HW_HD Box<D> ghost_box(int a, int side, int radius) const {
    Box<D> b = layout.storage_box();
    const long n = layout.owned[a];
    const int face_layer = dirichlet(a, side) ? 1 : 0;
    if (side == 0)
      b.lo[a] = -radius, b.hi[a] = face_layer;
    else
      b.lo[a] = n - face_layer, b.hi[a] = n + radius;
    return b;
  }

  // Trapezoid weight of owned point i along axis a: 1/2 on a non-periodic
  // global boundary point. Makes mean, L2 norm and energy proper quadratures,
  // and the Neumann Laplacian symmetric, so conserved quantities stay conserved.
  HW_HD double weight(int a, long i) const {
    const long g = i + offset[a];
    const bool periodic = face[a][0].type == BoundaryType::periodic;
    return (!periodic && (g == 0 || g == global[a] - 1)) ? 0.5 : 1.0;
  }
};

}  // namespace heatwave
