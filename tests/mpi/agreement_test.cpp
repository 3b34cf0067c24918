// Under mpirun -n N (1 to 4): every equation x dimension x boundary type on N
// ranks gives one rank's fields bit for bit, for several decompositions
// (MPI's choice, N x 1, 1 x N, uneven splits), exchange every step and every
// few steps (deep halos), with the exchange overlapped and not. One rank's
// answer comes from the same program on MPI_COMM_SELF. HEATWAVE_TEST_TRANSPORT
// picks the halo transport of the N-rank runs (default auto; the GPU check
// runs each of nccl, mpi-cuda-aware and mpi-host on the cuda backend).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "support.hpp"

namespace heatwave {
namespace {

int world(int (*query)(MPI_Comm, int*)) {
  int value = 0;
  query(MPI_COMM_WORLD, &value);
  return value;
}

// host, unless HEATWAVE_TEST_BACKEND names another (cuda: scripts/mpi-gpu-check.sh).
std::string backend_under_test() {
  const char* backend = std::getenv("HEATWAVE_TEST_BACKEND");
  return backend ? backend : "host";
}

// auto, unless HEATWAVE_TEST_TRANSPORT names one (parallel.halo_transport).
std::string transport_under_test() {
  const char* transport = std::getenv("HEATWAVE_TEST_TRANSPORT");
  return transport ? transport : "auto";
}

struct Case {
  std::string equation;
  int dims;
  std::string boundary;  // name of a boundary set below
  int radius;
  bool media = false;    // coefficients that vary in space,
  bool sources = false;  // and sources
  std::string grid = "";  // points, where not grid_points' (3D: the deep family's tiles)
};

std::string boundary_yaml(const std::string& name, int dims) {
  if (name == "dirichlet") return "{default: {type: dirichlet, value: 0.5}}";
  if (name == "neumann") return "{default: {type: neumann, value: 0.3}}";
  if (name == "periodic") return "periodic";
  // mixed: a periodic axis, and Dirichlet and Neumann faces with nonzero values
  return std::string("{x_low: periodic, x_high: periodic, y_low: {type: dirichlet, value: 0.25}, ") +
         "y_high: {type: neumann, value: -0.4}" +
         (dims == 3 ? ", z_low: {type: neumann, value: 0.2}, z_high: {type: dirichlet, value: -0.1}}" : "}");
}

// Uneven on 2, 3 and 4 ranks along every axis, and thick enough for a halo of
// 3 (radius 1) or 4 (radius 2) on 4 ranks per axis.
// At radius 3 and 4 a box at a face needs r + 1 points (its ghosts mirror
// them): 21 points over 4 ranks give 5.
std::string grid_points(const Case& c) {
  if (!c.grid.empty()) return c.grid;
  if (c.radius >= 3) return c.dims == 2 ? "[23, 21]" : "[21, 22, 23]";
  return c.dims == 2 ? "[19, 18]" : "[17, 18, 19]";
}

std::string case_yaml(const Case& c, const std::vector<int>& decomposition, const std::string& exchange_every,
                      bool overlap) {
  std::string decomp;
  for (int n : decomposition) decomp += (decomp.empty() ? "" : ", ") + std::to_string(n);
  std::string yaml = "equation: " + c.equation + "\nprecision: " + (c.dims == 2 ? "float64" : "float32") +
                     "\ngrid: {points: " + grid_points(c) + "}\nstencil: {radius: " + std::to_string(c.radius) +
                     "}\ntime: {dt: auto, steps: 40}\nboundary: " + boundary_yaml(c.boundary, c.dims) +
                     "\ninitial: {type: random, seed: 3}\nbackend: " + backend_under_test() +
                     "\nthreads: 1\nparallel: {exchange_every: " + exchange_every +
                     ", overlap: " + (overlap ? "true" : "false") + ", decomposition: [" + decomp +
                     "], halo_transport: " + transport_under_test() + "}\n";
  if (c.equation != "heat") yaml += "velocity: {type: random, seed: 7, amplitude: 0.5}\n";
  if (c.media) {
    // Layers across the rank boundaries, and a point source between two ranks' points.
    const std::string axis = c.dims == 3 ? "z" : "y";
    if (c.equation == "heat")
      yaml += "material: {alpha: {type: layers, axis: " + axis + ", interfaces: [0.37, 0.71], values: [1, 0.3, 2]}}\n";
    else
      yaml += "material: {c: {type: layers, axis: x, interfaces: [0.5], values: [1, 0.5]}" +
              std::string(c.equation == "damped_wave"
                              ? ", gamma: {type: layers, axis: " + axis + ", interfaces: [0.6], values: [0, 4]}"
                              : "") +
              "}\n";
  }
  if (c.sources) {
    const std::string middle = c.dims == 3 ? "[0.5, 0.47, 0.52]" : "[0.5, 0.47]";
    yaml +=
        "sources:\n  - {type: gaussian, width: 0.2, amplitude: 3, time: {type: ricker, frequency: 5, delay: 0}}\n"
        "  - {type: point, position: " +
        middle + ", amplitude: 2, time: {type: sine, frequency: 3}}\n";
  }
  return yaml;
}

// MPI's choice (zeros), and all ranks along each axis in turn where that differs from it.
std::vector<std::vector<int>> decompositions(int dims, int ranks) {
  std::vector<int> chosen(dims, 0);
  MPI_Dims_create(ranks, dims, chosen.data());
  std::vector<std::vector<int>> all{std::vector<int>(dims, 0)};
  for (int a = 0; a < dims && ranks > 1; ++a) {
    std::vector<int> d(dims, 1);
    d[a] = ranks;
    if (d != chosen) all.push_back(d);
  }
  return all;
}

std::vector<Level> levels_of(const Case& c) {
  if (c.equation != "heat") return {Level::current, Level::previous};
  return {Level::current};
}

template <int D, class Real>
void check_agreement(const Case& c) {
  const int rank = world(MPI_Comm_rank), ranks = world(MPI_Comm_size);
  const std::string name = c.equation + " " + std::to_string(D) + "D " + c.boundary + " radius " +
                           std::to_string(c.radius) + (c.media ? " with media" : "") +
                           (c.sources ? " and sources" : "");
  std::vector<std::vector<Real>> expected;
  if (rank == 0) {
    Simulation<D, Real> one(test::config_from(case_yaml(c, std::vector<int>(D, 1), "1", false)), MPI_COMM_SELF);
    one.advance(one.problem().steps);
    for (Level level : levels_of(c)) {
      expected.push_back(one.gather(level));
      // Poison NaNs would compare equal bit for bit: the reference must be a real answer.
      for (Real v : expected.back()) ASSERT_TRUE(std::isfinite(v)) << name << ": the one-rank answer is not finite";
    }
  }
  // auto: the cluster plan's k on cuda-cluster (HEATWAVE_CLUSTER_PLAN fixes
  // it), the cuda backend's deep halos (capped by these thin boxes), 1 on the host.
  // (At radius 3 and 4 one step's halo fills the thinnest boxes, 21 points
  // over 4 ranks: no deeper one fits.)
  std::vector<std::string> exchanges{"1"};
  if (c.radius <= 2) exchanges.push_back(c.radius == 1 ? "3" : "2");
  if (backend_under_test() != "host") exchanges.push_back("auto");
  for (const auto& decomposition : decompositions(D, ranks))
    for (const std::string& exchange_every : exchanges)
      for (bool overlap : {false, true}) {
        Simulation<D, Real> many(test::config_from(case_yaml(c, decomposition, exchange_every, overlap)),
                                 MPI_COMM_WORLD);
        // Which kernels ran: a GPU backend may fall back (with a warning) where its plan does not fit.
        if (rank == 0 && backend_under_test() != "host")
          std::cout << "  " << name << " on " << ranks << " ranks along [" << many.decomposition().dims()[0] << ", "
                    << many.decomposition().dims()[1]
                    << (D == 3 ? ", " + std::to_string(many.decomposition().dims()[2]) : "") << "], exchange_every "
                    << exchange_every << ", overlap " << overlap << ": " << many.backend().name() << ", "
                    << many.backend_reason() << "\n";
        many.advance(many.problem().steps);
        ASSERT_EQ(many.step(), many.problem().steps);
        for (Level level : levels_of(c)) {
          const auto u = many.gather(level);
          if (rank != 0) continue;
          const auto& dims = many.decomposition().dims();
          EXPECT_EQ(test::differing_values(expected[static_cast<std::size_t>(level)], u), 0)
              << name << " through " << transport_under_test() << " on " << ranks << " ranks as " << dims[0] << " x "
              << dims[1] << (D == 3 ? " x " + std::to_string(dims[2]) : "") << ", exchange_every " << exchange_every
              << ", overlap " << overlap << ", level " << static_cast<int>(level) << ": "
              << test::where_differ(
                     expected[static_cast<std::size_t>(level)], u,
                     std::vector<long>(many.problem().points.begin(), many.problem().points.begin() + D));
        }
      }
}

class MpiAgreement : public ::testing::TestWithParam<Case> {};

TEST_P(MpiAgreement, NRanksGiveOneRanksFieldsBitwise) {
  const Case& c = GetParam();
  if (c.dims == 2)
    check_agreement<2, double>(c);
  else
    check_agreement<3, float>(c);
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  const std::vector<std::string> boundaries{"dirichlet", "neumann", "periodic", "mixed"};
  for (const std::string equation : {"heat", "wave"})
    for (int dims : {2, 3})
      for (std::size_t b = 0; b < boundaries.size(); ++b)  // both radii for every boundary type
        cases.push_back({equation, dims, boundaries[b], 1 + static_cast<int>((b + dims + (equation == "wave")) % 2)});
  // Media and sources (cuda-cluster runs them on the cuda backend: docs/design.md),
  for (const std::string equation : {"heat", "wave", "damped_wave"})
    for (int dims : {2, 3})
      cases.push_back({equation, dims, dims == 2 ? "mixed" : "neumann", dims == 2 ? 2 : 1, true, true});
  // and the heat's varying alpha alone, which cuda-cluster's 2D kernels read.
  for (int radius : {1, 2}) cases.push_back({"heat", 2, radius == 1 ? "periodic" : "dirichlet", radius, true, false});
  // Radius 3 and 4: halos 3 and 4 deep a step, every boundary type once, and media with sources.
  cases.push_back({"heat", 2, "dirichlet", 3});
  cases.push_back({"wave", 2, "neumann", 4});
  cases.push_back({"heat", 3, "periodic", 4});
  cases.push_back({"wave", 3, "mixed", 3});
  cases.push_back({"heat", 2, "mixed", 4, true, true});
  cases.push_back({"damped_wave", 3, "neumann", 3, true, true});
  // Wide enough in x and y for a tile of cuda-cluster's deep 3D family
  // (64 x 32 in fp32, the last tile of each axis overlapping), which runs
  // ranks along z (scripts/mpi-gpu-check.sh forces it with
  // HEATWAVE_CLUSTER_PLAN): its plain heat, and the wave with the shot's
  // features (c in layers, sources) on a periodic x axis.
  cases.push_back({"heat", 3, "dirichlet", 1, false, false, "[70, 36, 41]"});
  cases.push_back({"wave", 3, "mixed", 1, true, true, "[70, 36, 41]"});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(EveryCase, MpiAgreement, ::testing::ValuesIn(all_cases()), [](const auto& info) {
  const Case& c = info.param;
  return c.equation + std::to_string(c.dims) + "D_" + c.boundary + "_radius" + std::to_string(c.radius) +
         (c.media ? "_media" : "") + (c.sources ? "_sources" : "") + (c.grid.empty() ? "" : "_deep_tiles");
});

}  // namespace
}  // namespace heatwave
