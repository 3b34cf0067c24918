// Built instead of reference.cpp when HEATWAVE_KOKKOS=OFF: the suite skips
// its reference rows (visibly) and never calls run() or traces(), which refuse.
#include "io/errors.hpp"
#include "validation/reference.hpp"

namespace heatwave::reference {
namespace {

[[noreturn]] void refuse(const Problem& problem) {
  throw Error(ExitCode::invalid_value, problem.source +
                                           ": the 'reference' check needs the Kokkos reference solver, and this build "
                                           "has none (configure with -DHEATWAVE_KOKKOS=ON and Kokkos installed)");
}

}  // namespace

std::vector<Fields> run(const Problem& problem, const std::vector<long>&) { refuse(problem); }

Traces traces(const Problem& problem, const std::vector<std::array<double, 3>>&, long, bool) { refuse(problem); }

bool available() { return false; }

std::string description() { return "no (built with HEATWAVE_KOKKOS=OFF)"; }

}  // namespace heatwave::reference
