#pragma once
// The cuda-cluster kernels (kernel_2d.cuh, kernel_3d.cuh) as the cluster backend
// sees them: the geometry every launch shares, and one object per case that
// has checked its plan fits the device and launches `steps` time steps at a
// time, out of place. CUDA-only: include from .cu files.
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "core/equations/equations.hpp"
#include "kernels/cluster/plan.hpp"
#include "solver/domain.hpp"
#include "solver/media.hpp"
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
  ClusterPlan plan;
  int halo_left = 0;         // shared column 0 is this far left of the tile (k*r rounded up to packs)
  int width = 0, rows = 0;   // shared-memory extents of a level (a plane in 3D)
  int plane = 0;             // shared-memory stride from one level (3D: plane) to the next
  int thread_rows_log2 = 0;  // log2 plan.threads_y: strips of rows per thread by shifts
};

// What a case's media and sources give the cluster kernels: device memory
// that the cuda backend's step kernel owns (solver/media.hpp's forms, one
// copy a rank), and the sources' points and q in host memory.
template <int D, class Real>
struct ClusterMedia {
  const void* flux = nullptr;           // the flux coefficient's FluxPairs<D, R, Real> views where it varies, else null
  std::vector<const Real*> flux_pairs;  // 2D, from a file: its pair fields (cluster_flux_tiles), else empty
  // The equation's PointUpdates<D, Real, Eq> where another coefficient varies
  // (c, gamma, absorbing profiles), else null: typed by the kernel of that
  // equation, which is the only one made for the problem.
  const void* point_updates = nullptr;
  // The sources' points and q (Media::sources) and time functions; `listed`
  // false where one is a field.
  std::vector<SourceTerm<D, Real>> sources;
  std::vector<TimeFunction> source_times;
  bool listed = true;
};

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

// The kernels of one case (equation, radius and step counts fixed at compile
// time behind this interface).
template <int D, class Real>
class ClusterKernel {
 public:
  virtual ~ClusterKernel() = default;
  // `steps` (<= plan.k; any number for a resident plan) steps from (u, u_prev)
  // at step `step` into (out_u, out_u_prev); u_prev is u^{n-1} for an
  // equation second order in time (v0 at step 0), unused otherwise. Sources
  // add f(t_n) at each step n of the launch. `window`: the points written
  // back (local coordinates; the tiles cover it, each loading its own
  // dependency cone), from the owned box reaching into exchanged halos as far
  // as the chunk's later launches read, to a part of it (overlap). A resident
  // plan writes the owned box.
  // `samples`: the receivers' points the launch records (none: count 0).
  virtual void launch(const Real* u, const Real* u_prev, Real* out_u, Real* out_u_prev, int steps, const Box<D>& window,
                      long step, const ClusterSamples<Real>& samples, cudaStream_t stream) = 0;

  // The steps of the next launch, `left` to go in a chunk: up to the plan's
  // k (a resident plan: all), or fewer where a family compiles only some.
  virtual int launch_steps(int left) const { return geo_.plan.resident ? left : std::min(left, geo_.plan.k); }

  // Whether launches record receivers (ClusterSamples); where not, the
  // backend has them sampled between chunks.
  virtual bool records_samples() const { return true; }

  const ClusterPlan& plan() const { return geo_.plan; }
  int active_clusters() const { return active_clusters_; }
  std::size_t shared_bytes() const { return shared_bytes_; }

 protected:
  ClusterGeometry<D> geo_{};
  std::size_t shared_bytes_ = 0;
  int active_clusters_ = 0;
};

// The cluster kernel of the problem's equation for `plan` where it can run
// on the current device; else null and `reason` says why (shared memory,
// occupancy, an invalid plan, media they do not read). Each (dimension, precision) is built in a unit of its own,
// generated by CMakeLists.txt from kernels/cluster/unit.cu.in (the kernels:
// kernel_2d.cuh, kernel_3d.cuh).
template <int D, class Real, class Eq>
std::unique_ptr<ClusterKernel<D, Real>> make_cluster_kernel_for(const Problem& problem, const LocalDomain<D>& domain,
                                                                const ClusterPlan& plan,
                                                                const ClusterMedia<D, Real>& media, std::string& reason);
template <class Real, int D>
std::unique_ptr<ClusterKernel<D, Real>> make_cluster_kernel(const Problem& problem, const LocalDomain<D>& domain,
                                                            const ClusterPlan& plan, const ClusterMedia<D, Real>& media,
                                                            std::string& reason) {
  return with_equation(problem.equation, [&]<class Eq>() {
    return make_cluster_kernel_for<D, Real, Eq>(problem, domain, plan, media, reason);
  });
}

}  // namespace heatwave::cuda
