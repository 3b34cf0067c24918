#pragma once
// Shared by the cuda-cluster GPU tests: plans as each radius runs them, the
// bitwise comparison with the host backend, and the media and sources the
// cases add.
#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpu_support.hpp"
#include "io/hdf5.hpp"
#include "kernels/cluster/plan.hpp"
#include "kernels/host/host_backend.hpp"
#include "solver/decomposition.hpp"

namespace heatwave::test {

inline constexpr int radii[] = {1, 2, 3, 4};

// A plan as radius r runs it (the plans below are written for radius 1):
// tiles at least 2r (a peer's edge within one tile), and in 3D at most
// max_levels_3d(r) steps a launch. "" for the built-in plan.
inline std::string plan_for_radius(const char* plan, int r) {
  if (!plan) return "";
  cuda::ClusterPlan p = cuda::ClusterPlan::parse(plan);
  if (p.resident || p.columns) return plan;
  p.tile_x = std::max(p.tile_x, 2 * r), p.tile_y = std::max(p.tile_y, 2 * r);
  if (p.tile_z > 0) p.k = std::min(p.k, cuda::max_levels_3d(r));
  return p.fields();
}

// HEATWAVE_CLUSTER_PLAN for the backends made in this scope: `plan` as
// radius r runs it (plan_for_radius), or the built-in plan where null.
struct PlanOverride {
  explicit PlanOverride(const char* plan) : PlanOverride(plan, 0) {}  // as written
  PlanOverride(const char* plan, int r) : fields(r > 0 ? plan_for_radius(plan, r) : plan ? plan : "") {
    if (plan)
      setenv("HEATWAVE_CLUSTER_PLAN", fields.c_str(), 1);
    else
      unsetenv("HEATWAVE_CLUSTER_PLAN");
  }
  ~PlanOverride() { unsetenv("HEATWAVE_CLUSTER_PLAN"); }
  const char* text() const { return fields.empty() ? "default" : fields.c_str(); }
  std::string fields;
};

// Whether this build has the kernels of a plan (fields; "": the built-in
// one) in `dims` dimensions at `radius`. Where it has not (a 3D family the
// default build leaves out: plan.hpp's unbuilt_plan) the check is skipped,
// and the log says so.
inline bool plan_built(const std::string& fields, int dims, int radius, const std::string& what) {
  if (fields.empty()) return true;
  const std::string why = cuda::unbuilt_plan(cuda::ClusterPlan::parse(fields), dims, radius);
  if (why.empty()) return true;
  std::printf("[ SKIPPED  ] %s: %s\n", what.c_str(), why.c_str());
  return false;
}

// Same random data into both backends; `chunks` advances of `steps` each.
// `extra`: more config (media).
template <class Real, int D = 2>
void check_cluster(const char* eq, int radius, const std::string& grid, int steps, int chunks, const char* plan,
                   const std::string& extra = "", const std::vector<std::string>& boundaries = boundary_sets) {
  const char* precision = std::is_same_v<Real, float> ? "float32" : "float64";
  const PlanOverride override_plan(plan, radius);
  if (!plan_built(override_plan.fields, D, radius,
                  fmt::format("{} {}D {} r{} grid {} plan {}", eq, D, precision, radius, grid, override_plan.text())))
    return;
  for (const std::string& bc : boundaries) {
    const std::string what = fmt::format("{} {}D {} r{} {} grid {} plan {} {}", eq, D, precision, radius, bc, grid,
                                         override_plan.text(), extra);
    const Problem p = gpu_case(eq, D, precision, radius, bc, grid, "{type: constant, value: 0}", extra);
    Decomposition decomposition(p, {}, radius, MPI_COMM_SELF);
    const LocalDomain<D> domain = decomposition.template local_domain<D>();
    auto host = make_host_backend<D, Real>(p, domain);
    auto chosen = cluster_backend<D, Real>(p, domain);
    auto& gpu = chosen.backend;
    const std::string& why = chosen.reason;
    // The cluster kernel runs (the binary skips where clusters cannot launch);
    // only an autotuned plan may be the baseline kernel (small grids; a case
    // this build has no cluster kernels for), which says so.
    if (!(plan == nullptr && why.find("the baseline step kernel") != std::string::npos)) {
      ASSERT_EQ(gpu->name(), "cuda-cluster") << what << ": " << why;
    }
    const std::size_t n = domain.layout.owned_box().size();
    start_from_same_random_fields<D, Real>(p, n, 11 + radius, {host.get(), gpu.get()});
    for (int c = 0; c < chunks; ++c) {
      host->advance(steps);
      gpu->advance(steps);
    }
    ASSERT_EQ(gpu->step(), static_cast<long>(steps) * chunks);
    for (Level level : {Level::current, Level::previous}) {
      if (level == Level::previous && p.levels() == 1) continue;
      std::vector<Real> a(n), b(n, std::numeric_limits<Real>::quiet_NaN());
      host->read(level, a.data());
      gpu->read(level, b.data());
      long differ = 0, nan = 0, first = -1;
      double worst = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (std::isnan(b[i])) ++nan;
        if (std::memcmp(&a[i], &b[i], sizeof(Real)) != 0) {
          if (first < 0) first = static_cast<long>(i);
          ++differ, worst = std::max(worst, std::abs(double(a[i]) - b[i]));
        }
      }
      const long nx = domain.layout.owned[0], ny = domain.layout.owned[1];
      const long f = first < 0 ? 0 : first;
      EXPECT_EQ(nan, 0) << what << ": unwritten or NaN points";
      EXPECT_EQ(differ, 0) << what << " level " << int(level) << ": " << differ << " of " << n << " differ, worst "
                           << worst << ", first at (" << f % nx << ", " << f / nx % ny << ", " << f / nx / ny << ")";
    }
    const LocalStats hs = host->stats(), gs = gpu->stats();
    EXPECT_EQ(hs.min, gs.min) << what;
    EXPECT_EQ(hs.max, gs.max) << what;
    EXPECT_EQ(gs.non_finite, 0) << what;
  }
}

// A file of a coefficient (alpha, c) for a grid of n points (x first): two
// materials with a rough interface, and noise (every point its own value).
inline std::string coefficient_file(const std::string& coefficient, const std::vector<int>& n) {
  std::string name = coefficient;
  std::size_t size = 1;
  std::vector<std::uint64_t> shape;  // C order: slowest axis first
  for (std::size_t a = 0; a < n.size(); ++a) {
    name += fmt::format("-{}", n[a]), size *= static_cast<std::size_t>(n[a]);
    shape.insert(shape.begin(), static_cast<std::uint64_t>(n[a]));
  }
  const std::string path = fmt::format("{}/{}.h5", std::getenv("HEATWAVE_CACHE_DIR"), name);
  std::vector<double> values(size);
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> noise(0.0, 0.2);
  for (std::size_t k = 0; k < size; ++k) {
    long weighted = 0;
    std::size_t rest = k;
    for (std::size_t a = 0; a < n.size(); ++a) weighted += static_cast<long>(a + 1) * (rest % n[a]), rest /= n[a];
    values[k] = (weighted < n[0] + n[1] ? 0.3 : 2.5) + noise(gen);
  }
  hdf5::write_fields<double>(path, MPI_COMM_SELF, {shape, std::vector<std::uint64_t>(n.size(), 0), shape}, {},
                             {{coefficient, values.data()}});
  return "material: {" + coefficient + ": {type: file, path: " + path + "}}\n";
}
inline std::string alpha_file(const std::vector<int>& n) { return coefficient_file("alpha", n); }

// The heat's alpha in layers along an axis.
inline std::string alpha_layers(const char* axis) {
  return fmt::format("material: {{alpha: {{type: layers, axis: {}, interfaces: [0.3, 0.55], values: [1, 0.2, 3]}}}}\n",
                     axis);
}

// The waves' media in layers along an axis: c, and for the damped wave gamma too.
inline std::string wave_layers(const char* axis, bool damped) {
  return fmt::format(
      "material: {{c: {{type: layers, axis: {0}, interfaces: [0.3, 0.55], values: [1, 0.6, 1.4]}}{1}}}\n", axis,
      damped ? fmt::format(", gamma: {{type: layers, axis: {}, interfaces: [0.5], values: [0.5, 3]}}", axis) : "");
}

// Sources inside the k-step pipeline: added at each level a launch makes,
// with f(t_n) of that step, exactly as the host adds them after step n.
// Three point sources, one a Ricker near a corner (its points wrap on
// periodic axes), one a narrow Gaussian pulse in time that is exactly 0
// until the middle of the second chunk (steps 0..8 in double) and shares
// points with a third; and a Gaussian in space, 1.5 x spacings wide (a box
// 27 points across), near the opposite corner, where periodic axes split
// its box; launches of 1..8 steps, clusters, resident plans, 3D pipelines.
inline std::string point_sources(const char* eq, int dims, const char* precision, int radius, const std::string& grid) {
  const Problem p = gpu_case(eq, dims, precision, radius, "dirichlet", grid);
  const char* near_corner = dims == 2 ? "[0.97, 0.05]" : "[0.97, 0.05, 1.13]";
  const char* inside = dims == 2 ? "[0.31, 0.47]" : "[0.31, 0.47, 0.52]";
  const char* other_corner = dims == 2 ? "[0.03, 0.77]" : "[0.03, 0.77, 0.06]";
  return fmt::format(
      "sources:\n"
      "  - {{type: point, position: {0}, amplitude: 2.0, time: {{type: ricker, frequency: 3.0}}}}\n"
      "  - {{type: point, position: {1}, amplitude: -1.5, time: {{type: gaussian, delay: {2}, width: {3}}}}}\n"
      "  - {{type: point, position: {1}, amplitude: 0.5, time: {{type: sine, frequency: 2.0}}}}\n"
      "  - {{type: gaussian, center: {4}, width: {5}, amplitude: 0.8, time: {{type: sine, frequency: 2.0}}}}\n",
      near_corner, inside, 12.5 * p.dt, 0.1 * p.dt, other_corner, 1.5 * p.spacing[0]);
}

}  // namespace heatwave::test
