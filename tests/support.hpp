#pragma once
// Helpers for tests: configs from YAML text, runs, global fields.
#include <string>
#include <vector>

#include "io/config.hpp"
#include "solver/problem.hpp"
#include "solver/simulation.hpp"

namespace heatwave::test {

inline Problem problem_from(const std::string& yaml) { return Problem::from(load_config_text(yaml, "<test>")); }

// Runs `steps` steps (default: the problem's) and returns the global current field on rank 0.
template <int D, class Real>
std::vector<Real> run_field(const Problem& p, long steps = -1) {
  Simulation<D, Real> sim(p);
  sim.advance(steps < 0 ? p.steps : steps);
  return sim.gather(Level::current);
}

}  // namespace heatwave::test
