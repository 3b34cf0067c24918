// The Kokkos reference solver on its own (validation/reference.hpp): exact
// discrete modes for every equation x dims x precision x radius x boundary,
// and the boundary rules on states whose answer is known by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "build_info.hpp"
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

TEST_F(UnitReference, DescribesItself) {
  EXPECT_EQ(reference::description(), build::kokkos);  // what runs is what `heatwave info` reports
}

}  // namespace
}  // namespace heatwave
