#include "core/equations/damped_wave.hpp"

#include <cmath>
#include <complex>

#include "core/equations/coefficients.hpp"

namespace heatwave {

double DampedWave::mode_factor(const Coefficients& k, double dt, double S, long n) {
  using complex = std::complex<double>;
  const double c = k.get("c"), d = 0.5 * k.get("gamma") * dt;
  const double a = 2 / (1 + d), b = (1 - d) / (1 + d), e = c * c * dt * dt / (1 + d);
  const complex r = std::sqrt(complex(b)), theta = std::acos((a + e * S) / (2.0 * r));
  const complex B = ((1 + c * c * dt * dt * S / 2) / r - std::cos(theta)) / std::sin(theta);
  const double m = static_cast<double>(n);
  return (std::pow(r, m) * (std::cos(m * theta) + B * std::sin(m * theta))).real();
}

double DampedWave::velocity_mode_factor(const Coefficients& k, double dt, double S, long n) {
  using complex = std::complex<double>;
  const double c = k.get("c"), d = 0.5 * k.get("gamma") * dt;
  const double a = 2 / (1 + d), b = (1 - d) / (1 + d), e = c * c * dt * dt / (1 + d);
  const complex r = std::sqrt(complex(b)), theta = std::acos((a + e * S) / (2.0 * r));
  const double m = static_cast<double>(n);
  return (dt * (1 - d) * std::pow(r, m - 1) * std::sin(m * theta) / std::sin(theta)).real();
}

double DampedWave::continuous_factor(const Coefficients& k, double lambda, double t) {
  using complex = std::complex<double>;
  const double c = k.get("c"), gamma = k.get("gamma");
  const complex w = std::sqrt(complex(-c * c * lambda - gamma * gamma / 4));
  return (std::exp(-gamma * t / 2) * (std::cos(w * t) + gamma / (2.0 * w) * std::sin(w * t))).real();
}

}  // namespace heatwave
