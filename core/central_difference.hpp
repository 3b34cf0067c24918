#pragma once
// The central second-derivative weights of radius R (order 2R), R = 1..4,
// and what follows from them for every equation: the stability limits.
//
// For unit spacing, u''(0) ~ sum_{j=-R..R} c_|j| u(j), with
//   c_j = 2 (-1)^(j+1) (R!)^2 / (j^2 (R-j)! (R+j)!)   (j >= 1),   c_0 = -2 sum_j c_j,
// the unique weights exact for polynomials of degree 2R+1 (Fornberg 1988).
// The signs alternate, so the symbol c_0 + 2 sum_j c_j cos(j theta) is
// largest in magnitude at the grid's highest mode theta = pi, where it is
// -(|c_0| + 2 sum_j |c_j|) = -highest_mode (docs/design.md, "Stability").
#include <array>
#include <cmath>

namespace heatwave {

inline constexpr int max_radius = 4;

#ifdef HEATWAVE_TEST_BROKEN_STENCIL
// Test-only (tests/CMakeLists.txt builds heatwave_broken with it): a wrong
// nearest-neighbour weight, to show that `heatwave validate` catches it.
inline constexpr double neighbour_weight_error = 1e-3;
#else
inline constexpr double neighbour_weight_error = 0;
#endif

// c_0 .. c_R, for unit spacing.
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
template <>
struct CentralDifference<3> {
  static constexpr double weight[4] = {-49.0 / 18.0, 3.0 / 2.0 + neighbour_weight_error, -3.0 / 20.0, 1.0 / 90.0};
};
template <>
struct CentralDifference<4> {
  static constexpr double weight[5] = {-205.0 / 72.0, 8.0 / 5.0 + neighbour_weight_error, -1.0 / 5.0, 8.0 / 315.0,
                                       -1.0 / 560.0};
};

// c_j of radius `radius` (1..max_radius), j = 0..radius, at run time.
inline double central_weight(int radius, int j) {
  switch (radius) {
    case 1: return CentralDifference<1>::weight[j];
    case 2: return CentralDifference<2>::weight[j];
    case 3: return CentralDifference<3>::weight[j];
    default: return CentralDifference<4>::weight[j];
  }
}

// |c_0| + 2 sum_j |c_j|: the symbol's magnitude at the highest mode, 4, 16/3,
// 272/45 and 2048/315 for radius 1..4.
inline double highest_mode(int radius) {
  double sum = std::abs(central_weight(radius, 0));
  for (int j = 1; j <= radius; ++j) sum += 2 * std::abs(central_weight(radius, j));
  return sum;
}

// Stability at the highest mode: forward Euler (the heat) needs
// alpha dt sum(1/h^2) highest_mode <= 2, the leapfrog (the waves)
// c^2 dt^2 sum(1/h^2) highest_mode <= 4. Written as exact fractions (the
// unit tests check them against 2 / highest_mode), so that dt: auto is the
// same to the last bit as the radius 1 and 2 limits always were.
inline double diffusion_limit(int radius) {
  constexpr double limits[max_radius] = {1.0 / 2.0, 3.0 / 8.0, 45.0 / 136.0, 315.0 / 1024.0};
  return limits[radius - 1];
}
inline double leapfrog_limit(int radius) {
  const double limits[max_radius] = {1.0, std::sqrt(3.0) / 2.0, std::sqrt(45.0 / 68.0), std::sqrt(315.0 / 512.0)};
  return limits[radius - 1];
}

// How a point's float32 rounding grows with the radius: the 2r+1 terms an
// axis sums against radius 1 and 2's five (1 for radius 1 and 2, 1.4 and
// 1.8 for radius 3 and 4). Tolerances on exact answers scale with it.
inline double rounding_terms(int radius) { return radius <= 2 ? 1.0 : (2 * radius + 1) / 5.0; }

}  // namespace heatwave
