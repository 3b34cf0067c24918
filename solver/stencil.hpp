#pragma once
// The discrete Laplacian: central differences of radius R (order 2R,
// core/central_difference.hpp's weights) along each
// axis. This is the one stencil definition every backend uses (the time update
// is the equation's: core/equations/); the Kokkos reference in validation/
// deliberately has its own.
#include <array>

#include "core/central_difference.hpp"
#include "core/hd.hpp"

namespace heatwave {

// The weights divided by h_a^2, per axis, in the working precision, and the
// centre's weight summed over axes.
template <int D, int R, class Real>
struct LaplacianWeights {
  Real w[D][R + 1];
  Real centre_weight;  // sum_a c_0 / h_a^2
  long stride[D];

  static LaplacianWeights make(const std::array<double, 3>& spacing, const std::array<long, D>& strides) {
    LaplacianWeights L{};
    double centre = 0;
    for (int a = 0; a < D; ++a) {
      for (int j = 0; j <= R; ++j)
        L.w[a][j] = static_cast<Real>(CentralDifference<R>::weight[j] / (spacing[a] * spacing[a]));
      centre += CentralDifference<R>::weight[0] / (spacing[a] * spacing[a]);
      L.stride[a] = strides[a];
    }
    L.centre_weight = static_cast<Real>(centre);
    return L;
  }

  // lap(u) = c u + sum over axes in axis order of sum_j w_j (minus_j + plus_j),
  // each term fused into the running sum: one product for the centre, not one
  // an axis (a third fewer operations a point in 3D). Backends that keep some
  // neighbours in registers call start() and then add() for each axis in
  // order; the order of operations is fixed here, so every backend rounds
  // the same way.
  HW_HD Real start(Real centre) const { return centre_weight * centre; }
  HW_HD Real add(int a, Real sum, const Real (&minus)[R + 1], const Real (&plus)[R + 1]) const {
    HW_UNROLL
    for (int j = 1; j <= R; ++j) sum = fused(w[a][j], minus[j] + plus[j], sum);
    return sum;
  }

  // lap(u) at linear index p.
  HW_HD Real operator()(const Real* u, long p) const {
    Real lap = start(u[p]);
    HW_UNROLL
    for (int a = 0; a < D; ++a) {
      Real minus[R + 1], plus[R + 1];
      HW_UNROLL
      for (int j = 1; j <= R; ++j) minus[j] = u[p - j * stride[a]], plus[j] = u[p + j * stride[a]];
      lap = add(a, lap, minus, plus);
    }
    return lap;
  }
};

}  // namespace heatwave
