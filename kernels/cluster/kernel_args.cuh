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
#include "kernels/cuda/update_classes.cuh"

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
// Its shapes: kernel_shapes.hpp (deep_shape).
// The kernel of a radius, precision and equation (its shape's) for a launch
// of `steps` levels: the shape's k, or 1 (null otherwise); with the point
// form's updates by classes (Point) or the uniform update, with the code
// of sources and receivers (Events) or without. It takes the edge strips'
// buffer, the launch's sources and receivers (kernel_shapes.hpp: which are built).
template <int R, class Real, class Eq>
using DeepKernel3D = void (*)(const Real*, const Real*, Real*, Real*, ClusterGeometry<3>, LaplacianWeights<3, R, Real>,
                              typename Eq::template Update<Real>, int, bool, Real*, ClusterSources<Real>,
                              ClusterSamples<Real>, UpdateClasses<typename Eq::template Update<Real>>);
template <int R, class Real, class Eq, bool Point, bool Events>
DeepKernel3D<R, Real, Eq> deep_kernel_3d_of(int steps);

}  // namespace heatwave::cuda
