#include <gtest/gtest.h>

#include <cmath>

#include "solver/simulation.hpp"
#include "support.hpp"

namespace heatwave {
namespace {

TEST(UnitProblem, SpacingIsVertexCentredAndPeriodicDropsTheDuplicate) {
  const Problem p = test::problem_from(
      "grid: {points: [11, 21], length: [1.0, 2.0]}\ntime: {steps: 1}\nboundary: {x_low: periodic, x_high: periodic}\n"
      "initial: {type: constant, value: 1}\n");
  EXPECT_DOUBLE_EQ(p.spacing[0], 1.0 / 11);  // periodic: L/N
  EXPECT_DOUBLE_EQ(p.spacing[1], 2.0 / 20);  // L/(N-1)
}

TEST(UnitProblem, AutoDtIsTheSafetyFractionOfTheLimit) {
  // heat radius 2 in 3D: alpha*dt*3/h^2 <= 3/8 with h = 1/10, alpha = 2.
  const Problem heat = test::problem_from(
      "grid: {points: [11, 11, 11]}\nstencil: {radius: 2}\nalpha: 2.0\ntime: {dt: auto, safety: 0.5, steps: 3}\n"
      "initial: {type: constant}\n");
  EXPECT_NEAR(heat.dt, 0.5 * (3.0 / 8.0) / (2.0 * 300.0), 1e-18);
  // wave radius 1 in 2D: c*dt*sqrt(2)/h <= 1 with h = 1/20, c = 3.
  const Problem wave = test::problem_from(
      "equation: wave\nc: 3.0\ngrid: {points: [21, 21]}\ntime: {dt: auto, steps: 3}\ninitial: {type: constant}\n");
  EXPECT_NEAR(wave.dt, 0.9 / (3.0 * std::sqrt(800.0)), 1e-15);
  EXPECT_NEAR(wave.stability_number() / wave.stability_limit(), 0.9, 1e-12);
}

TEST(UnitProblem, AutoDtLandsExactlyOnTEnd) {
  const Problem p =
      test::problem_from("grid: {points: [21, 21]}\ntime: {dt: auto, t_end: 0.01}\ninitial: {type: constant}\n");
  // limit 1/(2*800) = 6.25e-4, safety 0.9: 5.625e-4 -> 18 steps of 5.5556e-4.
  EXPECT_EQ(p.steps, 18);
  EXPECT_NEAR(p.steps * p.dt, 0.01, 1e-15);
  EXPECT_LE(p.stability_number(), 0.9 * p.stability_limit() + 1e-15);
}

TEST(UnitProblem, ExplicitDtThatDividesTEndIsKept) {
  const Problem p =
      test::problem_from("grid: {points: [21, 21]}\ntime: {dt: 1e-4, t_end: 0.01}\ninitial: {type: constant}\n");
  EXPECT_EQ(p.steps, 100);
  EXPECT_EQ(p.dt, 1e-4);
}

// A chunk's steps: with no face exchanged, up to 64 in a multiple of the
// backend's steps a launch (k 7: 63, then 21 of 84), never past the run's
// end; with an exchanged face, the halos' depth in steps.
TEST(UnitProblem, ChunksAreWholeLaunchesWithNoExchangedFace) {
  EXPECT_EQ(chunk_steps(1, false, 1, 1000), 64);
  EXPECT_EQ(chunk_steps(1, false, 4, 1000), 64);
  EXPECT_EQ(chunk_steps(1, false, 7, 1000), 63);
  EXPECT_EQ(chunk_steps(1, false, 7, 84 - 63), 21);
  EXPECT_EQ(chunk_steps(1, false, 5, 1000), 60);
  EXPECT_EQ(chunk_steps(1, false, 7, 10), 10);
  EXPECT_EQ(chunk_steps(1, false, 80, 1000), 80);
  EXPECT_EQ(chunk_steps(1, false, 0, 1000), 64);
  EXPECT_EQ(chunk_steps(8, true, 7, 1000), 8);
  EXPECT_EQ(chunk_steps(8, true, 7, 3), 3);
}

}  // namespace
}  // namespace heatwave
