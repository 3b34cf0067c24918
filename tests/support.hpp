#pragma once
// Helpers for tests: configs from YAML text, runs, global fields.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "solver/problem.hpp"
#include "solver/simulation.hpp"

namespace heatwave::test {

inline Config config_from(const std::string& yaml) { return load_config_text(yaml, "<test>"); }
inline Problem problem_from(const std::string& yaml) { return Problem::from(config_from(yaml)); }

// Runs `steps` steps (default: the problem's) and returns the global current field on rank 0.
template <int D, class Real>
std::vector<Real> run_field(const Config& c, long steps = -1) {
  Simulation<D, Real> sim(c);
  sim.advance(steps < 0 ? sim.problem().steps : steps);
  return sim.gather(Level::current);
}

// Values whose bits differ between two fields (0: bitwise equal).
template <class Real>
long differing_values(const std::vector<Real>& a, const std::vector<Real>& b) {
  EXPECT_EQ(a.size(), b.size());
  long n = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) n += std::memcmp(&a[i], &b[i], sizeof(Real)) != 0;
  return n;
}

}  // namespace heatwave::test
