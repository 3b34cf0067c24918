#pragma once
// What the cluster kernels are compiled for and what a launch plan tells
// them: shared by the kernels (device code) and the plans (plan.hpp, plain
// C++). No host-only header.
namespace heatwave::cuda {

// A launch plan's numbers, as the kernels read them (ClusterPlan, plan.hpp,
// adds what the host does with them): clusters of cluster_x x cluster_y
// blocks, a block's tile, k steps a launch, thread rows (a power of 2;
// threads along x: a 16-byte pack each across the tile and its halo), and
// the mode (plan.hpp). (The kernels' parameters hold it in ClusterGeometry:
// the same fields as before, so the same layout. Four bytes fewer shifted
// every later field, and ptxas spilled 8 bytes more in the 2D flux-tile
// kernel and 56/180 in the resident one.)
struct LaunchShape {
  int cluster_x = 1, cluster_y = 1;
  int tile_x = 0, tile_y = 0, tile_z = 0;
  int k = 1;
  int threads_y = 1;
  bool resident = false;
  bool deep = false;
  bool columns = false;
  constexpr int blocks() const { return cluster_x * cluster_y; }
  bool operator==(const LaunchShape&) const = default;
};

// Source boxes a rank the kernels add: a bit each in a thread's mask (common.cuh).
inline constexpr int max_cluster_source_boxes = 32;

constexpr int max_of(int a, int b) { return a > b ? a : b; }
constexpr int min_of(int a, int b) { return a < b ? a : b; }

// Steps a 3D launch can pipeline (kernel_3d_pipeline.cuh: each level is unrolled
// code; deeper pipelines recompute more halo than they save: at radius 3
// and 4 a third level's cone leaves a 512-thread block tiles of 16-24 rows).
constexpr int max_levels_3d(int radius) { return radius == 1 ? 4 : radius == 2 ? 3 : 2; }
// The deep family (kernel_3d_deep.cuh).
// A block of 256 threads a tile, one an SM (255 registers a thread); a
// thread a column of the tile's rows at one x.
inline constexpr int deep_threads = 256;
// The shape a deep kernel is compiled for, by radius, precision and the
// equation's levels: the tile (fp32 64 x 32, a thread 8 points; fp64 32 x
// 32, 4 points: each a 256-thread block's) and the most levels a launch
// (its rings of r+1 planes a level fit 227 KiB: heat r 1 8, r 2 6; the
// waves, whose levels also hold u^{m-1}, r 1 6). A launch runs 1..k of them.
// The heat at r 1 takes 8 in both precisions (fp32 at 8 against 7: +0.8%
// at 512^3, +3.8% at 768x288x2560, 254 registers and no spill; H200).
struct DeepShape {
  int tile_x = 0, tile_y = 0, k = 0;
};
constexpr DeepShape deep_shape(int R, bool fp64, int levels) {
  const int k = levels == 1 ? (R == 1 ? 8 : (fp64 ? 5 : 4)) : (fp64 ? 6 : 5);
  return {fp64 ? 32 : 64, 32, k};
}
// Whether a deep kernel is built for a radius and the equation's levels.
constexpr bool deep_built(int R, int levels) { return R == 1 || (R == 2 && levels == 1); }
// Whether its point form (the waves' c and gamma by axis classes: layers,
// absorbing faces) is built: the waves at radius 1 in fp32, the seismic
// shot's case (the pipeline runs the others); its kernels carry sources
// and receivers.
constexpr bool deep_point_built(int R, bool fp64, int levels) { return R == 1 && !fp64 && levels == 2; }
// Whether kernels with sources and receivers (Events) are built for the
// form: at radius 1 in fp32, the real runs' case (elsewhere receivers are
// gathered between launches and sources take the pipeline).
constexpr bool deep_events_built(int R, bool fp64, int levels, bool point) {
  return point ? deep_point_built(R, fp64, levels) : R == 1 && !fp64;
}
constexpr int deep_points(int tile_x, int tile_y) { return tile_x * tile_y / deep_threads; }
constexpr int deep_plane(int R, int tile_x, int tile_y) { return (tile_x + 2 * R) * (tile_y + 2 * R); }
// Shared planes: level 0's ring of 2(r+1) (u, and u^{n-1} for two levels),
// then r+1 a level 1..k-1.
constexpr int deep_planes(int R, int levels, int k) { return levels * 2 * (R + 1) + (k - 1) * (R + 1); }
// A level's edge values a block (four strips, r deep).
constexpr int deep_edge_values(int R, int tile_x, int tile_y) { return 2 * R * (tile_x + tile_y); }
// A block's shared memory: the planes, then the lists of fetched halo
// points, sent edge values and ghosts (deep_kernel_3d's Pair, Pair and
// GhostItem: seven ints an edge value of levels 1..k-1).
constexpr long deep_shared_bytes(int R, int levels, int k, int real_bytes, int tile_x, int tile_y) {
  return static_cast<long>(real_bytes) * deep_planes(R, levels, k) * deep_plane(R, tile_x, tile_y) +
         28L * (k - 1) * deep_edge_values(R, tile_x, tile_y);
}

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
  return max_of(columns_shape(radius, levels, fp64, false).max_levels, columns_shape(radius, levels, fp64, true).max_levels);
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
  if (events == ColumnEvents::sources && !fp64) shape.max_levels = min_of(shape.max_levels, columns_source_levels);
  return shape;
}

}  // namespace heatwave::cuda
