#pragma once
// Runtime choices -> template arguments, in one place. Each helper calls
// f.template operator()<...>() with the compile-time value of the runtime
// one, so a call site reads
//   with_radius(problem.radius, [&]<int R>() { launch<R>(...); });
// and every combination it names is instantiated once, here and nowhere else.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "core/central_difference.hpp"

namespace heatwave {

// f.template operator()<I>() for the I in [0, N) equal to `index`.
template <std::size_t N, std::size_t I = 0, class F>
decltype(auto) with_index(std::size_t index, F&& f) {
  if constexpr (I + 1 == N) {
    if (index != I) throw std::logic_error("with_index: " + std::to_string(index) + " is out of range");
    return f.template operator()<I>();
  } else {
    if (index == I) return f.template operator()<I>();
    return with_index<N, I + 1>(index, std::forward<F>(f));
  }
}

// The stencil radius, 1..max_radius (order 2r), or 1..MaxR where a kernel
// family is built for fewer radii (its callers refuse the others first).
template <int MaxR = max_radius, class F>
decltype(auto) with_radius(int radius, F&& f) {
  if (radius < 1 || radius > MaxR)
    throw std::logic_error("stencil radius " + std::to_string(radius) + " is not 1.." + std::to_string(MaxR));
  return with_index<MaxR>(static_cast<std::size_t>(radius - 1), [&]<std::size_t I>() -> decltype(auto) {
    return f.template operator()<static_cast<int>(I) + 1>();
  });
}

// A tuple of T<R> for every radius 1..max_radius, T<R> at R - 1 (std::get):
// an object that holds the one its run's radius uses.
template <template <int> class T, class = std::make_integer_sequence<int, max_radius>>
struct PerRadius;
template <template <int> class T, int... I>
struct PerRadius<T, std::integer_sequence<int, I...>> {
  using type = std::tuple<T<I + 1>...>;
};

template <class F>
decltype(auto) with_bool(bool value, F&& f) {
  return value ? f.template operator()<true>() : f.template operator()<false>();
}

// Dimension and working precision: f.template operator()<D, Real>().
template <class F>
decltype(auto) with_dims_and_precision(int dims, bool float32, F&& f) {
  if (dims != 2 && dims != 3) throw std::logic_error("dims " + std::to_string(dims) + " is not 2 or 3");
  if (dims == 2) return float32 ? f.template operator()<2, float>() : f.template operator()<2, double>();
  return float32 ? f.template operator()<3, float>() : f.template operator()<3, double>();
}

}  // namespace heatwave
