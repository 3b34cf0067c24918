#pragma once
// The cuda-cluster launch plan: how a launch tiles the grid, which plans are
// worth timing for a case, and the on-disk cache of the fastest one per GPU
// model and case. Plain C++ (no CUDA types, built with or without CUDA: the
// bench reads plans too); the kernel objects that run them:
// kernel_2d_object.cuh, kernel_3d_object.cuh.
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "build_info.hpp"
#include "core/run_settings.hpp"
#include "kernels/cluster/kernel_shapes.hpp"
#include "solver/problem.hpp"

namespace heatwave::cuda {

// Streaming (the default). 2D: a cluster is `cluster_y` blocks stacked along
// y; a block owns tile_x x tile_y points. 3D: a cluster is cluster_x x
// cluster_y blocks over x-y, each owning a tile_x x tile_y column that it
// streams along z in slabs of tile_z planes. Every launch advances k steps
// (fewer for the remainder of a chunk).
// Resident (2D): every block keeps a tile_x x tile_y tile on chip for a whole
// chunk of steps in one launch, halos through global memory each step; only
// where all tiles fit in the GPU's shared memory at once (k is not used).
// Deep (3D, kernel_3d_deep.cuh): one persistent block a tile_x x tile_y
// column for the whole z extent, k levels deep with no halo cone: each
// level's tile edges go to the neighbouring tiles through global memory at
// a grid-wide barrier every r planes (cluster and tile_z are not used).
// Columns (2D, kernel_2d_columns.cuh): a block of tile_x threads, one a
// column, streams a segment of tile_y rows (0: the count that finishes
// soonest on the GPU) k levels deep, each column's rows in registers
// (cluster_y and threads_y are not used).
// (Its numbers, LaunchShape, are what the kernels read: kernel_shapes.hpp.)
struct ClusterPlan : LaunchShape {
  // The plan that says "the baseline step kernel is faster here" (in the plan cache as "baseline").
  static ClusterPlan baseline_plan() { return ClusterPlan{{0, 0, 0, 0, 0, 0, 0, false, false, false}}; }
  bool baseline() const { return cluster_x == 0; }
  std::string text() const;    // "cluster 1x2, tile 112x88, k 8, 8 thread rows"
  // "1,2,112,88,0,8,8", "resident,120,32,8", "deep,64,32,6", "columns,256,0,12" or "baseline" (what parse reads)
  std::string fields() const;
  static ClusterPlan parse(const std::string& s);  // "cx,cy,tile_x,tile_y,tile_z,k,threads_y",
                                                   // "resident,tile_x,tile_y,threads_y",
                                                   // "deep,tile_x,tile_y,k" or
                                                   // "columns,threads,rows,k"; throws invalid_value
  bool operator==(const ClusterPlan&) const = default;
};

// A block's shared rows, in points (kernel_2d.cuh, kernel_3d_pipeline.cuh): `halo` (k*r, or r
// for a resident tile) rounded up to whole 16-byte packs of `pack` points
// left of the tile, the tile, `halo` right of it, rounded up to packs.
int shared_halo_left(int halo, int pack);
int shared_width(int halo, int tile_x, int pack);

// The largest radius this build has 3D pipeline kernels for
// (HEATWAVE_CLUSTER_3D_HIGH_RADIUS adds 3 and 4).
inline constexpr int max_radius_3d = build::cluster_3d_max_radius;
// Why this build has no kernels for `plan` in `dims` dimensions at `radius`,
// naming the CMake option that builds them, or "" where it has them (the
// families left out by default: docs/performance.md, "What the build leaves out").
std::string unbuilt_plan(const ClusterPlan& plan, int dims, int radius);
// Why this build has no cluster kernels at all for the problem's case (3D
// past radius 2 without the options), or "".
std::string unbuilt_case(const Problem& problem);

// The built-in plan for a case (the fastest of the H100 sweeps in
// docs/performance.md; the baseline where this build has no cluster kernels
// for it); HEATWAVE_CLUSTER_PLAN overrides it, for experiments.
ClusterPlan default_cluster_plan(const Problem& problem);
// A 2D case's columns plan (the config's `mode: columns` starts from it):
// 256 threads, segments by the GPU, the most levels compiled (heat r 1: 8).
ClusterPlan default_columns_plan(const Problem& problem);
bool cluster_plan_from_environment();

// The built-in plan with the fields the config's `cluster:` section fixes,
// and the other way: the settings that fix every field of a plan.
ClusterPlan with_overrides(ClusterPlan plan, const ClusterSettings& settings);
// The plan a config's `cluster:` section makes: the built-in plan of the
// mode it names (default_columns_plan for columns), with the fields it fixes.
ClusterPlan config_plan(const Problem& problem, const ClusterSettings& settings);
ClusterSettings fixed_settings(const ClusterPlan& plan);


// A columns launch as its segment count's model sees it: `strips` strips of
// rows [first_row, first_row + rows) on `slots` block slots (the blocks the
// GPU holds at once), each block's sweep its segment, its cone of `reach`
// rows and `steps` chunks of `chunk` rows that fill and drain it.
struct ColumnsLaunch {
  int strips = 1, first_row = 0, rows = 1, reach = 0, steps = 1, chunk = 1, slots = 1;
};
// The rows of a strip's source points that a sweep of rows [from, to)
// reaches, as the kernel finds them: lo > hi where none.
using ColumnsEventRows = std::function<void(int strip, int from, int to, int& lo, int& hi)>;
// The segments a strip (1 to 256) that finish a launch soonest. Blocks start
// in launch order (strips fastest) on the slots as they free; a block takes
// its rows, and the iterations whose chunks reach its events' rows (none
// where event_rows is empty) `event_cost` times over.
int columns_segments(const ColumnsLaunch& launch, double event_cost, const ColumnsEventRows& event_rows);

// Plans the autotune times for a case: a short list around the built-in one,
// of the kernels this build has (none: the one-step kernel runs the case).
std::vector<ClusterPlan> cluster_plan_candidates(const Problem& problem);

// Why the cluster kernels cannot run a problem's media and sources (the
// registry then runs the cuda backend), or "" where they can: they make the
// waves' updates point by point (c, gamma, absorbing profiles) in 2D and 3D,
// read the heat's varying alpha as pair fields in 2D, and add point and
// Gaussian sources inside their pipeline, up to max_cluster_source_boxes a rank.
std::string cluster_gap(const Problem& problem);
// Whether the 2D cluster kernels read coefficient tiles for the problem (its
// flux coefficient comes from a file: pair fields, loaded with the field
// tile): more shared memory a block, other plans. (Constant or in layers, and
// in 3D, the pairs come from a table by the layers' coordinate or the file.)
bool cluster_flux_tiles(const Problem& problem);
// Fields the cluster backend holds beyond the cuda backend's, each the size
// of u: a two-level equation's launches write out of place (two outputs, so
// that both input levels stay whole for the halos other clusters read), and
// the pair fields of cluster_flux_tiles (D * radius).
int cluster_extra_fields(const Problem& problem);

// The fastest plan per GPU model and case, kept in a JSON file (written to a
// temporary name and renamed: concurrent ranks never see half a file).
class ClusterPlanCache {
 public:
  explicit ClusterPlanCache(std::string path);  // "": the default location
  // A run recording receivers adds "|receivers:<points>/<every>": the
  // interpolation points this rank records, and how often.
  static std::string key(const std::string& device, const Problem& problem, const std::vector<long>& owned,
                         bool exchanged, std::size_t sampled_points = 0, long every = 0);
  // The key's part for the media: each coefficient's medium type (layers
  // with their axis), absorbing faces and sources; empty for a constant
  // medium without sources.
  static std::string media_key(const Problem& problem);
  std::optional<ClusterPlan> find(const std::string& key) const;
  // Records a plan; a cache that cannot be written only costs a warning.
  void store(const std::string& key, const ClusterPlan& plan, double seconds_per_step) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace heatwave::cuda
