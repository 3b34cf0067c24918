#pragma once
// What the cluster kernels take: each family's kernel type (its parameters,
// written here once for the kernel objects and the kernels' tables) and the
// functions that give a family's kernels. These are declared here for the
// kernel objects, and defined with the kernels (each family's device
// header) in the units that instantiate them (kernels/cluster/units.cmake):
// a kernel object's unit compiles no kernel. Device code: no host-only header.
//
// A family's kernels take their arguments as parameters of their own, not
// as one struct: with one struct parameter nvcc kept fewer of them as
// invariant loads, and kernels at their register cap spilled (the 2D tiles'
// flux-tile kernel 0 -> 60/108 bytes: heat 2D fp32 from a file -16.9%; the
// 3D flux form's: heat 3D in layers -9.8%; H200, the same plans:
// docs/performance.md, "The build's units").
#include "kernels/cluster/kernel_2d_columns_support.cuh"
#include "kernels/cluster/kernel_2d_forms.cuh"
#include "kernels/cluster/update_classes.cuh"

namespace heatwave::cuda {

// ------------------------------------------------ 2D tiles (kernel_2d.cuh) ---
// Streaming and resident tiles: `steps` a launch, the pair tiles of a file's
// alpha (Form::flux_tiles), the layers' pairs (Form::flux), the point
// updates (Form::point); resident: the tiles' edges each step, two parities.
template <int R, class Real, class Eq>
struct Kernels2D {
  void (*streaming)(const Real*, const Real*, Real*, Real*, ClusterGeometry<2>, LaplacianWeights<2, R, Real>,
                    typename Eq::template Update<Real>, int, bool, FluxTiles<R, Real>, FluxTable<2, R, Real>,
                    PointUpdates<2, Real, Eq>, ClusterSources<Real>, ClusterSamples<Real>);
  void (*resident)(const Real*, const Real*, Real*, Real*, ClusterGeometry<2>, LaplacianWeights<2, R, Real>,
                   typename Eq::template Update<Real>, int, bool, Real*, FluxTiles<R, Real>, FluxTable<2, R, Real>,
                   PointUpdates<2, Real, Eq>, ClusterSources<Real>, ClusterSamples<Real>);
};
template <int R, class Real, class Eq, Form F>
Kernels2D<R, Real, Eq> kernels_2d();

// ---------------------------------------- 2D columns (kernel_2d_columns.cuh) ---
// The faces' ghost rules, the layers' pairs, a block's segment of rows, the
// point form's updates by row. A form's kernels with events E by level
// count: those compiled (columns_levels_compiled, columns_kernels_shape),
// null elsewhere.
template <int R, class Real, class Eq>
using ColumnsKernel2D = void (*)(const Real*, const Real*, Real*, Real*, ClusterGeometry<2>,
                                 LaplacianWeights<2, R, Real>, typename Eq::template Update<Real>, ColumnFaces<Real, R>,
                                 FluxTable<2, R, Real>, ClusterSources<Real>, bool, int, ClusterSamples<Real>,
                                 ColumnUpdates<typename Eq::template Update<Real>>);
template <int R, class Real, class Eq>
struct ColumnsKernels2D {
  static constexpr int most = max_levels_columns(R, Eq::levels, sizeof(Real) == 8);
  ColumnsKernel2D<R, Real, Eq> by_levels[most + 1] = {};
};
template <int R, class Real, class Eq, Form F, ColumnEvents E>
ColumnsKernels2D<R, Real, Eq> columns_kernels_2d();

// --------------------------------------- 3D pipeline (kernel_3d_pipeline.cuh) ---
// Ring planes. Level 0 (and u^{n-1}, two levels): the 2r+1 that level 1
// reads and the rest in flight from global memory (an iteration is shorter
// than its latency): 8 at radius 1 and 2 (slots by masks), 2 in flight
// beyond radius 2 (a deeper ring would not leave the wave a block's shared
// memory). Levels 1..Steps-1: the 2r+1 that the next level reads.
__host__ __device__ constexpr int level0_planes_3d(int R) { return R <= 2 ? 8 : 2 * R + 3; }
__host__ __device__ constexpr int upper_planes_3d(int R) { return 2 * R + 1; }

// The kernel of a form for a launch of `steps` steps (1..max_levels_3d(R)),
// in clusters of one block or more, with the code of sources and receivers
// (Events) or without: the point form's updates (each point's, or by
// classes), the flux form's pairs (a file's alpha) and table (layers).
template <int R, class Real, class Eq>
using Kernel3D = void (*)(const Real*, const Real*, Real*, Real*, ClusterGeometry<3>, LaplacianWeights<3, R, Real>,
                          typename Eq::template Update<Real>, int, bool, PointUpdates<3, Real, Eq>,
                          ClusterSources<Real>, ClusterSamples<Real>, UpdateClasses<typename Eq::template Update<Real>>,
                          FluxPairs<3, R, Real>, FluxTable<3, R, Real>);
template <int R, class Real, class Eq, Form F, bool Clustered, bool Events>
Kernel3D<R, Real, Eq> kernel_3d_of(int steps);

// ---------------------------------------------- 3D deep (kernel_3d_deep.cuh) ---
// A thread owns a pack of V points on deep_rows rows of its block's tile, at
// every level, for the whole sweep (the y neighbours inside its rows come
// from registers). One row and 512 threads, 16 warps an SM, ran 11-34%
// faster than two rows and 256 threads (H100, A/B in one call: heat fp32
// 512^3 at 64x32 k 6 192.9 against 173.3, 64x16 k 6 184.9 against 138.5).
inline constexpr int deep_rows = 1;
inline constexpr int deep_threads = 512;  // at most a block: 128 registers a thread, one block an SM
// Level-0 planes loaded ahead (cp.async): at 2, 6 KB an SM in flight left
// the H100's loads waiting on DRAM latency (k 1: 101 Gcells/s).
inline constexpr int deep_in_flight = 4;
inline constexpr int deep_items = 2;  // load and edge items a thread keeps the geometry of, in registers
// Launches of 2 to deep_window_levels levels at r 1 in fp32 keep each
// level's z window at the thread's pack in registers (deep_kernel_3d's
// Levels): a level then reads only its x and y neighbours from shared
// memory. A/B in one call (H100, 64x32): heat fp32 512^3 k 4 253.4 against
// 215.1, wave fp32 k 4 225.5 against 185.7. k 5's windows fit 128 registers
// only with the steady path (heat k 5 301.9 against k 6's 275.7 without
// windows); k 6's spill, and fp64 lost 2.6% at k 4.
inline constexpr int deep_window_levels = 5;
// Ring planes: level 0 (and u^{n-1}) the 2r+1 that level 1 reads and those
// in flight; levels 1..k-1 the 2r+1 that the next level reads.
__host__ __device__ constexpr int deep_level0_planes(int R) { return 2 * R + 1 + deep_in_flight; }
// The edge buffer (deep_kernel_3d's `edges`): a block's strips of one
// level's plane (4 sides, r deep, as long as the tile's longer side), and
// the levels it keeps them for; r planes a level, two sets by parity.
__host__ __device__ constexpr long deep_strip_values(int R, int tile_x, int tile_y) {
  return 4L * R * (tile_x > tile_y ? tile_x : tile_y);
}
__host__ __device__ inline int deep_strip_levels(int k) { return max(k - 1, 1); }

// The pipeline's media, `steps` a launch and the tiles' edge strips.
template <int R, class Real, class Eq>
using DeepKernel3D = void (*)(const Real*, const Real*, Real*, Real*, ClusterGeometry<3>, LaplacianWeights<3, R, Real>,
                              typename Eq::template Update<Real>, int, bool, Real*, ClusterSources<Real>,
                              PointUpdates<3, Real, Eq>, UpdateClasses<typename Eq::template Update<Real>>,
                              FluxPairs<3, R, Real>, FluxTable<3, R, Real>);
// The uniform form's kernels: the rings' (any step count), with sources'
// code, and at radius 1 in fp32 the register windows' by level count (null
// elsewhere); and a media form's rings kernel.
template <int R, class Real, class Eq>
struct DeepKernels3D {
  DeepKernel3D<R, Real, Eq> rings, sourced;
  DeepKernel3D<R, Real, Eq> windows[deep_window_levels + 1];
};
template <int R, class Real, class Eq>
DeepKernels3D<R, Real, Eq> deep_kernels_3d();
template <int R, class Real, class Eq, Form F>
DeepKernel3D<R, Real, Eq> deep_media_kernel_3d();

}  // namespace heatwave::cuda
