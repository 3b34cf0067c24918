#pragma once
// The discrete Laplacian: central differences of radius R (order 2R) along each
// axis. This is the one stencil definition every backend uses (the time update
// is the equation's: solver/equations/); the Kokkos reference in validation/
// deliberately has its own.
#include <array>

#include "solver/hd.hpp"

namespace heatwave {

#ifdef HEATWAVE_TEST_BROKEN_STENCIL
// Test-only (tests/CMakeLists.txt builds heatwave_broken with it): a wrong
// nearest-neighbour weight, to show that `heatwave validate` catches it.
inline constexpr double neighbour_weight_error = 1e-3;
#else
inline constexpr double neighbour_weight_error = 0;
#endif

// Second-derivative weights c_0 (centre) .. c_R (offset +-j), for unit spacing.
template <int R>
struct CentralDifference;
template <>
struct CentralDifference<1> {
  static constexpr double weight[2] = {-2.0, 1.0 + neighbour_weight_error};
};
template <>
struct CentralDifference<2> {
  static constexpr double weight[3] = {-30.0 / 12.0, 16.0 / 12.0 + neighbour_weight_error, -1.0 / 12.0};
};

// The weights divided by h_a^2, per axis, in the working precision.
template <int D, int R, class Real>
struct LaplacianWeights {
  Real w[D][R + 1];
  long stride[D];

  static LaplacianWeights make(const std::array<double, 3>& spacing, const std::array<long, D>& strides) {
    LaplacianWeights L{};
    for (int a = 0; a < D; ++a) {
      for (int j = 0; j <= R; ++j)
        L.w[a][j] = static_cast<Real>(CentralDifference<R>::weight[j] / (spacing[a] * spacing[a]));
      L.stride[a] = strides[a];
    }
    return L;
  }

  // One axis' second difference from the centre value and the R values on
  // each side: w_0 c + sum_j w_j (minus_j + plus_j), each term fused into the sum. Backends that keep some
  // neighbours in registers call this directly; the order of operations is
  // fixed here, so every backend rounds the same way.
  HW_HD Real along(int a, Real centre, const Real (&minus)[R + 1], const Real (&plus)[R + 1]) const {
    Real axis = w[a][0] * centre;
    HW_UNROLL
    for (int j = 1; j <= R; ++j) axis = fused(w[a][j], minus[j] + plus[j], axis);
    return axis;
  }

  // lap(u) at linear index p: the sum over axes, in axis order, starting
  // from the x term (not from 0: one addition fewer, the same in every backend).
  HW_HD Real operator()(const Real* u, long p) const {
    Real lap = 0;
    HW_UNROLL
    for (int a = 0; a < D; ++a) {
      Real minus[R + 1], plus[R + 1];
      HW_UNROLL
      for (int j = 1; j <= R; ++j) minus[j] = u[p - j * stride[a]], plus[j] = u[p + j * stride[a]];
      lap = add_axis(a, lap, along(a, u[p], minus, plus));
    }
    return lap;
  }
  // The running sum over axes: the x term starts it.
  HW_HD static Real add_axis(int a, Real sum, Real axis) { return a == 0 ? axis : sum + axis; }
};

}  // namespace heatwave
