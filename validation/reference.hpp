#pragma once
// The Kokkos reference solver: an independent implementation of the numerics
// contract (docs/design.md) that shares no stencil, update or boundary code
// with solver/ or kernels/, so that agreement with it means something. It
// shares only the Problem struct (media and sources included), the
// initial-condition definitions and the HDF5 reader (material and source files).
//
// A plain C++ interface (no Kokkos types): the reference builds as C++17 for
// the installed Kokkos headers and the C++20 code calls it through this file.
#include <array>
#include <string>
#include <vector>

#include "solver/problem.hpp"

namespace heatwave::reference {

// The global fields at one step, x fastest, widened to double (exact copies of
// the working precision).
struct Fields {
  long step = 0;
  std::vector<double> current;   // u^n
  std::vector<double> previous;  // wave: u^{n-1}, v0 before the first step; heat: empty
};

// Runs the problem on this process and returns the fields at each of
// `at_steps` (any order; each <= problem.steps is sensible, any >= 0 works).
std::vector<Fields> run(const Problem& problem, const std::vector<long>& at_steps);

// What receivers record, as the reference samples it: the level u (or, with
// `previous`, u^{n-1}) at each position (physical coordinates), interpolated
// multilinearly between the 2^D grid points around it, at steps 0, every,
// 2 every, ... up to problem.steps.
struct Traces {
  std::vector<long> steps;
  std::vector<double> values;  // [receiver][sample]
};
Traces traces(const Problem& problem, const std::vector<std::array<double, 3>>& positions, long every, bool previous);

// Whether this build has the reference (HEATWAVE_KOKKOS=ON): without it the
// suite's reference rows are SKIP, counted and shown, and every other check runs.
bool available();

// "Kokkos 3.4.1 (Serial)": the version and the execution space that runs.
std::string description();

}  // namespace heatwave::reference
