#pragma once
// The vocabulary of the numerics, shared by every layer: io/ reads it from
// YAML, solver/ derives the problem from it, the backends compute with it.
// Plain enums and structs, no behaviour beyond their names.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/kinds.hpp"

namespace heatwave {

// The name of a kind in a name table, and the kind of a name (none when unknown).
template <class Kind, std::size_t N>
constexpr const char* name_of(const std::array<std::pair<Kind, const char*>, N>& names, Kind kind) {
  for (const auto& [k, name] : names)
    if (k == kind) return name;
  return "?";
}
template <class Kind, std::size_t N>
std::optional<Kind> kind_named(const std::array<std::pair<Kind, const char*>, N>& names, std::string_view name) {
  for (const auto& [k, n] : names)
    if (name == n) return k;
  return std::nullopt;
}

// The config's names of each choice: one table each, which the config
// reader, the messages and to_string all use. A new boundary type is an enum
// value, a name here and its rule in FaceRule (solver/domain.hpp).
inline constexpr std::array<std::pair<Precision, const char*>, 2> precision_names{
    {{Precision::float32, "float32"}, {Precision::float64, "float64"}}};
inline constexpr std::array<std::pair<BoundaryType, const char*>, 3> boundary_names{
    {{BoundaryType::dirichlet, "dirichlet"}, {BoundaryType::neumann, "neumann"}, {BoundaryType::periodic, "periodic"}}};
inline constexpr std::array<std::pair<InitialType, const char*>, 7> initial_names{{{InitialType::sine, "sine"},
                                                                                   {InitialType::cosine, "cosine"},
                                                                                   {InitialType::gaussian, "gaussian"},
                                                                                   {InitialType::constant, "constant"},
                                                                                   {InitialType::linear, "linear"},
                                                                                   {InitialType::random, "random"},
                                                                                   {InitialType::file, "file"}}};

inline constexpr std::array<std::pair<MediumType, const char*>, 3> medium_names{
    {{MediumType::constant, "constant"}, {MediumType::file, "file"}, {MediumType::layers, "layers"}}};
inline constexpr std::array<std::pair<SourceType, const char*>, 3> source_names{
    {{SourceType::field, "field"}, {SourceType::gaussian, "gaussian"}, {SourceType::point, "point"}}};
inline constexpr std::array<std::pair<TimeFunctionType, const char*>, 4> time_function_names{
    {{TimeFunctionType::constant, "constant"},
     {TimeFunctionType::ricker, "ricker"},
     {TimeFunctionType::sine, "sine"},
     {TimeFunctionType::gaussian, "gaussian"}}};

inline const char* to_string(Precision p) { return name_of(precision_names, p); }
inline const char* to_string(BoundaryType b) { return name_of(boundary_names, b); }
inline const char* to_string(InitialType t) { return name_of(initial_names, t); }
inline const char* to_string(MediumType t) { return name_of(medium_names, t); }
inline const char* to_string(SourceType t) { return name_of(source_names, t); }
inline const char* to_string(TimeFunctionType t) { return name_of(time_function_names, t); }

// One face of the domain. For dirichlet `value` is u on the face; for neumann
// it is the outward normal derivative du/dn on the face.
// An absorbing face (`type: absorbing`, the wave equations) is a damping
// layer of `absorbing` points inside it (gamma(x) growing towards the face:
// solver/media.hpp, absorbing_gamma) in front of a Dirichlet 0 wall.
struct BoundaryFace {
  BoundaryType type = BoundaryType::dirichlet;
  double value = 0.0;
  int absorbing = 0;  // layer width in points; 0: not absorbing

  const char* name() const { return absorbing > 0 ? "absorbing" : to_string(type); }
};

// An initial field: u0, or v0 = u_t(0) for an equation second order in time.
struct InitialCondition {
  InitialType type = InitialType::sine;
  double amplitude = 1.0;
  std::array<int, max_dims> modes{1, 1, 1};            // sine / cosine
  std::array<double, max_dims> center{0.5, 0.5, 0.5};  // gaussian (absolute coordinates)
  double width = 0.1;                                  // gaussian sigma
  double value = 0.0;                                  // constant; linear: u at the origin
  std::array<double, max_dims> gradient{0, 0, 0};      // linear: u = value + sum gradient_a x_a
  std::uint64_t seed = 1;                              // random: uniform in [-amplitude, amplitude]
  std::string path = "";                               // file: HDF5 file (relative paths: the config's folder)
  std::string dataset = "u";                           // file: dataset of the global shape (z, y, x order)
};

// A coefficient of the equation over space (`material:` in the config): one
// value, a field from an HDF5 file of the grid's shape, or piecewise constant
// along an axis (values[i] between interfaces[i-1] and interfaces[i]; a point
// on an interface takes the upper layer's value).
struct Medium {
  MediumType type = MediumType::constant;
  double value = 0;                // constant
  std::string path, dataset;       // file (relative paths: the config's folder)
  int axis = 0;                    // layers
  std::vector<double> interfaces;  // layers: increasing, inside (0, length)
  std::vector<double> values;      // layers: interfaces + 1 values
};

// How a source's strength goes in time: f(t) multiplies its spatial part.
//   constant 1; ricker (1 - 2 a) exp(-a), a = (pi frequency (t - delay))^2;
//   sine sin(2 pi frequency t); gaussian exp(-(t - delay)^2 / (2 width^2)).
struct TimeFunction {
  TimeFunctionType type = TimeFunctionType::constant;
  double frequency = 0;  // ricker, sine
  double delay = 0;      // ricker, gaussian
  double width = 0;      // gaussian
};

// A source term s(x, t) = f(t) q(x) (`sources:` in the config). q is a field
// from a file, a Gaussian bump amplitude exp(-|x - center|^2 / (2 width^2)),
// or a point source of strength `amplitude` at `center` (its delta function
// spread over the neighbouring grid points: docs/design.md, "Sources").
struct Source {
  SourceType type = SourceType::gaussian;
  std::string path, dataset;                           // field
  std::array<double, max_dims> center{0.5, 0.5, 0.5};  // gaussian centre, point position
  double width = 0.1;                                  // gaussian
  double amplitude = 1;                                // gaussian, point
  TimeFunction time;
};

}  // namespace heatwave
