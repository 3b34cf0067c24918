#pragma once
// The numerics' kinds as plain enums: the share of core/numerics.hpp that
// device code reads (it includes no host-only header).
namespace heatwave {

inline constexpr int max_dims = 3;
inline constexpr const char* axis_names[max_dims] = {"x", "y", "z"};

enum class Precision { float32, float64 };
enum class BoundaryType { dirichlet, neumann, periodic };
enum class InitialType { sine, cosine, gaussian, constant, linear, random, file };
enum class MediumType { constant, file, layers };
enum class SourceType { field, gaussian, point };
enum class TimeFunctionType { constant, ricker, sine, gaussian };

}  // namespace heatwave
