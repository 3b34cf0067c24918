#include "core/equations/wave.hpp"

#include <cmath>

#include "core/equations/coefficients.hpp"

namespace heatwave {

double Wave::stability_number(const Coefficients& k, double dt, double inverse_h2) {
  return k.get("c") * dt * std::sqrt(inverse_h2);
}

double Wave::mode_factor(const Coefficients& k, double dt, double S, long n) {
  const double c = k.get("c");
  return std::cos(static_cast<double>(n) * std::acos(1 + c * c * dt * dt * S / 2));
}

double Wave::velocity_mode_factor(const Coefficients& k, double dt, double S, long n) {
  const double c = k.get("c"), theta = std::acos(1 + c * c * dt * dt * S / 2);
  return dt * std::sin(static_cast<double>(n) * theta) / std::sin(theta);
}

double Wave::continuous_factor(const Coefficients& k, double lambda, double t) {
  return std::cos(k.get("c") * std::sqrt(-lambda) * t);
}

double Wave::energy_c2(const Coefficients& k) { return k.get("c") * k.get("c"); }

}  // namespace heatwave
