// The CUDA backend against the host backend: bitwise equal fields after many
// steps on every case (same data in, same operation order, no FMA contraction),
// device-computed initial conditions within rounding of the host's, diagnostics
// that agree, and every owned point written (outputs start poisoned with NaN).
#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gpu_support.hpp"
#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/host/host_backend.hpp"
#include "solver/decomposition.hpp"

namespace heatwave {
namespace {

// Same random data into both backends, many steps, every owned bit equal.
template <int D, class Real>
void check_bitwise(const char* eq, int radius, const std::string& grid, long steps, const std::string& extra = "",
                   const std::vector<std::string>& boundaries = test::boundary_sets) {
  const char* precision = std::is_same_v<Real, float> ? "float32" : "float64";
  for (const std::string& bc : boundaries) {
    const Problem p = test::gpu_case(eq, D, precision, radius, bc, grid, "{type: constant, value: 0}", extra);
    Decomposition decomposition(p, {}, radius, MPI_COMM_SELF);
    const LocalDomain<D> domain = decomposition.local_domain<D>();
    auto host = make_host_backend<D, Real>(p, domain);
    auto gpu = cuda::make_cuda_backend<D, Real>(p, domain);
    const std::size_t n = domain.layout.owned_box().size();
    test::start_from_same_random_fields<D, Real>(p, n, 11 + radius, {host.get(), gpu.get()});
    host->advance(static_cast<int>(steps));
    gpu->advance(static_cast<int>(steps));
    for (Level level : {Level::current, Level::previous}) {
      if (level == Level::previous && p.levels() == 1) continue;
      std::vector<Real> a(n), b(n, std::numeric_limits<Real>::quiet_NaN());
      host->read(level, a.data());
      gpu->read(level, b.data());
      long differ = 0, nan = 0;
      double worst = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (std::isnan(b[i])) ++nan;
        if (std::memcmp(&a[i], &b[i], sizeof(Real)) != 0)
          ++differ, worst = std::max(worst, std::abs(double(a[i]) - b[i]));
      }
      EXPECT_EQ(nan, 0) << "unwritten or NaN points on the GPU";
      EXPECT_EQ(differ, 0) << eq << " " << D << "D " << precision << " r" << radius << " " << bc << " grid " << grid
                           << " level " << int(level) << ": " << differ << " of " << n << " differ, worst " << worst;
    }
    // Diagnostics agree: min/max exactly, sums to rounding.
    const LocalStats hs = host->stats(), gs = gpu->stats();
    EXPECT_EQ(hs.min, gs.min);
    EXPECT_EQ(hs.max, gs.max);
    EXPECT_NEAR(hs.sum, gs.sum, 1e-9 * std::max(1.0, std::abs(hs.sum_squares)));
    EXPECT_NEAR(hs.sum_squares, gs.sum_squares, 1e-9 * hs.sum_squares);
    EXPECT_NEAR(hs.potential, gs.potential, 1e-9 * std::max(1.0, std::abs(hs.potential)));
    EXPECT_NEAR(hs.kinetic, gs.kinetic, 1e-9 * std::max(1.0, std::abs(hs.kinetic)));
    EXPECT_EQ(gs.non_finite, 0);
  }
}

// Sizes that divide no tile (256 x 32 in 2D, 64 x 4 x 64 in 3D), small and multi-block.
TEST(GpuBitwise, Heat2D) {
  for (int r : {1, 2, 3, 4}) {
    check_bitwise<2, float>("heat", r, "[37, 29]", 30);
    check_bitwise<2, double>("heat", r, "[300, 257]", 25);
  }
}
TEST(GpuBitwise, Wave2D) {
  for (int r : {1, 2, 3, 4}) {
    check_bitwise<2, double>("wave", r, "[37, 29]", 30);
    check_bitwise<2, float>("wave", r, "[300, 257]", 25);
  }
}
TEST(GpuBitwise, Heat3D) {
  for (int r : {1, 2, 3, 4}) {
    check_bitwise<3, double>("heat", r, "[19, 13, 11]", 20);
    check_bitwise<3, float>("heat", r, "[70, 37, 130]", 12);
  }
}
TEST(GpuBitwise, Wave3D) {
  for (int r : {1, 2, 3, 4}) {
    check_bitwise<3, float>("wave", r, "[19, 13, 11]", 20);
    check_bitwise<3, double>("wave", r, "[70, 37, 130]", 12);
  }
}

// The damped wave: the same kernels, its own update (gamma 1.5).
TEST(GpuBitwise, DampedWave) {
  for (int r : {1, 2, 3, 4}) {
    check_bitwise<2, double>("damped_wave", r, "[37, 29]", 30);
    check_bitwise<2, float>("damped_wave", r, "[300, 257]", 25);
    check_bitwise<3, float>("damped_wave", r, "[19, 13, 11]", 20);
    check_bitwise<3, double>("damped_wave", r, "[70, 37, 130]", 12);
  }
}

// Coefficients that vary in space and sources (the media step kernel):
// layers across the grid, a Gaussian source with a Ricker pulse and a point
// source off the grid points, on every boundary set.
std::string media_yaml(const char* eq, int dims) {
  const std::string eqn = eq;
  std::string yaml = eqn == "heat" ? "material: {alpha: {type: layers, axis: y, interfaces: [0.3, 0.55], values: [1, "
                                     "0.2, 3]}}\n"
                                   : "material: {c: {type: layers, axis: x, interfaces: [0.45], values: [1, 0.4]}" +
                                         std::string(eqn == "damped_wave" ? ", gamma: {type: layers, axis: y, "
                                                                            "interfaces: [0.4], values: [0.5, 3]}"
                                                                          : "") +
                                         "}\n";
  const std::string at = dims == 2 ? "[0.43, 0.37]" : "[0.43, 0.37, 0.61]";
  yaml +=
      "sources:\n  - {type: gaussian, width: 0.2, amplitude: 4, time: {type: ricker, frequency: 8, delay: 0}}\n"
      "  - {type: point, position: " +
      at + ", amplitude: 2, time: {type: sine, frequency: 5}}\n";
  return yaml;
}

TEST(GpuBitwise, MediaAndSources) {
  for (const char* eq : {"heat", "wave", "damped_wave"})
    for (int r : {1, 2, 3, 4}) {
      check_bitwise<2, double>(eq, r, "[37, 29]", 30, media_yaml(eq, 2));
      check_bitwise<2, float>(eq, r, "[300, 257]", 25, media_yaml(eq, 2));
      check_bitwise<3, float>(eq, r, "[19, 13, 11]", 20, media_yaml(eq, 3));
      check_bitwise<3, double>(eq, r, "[70, 37, 130]", 12, media_yaml(eq, 3));
    }
}

// Absorbing faces (the waves' damping profiles along x, y and z: the
// one-step kernel's table of updates by classes, with c in layers along z as
// in the seismic shot), a free surface and periodic axes beside them.
TEST(GpuBitwise, AbsorbingFaces) {
  const auto absorbing = [](int dims) -> std::vector<std::string> {
    return {fmt::format("{{default: {{type: absorbing, width: 5}}, {}_high: {{type: neumann, value: 0.0}}}}",
                        dims == 2 ? 'y' : 'z'),
            "{default: periodic, x_low: {type: absorbing, width: 6}, x_high: {type: absorbing, width: 3}}",
            "{default: periodic, y_low: {type: absorbing, width: 4}, y_high: {type: dirichlet, value: 0.5}}"};
  };
  const std::string layers = "material: {c: {type: layers, axis: z, interfaces: [0.5], values: [1, 0.6]}}\n";
  for (int r : {1, 2, 3, 4}) {
    check_bitwise<2, float>("wave", r, "[300, 257]", 25, "", absorbing(2));
    check_bitwise<2, double>("damped_wave", r, "[37, 29]", 30, "", absorbing(2));
    check_bitwise<3, float>("wave", r, "[70, 37, 130]", 12, layers, absorbing(3));
    check_bitwise<3, double>("wave", r, "[37, 21, 26]", 20, layers, absorbing(3));
    check_bitwise<3, float>("damped_wave", r, "[37, 21, 26]", 20, "", absorbing(3));
  }
}

// Initial conditions computed on the device: random and constant bitwise;
// sine/cosine/gaussian within rounding (CUDA's sin/cos/exp are not glibc's).
template <int D, class Real>
void check_initial(const std::string& initial, double tolerance) {
  const char* precision = std::is_same_v<Real, float> ? "float32" : "float64";
  const Problem p = test::gpu_case("wave", D, precision, 2, "neumann", D == 2 ? "[45, 33]" : "[21, 17, 13]", initial);
  Decomposition decomposition(p, {}, 2, MPI_COMM_SELF);
  const LocalDomain<D> domain = decomposition.local_domain<D>();
  auto host = make_host_backend<D, Real>(p, domain);
  auto gpu = cuda::make_cuda_backend<D, Real>(p, domain);
  host->initialize();
  gpu->initialize();
  const std::size_t n = domain.layout.owned_box().size();
  std::vector<Real> a(n), b(n);
  host->read(Level::current, a.data());
  gpu->read(Level::current, b.data());
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_FALSE(std::isnan(b[i])) << initial;
    worst = std::max(worst, std::abs(double(a[i]) - b[i]));
  }
  EXPECT_LE(worst, tolerance) << initial << " " << D << "D " << precision;
}

TEST(GpuInitial, DeviceInitialConditionsMatchTheHost) {
  for (const char* exact : {"{type: random, seed: 5, amplitude: 2.0}", "{type: constant, value: 0.375}"}) {
    check_initial<2, float>(exact, 0.0);
    check_initial<3, double>(exact, 0.0);
  }
  for (const char* smooth :
       {"{{type: sine, modes: {}}}", "{{type: cosine, modes: {}}}", "{{type: gaussian, width: 0.2}}"}) {
    check_initial<2, double>(fmt::format(fmt::runtime(smooth), "[1, 3]"), 1e-15);
    check_initial<3, double>(fmt::format(fmt::runtime(smooth), "[1, 3, 2]"), 1e-15);
    check_initial<3, float>(fmt::format(fmt::runtime(smooth), "[2, 1, 1]"), 2.4e-7);
  }
}

}  // namespace
}  // namespace heatwave
