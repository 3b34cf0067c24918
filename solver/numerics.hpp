#pragma once
// The vocabulary of the numerics, shared by every layer: io/ reads it from
// YAML, solver/ derives the problem from it, the backends compute with it.
// Plain enums and structs, no behaviour beyond their names.
#include <array>
#include <cstdint>
#include <string>

namespace heatwave {

inline constexpr int max_dims = 3;
inline constexpr const char* axis_names[max_dims] = {"x", "y", "z"};

enum class Precision { float32, float64 };
enum class BoundaryType { dirichlet, neumann, periodic };
enum class InitialType { sine, cosine, gaussian, constant, random, file };

inline const char* to_string(Precision p) { return p == Precision::float32 ? "float32" : "float64"; }
inline const char* to_string(BoundaryType b) {
  switch (b) {
    case BoundaryType::dirichlet: return "dirichlet";
    case BoundaryType::neumann: return "neumann";
    case BoundaryType::periodic: return "periodic";
  }
  return "?";
}
inline const char* to_string(InitialType t) {
  switch (t) {
    case InitialType::sine: return "sine";
    case InitialType::cosine: return "cosine";
    case InitialType::gaussian: return "gaussian";
    case InitialType::constant: return "constant";
    case InitialType::random: return "random";
    case InitialType::file: return "file";
  }
  return "?";
}

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
  std::array<int, max_dims> modes{1, 1, 1};              // sine / cosine
  std::array<double, max_dims> center{0.5, 0.5, 0.5};    // gaussian (absolute coordinates)
  double width = 0.1;                                    // gaussian sigma
  double value = 0.0;                                    // constant
  std::uint64_t seed = 1;                                // random: uniform in [-amplitude, amplitude]
  std::string path = "";                                 // file: HDF5 file (relative to the working directory)
  std::string dataset = "u";                             // file: dataset of the global shape (z, y, x order)
};

}  // namespace heatwave
