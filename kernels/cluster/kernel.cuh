#pragma once
// The cuda-cluster kernels (kernel_2d.cu, kernel_3d.cu) as the cluster backend
// sees them: the geometry every launch shares, and one object per case that
// has checked its plan fits the device and launches `steps` time steps at a
// time, out of place. CUDA-only: include from .cu files.
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/cluster/plan.hpp"
#include "solver/domain.hpp"
#include "solver/problem.hpp"

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
  __host__ __device__ bool fixed(int side, int c) const {
    return ghosts[side] && face[side].type == BoundaryType::dirichlet && c == face_point(side);
  }
};

template <int D>
struct ClusterGeometry {
  ClusterAxis axis[D];
  long lead = 0, halo = 0;  // global addressing: Layout::offset
  long stride[D] = {};
  ClusterPlan plan;
  int halo_left = 0;         // shared column 0 is this far left of the tile (k*r rounded up to packs)
  int width = 0, rows = 0;   // shared-memory extents of a level (a plane in 3D)
  int plane = 0;             // shared-memory stride from one level (3D: plane) to the next
  int thread_rows_log2 = 0;  // log2 plan.threads_y: strips of rows per thread by shifts
};

// The kernels of one case (equation, radius and step counts fixed at compile
// time behind this interface).
template <int D, class Real>
class ClusterKernel {
 public:
  virtual ~ClusterKernel() = default;
  // `steps` (<= plan.k; any number for a resident plan) steps from (u, u_prev)
  // into (out_u, out_u_prev); u_prev is u^{n-1} for an equation second order
  // in time (v0 when `start`), unused otherwise. `window`: the points written
  // back (local coordinates; the tiles cover it, each loading its own
  // dependency cone), from the owned box reaching into exchanged halos as far
  // as the chunk's later launches read, to a part of it (overlap). A resident
  // plan writes the owned box.
  virtual void launch(const Real* u, const Real* u_prev, Real* out_u, Real* out_u_prev, int steps, const Box<D>& window,
                      bool start, cudaStream_t stream) = 0;

  const ClusterPlan& plan() const { return geo_.plan; }
  int active_clusters() const { return active_clusters_; }
  std::size_t shared_bytes() const { return shared_bytes_; }

 protected:
  ClusterGeometry<D> geo_{};
  std::size_t shared_bytes_ = 0;
  int active_clusters_ = 0;
};

// The kernels for `plan` where it can run on the current device; else null
// and `reason` says why (shared memory, occupancy, an invalid plan, media
// they do not read). `flux_pairs`: the flux coefficient's pair fields on the
// device where it varies (MediaFields::pairs; 2D only), else empty. The 2D
// ones are defined in kernel_2d.cu, the 3D ones in kernel_3d.cu.
template <class Real>
std::unique_ptr<ClusterKernel<2, Real>> make_cluster_kernel(const Problem& problem, const LocalDomain<2>& domain,
                                                            const ClusterPlan& plan,
                                                            const std::vector<const Real*>& flux_pairs,
                                                            std::string& reason);
template <class Real>
std::unique_ptr<ClusterKernel<3, Real>> make_cluster_kernel(const Problem& problem, const LocalDomain<3>& domain,
                                                            const ClusterPlan& plan,
                                                            const std::vector<const Real*>& flux_pairs,
                                                            std::string& reason);

}  // namespace heatwave::cuda
