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

namespace heatwave {

inline constexpr int max_dims = 3;
inline constexpr const char* axis_names[max_dims] = {"x", "y", "z"};

enum class Precision { float32, float64 };
enum class BoundaryType { dirichlet, neumann, periodic };
enum class InitialType { sine, cosine, gaussian, constant, linear, random, file };

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

inline const char* to_string(Precision p) { return name_of(precision_names, p); }
inline const char* to_string(BoundaryType b) { return name_of(boundary_names, b); }
inline const char* to_string(InitialType t) { return name_of(initial_names, t); }

// One face of the domain. For dirichlet `value` is u on the face; for neumann
// it is the outward normal derivative du/dn on the face.
struct BoundaryFace {
  BoundaryType type = BoundaryType::dirichlet;
  double value = 0.0;
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
  std::string path = "";                               // file: HDF5 file (relative to the working directory)
  std::string dataset = "u";                           // file: dataset of the global shape (z, y, x order)
};

}  // namespace heatwave
