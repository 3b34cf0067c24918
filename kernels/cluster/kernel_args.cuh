#pragma once
// What the cluster kernels take: one argument struct a family (ClusterArgs,
// what every launch passes, and what the family adds), after the fields, and
// the functions that give a family's kernels. These are declared here for
// the kernel objects, and defined with the kernels (each family's device
// header) in the units that instantiate them (kernels/cluster/units.cmake):
// a kernel object's unit compiles no kernel. Device code: no host-only header.
//
// The fields stay parameters of their own: __restrict__ is what lets nvcc
// load a read-only field through the non-coherent path, and it holds for a
// kernel's pointer parameters, not for members of a struct.
#include "kernels/cluster/kernel_2d_columns_support.cuh"
#include "kernels/cluster/kernel_2d_forms.cuh"
#include "kernels/cluster/update_classes.cuh"

namespace heatwave::cuda {

// A kernel of a family taking `Args`: (u, u_prev, out_u, out_u_prev, args),
// u_prev u^{n-1} where the equation has two levels (v0 at step 0).
template <class Args>
using KernelOf = void (*)(const typename Args::Real*, const typename Args::Real*, typename Args::Real*,
                          typename Args::Real*, Args);

// What every launch passes: the geometry, the stencil's weights and the
// equation's update, whether the launch's first step is the run's first
// (the waves' Taylor start), the sources it adds and the receivers it records.
template <int D, int R, class RealType, class Eq>
struct ClusterArgs {
  using Real = RealType;
  ClusterGeometry<D> geo{};
  LaplacianWeights<D, R, Real> lap{};
  typename Eq::template Update<Real> up{};
  bool start = false;
  ClusterSources<Real> sources{};
  ClusterSamples<Real> samples{};
};

// ------------------------------------------------ 2D tiles (kernel_2d.cuh) ---
// Streaming and resident tiles: `steps` a launch, the pair tiles of a file's
// alpha (Form::flux_tiles), the layers' pairs (Form::flux), the point
// updates (Form::point); resident: the tiles' edges each step, two parities.
template <int R, class Real, class Eq>
struct TileArgs2D : ClusterArgs<2, R, Real, Eq> {
  int steps = 1;
  FluxTiles<R, Real> flux{};
  FluxTable<2, R, Real> flux_table{};
  PointUpdates<2, Real, Eq> updates{};
  Real* edges = nullptr;
};
template <int R, class Real, class Eq>
struct Kernels2D {
  KernelOf<TileArgs2D<R, Real, Eq>> streaming, resident;
};
template <int R, class Real, class Eq, Form F>
Kernels2D<R, Real, Eq> kernels_2d();

// ---------------------------------------- 2D columns (kernel_2d_columns.cuh) ---
// The faces' ghost rules, the layers' pairs, a block's segment of rows, the
// point form's updates by row.
template <int R, class Real, class Eq>
struct ColumnsArgs2D : ClusterArgs<2, R, Real, Eq> {
  ColumnFaces<Real, R> faces{};
  FluxTable<2, R, Real> flux_table{};
  int segment_rows = 0;
  ColumnUpdates<typename Eq::template Update<Real>> point{};
};
// A form's kernels with events E by level count: those compiled
// (columns_levels_compiled, columns_kernels_shape), null elsewhere.
template <int R, class Real, class Eq>
struct ColumnsKernels2D {
  static constexpr int most = max_levels_columns(R, Eq::levels, sizeof(Real) == 8);
  KernelOf<ColumnsArgs2D<R, Real, Eq>> by_levels[most + 1] = {};
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

// The point form's updates (each point's, or by classes), the flux form's
// pairs (a file's alpha) and table (layers).
template <int R, class Real, class Eq>
struct PipelineArgs3D : ClusterArgs<3, R, Real, Eq> {
  PointUpdates<3, Real, Eq> updates{};
  UpdateClasses<typename Eq::template Update<Real>> classes{};
  FluxPairs<3, R, Real> flux{};
  FluxTable<3, R, Real> flux_table{};
};
// The kernel of a form for a launch of `steps` steps (1..max_levels_3d(R)),
// in clusters of one block or more, with the code of sources and receivers
// (Events) or without.
template <int R, class Real, class Eq, Form F, bool Clustered, bool Events>
KernelOf<PipelineArgs3D<R, Real, Eq>> kernel_3d_of(int steps);

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
struct DeepArgs3D : PipelineArgs3D<R, Real, Eq> {
  int steps = 1;
  Real* edges = nullptr;
};
// The uniform form's kernels: the rings' (any step count), with sources'
// code, and at radius 1 in fp32 the register windows' by level count (null
// elsewhere); and a media form's rings kernel.
template <int R, class Real, class Eq>
struct DeepKernels3D {
  KernelOf<DeepArgs3D<R, Real, Eq>> rings, sourced;
  KernelOf<DeepArgs3D<R, Real, Eq>> windows[deep_window_levels + 1];
};
template <int R, class Real, class Eq>
DeepKernels3D<R, Real, Eq> deep_kernels_3d();
template <int R, class Real, class Eq, Form F>
KernelOf<DeepArgs3D<R, Real, Eq>> deep_media_kernel_3d();

}  // namespace heatwave::cuda
