// The cuda-cluster backend against the host backend: bitwise equal fields on
// every case (2D and 3D, heat and wave, float32 and float64, radius 1 to 4,
// every boundary set incl. mixed nonzero faces and periodic), on grids that
// divide no tile, for several launch plans (cluster sizes 1..16 in 2D; k =
// 1..5; step counts that leave a remainder launch). Unusable plans fall back
// to the cuda backend and say why. Media, sources and receivers:
// cluster_media_test.cpp.
#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "build_info.hpp"
#include "cluster_support.hpp"
#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/device.hpp"

namespace heatwave {
namespace {

using namespace test;

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

// The deep family (levels r+1 planes apart, a thread a column of its
// tile's rows, edges at a grid barrier every plane): each compiled shape,
// every equation and radius it is built for, several tiles a side (the last
// moved back over its neighbour), one tile a side and one and a bit (its own
// periodic neighbour, or a neighbour it overlaps), k the shape's (chunks
// with remainders: launches of one step) and 1; z long enough for steady
// iterations (whole periods of the rings) at every k.
// A distinct g on each Dirichlet face: the steady iterations store no face
// point and rely on the g the general ones left in each ring slot.
TEST(GpuCluster, DeepFamily3D) {
  if (!build::cluster_3d_deep) GTEST_SKIP() << "this build leaves the deep family out (HEATWAVE_CLUSTER_3D_DEEP)";
  std::vector<std::string> boundaries = boundary_sets;
  boundaries.push_back(
      "{default: {type: dirichlet, value: 0.25}, x_low: {type: dirichlet, value: -0.5}, x_high: {type: dirichlet, "
      "value: 0.75}, y_low: {type: dirichlet, value: 1.0}, y_high: {type: dirichlet, value: -1.25}, z_high: {type: "
      "dirichlet, value: 0.5}}");
  for (const char* eq : {"heat", "wave", "damped_wave"})
    for (int r : {1, 2}) {
      const int levels = std::strcmp(eq, "heat") == 0 ? 1 : 2;
      if (!cuda::deep_built(r, levels)) continue;
      for (const bool fp64 : {false, true}) {
        const cuda::DeepShape shape = cuda::deep_shape(r, fp64, levels);
        for (int k : {shape.k, 1}) {
          const std::string plan = fmt::format("deep,{},{},{}", shape.tile_x, shape.tile_y, k);
          if (fp64) {
            check_cluster<double, 3>(eq, r, "[69, 53, 37]", shape.k + 1, 1, plan.c_str(), "", boundaries);
            check_cluster<double, 3>(eq, r, "[32, 34, 9]", 3, 2, plan.c_str());
          } else {
            check_cluster<float, 3>(eq, r, "[150, 70, 41]", shape.k + 2, 1, plan.c_str(), "", boundaries);
            check_cluster<float, 3>(eq, r, "[66, 32, 9]", 3, 2, plan.c_str());
          }
        }
      }
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
        const cuda::ColumnsShape shape = cuda::columns_shape(r, levels, fp64, false);
        const int most = shape.max_levels;
        const std::string plans[] = {fmt::format("columns,{},0,{}", shape.threads, most),
                                     fmt::format("columns,64,9,{}", 2),
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
  // Plans of the 3D families the default build leaves out name the option that builds them.
  if (!build::cluster_3d_dsmem)
    expect_fallback<3, float>("2,1,16,16,16,2,1", 1, "[19, 13, 11]", "-DHEATWAVE_CLUSTER_3D_DSMEM=ON");
  if (!build::cluster_3d_high_radius)
    expect_fallback<3, float>("1,1,16,16,16,2,1", 3, "[19, 13, 11]", "-DHEATWAVE_CLUSTER_3D_HIGH_RADIUS=ON");
  if (!build::cluster_3d_deep)
    expect_fallback<3, float>("deep,16,8,3", 1, "[19, 13, 11]", "-DHEATWAVE_CLUSTER_3D_DEEP=ON");
  if (build::cluster_3d_dsmem)
    expect_fallback<3, float>("4,4,16,16,16,2,1", 1, "[19, 13, 11]", "3D clusters are up to 8 blocks");
  expect_fallback<3, float>("1,1,16,16,16,4,1", 2, "[19, 13, 11]",
                            "k from 1 to 3 for radius 2");                                // windows in registers
  expect_fallback<2, float>("1,2,3,8,0,2,1", 2, "[37, 29]", "invalid cluster plan");      // a tile narrower than 2r
  expect_fallback<2, double>("1,2,64,512,0,8,1", 1, "[37, 29]", "KiB of shared memory");  // more than a block may have
  expect_fallback<2, float>("resident,120,8,8", 1, "[16384, 4096]", "do not fit on chip at once");  // 69632 tiles
  expect_fallback<2, float>("resident,24,12,2", 1, "[25, 29]",
                            "tiles (and the last, partial ones) wider than r");  // 25 = 24 + 1
  // Radius 3 and 4: two levels at most in 3D (plan.hpp: max_levels_3d).
  if (build::cluster_3d_high_radius)
    expect_fallback<3, double>("1,1,8,8,8,3,1", 4, "[19, 13, 11]", "k from 1 to 2 for radius 4");
  // Deep plans: their shape and k, an axis shorter than a tile, a last tile of fewer than r own points.
  if (build::cluster_3d_deep) {
    expect_fallback<3, float>("deep,64,32,9", 1, "[130, 70, 11]", "take tiles of 64x32 and k 8 (or 1)");
    expect_fallback<3, double>("deep,64,32,8", 1, "[70, 40, 11]", "take tiles of 32x32");
    expect_fallback<3, float>("deep,64,32,8", 1, "[60, 40, 11]", "needs at least 64 points along x");
    expect_fallback<3, float>("deep,64,32,4", 2, "[129, 40, 11]", "and a last tile of r or more");
  }
  // Columns plans: their k, threads and the halo they keep.
  expect_fallback<2, float>("columns,256,0,13", 1, "[37, 29]", "k from 1 to 12 for radius 1");
  expect_fallback<2, double>("columns,48,0,2", 1, "[37, 29]", "threads a multiple of 32");
  expect_fallback<2, float>("columns,32,0,1", 1, "[37, 29]", "keeping 32 columns past the 2 k r of halo");
  // and the media they do not take: a file's alpha or c (the streaming plans do).
  expect_fallback<2, float>("columns,256,0,4", 1, "[37, 29]", "runs alpha constant or in layers", "heat",
                            alpha_file({37, 29}));
  expect_fallback<2, double>("columns,256,0,4", 2, "[37, 29]", "runs the waves' c and gamma constant, in layers",
                             "wave", coefficient_file("c", {37, 29}));
}

}  // namespace
}  // namespace heatwave
