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

// Where two fields of `points` (x fastest) differ: the box that holds every
// differing point, for a failure message ("" where they are bitwise equal).
template <class Real>
std::string where_differ(const std::vector<Real>& a, const std::vector<Real>& b, const std::vector<long>& points) {
  std::vector<long> lo(points.size(), -1), hi(points.size(), -1);
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(Real)) == 0) continue;
    long rest = static_cast<long>(i);
    for (std::size_t d = 0; d < points.size(); ++d, rest /= points[d - 1]) {
      const long c = rest % points[d];
      lo[d] = lo[d] < 0 ? c : std::min(lo[d], c), hi[d] = std::max(hi[d], c);
    }
  }
  if (lo[0] < 0) return "";
  std::string box = "differing points within";
  for (std::size_t d = 0; d < points.size(); ++d)
    box += std::string(d ? " x" : "") + " [" + std::to_string(lo[d]) + ", " + std::to_string(hi[d]) + "]";
  return box;
}

}  // namespace heatwave::test
