#pragma once
// cuda-cluster, 2D: how the kernels of kernel_2d.cuh take what varies in
// space and time. The flux form's pair tiles (the heat's alpha from a file), the point
// form's updates (the waves' c and gamma: calm rows once a launch, a pack's
// own elsewhere), and a thread's sources' and receivers' points
// (PipelineEvents2D). CUDA-only: included by kernel_2d.cuh.
#include "kernels/cluster/common.cuh"

namespace heatwave::cuda {

// Where the flux coefficient comes from a file (the heat's alpha:
// solver/media.hpp; Form::flux_tiles), its 2r pair fields K_aj,
// [a * R + j - 1], in the fields' layout. A launch loads
// them with the field tile into shared planes after the two levels (they do
// not change in time: once a launch, not once a step), and the stencil takes
// FluxPairs' terms in its order (solver/media.hpp).
template <int R, class Real>
struct FluxTiles {
  static constexpr int count = 2 * R;
  const Real* global[count] = {};
};

// The first pair plane in shared memory (the others follow, geo.plane apart).
template <class Real>
__device__ __forceinline__ Real* shared_pairs_2d(const ClusterGeometry<2>& geo) {
  return reinterpret_cast<Real*>(cluster_shared) + Pack<Real>::width + 2 * geo.plane;
}

// Form::point: the update of each shared row's calm points (nothing varies
// along x there: PointUpdates::calm_lo/hi), made once a launch since the
// coefficients do not change in time; row y at table[y - s.ybase], in
// dynamic shared memory after the two levels.
template <class Real, class Eq>
__device__ __forceinline__ typename Eq::template Update<Real>* calm_updates_2d(const ClusterGeometry<2>& geo) {
  return reinterpret_cast<typename Eq::template Update<Real>*>(reinterpret_cast<Real*>(cluster_shared) +
                                                               Pack<Real>::width + 2 * geo.plane);
}
template <class Real, class Eq>
__device__ __forceinline__ void make_calm_updates_2d(const PointUpdates<2, Real, Eq>& updates,
                                                     const ClusterGeometry<2>& geo, const SharedPlane& s) {
  if (updates.calm_lo >= updates.calm_hi) return;
  auto* table = calm_updates_2d<Real, Eq>(geo);
  const int tid = threadIdx.x + threadIdx.y * blockDim.x, nthreads = blockDim.x * blockDim.y;
  for (int i = tid; i < geo.rows; i += nthreads) {
    const int gy = stored_coordinate(geo.axis[1], s.ybase + i);
    table[i] = updates.at(updates.row(Index<2>{0, gy}), 0, updates.calm_lo);
  }
}

// Form::point: a thread's pack (the same at every row of a stencil call).
// Where it is calm its update in row y is the launch's table's; elsewhere
// each point's is made from the coefficient views.
template <class Real, class Eq>
struct PointPack2D {
  using Update = typename Eq::template Update<Real>;
  int x0 = 0, ybase = 0;  // the pack's first point; the table's first row
  bool calm = false;
  typename PointUpdates<2, Real, Eq>::Row shared{};  // not calm: the row's coefficient views
  long row = 0;                                      // not calm: the global offset of the row's point x = 0
  PointPack2D() = default;
  __device__ PointPack2D(const PointUpdates<2, Real, Eq>& updates, const ClusterAxis& ax, const SharedPlane& s, int x)
      : x0(x), ybase(s.ybase) {
    calm = x >= updates.calm_lo && x + Pack<Real>::width <= updates.calm_hi &&
           (!ax.periodic || (x >= 0 && x + Pack<Real>::width <= ax.n));
  }
  // Row y's part of the points' updates, once a row where the pack is not calm.
  __device__ void start_row(const PointUpdates<2, Real, Eq>& updates, const ClusterGeometry<2>& geo, int y) {
    if (calm) return;
    const int gy = stored_coordinate(geo.axis[1], y);
    shared = updates.row(Index<2>{0, gy});
    row = geo.lead + (gy + geo.halo) * geo.stride[1];
  }
  __device__ Update at(const PointUpdates<2, Real, Eq>& updates, const ClusterGeometry<2>& geo, int y, int v) const {
    if (calm) return calm_updates_2d<Real, Eq>(geo)[y - ybase];
    const int gx = stored_coordinate(geo.axis[0], x0 + v);
    return updates.at(shared, row + gx, gx);
  }
};

// What a thread of a 2D kernel adds and records at each level it makes: the
// sources' points in its pack column (source_lanes) and its receiver points
// in the columns and rows its block owns. A thread with any (a few in a
// launch) finds them again where it uses them; the others keep only that
// they have none (registers are what the kernels run short of).
template <class Real>
struct PipelineEvents2D {
  const ClusterSources<Real>& sources;
  const ClusterSamples<Real>& samples;
  int x, own_x0, own_x1, own_y0, own_y1;  // the pack's first point; the block's columns and rows
  bool eventful = false;
  __device__ PipelineEvents2D(const ClusterSources<Real>& sources_, const ClusterSamples<Real>& samples_,
                              const ClusterGeometry<2>& geo, int x_, int own_x0_, int own_x1_, int own_y0_,
                              int own_y1_)
      : sources(sources_), samples(samples_), x(x_), own_x0(own_x0_), own_x1(own_x1_), own_y0(own_y0_),
        own_y1(own_y1_) {
    int begin, end;
    own_samples(begin, end);
    eventful = source_lanes<2>(sources, geo, x, 0) != 0 || end > begin;
  }
  // The thread's receiver points (one thread of a pack column records them).
  __device__ void own_samples(int& begin, int& end) const {
    begin = end = 0;
    if (samples.count > 0 && threadIdx.y == 0)
      sample_range<2>(samples.points, samples.count, 0, max(x, own_x0), min(x + Pack<Real>::width, own_x1), begin,
                      end);
  }
  // The level before is the buffer the next step writes: where it is recorded
  // (block-uniform), the block waits for every thread's reads of it (wait_after).
  __device__ bool wait_after(int m) const {
    int row;
    return samples.previous && samples.sampled(m, row);
  }
  // After the launch's step m (from 1) and the barrier that completes it:
  // the thread's receiver points of the level it made (or of the one before,
  // u^{m-1}), where the step is sampled.
  __device__ void record(const Real* level, const Real* before, const SharedPlane& s, int m) const {
    int row, begin, end;
    if (!eventful || !samples.sampled(m, row)) return;
    own_samples(begin, end);
    const Real* from = samples.previous ? before : level;
    for (int k = begin; k < end; ++k) {
      const SamplePoint point = samples.points[k];
      if (point.i[1] >= own_y0 && point.i[1] < own_y1)
        samples.rows[static_cast<long>(row) * samples.count + point.slot] = from[s.at(point.i[0], point.i[1])];
    }
  }
};

}  // namespace heatwave::cuda
