#pragma once
// What every cluster kernel knows of its launch: the rank's axes (faces,
// halos, the window written back), the shared-memory geometry and the
// plan's tiling, and where a launch records the receivers. Device code: no
// host-only header (the kernels' units include only their family's).
#include <array>

#include "kernels/cluster/kernel_shapes.hpp"
#include "kernels/cuda/update_classes.cuh"
#include "solver/domain.hpp"

namespace heatwave::cuda {

// One axis of the rank's box as the kernels see it (local coordinates).
struct ClusterAxis {
  int n = 1;                           // owned points
  bool periodic = false;               // one rank spans the axis: loads wrap around
  int load_lo = 0, load_hi = 0;        // points that hold data: r ghosts past a physical face, H past an exchanged one
  int core_lo = 0, core_hi = 0;        // points that are not ghosts (owned, plus the halo of an exchanged face)
  int upd_lo = 0, upd_hi = 0;          // points the stencil updates: core less Dirichlet face points
  bool exchanged[2] = {false, false};  // the halo past this side comes from a neighbour rank
  bool ghosts[2] = {false, false};     // a physical face whose r ghost layers the kernel fills
  FaceRule face[2];
  int out_lo = 0, out_hi = 0;  // points a launch writes back: its window (ClusterKernel::launch)

  // The face's boundary point, and whether point c is a Dirichlet face point of
  // this rank (every level holds g there): FaceRule::fixed_point on the axis'
  // int extent (the kernels index in 32 bits; FaceRule's long compares cost
  // 4% in 2D on the H100).
  __host__ __device__ int face_point(int side) const { return side == 0 ? 0 : n - 1; }
  // Whether point c, as it is (not wrapped), is one that holds data.
  __host__ __device__ bool holds_data(int c) const { return c >= load_lo && c < load_hi; }
  __host__ __device__ bool fixed(int side, int c) const {
    return ghosts[side] && face[side].type == BoundaryType::dirichlet && c == face_point(side);
  }
};

template <int D>
struct ClusterGeometry {
  ClusterAxis axis[D];
  long lead = 0, halo = 0;  // global addressing: Layout::offset
  long stride[D] = {};
  LaunchShape plan;          // the plan's numbers (ClusterKernel::plan() has the plan)
  int halo_left = 0;         // shared column 0 is this far left of the tile (k*r rounded up to packs)
  int width = 0, rows = 0;   // shared-memory extents of a level (a plane in 3D)
  int plane = 0;             // shared-memory stride from one level (3D: plane) to the next
  int thread_rows_log2 = 0;  // log2 plan.threads_y: strips of rows per thread by shifts
};

// The axes as the table of updates by classes maps them (UpdateClassTable):
// the points that hold data, or the whole axis where it wraps.
template <int D>
std::array<ClassAxis, D> class_axes(const ClusterGeometry<D>& geo) {
  std::array<ClassAxis, D> axes;
  for (int a = 0; a < D; ++a) {
    const ClusterAxis& axis = geo.axis[a];
    axes[a] = axis.periodic ? ClassAxis{0, axis.n, true} : ClassAxis{axis.load_lo, axis.load_hi - axis.load_lo, false};
  }
  return axes;
}

// Receivers recorded as the levels are made (kernels/cluster/common.cuh):
// the backend's points, sorted (3D: by y, then x; 2D: by x), and where a
// launch writes their values.
struct SamplePoint {
  int i[3] = {0, 0, 0};  // local coordinates of an owned point
  int slot = 0;          // its place in the backend's list: its column of the sample rows
};
template <class Real>
struct ClusterSamples {
  const SamplePoint* points = nullptr;
  int count = 0;
  Real* rows = nullptr;   // the launch's first sample row, [row][slot]
  int first = 0;          // the launch's first sampled step (1..steps), 0: none
  int every = 1;
  bool previous = false;  // the level before the step's (u^{n-1}) rather than u^n
  // Whether the launch's step m (from 1) is sampled, and its row.
  __device__ bool sampled(int m, int& row) const {
    if (first == 0 || m < first || (m - first) % every != 0) return false;
    row = (m - first) / every;
    return true;
  }
};

}  // namespace heatwave::cuda
