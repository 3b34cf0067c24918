// The cuda-cluster backend against the host backend: bitwise equal fields on
// every case (2D and 3D, heat and wave, float32 and float64, radius 1 to 4,
// every boundary set incl. mixed nonzero faces and periodic), on grids that
// divide no tile, for several launch plans (cluster sizes 1..16 in 2D; k =
// 1..5; step counts that leave a remainder launch). Unusable plans fall back
// to the cuda backend and say why.
#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "gpu_support.hpp"
#include "io/hdf5.hpp"
#include "kernels/cluster/plan.hpp"
#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/host/host_backend.hpp"
#include "solver/decomposition.hpp"

namespace heatwave {
namespace {

constexpr int radii[] = {1, 2, 3, 4};

// A plan as radius r runs it (the plans below are written for radius 1):
// tiles at least 2r (a peer's edge within one tile), and in 3D at most
// max_levels_3d(r) steps a launch. "" for the built-in plan.
std::string plan_for_radius(const char* plan, int r) {
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

// Same random data into both backends; `chunks` advances of `steps` each.
// `extra`: more config (media).
template <class Real, int D = 2>
void check_cluster(const char* eq, int radius, const std::string& grid, int steps, int chunks, const char* plan,
                   const std::string& extra = "", const std::vector<std::string>& boundaries = test::boundary_sets) {
  const char* precision = std::is_same_v<Real, float> ? "float32" : "float64";
  const PlanOverride override_plan(plan, radius);
  for (const std::string& bc : boundaries) {
    const std::string what = fmt::format("{} {}D {} r{} {} grid {} plan {} {}", eq, D, precision, radius, bc, grid,
                                         override_plan.text(), extra);
    const Problem p = test::gpu_case(eq, D, precision, radius, bc, grid, "{type: constant, value: 0}", extra);
    Decomposition decomposition(p, {}, radius, MPI_COMM_SELF);
    const LocalDomain<D> domain = decomposition.template local_domain<D>();
    auto host = make_host_backend<D, Real>(p, domain);
    auto chosen = test::cluster_backend<D, Real>(p, domain);
    auto& gpu = chosen.backend;
    const std::string& why = chosen.reason;
    // The cluster kernel runs (the binary skips where clusters cannot launch);
    // only an autotuned plan may be the baseline kernel (small grids), which says so.
    if (!(plan == nullptr && why.find("baseline step kernel is faster") != std::string::npos)) {
      ASSERT_EQ(gpu->name(), "cuda-cluster") << what << ": " << why;
    }
    const std::size_t n = domain.layout.owned_box().size();
    test::start_from_same_random_fields<D, Real>(p, n, 11 + radius, {host.get(), gpu.get()});
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

// Plans: cluster_x,cluster_y,tile_x,tile_y,tile_z,k,threads_y (for radius 1: plan_for_radius).
const char* plans[] = {
    nullptr,           // the built-in table
    "1,1,32,8,0,4,2",  // cluster size 1: no DSMEM, same temporal blocking
    "1,2,32,8,0,3,1",  // k = 3: remainders of 1 and 2 steps below
    "1,4,64,8,0,2,2",
    "1,4,16,4,0,1,1",  // k = 1: one step a launch, no DSMEM traffic
    "1,2,128,32,0,4,4",
    "1,8,32,4,0,2,1",   // clusters larger than the grid along y
    "1,16,24,4,0,5,2",  // 16 blocks: the non-portable cluster size
};

TEST(GpuCluster, Heat2D) {
  for (const char* plan : plans)
    for (int r : radii) {
      check_cluster<float>("heat", r, "[37, 29]", 7, 3, plan);
      check_cluster<double>("heat", r, "[300, 257]", 5, 2, plan);
    }
}

TEST(GpuCluster, Wave2D) {
  for (const char* plan : plans)
    for (int r : radii) {
      check_cluster<double>("wave", r, "[37, 29]", 7, 3, plan);
      check_cluster<float>("wave", r, "[300, 257]", 5, 2, plan);
    }
}

// The damped wave: the wave's kernels with its own update, streaming and
// resident in 2D, x-y clusters and deep pipelines in 3D.
TEST(GpuCluster, DampedWave) {
  for (int r : radii) {
    for (const char* plan :
         {static_cast<const char*>(nullptr), "1,2,32,8,0,3,1", "1,4,16,4,0,1,1", "resident,24,12,2"}) {
      check_cluster<double>("damped_wave", r, "[37, 29]", 7, 3, plan);
      check_cluster<float>("damped_wave", r, "[300, 257]", 5, 2, plan);
    }
    for (const char* plan : {static_cast<const char*>(nullptr), "1,1,8,8,8,3,1", "2,2,8,8,8,3,1"}) {
      check_cluster<float, 3>("damped_wave", r, "[19, 13, 11]", 7, 2, plan);
      check_cluster<double, 3>("damped_wave", r, "[37, 21, 26]", 5, 2, plan);
    }
  }
}

// A file of alpha for a grid of n points (x first): two materials with a
// rough interface, and noise (every pair its own harmonic mean).
std::string alpha_file(const std::vector<int>& n) {
  std::string name = "alpha";
  std::size_t size = 1;
  std::vector<std::uint64_t> shape;  // C order: slowest axis first
  for (std::size_t a = 0; a < n.size(); ++a) {
    name += "-" + std::to_string(n[a]), size *= static_cast<std::size_t>(n[a]);
    shape.insert(shape.begin(), static_cast<std::uint64_t>(n[a]));
  }
  const std::string path = fmt::format("{}/{}.h5", std::getenv("HEATWAVE_CACHE_DIR"), name);
  std::vector<double> alpha(size);
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> noise(0.0, 0.2);
  for (std::size_t k = 0; k < size; ++k) {
    long weighted = 0;
    std::size_t rest = k;
    for (std::size_t a = 0; a < n.size(); ++a) weighted += static_cast<long>(a + 1) * (rest % n[a]), rest /= n[a];
    alpha[k] = (weighted < n[0] + n[1] ? 0.3 : 2.5) + noise(gen);
  }
  hdf5::write_fields<double>(path, MPI_COMM_SELF, {shape, std::vector<std::uint64_t>(n.size(), 0), shape}, {},
                             {{"alpha", alpha.data()}});
  return "material: {alpha: {type: file, path: " + path + "}}\n";
}
// The heat's alpha varying in 2D: layers across x (pairs that differ along
// a row) and across y (a row's points share theirs), from the table by the
// layers' coordinate; a file of two materials (the pair tiles loaded with
// the field tile); streaming, clustered and resident plans, every boundary set.
TEST(GpuCluster, HeatMedia2D) {
  for (const char* axis : {"x", "y"}) {
    const std::string media = fmt::format(
        "material: {{alpha: {{type: layers, axis: {}, interfaces: [0.3, 0.55], values: [1, 0.2, 3]}}}}\n", axis);
    for (const char* plan : {static_cast<const char*>(nullptr), "1,1,32,8,0,4,2", "1,2,32,8,0,3,1", "1,4,16,4,0,1,1",
                             "1,1,32,16,0,8,8", "resident,24,12,2", "resident,60,24,4"})
      for (int r : radii) {
        check_cluster<float>("heat", r, "[37, 29]", 7, 3, plan, media);
        check_cluster<double>("heat", r, "[300, 257]", 5, 2, plan, media);
      }
  }
  const std::string small = alpha_file({37, 29}), large = alpha_file({300, 257});
  for (const char* plan : {static_cast<const char*>(nullptr), "1,2,32,8,0,3,1", "resident,24,12,2"})
    for (int r : radii) {
      check_cluster<float>("heat", r, "[37, 29]", 7, 3, plan, small);
      check_cluster<double>("heat", r, "[300, 257]", 5, 2, plan, large);
    }
}

// The heat's alpha in layers along an axis.
std::string alpha_layers(const char* axis) {
  return fmt::format("material: {{alpha: {{type: layers, axis: {}, interfaces: [0.3, 0.55], values: [1, 0.2, 3]}}}}\n",
                     axis);
}

// The heat's alpha varying in 3D (Form::flux: the pair coefficients at a
// point from the tables along the layers' axis, or a file's alpha by their
// harmonic means): layers along x (pairs that differ within a pack), y and z
// (a pack's points share theirs: the steady path), and a file of two
// materials with a rough interface; one block and clusters of blocks, deep
// pipelines, every boundary set.
TEST(GpuCluster, HeatMedia3D) {
  const char* media_plans[] = {nullptr, "1,1,8,8,8,3,1", "2,2,8,8,8,3,1", "2,1,16,8,5,2,1", "1,1,8,16,4,1,1"};
  for (const char* axis : {"x", "y", "z"}) {
    const std::string media = alpha_layers(axis);
    for (const char* plan : media_plans)
      for (int r : radii) {
        check_cluster<float, 3>("heat", r, "[19, 13, 11]", 7, 2, plan, media);
        check_cluster<double, 3>("heat", r, "[37, 21, 26]", 5, 2, plan, media);
      }
    check_cluster<float, 3>("heat", 1, "[23, 18, 30]", 7, 2, "1,1,16,12,9,4,1", media);  // k = 4
  }
  const std::string small = alpha_file({19, 13, 11}), large = alpha_file({37, 21, 26});
  for (const char* plan : media_plans)
    for (int r : radii) {
      check_cluster<float, 3>("heat", r, "[19, 13, 11]", 7, 2, plan, small);
      check_cluster<double, 3>("heat", r, "[37, 21, 26]", 5, 2, plan, large);
    }
  // The deep family: the flux form in its rings' kernel (alpha in layers: the table; from a file: the pairs).
  const std::string deep_small = alpha_file({37, 29, 26}), deep_large = alpha_file({69, 53, 13});
  for (const char* plan : {"deep,16,8,3", "deep,8,6,2"})
    for (int r : radii) {
      check_cluster<float, 3>("heat", r, "[37, 29, 26]", 7, 2, plan, alpha_layers("y"));
      check_cluster<double, 3>("heat", r, "[69, 53, 13]", 5, 2, plan, alpha_layers("y"));
      check_cluster<float, 3>("heat", r, "[37, 29, 26]", 7, 2, plan, deep_small);
      check_cluster<double, 3>("heat", r, "[69, 53, 13]", 5, 2, plan, deep_large);
    }
}

// The waves' media in layers along an axis: c, and for the damped wave gamma too.
std::string wave_layers(const char* axis, bool damped) {
  return fmt::format(
      "material: {{c: {{type: layers, axis: {0}, interfaces: [0.3, 0.55], values: [1, 0.6, 1.4]}}{1}}}\n", axis,
      damped ? fmt::format(", gamma: {{type: layers, axis: {}, interfaces: [0.5], values: [0.5, 3]}}", axis) : "");
}

// The waves' coefficients varying in space (an update made at each point:
// Form::point): c in layers across x (updates that differ along a row) and
// across y, the damped wave's gamma in layers too, and absorbing faces
// (profiles along x and y, calm packs between them); streaming, clustered
// and resident plans.
TEST(GpuCluster, WaveMedia2D) {
  const char* media_plans[] = {nullptr, "1,1,32,8,0,4,2", "1,2,32,8,0,3,1", "1,4,16,4,0,1,1", "1,1,32,16,0,8,8",
                               "resident,24,12,2", "resident,60,24,4"};
  for (const char* axis : {"x", "y"}) {
    const std::string c = wave_layers(axis, false), damped = wave_layers(axis, true);
    for (const char* plan : media_plans)
      for (int r : radii) {
        check_cluster<float>("wave", r, "[37, 29]", 7, 3, plan, c);
        check_cluster<double>("wave", r, "[300, 257]", 5, 2, plan, c);
        check_cluster<double>("damped_wave", r, "[37, 29]", 7, 3, plan, damped);
      }
  }
  const std::vector<std::string> absorbing = {
      "{default: {type: absorbing, width: 6}, y_high: {type: neumann, value: 0.0}}",
      "{default: periodic, y_low: {type: absorbing, width: 5}, y_high: {type: absorbing, width: 7}}",
  };
  for (const char* plan : media_plans)
    for (int r : radii) {
      check_cluster<float>("wave", r, "[37, 29]", 7, 3, plan, "", absorbing);
      check_cluster<double>("damped_wave", r, "[300, 257]", 5, 2, plan, "", absorbing);
    }
}

// The waves' coefficients in 3D (Form::point: a thread's pack column, its
// updates plane by plane from the classes' table): c in layers along x
// (updates that differ within a pack) and along z, the damped wave's gamma
// in layers, and absorbing faces (profiles along x, y and z; the seismic
// shot's faces: a free surface at z_high); one block and clusters of blocks,
// deep pipelines; and more x classes than the table takes (each point's
// update made from the coefficient views).
TEST(GpuCluster, WaveMedia3D) {
  const char* media_plans[] = {nullptr, "1,1,8,8,8,3,1", "2,2,8,8,8,3,1", "2,1,16,8,5,2,1", "1,1,8,16,4,1,1"};
  for (const char* axis : {"x", "z"}) {
    const std::string c = wave_layers(axis, false), damped = wave_layers(axis, true);
    for (const char* plan : media_plans)
      for (int r : radii) {
        check_cluster<float, 3>("wave", r, "[19, 13, 11]", 7, 2, plan, c);
        check_cluster<double, 3>("damped_wave", r, "[37, 21, 26]", 5, 2, plan, damped);
      }
    check_cluster<float, 3>("wave", 1, "[23, 18, 30]", 7, 2, "1,1,16,12,9,4,1", c);  // k = 4
  }
  const std::vector<std::string> absorbing = {
      "{default: {type: absorbing, width: 3}, z_high: {type: neumann, value: 0.0}}",
      "{default: periodic, x_low: {type: absorbing, width: 5}, x_high: {type: absorbing, width: 3}}",
  };
  for (const char* plan : media_plans)
    for (int r : radii) {
      check_cluster<float, 3>("wave", r, "[19, 13, 11]", 7, 2, plan, "", absorbing);
      check_cluster<double, 3>("damped_wave", r, "[37, 21, 26]", 5, 2, plan, "", absorbing);
    }
  // More x classes than the table takes (a layer of c at nearly every x):
  // each point's update made from the coefficient views.
  std::string interfaces, values = "1.0";
  for (int i = 1; i < 280; ++i) {
    interfaces += fmt::format("{}{}", i > 1 ? ", " : "", (i + 0.5) / 300.0);
    values += fmt::format(", {}", 1.0 + 0.001 * i);
  }
  const std::string many = fmt::format(
      "material: {{c: {{type: layers, axis: x, interfaces: [{}], values: [{}]}}}}\n", interfaces, values);
  for (const char* plan : {"1,1,32,8,8,3,1", "2,1,32,8,8,2,1", "deep,32,6,3"}) {
    check_cluster<float, 3>("wave", 1, "[301, 9, 10]", 5, 2, plan, many);
    check_cluster<float, 3>("damped_wave", 2, "[301, 9, 10]", 5, 2, plan, many);
  }
  // The deep family: each point's update in its rings' kernel (from the table, or the views above).
  for (const char* plan : {"deep,16,8,3", "deep,8,6,2"})
    for (int r : radii) {
      for (const char* axis : {"x", "z"}) {
        check_cluster<float, 3>("wave", r, "[37, 29, 26]", 7, 2, plan, wave_layers(axis, false));
        check_cluster<double, 3>("damped_wave", r, "[69, 53, 13]", 5, 2, plan, wave_layers(axis, true));
      }
      check_cluster<float, 3>("wave", r, "[37, 29, 26]", 7, 2, plan, "", absorbing);
      check_cluster<double, 3>("damped_wave", r, "[69, 53, 13]", 5, 2, plan, "", absorbing);
    }
}

// Sources inside the k-step pipeline: added at each level a launch makes,
// with f(t_n) of that step, exactly as the host adds them after step n.
// Three point sources, one a Ricker near a corner (its points wrap on
// periodic axes), one a narrow Gaussian pulse in time that is exactly 0
// until the middle of the second chunk (steps 0..8 in double) and shares
// points with a third; and a Gaussian in space, 1.5 x spacings wide (a box
// 27 points across), near the opposite corner, where periodic axes split
// its box; launches of 1..8 steps, clusters, resident plans, 3D pipelines.
std::string point_sources(const char* eq, int dims, const char* precision, int radius, const std::string& grid) {
  const Problem p = test::gpu_case(eq, dims, precision, radius, "dirichlet", grid);
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

TEST(GpuCluster, Sources) {
  for (const char* eq : {"heat", "wave", "damped_wave"})
    for (int r : radii) {
      for (const char* plan : {static_cast<const char*>(nullptr), "1,1,32,8,0,4,2", "1,2,32,8,0,3,1", "1,4,16,4,0,1,1",
                               "1,1,32,16,0,8,8", "resident,24,12,2"}) {
        check_cluster<float>(eq, r, "[37, 29]", 7, 3, plan, point_sources(eq, 2, "float32", r, "[37, 29]"));
        check_cluster<double>(eq, r, "[300, 257]", 5, 3, plan, point_sources(eq, 2, "float64", r, "[300, 257]"));
      }
      for (const char* plan : {static_cast<const char*>(nullptr), "1,1,8,8,8,3,1", "2,2,8,8,8,3,1", "2,1,16,8,5,2,1"}) {
        check_cluster<float, 3>(eq, r, "[19, 13, 11]", 7, 3, plan, point_sources(eq, 3, "float32", r, "[19, 13, 11]"));
        check_cluster<double, 3>(eq, r, "[37, 21, 26]", 5, 3, plan,
                                 point_sources(eq, 3, "float64", r, "[37, 21, 26]"));
      }
      for (const char* plan : {"deep,16,8,3", "deep,8,6,2"}) {  // the deep family (fp32 r 1 at k 2-3: register windows)
        check_cluster<float, 3>(eq, r, "[37, 29, 26]", 7, 3, plan, point_sources(eq, 3, "float32", r, "[37, 29, 26]"));
        check_cluster<double, 3>(eq, r, "[69, 53, 13]", 5, 3, plan, point_sources(eq, 3, "float64", r, "[69, 53, 13]"));
      }
    }
  // The seismic shot's shape: layers, absorbing faces and a free surface, a Ricker source.
  const std::string shot =
      "material: {c: {type: layers, axis: z, interfaces: [0.5, 0.85], values: [3.0, 2.2, 1.5]}}\n" +
      point_sources("wave", 3, "float32", 1, "[40, 33, 28]");
  for (const char* plan :
       {static_cast<const char*>(nullptr), "1,1,16,12,9,4,1", "2,2,8,8,8,3,1", "deep,16,12,3", "deep,8,6,2"})
    check_cluster<float, 3>("wave", 1, "[40, 33, 28]", 8, 3, plan, shot,
                            {"{default: {type: absorbing, width: 6}, z_high: {type: neumann, value: 0.0}}"});
}

// Receivers recorded inside the pipeline (Backend::record_samples): the
// cluster backend records a level at a set of points at every `every` steps
// as its launches make them; the values equal the cuda backend's, gathered
// step by step, bit for bit (the cuda backend: its fields are the host's,
// and it holds Dirichlet face points at g after every step, where the host
// sets them as it sweeps the next; the random v0 of these tests differs from
// g there). Points at faces, corners, tile edges and inside; u^n and
// u^{n-1}; every 1 and 3; chunks of 7 steps in launches of up to k.
template <class Real, int D>
void check_recorded(const char* eq, int radius, const std::string& grid, const char* plan, long every, Level level,
                    const std::string& extra, const std::string& boundary) {
  constexpr int steps = 7, chunks = 3;
  const PlanOverride override_plan(plan, radius);
  const char* precision = std::is_same_v<Real, float> ? "float32" : "float64";
  const std::string what = fmt::format("{} {}D {} r{} {} plan {} every {} level {}", eq, D, precision, radius, grid,
                                       override_plan.text(), every, int(level));
  const Problem p = test::gpu_case(eq, D, precision, radius, boundary, grid, "{type: constant, value: 0}", extra);
  Decomposition decomposition(p, {}, radius, MPI_COMM_SELF);
  const LocalDomain<D> domain = decomposition.template local_domain<D>();
  auto reference = cuda::make_cuda_backend<D, Real>(p, domain);  // the reference, one step a launch
  auto chosen = test::cluster_backend<D, Real>(p, domain);
  auto& gpu = chosen.backend;
  ASSERT_EQ(gpu->name(), "cuda-cluster") << what << ": " << chosen.reason;
  // Owned points: every corner, points next to faces, and a random spread.
  std::vector<Index<D>> points;
  std::mt19937 gen(7);
  for (int c = 0; c < (1 << D); ++c) {
    Index<D> i{};
    for (int a = 0; a < D; ++a) i[a] = (c >> a & 1) ? domain.layout.owned[a] - 1 : 0;
    points.push_back(i);
  }
  for (int k = 0; k < 60; ++k) {
    Index<D> i{};
    for (int a = 0; a < D; ++a) i[a] = static_cast<long>(gen() % domain.layout.owned[a]);
    if (k % 5 == 0) i[0] = 1;  // next to a face
    points.push_back(i);
  }
  const std::size_t n = domain.layout.owned_box().size();
  test::start_from_same_random_fields<D, Real>(p, n, 17 + radius, {reference.get(), gpu.get()});
  ASSERT_TRUE(gpu->record_samples(level, points, every)) << what;
  std::vector<Real> expected, value(points.size());
  std::vector<long> expected_steps;
  for (int c = 0; c < chunks; ++c) {
    for (int m = 0; m < steps; ++m) {
      reference->advance(1);
      if (reference->step() % every) continue;
      reference->gather(level, points, value.data());
      expected.insert(expected.end(), value.begin(), value.end());
      expected_steps.push_back(reference->step());
    }
    gpu->advance(steps);
    std::vector<long> got_steps;
    std::vector<Real> got;
    gpu->take_samples(got_steps, got);
    EXPECT_EQ(got_steps, expected_steps) << what << " chunk " << c;
    ASSERT_EQ(got.size(), expected.size()) << what << " chunk " << c;
    long differ = 0;
    std::string first;
    for (std::size_t k = 0; k < got.size(); ++k) {
      if (std::memcmp(&got[k], &expected[k], sizeof(Real)) == 0) continue;
      if (differ++ == 0) {
        const Index<D>& i = points[k % points.size()];
        first = fmt::format(", first at step {} point ({}, {}, {}): {} here, {} on the cuda backend", got_steps[k / points.size()],
                            i[0], i[1], D == 3 ? i[D - 1] : 0, double(got[k]), double(expected[k]));
      }
    }
    EXPECT_EQ(differ, 0) << what << " chunk " << c << ": " << differ << " of " << got.size() << " samples differ"
                         << first;
    expected.clear(), expected_steps.clear();
  }
}

TEST(GpuCluster, RecordsReceivers) {
  auto shot = [](int dims) {
    return fmt::format(
        "material: {{c: {{type: layers, axis: y, interfaces: [0.5], values: [1.0, 0.6]}}}}\n"
        "sources: [{{type: point, position: {}, amplitude: 1.0, time: {{type: ricker, frequency: 3.0}}}}]\n",
        dims == 2 ? "[0.4, 0.33]" : "[0.4, 0.33, 0.5]");
  };
  const std::string faces = "{default: {type: absorbing, width: 4}, y_high: {type: neumann, value: 0.0}}";
  for (long every : {1L, 3L})
    for (Level level : {Level::current, Level::previous}) {
      for (const char* plan : {"1,1,32,8,0,4,2", "1,2,32,8,0,3,1", "1,1,32,16,0,8,8", "resident,24,12,2"}) {
        check_recorded<float, 2>("wave", 1, "[37, 29]", plan, every, level, shot(2), faces);
        check_recorded<double, 2>("damped_wave", 2, "[300, 257]", plan, every, level, shot(2), "dirichlet");
      }
      for (const char* plan : {"1,1,8,8,8,3,1", "2,2,8,8,8,3,1", "1,1,16,12,9,4,1", "2,1,16,8,5,2,1"}) {
        check_recorded<float, 3>("wave", 1, "[23, 18, 30]", plan, every, level, shot(3), faces);
        check_recorded<double, 3>("wave", 1, "[19, 13, 11]", plan, every, level, "", "periodic");
      }
    }
  for (const char* plan : {"1,1,32,8,0,4,2", "resident,24,12,2"})
    check_recorded<float, 2>("heat", 2, "[37, 29]", plan, 2, Level::current, "", "neumann");
  check_recorded<float, 3>("heat", 2, "[19, 13, 11]", "2,1,16,8,5,2,1", 2, Level::current, "", "neumann");
  // Radius 3 and 4: deeper halos and rings around the same points.
  for (int r : {3, 4}) {
    for (const char* plan : {"1,2,32,8,0,3,1", "resident,24,12,2"})
      check_recorded<double, 2>("wave", r, "[37, 29]", plan, 3, Level::previous, shot(2), faces);
    for (const char* plan : {"1,1,16,12,9,2,1", "2,2,8,8,8,2,1"})
      check_recorded<float, 3>("damped_wave", r, "[23, 18, 30]", plan, 1, Level::current, shot(3), faces);
  }
}

// Resident plans (resident,tile_x,tile_y,threads_y): the whole domain on
// chip for a chunk of steps in one cooperative launch, edges through global
// memory each step; tiles of several sizes, the last ones partial.
const char* resident_plans[] = {"resident,24,12,2", "resident,120,24,8", "resident,60,24,4"};

TEST(GpuCluster, Resident2D) {
  for (const char* plan : resident_plans)
    for (int r : radii) {
      check_cluster<float>("heat", r, "[37, 29]", 7, 3, plan);
      check_cluster<double>("heat", r, "[300, 257]", 5, 2, plan);
      check_cluster<double>("wave", r, "[37, 29]", 7, 3, plan);
      check_cluster<float>("wave", r, "[300, 257]", 1, 4, plan);  // one step a launch: no exchange at all
    }
}

// 3D: blocks streaming z, a thread a pack (threads_y 1); clusters over x-y
// take the r columns and rows past a tile from the peer's rings (DSMEM).
const char* plans_3d[] = {
    nullptr,             // autotuned
    "1,1,8,8,8,3,1",     // many small tiles and slabs: every face in reach
    "1,1,16,8,5,2,1",    // k = 2, slabs that divide nothing
    "1,1,12,12,64,3,1",  // one slab spans z
    "1,1,8,16,4,1,1",    // one step a launch
    "2,2,8,8,8,3,1",     // clusters of 2x2: peers on both axes, partial clusters at the far faces
    "2,1,16,8,5,2,1",    // peers along x only
    "1,4,8,8,9,2,1",     // four along y: blocks past the grid with empty tiles
};

// The deepest 3D pipelines: k = 4 at radius 1, 3 at radius 2, 2 at radius 3
// and 4; remainders of 1..3 steps.
TEST(GpuCluster, DeepPipelines3D) {
  for (const char* eq : {"heat", "wave"}) {
    for (int r : {3, 4}) {
      check_cluster<float, 3>(eq, r, "[23, 18, 30]", 5, 2, "1,1,16,12,9,2,1");
      check_cluster<double, 3>(eq, r, "[23, 18, 30]", 7, 2, "2,2,8,8,9,2,1");
    }
    check_cluster<float, 3>(eq, 1, "[23, 18, 30]", 7, 2, "1,1,16,12,9,4,1");
    check_cluster<double, 3>(eq, 1, "[23, 18, 30]", 6, 1, "1,1,16,12,40,4,1");
    check_cluster<float, 3>(eq, 2, "[23, 18, 30]", 5, 2, "1,1,16,12,9,3,1");
    check_cluster<double, 3>(eq, 1, "[23, 18, 30]", 7, 2, "2,2,8,8,9,4,1");
  }
}

// The deep family (one persistent block a tile, k levels, edges at a grid
// barrier every r planes): every equation and radius, several tiles a side
// with last tiles partial (more than r wide), one tile a side in fp32 at
// r 1-2 (its own periodic neighbour), k = 1 (no exchange) and remainders of 1..4 steps.
TEST(GpuCluster, DeepFamily3D) {
  for (const char* eq : {"heat", "wave", "damped_wave"})
    for (int r : radii)
      for (const char* plan : {"deep,16,8,3", "deep,8,6,5", "deep,16,8,6", "deep,32,16,1", "deep,40,30,2"}) {
        const bool wide = std::strcmp(plan, "deep,40,30,2") == 0;  // its rings fit r 1-2; fp64: 24x30 (threads)
        if (wide && r > 2) continue;
        if (!wide)
          check_cluster<float, 3>(eq, r, "[32, 24, 26]", 7, 2, plan);  // whole tiles: no pack across a tile's end
        check_cluster<float, 3>(eq, r, "[37, 29, 26]", 7, 2, plan);
        check_cluster<double, 3>(eq, r, "[69, 53, 13]", 5, 1, wide ? "deep,24,30,2" : plan);
      }
}

// The columns family (a thread a column, every level's rows in registers):
// every equation and radius, every boundary set; the most levels compiled
// (12 and 13 steps a chunk: a full launch, and one of a single step after
// it), k 3 (r 1-2: launches of 2 and 1 steps, the counts compiled), segments
// sized to the GPU and short ones (many, the last partial),
// strips narrower than the grid (several, the last partial) and wider
// (both x faces in one strip), one step a launch.
TEST(GpuCluster, Columns2D) {
  for (const char* eq : {"heat", "wave", "damped_wave"})
    for (int r : radii) {
      const int levels = std::strcmp(eq, "heat") == 0 ? 1 : 2;
      for (const bool fp64 : {false, true}) {
        const int most = cuda::max_levels_columns(r, levels, fp64);
        const std::string plans[] = {fmt::format("columns,256,0,{}", most), fmt::format("columns,64,9,{}", 2),
                                     fmt::format("columns,128,5,{}", std::min(3, most)), "columns,96,0,1"};
        for (const std::string& plan : plans)
          if (fp64) {
            check_cluster<double>(eq, r, "[300, 257]", most + 1, 2, plan.c_str());
            check_cluster<double>(eq, r, "[37, 29]", 7, 1, plan.c_str());
          } else {
            check_cluster<float>(eq, r, "[37, 29]", 7, 2, plan.c_str());
            check_cluster<float>(eq, r, "[181, 40]", 5, 3, plan.c_str());
            check_cluster<float>(eq, r, "[300, 257]", most + 1, 1, plan.c_str());
          }
      }
    }
}

// The columns family with what varies: the heat's alpha in layers across x
// (a column's pairs) and across y (a row's), point sources (the general path
// in the iterations that reach their rows; near a corner, where their points
// wrap on periodic axes and x ghosts mirror them), and both; the most
// levels with a launch of one step after them, k 3 (launches of 2 and 1) in
// short segments, and one step a launch.
TEST(GpuCluster, ColumnsMediaAndSources2D) {
  for (int r : radii)
    for (const bool fp64 : {false, true})
      for (const char* eq : {"heat", "wave", "damped_wave"}) {
        const bool heat = std::strcmp(eq, "heat") == 0;
        const int most = cuda::max_levels_columns(r, heat ? 1 : 2, fp64);
        const std::string plans[] = {fmt::format("columns,256,0,{}", most),
                                     fmt::format("columns,64,9,{}", std::min(3, most)), "columns,96,0,1"};
        const char* precision = fp64 ? "float64" : "float32";
        const std::string grid = fp64 ? "[300, 257]" : "[37, 29]";
        std::vector<std::string> cases = {point_sources(eq, 2, precision, r, grid)};
        if (heat)
          for (const char* axis : {"x", "y"})
            cases.push_back(alpha_layers(axis)), cases.push_back(alpha_layers(axis) + cases[0]);
        for (const std::string& plan : plans)
          for (const std::string& extra : cases)
            if (fp64)
              check_cluster<double>(eq, r, grid, most + 1, 2, plan.c_str(), extra);
            else
              check_cluster<float>(eq, r, grid, most + 1, 3, plan.c_str(), extra);
      }
}

TEST(GpuCluster, Heat3D) {
  for (const char* plan : plans_3d)
    for (int r : radii) {
      check_cluster<float, 3>("heat", r, "[19, 13, 11]", 7, 2, plan);
      check_cluster<double, 3>("heat", r, "[37, 21, 26]", 5, 2, plan);
    }
}

TEST(GpuCluster, Wave3D) {
  for (const char* plan : plans_3d)
    for (int r : radii) {
      check_cluster<double, 3>("wave", r, "[19, 13, 11]", 7, 2, plan);
      check_cluster<float, 3>("wave", r, "[37, 21, 26]", 5, 2, plan);
    }
}

TEST(GpuCluster, OddGridsAndSingleSteps) {
  for (const char* plan : {"1,4,64,8,0,2,2", "1,1,32,8,0,4,2"})
    for (int r : radii) {
      check_cluster<float>("heat", r, "[129, 65]", 1, 5, plan);  // one step at a time
      check_cluster<double>("wave", r, r <= 2 ? "[6, 7]" : "[10, 11]", 4, 3,
                            plan);  // smaller than one tile (2r+2 points at least)
      check_cluster<float>("wave", r, "[255, 33]", 9, 2, plan);
    }
}

// The plan's origin, in the reason the run log prints: tuned once and
// cached, then found in the cache; fixed by the config.
TEST(GpuCluster, PlanIsTunedOnceThenCachedOrFixedByTheConfig) {
  const PlanOverride no_override(nullptr);
  const std::string cache = std::string(std::getenv("HEATWAVE_CACHE_DIR")) + "/plans-test.json";
  const std::string extra = "cluster: {cache: " + cache + "}\n";
  const std::string base =
      "equation: heat\nprecision: float32\ngrid: {points: [2048, 2047]}\ntime: {dt: auto, steps: 1}\n"
      "boundary: dirichlet\ninitial: {type: random}\n";
  auto make = [&](const std::string& more) {
    const Config config = load_config_text(base + more, "<gpu test>");
    const Problem p = Problem::from(config);
    Decomposition decomposition(p, {}, 1, MPI_COMM_SELF);
    const auto chosen = test::cluster_backend<2, float>(p, decomposition.local_domain<2>(), config.run.cluster);
    EXPECT_EQ(chosen.backend->name(), "cuda-cluster") << chosen.reason;
    return chosen.reason;
  };
  const std::string first = make(extra), second = make(extra);
  EXPECT_NE(first.find("autotuned: fastest of"), std::string::npos) << first;
  EXPECT_NE(second.find("cached in " + cache), std::string::npos) << second;
  // The same plan both times.
  EXPECT_EQ(first.substr(first.find("): ")), second.substr(second.find("): "))) << first << "\n" << second;
  const std::string fixed = make("cluster: {shape: [1, 2], tile: [40, 24], k: 3, threads_y: 2}\n");
  EXPECT_NE(fixed.find("plan (config): cluster 1x2, tile 40x24, k 3, 2 thread rows"), std::string::npos) << fixed;
  const std::string builtin = make("cluster: {autotune: false}\n");
  EXPECT_NE(builtin.find("plan (built-in)"), std::string::npos) << builtin;
  // A cached plan the case cannot run (another build's, or cached for a case
  // the key does not tell apart) is tuned again, not the baseline kernel.
  const std::string key = cuda::ClusterPlanCache::key(
      cuda::current_device().name, Problem::from(load_config_text(base, "<gpu test>")), {2048, 2047}, false);
  cuda::ClusterPlanCache(cache).store(key, cuda::ClusterPlan::parse("columns,256,0,13"), 1e-3);
  const std::string retuned = make(extra);
  EXPECT_NE(retuned.find("autotuned: fastest of"), std::string::npos) << retuned;
}

// A plan the device cannot run: the backend is cuda, and the reason names why.
template <int D, class Real>
void expect_fallback(const char* plan, int radius, const char* grid, const char* fragment, const char* eq = "heat",
                     const std::string& extra = "") {
  const PlanOverride override_plan(plan);
  const Problem p = test::gpu_case(eq, D, std::is_same_v<Real, float> ? "float32" : "float64", radius, "dirichlet",
                                   grid, "{type: constant, value: 0}", extra);
  Decomposition decomposition(p, {}, radius, MPI_COMM_SELF);
  const auto chosen = test::cluster_backend<D, Real>(p, decomposition.template local_domain<D>());
  EXPECT_EQ(chosen.backend->name(), "cuda") << plan;
  EXPECT_NE(chosen.reason.find(fragment), std::string::npos) << chosen.reason;
}

TEST(GpuCluster, FallsBackWithAReason) {
  expect_fallback<3, float>("4,4,16,16,16,2,1", 1, "[19, 13, 11]", "3D clusters are up to 8 blocks");
  expect_fallback<3, float>("1,1,16,16,16,4,1", 2, "[19, 13, 11]",
                            "k from 1 to 3 for radius 2");                                // windows in registers
  expect_fallback<2, float>("1,2,3,8,0,2,1", 2, "[37, 29]", "invalid cluster plan");      // a tile narrower than 2r
  expect_fallback<2, double>("1,2,64,512,0,8,1", 1, "[37, 29]", "KiB of shared memory");  // more than a block may have
  expect_fallback<2, float>("resident,120,8,8", 1, "[16384, 4096]", "do not fit on chip at once");  // 69632 tiles
  expect_fallback<2, float>("resident,24,12,2", 1, "[25, 29]",
                            "tiles (and the last, partial ones) wider than r");  // 25 = 24 + 1
  // Radius 3 and 4: two levels at most in 3D (plan.hpp: max_levels_3d).
  expect_fallback<3, double>("2,1,8,8,8,3,1", 4, "[19, 13, 11]", "k from 1 to 2 for radius 4");
  // Deep plans: their k, tiles whose last is at most r wide, the cases they do not take.
  expect_fallback<3, float>("deep,16,8,13", 1, "[19, 13, 11]", "k from 1 to 12");
  expect_fallback<3, float>("deep,16,8,2", 1, "[17, 16, 11]", "leaves a last tile of 1 points along x");
  expect_fallback<3, double>("deep,64,64,2", 1, "[19, 13, 11]", "threads a block (at most 512)");
  // Columns plans: their k, threads and the halo they keep.
  expect_fallback<2, float>("columns,256,0,13", 1, "[37, 29]", "k from 1 to 12 for radius 1");
  expect_fallback<2, double>("columns,48,0,2", 1, "[37, 29]", "threads a multiple of 32");
  expect_fallback<2, float>("columns,32,0,1", 1, "[37, 29]", "keeping 32 columns past the 2 k r of halo");
  // and the media they do not take: a file's alpha, the waves' c (the streaming plans do).
  expect_fallback<2, float>("columns,256,0,4", 1, "[37, 29]", "runs alpha constant or in layers", "heat",
                            alpha_file({37, 29}));
  expect_fallback<2, double>("columns,256,0,4", 2, "[37, 29]", "runs alpha constant or in layers", "wave",
                             wave_layers("x", false));
}

}  // namespace
}  // namespace heatwave
