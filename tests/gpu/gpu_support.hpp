#pragma once
// Shared by the GPU tests: cases from a few parameters, fresh random fields,
// and the boundary sets every backend comparison runs through.
#include <spdlog/fmt/fmt.h>

#include <random>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "solver/backend.hpp"
#include "solver/problem.hpp"
#include "solver/registry.hpp"

namespace heatwave::test {

// `extra`: more config (media, sources); the damped wave's gamma is 1.5 unless it gives one.
inline Problem gpu_case(const char* eq, int dims, const char* precision, int radius, const std::string& boundary,
                        const std::string& grid, const std::string& initial = "{type: constant, value: 0}",
                        const std::string& extra = "") {
  const char* lengths = dims == 2 ? "[1.0, 0.8]" : "[1.0, 0.8, 1.2]";
  const bool gamma = std::string(eq) == "damped_wave" && extra.find("gamma") == std::string::npos;
  const std::string yaml = fmt::format(
      "equation: {}\nprecision: {}\ngrid: {{points: {}, length: {}}}\nstencil: {{radius: {}}}\n"
      "time: {{dt: auto, steps: 1}}\nboundary: {}\ninitial: {}\n{}{}",
      eq, precision, grid, lengths, radius, boundary, initial, gamma ? "gamma: 1.5\n" : "", extra);
  return Problem::from(load_config_text(yaml, "<gpu test>"));
}

template <class Real>
std::vector<Real> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<Real> v(n);
  for (auto& x : v) x = static_cast<Real>(dist(gen));
  return v;
}

// Initialise the backends, then give all of them the same fresh random u (and
// u_prev for the wave) on their n owned points: one input, compared outputs.
template <int D, class Real>
void start_from_same_random_fields(const Problem& p, std::size_t n, unsigned seed,
                                   std::initializer_list<Backend<D, Real>*> backends) {
  const auto u0 = random_values<Real>(n, seed), v0 = random_values<Real>(n, seed + 12);
  for (auto* b : backends) {
    b->initialize();
    b->write(Level::current, u0.data());
    if (p.levels() == 2) b->write(Level::previous, v0.data());
  }
}

// backend: cuda-cluster as a run asks the registry for it: the cluster backend
// with the reason, or cuda where no cluster plan runs (the reason says why).
template <int D, class Real>
ChosenBackend<D, Real> cluster_backend(const Problem& p, const LocalDomain<D>& domain,
                                       const ClusterSettings& cluster = {}) {
  RunSettings run;
  run.backend = BackendKind::cuda_cluster;
  run.cluster = cluster;
  return make_backend<D, Real>(p, run, domain, MPI_COMM_SELF);
}

// Homogeneous faces of each type, and mixed non-zero faces with periodic axes.
inline const std::vector<std::string> boundary_sets = {
    "dirichlet",
    "neumann",
    "periodic",
    "{default: {type: dirichlet, value: 0.25}, x_low: {type: neumann, value: -0.5}, y_high: {type: neumann, value: "
    "1.0}}",
    "{default: periodic, y_low: {type: dirichlet, value: 1.0}, y_high: {type: neumann, value: 0.0}}",
    "{default: {type: neumann, value: 0.5}, x_low: periodic, x_high: periodic, y_low: {type: dirichlet, value: -0.75}}",
};

}  // namespace heatwave::test
