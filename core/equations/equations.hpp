#pragma once
// The equations heatwave solves: one enum value and one type each, in the
// same order. Adding an equation is a header beside these (heat.hpp is the
// pattern) and a line in each list below; every backend, the config and the
// diagnostics pick it up from there (docs/design.md, "How to add").
#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>

#include "core/dispatch.hpp"
#include "core/equations/coefficients.hpp"
#include "core/equations/types.hpp"

namespace heatwave {

enum class Equation { heat, wave, damped_wave };
// (CMakeLists.txt lists them too, as HEATWAVE_EQUATIONS: the cluster kernels' units.)
using EquationTypes = std::tuple<Heat, Wave, DampedWave>;

inline constexpr std::size_t equation_count = std::tuple_size_v<EquationTypes>;

// f.template operator()<Eq>() with the type of `equation`.
template <class F>
decltype(auto) with_equation(Equation equation, F&& f) {
  return with_index<equation_count>(static_cast<std::size_t>(equation), [&]<std::size_t I>() -> decltype(auto) {
    return f.template operator()<std::tuple_element_t<I, EquationTypes>>();
  });
}

// An equation's facts at run time (host code that is not templated on it).
struct EquationInfo {
  const char* name;
  const char* summary;
  int levels;
  std::span<const char* const> level_names;
  std::span<const CoefficientSpec> coefficients;
  Conserved conserved;
  bool has_energy;

  template <class Eq>
  static EquationInfo of() {
    return {Eq::name, Eq::summary, Eq::levels, Eq::level_names, Eq::coefficients, Eq::conserved, Eq::has_energy};
  }
};

inline EquationInfo info(Equation equation) {
  return with_equation(equation, [&]<class Eq>() { return EquationInfo::of<Eq>(); });
}
inline const char* to_string(Equation equation) { return info(equation).name; }

inline std::optional<Equation> equation_named(std::string_view name) {
  for (std::size_t i = 0; i < equation_count; ++i)
    if (name == info(static_cast<Equation>(i)).name) return static_cast<Equation>(i);
  return std::nullopt;
}

}  // namespace heatwave
