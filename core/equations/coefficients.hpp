#pragma once
// The coefficients of a problem by name, as the config gives them (host
// code: the equations' host facts take them), and an equation's uniform
// update from them.
#include <array>
#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/equations/equation.hpp"

namespace heatwave {

class Coefficients {
 public:
  void set(const std::string& key, double value) { values_[key] = value; }
  double get(std::string_view key) const {
    const auto it = values_.find(key);
    if (it == values_.end()) throw std::logic_error("no coefficient '" + std::string(key) + "' in this problem");
    return it->second;
  }
  bool has(std::string_view key) const { return values_.find(key) != values_.end(); }

 private:
  std::map<std::string, double, std::less<>> values_;
};

// Eq's update for the whole grid: Update::at of the coefficients' values in
// Eq::coefficients order.
template <class Eq, class Real>
typename Eq::template Update<Real> make_update(const Coefficients& k, double dt) {
  std::array<double, Eq::coefficients.size()> values{};
  for (std::size_t n = 0; n < values.size(); ++n) values[n] = k.get(Eq::coefficients[n].key);
  return Eq::template Update<Real>::at(values.data(), dt);
}

}  // namespace heatwave
