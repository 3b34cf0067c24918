// Media and sources (docs/design.md, "Media and sources"): the exact facts
// the contract promises, each checked against a number worked out here.
#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/errors.hpp"
#include "io/hdf5.hpp"
#include "kernels/host/host_backend.hpp"
#include "solver/decomposition.hpp"
#include "solver/media.hpp"
#include "tests/support.hpp"

namespace heatwave {
namespace {

using test::config_from;

std::string fresh_dir(const std::string& name) {
  const std::string dir = (std::filesystem::temp_directory_path() / ("heatwave_media_" + name)).string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void expect_message(const Error& e, ExitCode code, const std::vector<std::string>& parts) {
  EXPECT_EQ(e.code(), code) << e.what();
  for (const auto& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
}

template <class F>
void expect_error(F&& f, ExitCode code, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one with " << parts.front();
  } catch (const Error& e) {
    expect_message(e, code, parts);
  }
}

// With zero-flux faces the heat's trapezoid mean changes by exactly dt times
// the trapezoid integral of the source a step: layered alpha, a random
// start, a Gaussian and a point source (whose integral is its amplitude).
TEST(UnitMedia, HeatMeanChangesByTheSourceIntegral) {
  const std::string yaml =
      "equation: heat\ngrid: {points: [41, 33], length: [1.0, 0.8]}\n"
      "material: {alpha: {type: layers, axis: y, interfaces: [0.3, 0.55], values: [1.0, 0.2, 3.0]}}\n"
      "time: {dt: auto, steps: 60}\nboundary: neumann\ninitial: {type: random, amplitude: 1, seed: 7}\n"
      "sources:\n"
      "  - {type: gaussian, center: [0.5, 0.3], width: 0.08, amplitude: 10.0}\n"
      "  - {type: point, position: [0.213, 0.61], amplitude: 2.5}\n"
      "backend: host\n";
  Simulation<2, double> sim(config_from(yaml));
  const Problem& p = sim.problem();
  // The Gaussian's trapezoid integral over the grid, worked out here; the point's is its amplitude.
  double gauss = 0, weight = 0;
  for (long j = 0; j < 33; ++j)
    for (long i = 0; i < 41; ++i) {
      const double w = (i == 0 || i == 40 ? 0.5 : 1.0) * (j == 0 || j == 32 ? 0.5 : 1.0);
      const double dx = i * p.spacing[0] - 0.5, dy = j * p.spacing[1] - 0.3;
      gauss += w * 10.0 * std::exp(-(dx * dx + dy * dy) / (2 * 0.08 * 0.08));
      weight += w;
    }
  const double area = weight * p.spacing[0] * p.spacing[1];  // the trapezoid area: 1.0 x 0.8
  const double expected = p.dt * (gauss * p.spacing[0] * p.spacing[1] + 2.5) / area;
  const double before = sim.diagnose().mean;
  sim.advance(60);
  const double change = sim.diagnose().mean - before;
  EXPECT_NEAR(change, 60 * expected, 1e-12 * std::abs(60 * expected) + 1e-15);
  EXPECT_GT(60 * expected, 1e-3);  // the check is not vacuous
}

// The harmonic face coefficient makes a layer interface midway between two
// grid points exact: the discrete steady state of 1D conduction through two
// layers is the continuous one, piecewise linear with a continuous flux.
// (An arithmetic mean misses it by more than 1e-3 at this spacing.)
TEST(UnitMedia, HarmonicMeanIsExactAtAnInterfaceBetweenPoints) {
  const double a1 = 0.5, a2 = 2.0, interface = 0.525;  // midway between y = 0.50 and 0.55
  const std::string yaml =
      "equation: heat\ngrid: {points: [3, 21]}\n"
      "material: {alpha: {type: layers, axis: y, interfaces: [0.525], values: [0.5, 2.0]}}\n"
      "time: {dt: auto, steps: 40000}\n"
      "boundary: {x_low: neumann, x_high: neumann, y_low: {type: dirichlet, value: 0}, "
      "y_high: {type: dirichlet, value: 1}}\n"
      "initial: {type: constant, value: 0}\nbackend: host\n";
  const std::vector<double> u = test::run_field<2, double>(config_from(yaml));
  // Flux F through both layers: u(1) - u(0) = F (interface/a1 + (1 - interface)/a2).
  const double flux = 1.0 / (interface / a1 + (1 - interface) / a2);
  for (long j = 0; j < 21; ++j) {
    const double y = 0.05 * j;
    const double exact = y < interface ? flux * y / a1 : flux * (interface / a1 + (y - interface) / a2);
    for (long i = 0; i < 3; ++i) EXPECT_NEAR(u[j * 3 + i], exact, 1e-9) << "y = " << y;
  }
}

// The wave with c(x): the energy, each point's kinetic term weighted by
// (c_max/c)^2, is conserved to rounding over many periods.
TEST(UnitMedia, WaveEnergyIsConservedWithVaryingSpeed) {
  for (const char* radius : {"1", "2"}) {
    const std::string yaml =
        std::string("equation: wave\ngrid: {points: [48, 40]}\nstencil: {radius: ") + radius +
        "}\nmaterial: {c: {type: layers, axis: x, interfaces: [0.35, 0.6], values: [1.0, 0.4, 2.0]}}\n"
        "time: {dt: auto, steps: 400}\nboundary: {x_low: neumann, x_high: neumann, y_low: periodic, y_high: "
        "periodic}\ninitial: {type: gaussian, center: [0.5, 0.5], width: 0.08}\nbackend: host\n";
    Simulation<2, double> sim(config_from(yaml));
    sim.advance(1);
    const double start = sim.diagnose().energy;
    sim.advance(399);
    const FieldSummary end = sim.diagnose();
    EXPECT_GT(start, 0);
    EXPECT_NEAR(end.energy, start, 1e-12 * start) << "radius " << radius;
    EXPECT_GT(end.l2, 1e-3);  // still ringing
  }
}

// A constant field given as a medium is the constant coefficient: the flux
// form equals alpha lap(u) to rounding, and the wave's point updates are its
// uniform update bit for bit.
TEST(UnitMedia, AConstantMediumIsTheConstantCoefficient) {
  const std::string base =
      "grid: {points: [30, 26]}\ntime: {dt: auto, steps: 50}\nboundary: dirichlet\n"
      "initial: {type: random, seed: 3}\nbackend: host\n";
  const auto heat = [&](const std::string& alpha) {
    return test::run_field<2, double>(config_from("equation: heat\n" + alpha + "\n" + base));
  };
  const auto a = heat("alpha: 0.7"), b = heat("material: {alpha: {type: layers, axis: x, values: [0.7]}}");
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  EXPECT_LT(worst, 1e-13);
  const auto wave = [&](const std::string& c) {
    return test::run_field<2, double>(config_from("equation: wave\n" + c + "\n" + base));
  };
  EXPECT_EQ(test::differing_values(wave("c: 0.7"), wave("material: {c: {type: layers, axis: y, values: [0.7]}}")), 0);
}

// A point source's weights: multilinear around the position, integral A
// (with the trapezoid weights), only at the point's own indices.
TEST(UnitMedia, PointSourceSpreadsItsAmplitude) {
  const std::string yaml =
      "equation: heat\ngrid: {points: [11, 11]}\ntime: {dt: auto, steps: 1}\nboundary: neumann\n"
      "initial: {type: constant, value: 0}\nbackend: host\n"
      "sources: [{type: point, position: [0.23, 0.0], amplitude: 3.0}]\n";
  const Problem p = test::problem_from(yaml);
  LocalDomain<2> d;
  d.layout.owned = {11, 11}, d.layout.halo = 2, d.global = {11, 11}, d.spacing = p.spacing;
  // The source is its points and weights, not a field: x at i = 2 and 3, y at j = 0 only.
  const auto media = Media<2, double, Heat>::make(p, d);
  ASSERT_EQ(media.sources.size(), 1u);
  const auto& term = media.sources[0];
  ASSERT_EQ(term.index[0], (std::vector<long>{2, 3}));
  ASSERT_EQ(term.index[1], (std::vector<long>{0}));  // a ghost (j = -1) is the mirror of j = 1, not the point
  const double h = 0.1;
  // x: 0.23 lies 30% of the way from x = 0.2 (i = 2) to 0.3 (i = 3); y: on the face point j = 0 (weight 1/2).
  // Separable: a factor along each axis, no array of q.
  ASSERT_TRUE(term.q.empty());
  const SourceView<2, double> view = media.source(0, [](const auto& v) { return v.data(); });
  EXPECT_NEAR(view.at({0, 0}), 3.0 * 0.7 / (h * h) * 2, 1e-9);
  EXPECT_NEAR(view.at({1, 0}), 3.0 * 0.3 / (h * h) * 2, 1e-9);
  double integral = 0;
  ASSERT_EQ(term.points(), 2u);
  for (long ky = 0; ky < view.count[1]; ++ky)
    for (long kx = 0; kx < view.count[0]; ++kx) {
      const long i = view.index[0][kx], j = view.index[1][ky];
      integral += (i == 0 || i == 10 ? 0.5 : 1) * (j == 0 || j == 10 ? 0.5 : 1) * view.at({kx, ky}) * h * h;
    }
  EXPECT_NEAR(integral, 3.0, 1e-12);
}

TEST(UnitMedia, TimeFunctions) {
  EXPECT_EQ(time_factor({TimeFunctionType::constant}, 5), 1.0);
  EXPECT_NEAR(time_factor({TimeFunctionType::ricker, 20, 0.06}, 0.06), 1.0, 1e-15);  // its peak
  // (1 - 2a) e^-a with a = (pi 20 0.01)^2
  const double a = std::pow(3.14159265358979323846 * 0.2, 2);
  EXPECT_NEAR(time_factor({TimeFunctionType::ricker, 20, 0.06}, 0.07), (1 - 2 * a) * std::exp(-a), 1e-14);
  EXPECT_NEAR(time_factor({TimeFunctionType::sine, 2}, 0.125), 1.0, 1e-15);  // sin(pi/2)
  EXPECT_NEAR(time_factor({TimeFunctionType::gaussian, 0, 1, 0.5}, 1.5), std::exp(-0.5), 1e-15);
  EXPECT_EQ(sample_index(-2, 10, false), 2);
  EXPECT_EQ(sample_index(11, 10, false), 7);
  EXPECT_EQ(sample_index(-2, 10, true), 8);
}

// Media from a file: the field is read, its extremes set dt: auto, and a
// rank's halos (here a periodic axis) take the values of the global points.
TEST(UnitMedia, FileMediumSetsTheStabilityLimit) {
  const std::string dir = fresh_dir("file");
  std::vector<double> alpha(12 * 10);
  for (std::size_t i = 0; i < alpha.size(); ++i) alpha[i] = 0.5 + 0.01 * static_cast<double>(i % 37);
  hdf5::write_fields<double>(dir + "/alpha.h5", MPI_COMM_SELF, {{10, 12}, {0, 0}, {10, 12}}, {},
                             {{"alpha", alpha.data()}});
  const std::string yaml =
      "equation: heat\ngrid: {points: [12, 10]}\ntime: {dt: auto, steps: 1}\n"
      "boundary: {x_low: periodic, x_high: periodic, y_low: neumann, y_high: neumann}\n"
      "initial: {type: constant, value: 0}\nmaterial: {alpha: {type: file, path: " +
      dir + "/alpha.h5}}\n";
  const Problem p = test::problem_from(yaml);
  EXPECT_EQ(p.material_range.at("alpha").first, 0.5);
  EXPECT_EQ(p.material_range.at("alpha").second, 0.5 + 0.01 * 36);
  EXPECT_NEAR(p.stability_number(), 0.9 * 0.5, 1e-12);  // dt: auto at 0.9 of the limit for the largest alpha
  LocalDomain<2> d;
  d.layout.owned = {6, 10}, d.layout.halo = 2, d.offset = {6, 0}, d.global = {12, 10};
  // The file's alpha, one value a point, is the flux form's (the pairs are computed from it where used).
  const std::vector<double> k = Media<2, double, Heat>::make(p, d).flux_alpha;
  EXPECT_EQ(k[d.layout.offset({0, 3})], alpha[3 * 12 + 6]);
  EXPECT_EQ(k[d.layout.offset({6, 3})], alpha[3 * 12 + 0]);   // past x = 11: the periodic image x = 0
  EXPECT_EQ(k[d.layout.offset({-2, 3})], alpha[3 * 12 + 4]);  // the neighbour's x = 4
  // Past the Neumann face, the quartic through y = 0..4 (x = 7), not below the least value.
  const auto a = [&](int y) { return alpha[y * 12 + 7]; };
  EXPECT_NEAR(k[d.layout.offset({1, -1})], std::max(0.5, 5 * a(0) - 10 * a(1) + 10 * a(2) - 5 * a(3) + a(4)), 1e-14);
  EXPECT_NEAR(k[d.layout.offset({1, -2})],
              std::max(0.5, 15 * a(0) - 40 * a(1) + 45 * a(2) - 24 * a(3) + 5 * a(4)), 1e-13);
}

// The memory a run's media hold is what the config defines: a file's field is
// one value a point of the rank's storage; layers, absorbing faces, a point
// source and a Gaussian are tables and a few points, never a field.
TEST(UnitMedia, MediaHoldOneValueAPointPerFileAndTablesOtherwise) {
  const std::string dir = fresh_dir("memory");
  std::vector<double> c(40 * 30, 1.0);
  hdf5::write_fields<double>(dir + "/c.h5", MPI_COMM_SELF, {{30, 40}, {0, 0}, {30, 40}}, {}, {{"c", c.data()}});
  const std::string base =
      "equation: wave\ngrid: {points: [40, 30]}\ntime: {dt: auto, steps: 1}\nprecision: float32\n"
      "initial: {type: constant, value: 0}\n";
  LocalDomain<2> d;
  d.layout.owned = {40, 30}, d.layout.halo = 1, d.global = {40, 30};
  const std::size_t points = d.layout.storage_size();  // 42 x 32
  const MediaMemory file = media_memory(test::problem_from(base + "material: {c: {type: file, path: " + dir + "/c.h5}}\n"), d);
  EXPECT_EQ(file.held, points * 4);
  EXPECT_EQ(file.staging, points * 2 * sizeof(double));
  LocalDomain<2> big;  // a grid where a field would be 1.2 MB
  big.layout.owned = {800, 400}, big.layout.halo = 1, big.global = {800, 400};
  // The c table along y, the absorbing profile along y, and the point source's
  // corners: what Media holds, to the point source's few bytes.
  const Problem shot_problem = test::problem_from(
      base +
      "material: {c: {type: layers, axis: y, interfaces: [0.5], values: [1.0, 2.0]}}\n"
      "boundary: {default: dirichlet, y_high: {type: absorbing, width: 5}}\n"
      "sources: [{type: point, position: [0.5, 0.5], amplitude: 1, time: {type: ricker, frequency: 2}}]\n");
  const MediaMemory shot = media_memory(shot_problem, big);
  const std::size_t held = Media<2, float, DampedWave>::make(shot_problem, big).bytes();
  const std::size_t tables = 2 * 402 * sizeof(double), corners = 16 * (4 + sizeof(long));
  EXPECT_GE(held, tables);
  EXPECT_LE(held, tables + corners);
  EXPECT_GE(shot.held, held);
  EXPECT_LE(shot.held, tables + corners);
  EXPECT_EQ(shot.staging, 0u);
  // A Gaussian: an index and a factor a point along each axis (separable),
  // never its box of values (up to 802 x 402).
  const Problem sink =
      test::problem_from(base + "sources: [{type: gaussian, center: [0.5, 0.0], width: 0.2, amplitude: 1}]\n");
  const std::size_t gaussian = Media<2, float, Wave>::make(sink, big).bytes();
  const std::size_t axes = (802 + 402) * (4 + sizeof(long));
  EXPECT_GT(gaussian, 0u);
  EXPECT_LE(gaussian, axes);
  EXPECT_GE(media_memory(sink, big).held, gaussian);
  EXPECT_LE(media_memory(sink, big).held, axes);
}

// Without a file, the update at a point is a function of what each axis
// contributes there (PointUpdates::axis_contributions), which is what lets
// the 3D cluster kernels take every update from a table by (z, y, x) class:
// at every stored point of a damped wave with c in layers along z, gamma in
// layers along x and absorbing faces (a free surface on top), the update
// is bitwise the one at the first point of its three classes.
TEST(UnitMedia, UpdatesAreAFunctionOfEachAxisClass) {
  using Updates = PointUpdates<3, double, DampedWave>;
  const Problem p = test::problem_from(
      "equation: damped_wave\ngrid: {points: [23, 19, 17]}\ntime: {dt: auto, steps: 1}\n"
      "initial: {type: constant, value: 0}\n"
      "material: {c: {type: layers, axis: z, interfaces: [0.3, 0.7], values: [3.0, 2.2, 1.5]},\n"
      "           gamma: {type: layers, axis: x, interfaces: [0.5], values: [0.0, 0.4]}}\n"
      "boundary: {default: {type: absorbing, width: 4}, z_high: {type: neumann, value: 0.0}}\n");
  Decomposition decomposition(p, {}, 2, MPI_COMM_SELF);
  const LocalDomain<3> domain = decomposition.local_domain<3>();
  const auto media = Media<3, double, DampedWave>::make(p, domain);
  const Updates updates = media.updates([](const auto& v) { return v.data(); });
  const Box<3> box = domain.layout.storage_box();
  std::array<AxisClasses, 3> classes;
  for (int a = 0; a < 3; ++a) {
    std::vector<double> keys(static_cast<std::size_t>(box.extent(a)) * Updates::contributions);
    for (long c = box.lo[a]; c < box.hi[a]; ++c)
      updates.axis_contributions(a, c, keys.data() + (c - box.lo[a]) * Updates::contributions);
    classes[a] = axis_classes(keys, Updates::contributions, box.lo[a]);
    EXPECT_LT(classes[a].first.size(), static_cast<std::size_t>(box.extent(a))) << "axis " << a;
  }
  // x: each side's 4 layer points and 2 ghosts (their profile values on
  // that side's gamma layer), and the interior of each gamma layer.
  EXPECT_EQ(classes[0].first.size(), 14u);
  long points = 0;
  for (long z = box.lo[2]; z < box.hi[2]; ++z)
    for (long y = box.lo[1]; y < box.hi[1]; ++y)
      for (long x = box.lo[0]; x < box.hi[0]; ++x) {
        const Index<3> i{x, y, z};
        const Index<3> first{classes[0].first[classes[0].of[x - box.lo[0]]],
                             classes[1].first[classes[1].of[y - box.lo[1]]],
                             classes[2].first[classes[2].of[z - box.lo[2]]]};
        const auto at = updates.at(0, i), there = updates.at(0, first);
        ASSERT_EQ(std::memcmp(&at, &there, sizeof at), 0) << "at (" << x << ", " << y << ", " << z << ")";
        ++points;
      }
  EXPECT_EQ(points, box.size());
}

// The host remembers a row's run updates for the next row (c in layers along
// x: every row has the same runs). Two backends stepped in turn on one thread,
// their rows alike but for dt, each keep to their own.
TEST(UnitMedia, EachBackendStepsWithItsOwnRowUpdates) {
  const auto problem = [](double dt) {
    return test::problem_from(fmt::format(
        "equation: wave\ngrid: {{points: [64, 48]}}\ntime: {{dt: {}, steps: 6}}\n"
        "material: {{c: {{type: layers, axis: x, interfaces: [0.45], values: [1, 0.4]}}}}\n"
        "initial: {{type: gaussian, width: 0.1}}\n",
        dt));
  };
  const Problem slow = problem(0.002), fast = problem(0.004);
  Decomposition decomposition(fast, {}, 1, MPI_COMM_SELF);
  const LocalDomain<2> domain = decomposition.local_domain<2>();
  const auto field = [&](Backend<2, double>& b) {
    std::vector<double> u(static_cast<std::size_t>(domain.layout.owned_box().size()));
    b.read(Level::current, u.data());
    return u;
  };
  std::vector<std::vector<double>> alone;
  for (const Problem* p : {&slow, &fast}) {
    auto b = make_host_backend<2, double>(*p, domain);
    b->initialize();
    b->advance(6);
    alone.push_back(field(*b));
  }
  auto a = make_host_backend<2, double>(slow, domain), b = make_host_backend<2, double>(fast, domain);
  a->initialize(), b->initialize();
  for (int n = 0; n < 6; ++n) a->advance(1), b->advance(1);
  EXPECT_EQ(field(*a), alone[0]);
  EXPECT_EQ(field(*b), alone[1]);
  EXPECT_NE(alone[0], alone[1]);  // dt matters: the check is not vacuous
}

TEST(UnitMedia, BadMediaAndSourcesAreRefused) {
  const std::string dir = fresh_dir("bad");
  const std::string base =
      "equation: heat\ngrid: {points: [12, 10]}\ntime: {dt: auto, steps: 1}\n"
      "boundary: dirichlet\ninitial: {type: constant, value: 0}\n";
  const auto refuses = [&](const std::string& extra, ExitCode code, const std::vector<std::string>& parts) {
    expect_error([&] { test::problem_from(base + extra); }, code, parts);
  };
  refuses("material: {alpha: {type: layers, axis: y, interfaces: [0.5, 0.4], values: [1, 2, 3]}}\n",
          ExitCode::invalid_value, {"material.alpha.interfaces", "must increase", "0.4"});
  refuses("material: {alpha: {type: layers, axis: y, interfaces: [0.5], values: [1, 2, 3]}}\n", ExitCode::invalid_value,
          {"material.alpha.values", "3 values for 1 interfaces"});
  refuses("material: {alpha: {type: layers, axis: z, values: [1]}}\n", ExitCode::invalid_value,
          {"material.alpha.axis", "'z'"});
  refuses("material: {alpha: {type: layers, axis: x, interfaces: [1.5], values: [1, 2]}}\n", ExitCode::invalid_value,
          {"material.alpha.interfaces", "outside the domain"});
  refuses("material: {alpha: {type: layers, axis: x, values: [-1]}}\n", ExitCode::invalid_value,
          {"material.alpha.values", "must be > 0"});
  refuses("material: {alpha: 0}\n", ExitCode::invalid_value, {"material.alpha", "must be > 0"});
  refuses("alpha: 2\nmaterial: {alpha: 3}\n", ExitCode::invalid_value, {"'alpha'", "given twice"});
  refuses("material: {c: 3}\n", ExitCode::invalid_value, {"material.c", "wave equation"});
  refuses("material: {alpha: {type: file, path: " + dir + "/none.h5}}\n", ExitCode::file_not_found,
          {"material.alpha.path", "none.h5", "no such file"});
  std::vector<double> v(12 * 10, 1.0);
  hdf5::write_fields<double>(dir + "/wrong.h5", MPI_COMM_SELF, {{12, 10}, {0, 0}, {12, 10}}, {}, {{"alpha", v.data()}});
  refuses("material: {alpha: {type: file, path: " + dir + "/wrong.h5}}\n", ExitCode::invalid_value,
          {"material.alpha.path", "shape [12, 10]", "needs [10, 12]"});
  v[17] = std::nan("");
  hdf5::write_fields<double>(dir + "/nan.h5", MPI_COMM_SELF, {{10, 12}, {0, 0}, {10, 12}}, {}, {{"alpha", v.data()}});
  refuses("material: {alpha: {type: file, path: " + dir + "/nan.h5}}\n", ExitCode::invalid_value,
          {"material.alpha.path", "nan", "[5, 1] (x, y, z)", "must be > 0 and finite"});
  refuses("material: {alpha: {type: file, path: " + dir + "/nan.h5, dataset: q}}\n", ExitCode::invalid_value,
          {"has no dataset 'q'"});
  refuses("sources: [{type: point, position: [0.5, 1.2]}]\n", ExitCode::invalid_value,
          {"sources[0].position", "outside the domain", "y = 1.2"});
  refuses("sources: [{type: point, position: [0.0, 0.5]}]\n", ExitCode::invalid_value,
          {"sources[0].position", "Dirichlet face x_low"});
  refuses("sources: [{type: gaussian, time: {type: chirp}}]\n", ExitCode::invalid_value,
          {"sources[0].time.type", "'chirp'", "ricker"});
  refuses("sources: [{type: gaussian, time: {type: ricker}}]\n", ExitCode::invalid_value,
          {"sources[0].time.frequency", "is required"});
  refuses("sources: [{type: gaussian, position: [0.5, 0.5]}]\n", ExitCode::invalid_value,
          {"sources[0].position", "does not apply to 'type: gaussian'"});
  refuses("sources: [{type: field, path: " + dir + "/nan.h5, dataset: alpha}]\n", ExitCode::invalid_value,
          {"sources[0].path", "a source must be finite"});
  refuses("sources: {type: point}\n", ExitCode::wrong_type, {"'sources'", "expects a list"});
  // The stability refusal names the coefficient's range.
  expect_error(
      [&] {
        std::string unstable = base;
        unstable.replace(unstable.find("dt: auto"), 8, "dt: 0.01");
        test::problem_from(unstable +
                           "material: {alpha: {type: layers, axis: x, interfaces: [0.5], values: [1, 4]}}\n");
      },
      ExitCode::unstable, {"'time.dt'", "ranges over [1, 4]", "largest value"});
}

// The resolved config reads back to itself, and relative data paths
// resolve against the config file's folder.
TEST(UnitMedia, ConfigRoundTripsAndResolvesPaths) {
  const std::string dir = fresh_dir("paths");
  std::filesystem::create_directories(dir + "/case");
  const std::string yaml =
      "equation: damped_wave\ngrid: {points: [12, 10]}\ntime: {dt: auto, steps: 1}\nboundary: neumann\n"
      "initial: {type: constant, value: 0}\n"
      "material: {c: {type: layers, axis: x, interfaces: [0.5], values: [1, 2]}, gamma: {type: file, path: "
      "g.h5}}\nsources:\n  - {type: field, path: ../q.h5}\n"
      "  - {type: point, position: [0.5, 0.5], amplitude: 2, time: {type: ricker, frequency: 10}}\n"
      "  - {type: gaussian, width: 0.2, time: {type: gaussian, width: 0.1, delay: 0.3}}\n";
  { std::ofstream(dir + "/case/run.yaml") << yaml; }
  const Config c = load_config_file(dir + "/case/run.yaml");
  EXPECT_EQ(c.material.at("gamma").path, dir + "/case/g.h5");
  EXPECT_EQ(c.sources[0].path, dir + "/q.h5");
  EXPECT_EQ(c.sources[1].time.delay, 0.1);  // a Ricker's default delay: one period
  const Config again = load_config_text(to_yaml(c), "resolved.yaml");
  EXPECT_EQ(to_yaml(again), to_yaml(c));
  EXPECT_EQ(again.sources.size(), 3u);
  EXPECT_EQ(again.material.at("c").values, (std::vector<double>{1, 2}));
}

}  // namespace
}  // namespace heatwave
