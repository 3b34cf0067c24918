#include "core/equations/heat.hpp"

#include <cmath>

#include "core/equations/coefficients.hpp"

namespace heatwave {

double Heat::stability_number(const Coefficients& k, double dt, double inverse_h2) {
  return k.get("alpha") * dt * inverse_h2;
}

double Heat::mode_factor(const Coefficients& k, double dt, double S, long n) {
  return std::pow(1 + k.get("alpha") * dt * S, static_cast<double>(n));
}

double Heat::continuous_factor(const Coefficients& k, double lambda, double t) {
  return std::exp(k.get("alpha") * lambda * t);
}

}  // namespace heatwave
