#pragma once
// Initial fields as pure functions of the global grid point: the same values on
// every backend and every decomposition, computed where the field lives.
#include <cmath>
#include <cstdint>

#include "core/hd.hpp"
#include "core/numerics.hpp"
#include "solver/problem.hpp"

namespace heatwave {

// A plain copy of an InitialCondition plus the grid geometry, usable on the device.
struct InitialSpec {
  InitialType type;
  int dims;
  double amplitude, width, value;
  std::uint64_t seed;
  int modes[max_dims];
  double center[max_dims], gradient[max_dims], length[max_dims], spacing[max_dims];
  long points[max_dims];

  static InitialSpec make(const InitialCondition& ic, int dims, const std::array<long, 3>& points,
                          const std::array<double, 3>& length, const std::array<double, 3>& spacing) {
    InitialSpec s{};
    s.type = ic.type, s.dims = dims, s.amplitude = ic.amplitude, s.width = ic.width, s.value = ic.value,
    s.seed = ic.seed;
    for (int a = 0; a < max_dims; ++a)
      s.modes[a] = ic.modes[a], s.center[a] = ic.center[a], s.gradient[a] = ic.gradient[a], s.length[a] = length[a],
      s.spacing[a] = spacing[a], s.points[a] = points[a];
    return s;
  }
  // The problem's u0, and its v0 (zero when the config gives none).
  static InitialSpec initial(const Problem& p) { return make(p.initial, p.dims, p.points, p.length, p.spacing); }
  static InitialSpec velocity(const Problem& p) {
    return make(p.velocity.value_or(InitialCondition{InitialType::constant}), p.dims, p.points, p.length, p.spacing);
  }
};

// SplitMix64: a counter-based hash, so random fields need no sequential state.
HW_HD std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// u(x) at global point g (x_a = g_a * h_a), in double precision.
HW_HD double initial_value(const InitialSpec& s, const long* g) {
  constexpr double pi = 3.14159265358979323846;
  switch (s.type) {
    case InitialType::sine:
    case InitialType::cosine: {
      double u = s.amplitude;
      for (int a = 0; a < s.dims; ++a) {
        const double arg = s.modes[a] * pi * (g[a] * s.spacing[a]) / s.length[a];
        u *= s.type == InitialType::sine ? sin(arg) : cos(arg);
      }
      return u;
    }
    case InitialType::gaussian: {
      double r2 = 0;
      for (int a = 0; a < s.dims; ++a) {
        const double d = g[a] * s.spacing[a] - s.center[a];
        r2 += d * d;
      }
      return s.amplitude * exp(-r2 / (2 * s.width * s.width));
    }
    case InitialType::constant:
      return s.value;
    case InitialType::linear: {
      double u = s.value;
      for (int a = 0; a < s.dims; ++a) u += s.gradient[a] * (g[a] * s.spacing[a]);
      return u;
    }
    case InitialType::file:  // read from HDF5 by the Simulation once the backend has initialised
      return 0;
    case InitialType::random: {
      std::uint64_t linear = 0;
      for (int a = s.dims - 1; a >= 0; --a) linear = linear * static_cast<std::uint64_t>(s.points[a]) + g[a];
      const double unit = (splitmix64(splitmix64(s.seed) ^ linear) >> 11) * 0x1.0p-53;  // [0, 1)
      return s.amplitude * (2 * unit - 1);
    }
  }
  return 0;
}

}  // namespace heatwave
