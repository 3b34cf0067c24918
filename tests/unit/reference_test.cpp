// The Kokkos reference solver on its own (validation/reference.hpp): exact
// discrete modes for every equation x dims x precision x radius x boundary,
// and the boundary rules on states whose answer is known by hand; with media
// and sources, agreement with the host backend (two implementations of one
// contract).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "build_info.hpp"
#include "io/hdf5.hpp"
#include "solver/initial.hpp"
#include "support.hpp"
#include "validation/analytic.hpp"
#include "validation/reference.hpp"

namespace heatwave {
namespace {

std::string mode_yaml(const std::string& equation, int dims, const std::string& precision, int radius,
                      const std::string& boundary, long steps) {
  const std::string ic = boundary == "neumann" ? "cosine" : "sine";
  const bool periodic = boundary == "periodic";  // needs even modes
  return "equation: " + equation + "\nprecision: " + precision +
         "\ngrid: {points: " + (dims == 2 ? "[33, 21]" : "[17, 13, 11]") +
         ", length: " + (dims == 2 ? "[1.0, 0.7]" : "[1.0, 0.7, 1.3]") +
         "}\nstencil: {radius: " + std::to_string(radius) +
         "}\ntime: {dt: auto, safety: 0.3, steps: " + std::to_string(steps) + "}\nboundary: " + boundary +
         "\ninitial: {type: " + ic + ", amplitude: 1.5, modes: " +
         (dims == 2 ? (periodic ? "[2, 4]" : "[1, 2]") : (periodic ? "[2, 2, 4]" : "[1, 2, 1]")) + "}\n";
}

// max |u - g^n u0| / max |g^n u0| for the reference's current level after n steps.
double reference_mode_error(const Problem& p, long steps) {
  const auto fields = reference::run(p, {steps});
  const auto spec = InitialSpec::initial(p);
  const double factor = analytic::discrete_factor(p, steps);
  double err = 0, ref = 0;
  long g[3] = {0, 0, 0};
  for (std::size_t i = 0; i < fields[0].current.size(); ++i) {
    long rest = static_cast<long>(i);
    for (int a = 0; a < p.dims; ++a) g[a] = rest % p.points[a], rest /= p.points[a];
    const double exact = factor * initial_value(spec, g);
    err = std::max(err, std::abs(fields[0].current[i] - exact));
    ref = std::max(ref, std::abs(exact));
  }
  EXPECT_GT(ref, 0.1) << "the mode decayed too far to measure";
  return err / ref;
}

// A build without Kokkos (HEATWAVE_KOKKOS=OFF) has no reference: skip, and say so.
class UnitReference : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(build::kokkos).rfind("Kokkos", 0) != 0) GTEST_SKIP() << "no Kokkos reference in this build";
  }
};

TEST_F(UnitReference, ExactModesEveryCombination) {
  int cases = 0;
  for (const std::string equation : {"heat", "wave"})
    for (int dims : {2, 3})
      for (const std::string precision : {"float32", "float64"})
        for (int radius : {1, 2})
          for (const std::string boundary : {"dirichlet", "neumann", "periodic"}) {
            // Heat modes decay, and float32 rounding grows with the steps: fewer of both.
            const long steps = (equation == "heat" ? 50 : 100) / (precision == "float32" ? 2 : 1);
            const Problem p = test::problem_from(mode_yaml(equation, dims, precision, radius, boundary, steps));
            ASSERT_EQ(analytic::mode_problem(p), "");
            const double tolerance = precision == "float32" ? 1e-5 : 1e-12;
            EXPECT_LE(reference_mode_error(p, steps), tolerance)
                << equation << " " << dims << "D " << precision << " radius " << radius << " " << boundary;
            ++cases;
          }
  EXPECT_EQ(cases, 48);
}

// Fields at several steps come back in the order asked, previous level
// included: the wave's u^{n-1} at step n is u^{n-1} at step n-1.
TEST_F(UnitReference, StepsInAnyOrderAndThePreviousLevel) {
  const Problem p = test::problem_from(mode_yaml("wave", 2, "float64", 2, "periodic", 30));
  const auto fields = reference::run(p, {12, 3, 11});
  ASSERT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields[0].step, 12);
  EXPECT_EQ(fields[1].step, 3);
  EXPECT_EQ(fields[2].step, 11);
  EXPECT_EQ(fields[0].previous, fields[2].current);
  EXPECT_NEAR(reference_mode_error(p, 30), 0.0, 1e-12);
}

// Dirichlet faces hold g, and a constant field equal to g stays put; a
// constant field under zero-flux Neumann faces stays put; both to the bit.
TEST_F(UnitReference, ConstantStatesStayExactly) {
  for (const std::string boundary : {"{type: dirichlet, value: 0.25}", "{type: neumann, value: 0.0}"})
    for (int radius : {1, 2}) {
      const Problem p =
          test::problem_from("equation: heat\ngrid: {points: [9, 8, 7]}\nstencil: {radius: " + std::to_string(radius) +
                             "}\ntime: {dt: auto, steps: 25}\nboundary: {default: " + boundary +
                             "}\ninitial: {type: constant, value: 0.25}\n");
      const auto fields = reference::run(p, {25});
      for (double v : fields[0].current) ASSERT_EQ(v, 0.25) << boundary << " radius " << radius;
    }
}

// Dirichlet with g != 0: the ghost rule u(-j) = 2g - u(j) and the held face
// point make the face values exactly g after any number of steps, while the
// interior relaxes towards g from a zero start.
TEST_F(UnitReference, DirichletFaceHoldsItsValue) {
  const Problem p = test::problem_from(
      "equation: wave\ngrid: {points: [11, 9]}\nstencil: {radius: 2}\ntime: {dt: auto, steps: 15}\n"
      "boundary: {default: {type: dirichlet, value: -0.5}}\ninitial: {type: constant, value: 0.0}\n");
  const auto f = reference::run(p, {15})[0];
  for (long y = 0; y < 9; ++y)
    for (long x = 0; x < 11; ++x)
      if (x == 0 || y == 0 || x == 10 || y == 8) {
        ASSERT_EQ(f.current[y * 11 + x], -0.5) << x << "," << y;
      }
  EXPECT_LT(f.current[4 * 11 + 5], 0.0) << "the interior must feel the face";
}

// The host backend (through Simulation) against the reference after the
// problem's steps: the largest difference over the levels the equation has,
// relative to the reference's largest value. They round differently (fused
// multiply-adds, the order of sums), so not bitwise.
template <int D>
double host_against_reference(const std::string& yaml) {
  Simulation<D, double> sim(test::config_from(yaml + "backend: host\n"));
  const Problem& p = sim.problem();
  sim.advance(p.steps);
  const reference::Fields ref = reference::run(p, {p.steps})[0];
  const std::vector<double> host[2] = {sim.gather(Level::current),
                                       p.levels() == 2 ? sim.gather(Level::previous) : std::vector<double>{}};
  const std::vector<double>* theirs[2] = {&ref.current, &ref.previous};
  double diff = 0, scale = 0;
  for (int level = 0; level < p.levels(); ++level) {
    EXPECT_EQ(host[level].size(), theirs[level]->size());
    for (std::size_t i = 0; i < std::min(host[level].size(), theirs[level]->size()); ++i) {
      const double d = std::abs(host[level][i] - (*theirs[level])[i]);
      if (!std::isfinite(d)) return std::numeric_limits<double>::infinity();
      diff = std::max(diff, d), scale = std::max(scale, std::abs((*theirs[level])[i]));
    }
  }
  EXPECT_GT(scale, 1e-2) << "nothing to compare";
  return diff / scale;
}

// Heat in flux form through layers (harmonic pair coefficients), with a
// Gaussian source under a Ricker pulse and a point source between grid
// points; the mixed faces put the point on a Neumann face and across the
// periodic seam, and mirror alpha past a Dirichlet face.
TEST_F(UnitReference, HeatWithLayersAndSourcesAgreesWithTheHostBackend) {
  const std::string faces[][2] = {
      {"neumann", "[0.213, 0.61]"},
      {"{x_low: periodic, x_high: periodic, y_low: {type: dirichlet, value: 0.5}, y_high: {type: neumann, value: "
       "0.3}}",
       "[0.99, 0.8]"}};
  for (int radius : {1, 2})
    for (const auto& [boundary, position] : faces) {
      const std::string yaml =
          "equation: heat\ngrid: {points: [41, 33], length: [1.0, 0.8]}\nstencil: {radius: " + std::to_string(radius) +
          "}\nmaterial: {alpha: {type: layers, axis: y, interfaces: [0.3, 0.55], values: [1.0, 0.2, 3.0]}}\n"
          "time: {dt: auto, steps: 300}\nboundary: " +
          boundary +
          "\ninitial: {type: gaussian, center: [0.4, 0.4], width: 0.15}\nsources:\n"
          "  - {type: gaussian, center: [0.6, 0.35], width: 0.08, amplitude: 50.0, time: {type: ricker, frequency: "
          "200}}\n"
          "  - {type: point, position: " +
          position + ", amplitude: 0.05}\n";
      EXPECT_LE(host_against_reference<2>(yaml), 1e-12) << "radius " << radius << ", boundary " << boundary;
    }
}

// Heat 3D with alpha from a file (rough, so the pair coefficients matter)
// and a field source from the same file under a sine.
TEST_F(UnitReference, Heat3DWithAFileMediumAgreesWithTheHostBackend) {
  const std::string dir = (std::filesystem::temp_directory_path() / "heatwave_reference_file").string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const long nx = 13, ny = 11, nz = 9;
  std::vector<double> alpha(nx * ny * nz), q(alpha.size());
  for (long z = 0; z < nz; ++z)
    for (long y = 0; y < ny; ++y)
      for (long x = 0; x < nx; ++x) {
        const long i = x + nx * (y + ny * z);
        alpha[i] = 0.3 + 0.05 * static_cast<double>((7 * x + 3 * y + 5 * z) % 11) + (x > 6 ? 1.0 : 0.0);
        q[i] = 20 * std::cos(0.7 * x) * std::sin(0.4 * y + 0.2 * z);
      }
  hdf5::write_fields<double>(dir + "/media.h5", MPI_COMM_SELF, {{nz, ny, nx}, {0, 0, 0}, {nz, ny, nx}}, {},
                             {{"alpha", alpha.data()}, {"q", q.data()}});
  for (int radius : {1, 2}) {
    const std::string yaml =
        "equation: heat\ngrid: {points: [13, 11, 9], length: [1.0, 0.8, 0.6]}\nstencil: {radius: " +
        std::to_string(radius) + "}\nmaterial: {alpha: {type: file, path: " + dir +
        "/media.h5}}\ntime: {dt: auto, steps: 80}\n"
        "boundary: {default: neumann, y_low: {type: dirichlet, value: 0.2}, y_high: {type: dirichlet, value: 0.2}, "
        "z_low: periodic, z_high: periodic}\n"
        "initial: {type: random, amplitude: 1, seed: 11}\nsources:\n"
        "  - {type: field, path: " +
        dir + "/media.h5, dataset: q, time: {type: sine, frequency: 20}}\n";
    EXPECT_LE(host_against_reference<3>(yaml), 1e-12) << "radius " << radius;
  }
}

// The wave with c(x) through layers (a per-point factor, not a flux form)
// and a point source under a sine, from u0 and v0 (the Taylor start). h = 1/32
// puts grid points exactly on the interfaces, which take the upper value.
TEST_F(UnitReference, WaveWithLayersAndAPointSourceAgreesWithTheHostBackend) {
  for (int radius : {1, 2}) {
    const std::string yaml =
        "equation: wave\ngrid: {points: [33, 29]}\nstencil: {radius: " + std::to_string(radius) +
        "}\nmaterial: {c: {type: layers, axis: x, interfaces: [0.375, 0.625], values: [1.0, 0.4, 2.0]}}\n"
        "time: {dt: auto, steps: 120}\n"
        "boundary: {x_low: {type: dirichlet, value: 0}, x_high: neumann, y_low: periodic, y_high: periodic}\n"
        "initial: {type: gaussian, center: [0.3, 0.5], width: 0.08}\n"
        "velocity: {type: gaussian, center: [0.7, 0.4], width: 0.1, amplitude: 2.0}\n"
        "sources: [{type: point, position: [0.52, 0.23], amplitude: 0.2, time: {type: sine, frequency: 2}}]\n";
    EXPECT_LE(host_against_reference<2>(yaml), 1e-12) << "radius " << radius;
  }
}

// The damped wave with layered c and gamma (each point's own d = gamma dt/2)
// and a Gaussian source, whose weight is dt^2/(1+d) at the point; grid
// points on the interfaces again.
TEST_F(UnitReference, DampedWaveWithLayersAgreesWithTheHostBackend) {
  for (int radius : {1, 2}) {
    const std::string yaml =
        "equation: damped_wave\ngrid: {points: [33, 33]}\nstencil: {radius: " + std::to_string(radius) +
        "}\nmaterial: {c: {type: layers, axis: x, interfaces: [0.5], values: [1.5, 0.6]}, "
        "gamma: {type: layers, axis: y, interfaces: [0.25, 0.625], values: [0.0, 8.0, 1.0]}}\n"
        "time: {dt: auto, steps: 120}\nboundary: neumann\n"
        "initial: {type: gaussian, center: [0.5, 0.5], width: 0.1}\n"
        "velocity: {type: gaussian, center: [0.3, 0.6], width: 0.1, amplitude: -1.0}\n"
        "sources: [{type: gaussian, center: [0.6, 0.2], width: 0.1, amplitude: 3.0, "
        "time: {type: gaussian, delay: 0.3, width: 0.1}}]\n";
    EXPECT_LE(host_against_reference<2>(yaml), 1e-12) << "radius " << radius;
  }
}

TEST_F(UnitReference, DescribesItself) {
  EXPECT_EQ(reference::description(), build::kokkos);  // what runs is what `heatwave info` reports
}

}  // namespace
}  // namespace heatwave
