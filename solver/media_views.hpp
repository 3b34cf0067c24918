#pragma once
// The media's and sources' views: plain structs of values and pointers that
// the host loops and the CUDA kernels evaluate alike (the same expression,
// so the same bits). What a rank holds and how the views are made from it:
// solver/media.hpp. Device code includes this header (no host-only header).
#include <array>
#include <cstddef>

#include "core/hd.hpp"
#include "core/kinds.hpp"
#include "solver/box.hpp"

namespace heatwave {

// The harmonic mean 2ab/(a+b): the coefficient of the flux between two grid
// points in the heat equation's div(alpha grad u) (exact for a layer
// interface midway between them), in the working precision.
template <class T>
HW_HD T harmonic_mean(T a, T b) {
#ifdef HEATWAVE_TEST_ARITHMETIC_MEAN
  // Test-only (tests/CMakeLists.txt builds heatwave_arithmetic_mean with it):
  // the wrong face rule, which the layered manufactured cases must catch.
  return (a + b) / 2;
#else
  return T(2) * a * b / (a + b);
#endif
}

// Media and sources as the config defines them (docs/design.md, "Media and
// sources"). Nothing is a dense array unless it was read from a file: a
// constant is a value, layers a table along their axis, an absorbing face a
// profile along its axis, a point source its 2^D weights.

// i[axis] for an axis known only at run time, by selection rather than by
// indexing: a local array indexed at run time would live in (slow) local
// memory on the GPU.
template <std::size_t D>
HW_HD long component(const std::array<long, D>& i, int axis) {
  long v = i[0];
  HW_UNROLL
  for (std::size_t a = 1; a < D; ++a) v = axis == static_cast<int>(a) ? i[a] : v;
  return v;
}

// A coefficient's value at a storage point: its medium (a constant, a layer
// table indexed along the layers' axis, or a file's field, one value a point
// in the working precision), plus for gamma with absorbing faces each axis'
// profile: medium + (p_x + (p_y + p_z)).
template <class Real>
struct CoefficientView {
  double base = 0;
  int axis = 0;                           // the layer table's axis
  const double* layer = nullptr;          // [i[axis] - lo[axis]]
  const Real* field = nullptr;            // [layout offset]
  const double* profile[max_dims] = {};   // absorbing: [i[a] - lo[a]], or null
  long lo[max_dims] = {0, 0, 0};          // the storage box's low corner: the tables' origin

  HW_HD bool varies() const { return layer || field || profile[0] || profile[1] || profile[2]; }

  // What does not change along x in the row of point i: the medium unless it
  // varies along x, and the profiles along y and z (summed y first). A
  // kernel takes it once a row and adds x's part point by point.
  struct Row {
    double medium = 0, profiles = 0;
  };
  template <std::size_t D>
  HW_HD Row row(const std::array<long, D>& i) const {
    Row r{base, 0};
    if (layer && axis != 0) r.medium = layer[component(i, axis) - (axis == 1 ? lo[1] : lo[2])];
    HW_UNROLL
    for (std::size_t a = 1; a < D; ++a)
      if (profile[a]) r.profiles += profile[a][i[a] - lo[a]];
    return r;
  }
  // The value at p (x its index along x) of `row`: medium + (x's profile + the row's).
  HW_HD double at(const Row& r, long p, long x) const {
    const double medium = field ? static_cast<double>(field[p]) : layer && axis == 0 ? layer[x - lo[0]] : r.medium;
    if (!profile[0] && !profile[1] && !profile[2]) return medium;
    return medium + ((profile[0] ? profile[0][x - lo[0]] : 0.0) + r.profiles);
  }
  template <std::size_t D>
  HW_HD double at(long p, const std::array<long, D>& i) const {
    return at(row(i), p, i[0]);
  }
};

// The equation's update at a point, built from its coefficients there
// (Eq::Update::at_point: in double, as make_update builds the uniform one,
// but for the damped wave's factors of 1/(1+d)).
template <int D, class Real, class Eq>
struct PointUpdates {
  using Update = typename Eq::template Update<Real>;
  static constexpr int count = static_cast<int>(Eq::coefficients.size());
  CoefficientView<Real> k[count];  // Eq::coefficients' order
  Update uniform{};
  double dt = 0;
  bool varies = false;  // a coefficient other than the flux one varies point by point
  // The storage x indices [calm_lo, calm_hi) where no coefficient varies
  // along x (no file field, no layers along x, no x profile there): a row's
  // points there share one update, which a kernel may build once.
  long calm_lo = 0, calm_hi = 0;

  struct Row {
    typename CoefficientView<Real>::Row k[count];
  };
  HW_HD Row row(const Index<D>& i) const {
    Row r{};
    if (varies)
      for (int n = 0; n < count; ++n) r.k[n] = k[n].row(i);
    return r;
  }
  // The coefficients' values at p, x its index along x, in the row `r` (row(i) of any point of the row).
  HW_HD void values(const Row& r, long p, long x, double (&v)[count]) const {
    for (int n = 0; n < count; ++n) v[n] = k[n].at(r.k[n], p, x);
  }
  // The update at p, x its index along x, in the row `r`.
  HW_HD Update at(const Row& r, long p, long x) const {
    if (!varies) return uniform;
    double v[count];
    values(r, p, x, v);
    return Update::at_point(v, dt);
  }
  HW_HD Update at(long p, const Index<D>& i) const { return at(row(i), p, i[0]); }

  // What coordinate c along `axis` contributes to the coefficients: for
  // each, a layer's value where it is layered along the axis and its
  // absorbing profile's value there (0 where none). Without a file's field,
  // the update at a point is a function of these along each axis, so points
  // with the same contributions share it (axis_classes; the 3D cluster
  // kernels' table of updates by class).
  static constexpr int contributions = 2 * count;
  HW_HD void axis_contributions(int axis, long c, double* key) const {
    for (int n = 0; n < count; ++n) {
      const CoefficientView<Real>& v = k[n];
      const long along = c - v.lo[axis];
      key[2 * n] = v.layer && v.axis == axis ? v.layer[along] : 0.0;
      key[2 * n + 1] = v.profile[axis] ? v.profile[axis][along] : 0.0;
    }
  }
};


// The wave energy's kinetic weight (c_max / c)^2 at a point where c varies (1 elsewhere).
template <class Real>
struct KineticWeight {
  CoefficientView<Real> c;
  double c_max = 0;
  bool varies = false;
  template <std::size_t D>
  HW_HD double at(long p, const std::array<long, D>& i) const {
    if (!varies) return 1.0;
    const double v = c.at(p, i);
    return (c_max * c_max) / (v * v);
  }
};

// The heat's flux form where alpha varies: div(alpha grad u) =
//   sum over axes a, offsets j of  K_aj(p) (u_{p+j} - u_p) + K_aj(p-j) (u_{p-j} - u_p)
// with the pair coefficient K_aj(p) = c_j/h_a^2 harmonic_mean(alpha_p, alpha_{p+j e_a})
// for the pair from p to p + j e_a. A pair's flux enters its two points with
// opposite signs, so the operator is symmetric and sums to zero over the grid
// with zero-flux or periodic faces (the mean changes only by the sources);
// radius 2 combines j = 1 and 2 with the 4th-order weights, which cancels
// their h^2 errors. K comes from alpha where it is used: from a file's alpha
// a point, or, for alpha constant or in layers, from a table of K by the
// index along the layers' axis (K depends on nothing else).
template <int D, int R, class Real>
struct FluxPairs {
  const Real* alpha = nullptr;      // a file's alpha [layout offset]; else the tables
  const Real* table[D][R] = {};     // K_aj [along - lo], along = the index along `axis`
  int axis = 0;
  long lo = 0;
  Real w[D][R] = {};                // c_j / h_a^2
  long stride[D] = {};

  // K_aj of the pair from p (index `along` along the layers' axis, component(i, axis)) to p + j e_a.
  HW_HD Real pair(int a, int j, long p, long along) const {
    return alpha ? file_pair(a, j, p) : table_pair(a, j, along);
  }
  HW_HD Real file_pair(int a, int j, long p) const { return file_pair(a, j, p, p + j * stride[a]); }
  // The same with the far point's offset q given (a kernel that wraps or
  // clamps coordinates finds it itself).
  HW_HD Real file_pair(int a, int j, long p, long q) const { return w[a][j - 1] * harmonic_mean(alpha[p], alpha[q]); }
  HW_HD Real table_pair(int a, int j, long along) const { return table[a][j - 1][along - lo]; }
  // The terms of one axis and offset j at a point of value `centre`: the pair
  // to +j (coefficient k_plus, far value u_plus), then the pair from -j. The
  // one order of operations every form and backend sums them in.
  HW_HD static Real add_pair_terms(Real sum, Real centre, Real k_plus, Real u_plus, Real k_minus, Real u_minus) {
    return fused(k_minus, u_minus - centre, fused(k_plus, u_plus - centre, sum));
  }

  // div(alpha grad u) at p (along = component(i, axis)), and the same with
  // alpha known to be a file's or the tables (no choice a point: a CPU's
  // vector loop takes these).
  HW_HD Real operator()(const Real* u, long p, long along) const {
    return sum(u, p, [&](int a, int j, long q, long at) { return pair(a, j, q, at); }, along);
  }
  HW_HD Real from_file(const Real* u, long p) const {
    return sum(u, p, [&](int a, int j, long q, long) { return file_pair(a, j, q); }, 0);
  }
  HW_HD Real from_tables(const Real* u, long p, long along) const {
    return sum(u, p, [&](int a, int j, long, long at) { return table_pair(a, j, at); }, along);
  }

 private:
  // Axes in order, then j, the +j pair before the -j one: the one order of
  // operations every form shares.
  template <class Pair>
  HW_HD Real sum(const Real* u, long p, Pair&& k, long along) const {
    const Real centre = u[p];
    Real sum = 0;
    HW_UNROLL
    for (int a = 0; a < D; ++a) {
      HW_UNROLL
      for (int j = 1; j <= R; ++j) {
        const long s = j * stride[a];
        sum = add_pair_terms(sum, centre, k(a, j, p, along), u[p + s], k(a, j, p - s, a == axis ? along - j : along),
                             u[p - s]);
      }
    }
    return sum;
  }
};

template <int D, class Real>
struct SourceView {
  const long* index[D] = {};
  long count[D] = {};
  const Real* q = nullptr;  // a field's; null where separable
  const Real* factor[D] = {};
  // q at the point k of the product (the indices' places along each axis).
  HW_HD Real at(const long (&k)[D]) const {
    if (q) {
      long n = k[D - 1];
      for (int a = D - 2; a >= 0; --a) n = n * count[a] + k[a];
      return q[n];
    }
    Real product = factor[0][k[0]];
    for (int a = 1; a < D; ++a) product *= factor[a][k[a]];
    return product;
  }
};

}  // namespace heatwave
