#pragma once
// The cuda-cluster launch plan: how a launch tiles the grid, which plans are
// worth timing for a case, and the on-disk cache of the fastest one per GPU
// model and case. Plain C++ (no CUDA types, built with or without CUDA: the
// bench reads plans too); the kernels are in kernel_2d.cuh and kernel_3d.cuh.
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "build_info.hpp"
#include "core/run_settings.hpp"
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
struct ClusterPlan {
  int cluster_x = 1, cluster_y = 1;
  int tile_x = 0, tile_y = 0, tile_z = 0;
  int k = 1;
  int threads_y = 1;  // thread rows (a power of 2); threads along x: a 16-byte pack each across the tile and its halo
  bool resident = false;
  bool deep = false;
  bool columns = false;

  int blocks() const { return cluster_x * cluster_y; }
  // The plan that says "the baseline step kernel is faster here" (in the plan cache as "baseline").
  static ClusterPlan baseline_plan() { return ClusterPlan{0, 0, 0, 0, 0, 0, 0, false, false, false}; }
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

// A block's shared rows, in points (kernel_2d.cuh, kernel_3d.cuh): `halo` (k*r, or r
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

// Steps a 3D launch can pipeline (kernel_3d_pipeline.cuh: each level is unrolled
// code; deeper pipelines recompute more halo than they save: at radius 3
// and 4 a third level's cone leaves a 512-thread block tiles of 16-24 rows).
constexpr int max_levels_3d(int radius) { return radius == 1 ? 4 : radius == 2 ? 3 : 2; }
// A deep plan's levels: its rings of 2r+1 planes a level share a block's
// shared memory (the kernel object refuses plans they do not fit).
inline constexpr int max_levels_deep = 12;
// A columns kernel's shape (kernel_2d_columns.cuh: a thread a column, each
// level's rows of it in registers), by radius, precision, the equation's
// levels and whether the kernel holds coefficients (the heat's flux form,
// the waves' point form). fp32: two blocks of 256 an SM, 128 registers a
// thread, heat r 1-4 12, 6, 4, 3 levels and the waves 6, 4, 3, 3 (the most
// that fit with few spills); but at r 1 the heat's flux form and the
// uniform waves one block of 384, 168 registers (the flux form spilled its
// coefficients at 128: heat in layers +18%, the heat sink's columns +28%;
// the waves at 8 levels +1-4%. The uniform heat lost 5% at 384 and at 512,
// the point form 1-6%, the r 2 waves 4-11%: H200, docs/performance.md).
// fp64: one block of 256 an SM, 255 registers, 12, 6, 4, 3 levels for
// every equation (H100: heat r 1 k 8 +3-4%, the wave at k 12 +8-10% over
// two blocks at k 6).
// The block every form's shape can take (a plan's threads may be fewer;
// some forms take more: ColumnsShape::threads).
inline constexpr int columns_threads = 256;
struct ColumnsShape {
  int threads;        // a block's most (the shared buffers' rows are as wide)
  int blocks_per_sm;  // the launch bounds' (so the registers a thread)
  int max_levels;     // a launch's most
};
constexpr ColumnsShape columns_shape(int radius, int levels, bool fp64, bool coefficients) {
  constexpr int heat[] = {12, 6, 4, 3}, wave[] = {6, 4, 3, 3};
  const int most = levels == 1 || fp64 ? heat[radius - 1] : wave[radius - 1];
  if (fp64) return {columns_threads, 1, most};
  if (radius == 1 && (levels == 1) == coefficients) return {384, 1, levels == 1 ? most : 8};
  return {columns_threads, 2, most};
}
// The most levels of either form (the kernels' tables by level count).
constexpr int max_levels_columns(int radius, int levels, bool fp64) {
  return std::max(columns_shape(radius, levels, fp64, false).max_levels,
                  columns_shape(radius, levels, fp64, true).max_levels);
}
// The level counts the columns kernels are compiled for: the most, and the
// powers of two below it. A launch runs one of them (a plan's k in between
// runs as launches of those: ClusterKernel::launch_steps).
constexpr bool columns_levels_compiled(const ColumnsShape& shape, int k) {
  return k == shape.max_levels || (k >= 1 && k < shape.max_levels && (k & (k - 1)) == 0);
}
// What a columns kernel adds to the stencil: nothing, sources, or
// receivers (and sources, where the case has them).
enum class ColumnEvents { none, sources, receivers };
// The level counts of a shape's kernels with `events`, compiled and
// launched: the fp32 kernels that add sources at most 8: at r 1's 12 what
// finds and adds a source spilled (ptxas: the uniform heat 94/72 bytes at
// 128 registers, the flux form 178/232 at 168; a point source at k 12 ran
// 32% slower than before it, H200). fp64's 12 fit (142-202 of 255
// registers). A rank with sources runs a plan's k past 8 as launches of 8
// and the rest.
inline constexpr int columns_source_levels = 8;
constexpr ColumnsShape columns_events_shape(ColumnsShape shape, ColumnEvents events, bool fp64) {
  if (events == ColumnEvents::sources && !fp64) shape.max_levels = std::min(shape.max_levels, columns_source_levels);
  return shape;
}

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
inline constexpr int max_cluster_source_boxes = 32;  // a bit each in a thread's mask (kernels/cluster/common.cuh)
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
