#pragma once
// The cuda-cluster kernels (kernels/cluster.cu) as the CUDA backend sees them:
// a launch plan, and one object per case that checks the plan fits and
// launches `steps` time steps at a time, out of place. CUDA-only: include from
// .cu files.
#include <cuda_runtime.h>

#include <string>

#include "kernels/cluster_plan.hpp"
#include "kernels/cuda_check.hpp"
#include "solver/domain.hpp"
#include "solver/problem.hpp"
#include "solver/stencil.hpp"

namespace heatwave::cuda {

// One axis of the rank's box as the kernels see it (local coordinates).
struct ClusterAxis {
  int n = 1;                // owned points
  bool periodic = false;    // one rank spans the axis: loads wrap around
  int load_lo = 0, load_hi = 0;  // points that hold data: r ghosts past a physical face, H past an exchanged one
  int core_lo = 0, core_hi = 0;  // points that are not ghosts (owned, plus the halo of an exchanged face)
  int upd_lo = 0, upd_hi = 0;    // points the stencil updates: core less Dirichlet face points
  bool exchanged[2] = {false, false};  // the halo past this side comes from a neighbour rank
  bool ghosts[2] = {false, false};     // a physical face whose r ghost layers the kernel fills
  FaceRule face[2];
  int out_lo = 0, out_hi = 0;    // points a launch writes back (reach into an exchanged halo by ahead*r)
};

template <int D>
struct ClusterGeometry {
  ClusterAxis axis[D];
  long lead = 0, halo = 0;  // global addressing: Layout::offset
  long stride[D] = {};
  ClusterPlan plan;
  int halo_left = 0;                    // shared column 0 is this far left of the tile (k*r rounded up to packs)
  int width = 0, rows = 0;              // shared-memory extents of a level (a plane in 3D)
  int plane = 0;                        // shared-memory stride from one level (3D: plane) to the next
  int thread_rows_log2 = 0;             // log2 plan.threads_y: strips of rows per thread by shifts
};

template <int D, class Real>
class ClusterKernel {
 public:
  // Derives the geometry, checks the plan against the device (shared memory,
  // cudaOccupancyMaxActiveClusters). False, with `reason`, where it cannot run.
  bool configure(const Problem& problem, const LocalDomain<D>& domain, const ClusterPlan& plan, std::string& reason);

  // `steps` (<= plan.k; any number for a resident plan) steps from (cur,
  // prev) into (out_cur, out_prev); the wave's prev is u^{n-1} (v0 when
  // `start`). `ahead`: steps left in the chunk after this launch, how far
  // into exchanged halos to write.
  void launch(const Real* cur, const Real* prev, Real* out_cur, Real* out_prev, int steps, int ahead, bool start,
              cudaStream_t stream);

  const ClusterPlan& plan() const { return geo_.plan; }
  int active_clusters() const { return active_clusters_; }
  std::size_t shared_bytes() const { return shared_bytes_; }

 private:
  cudaLaunchConfig_t launch_config(cudaLaunchAttribute* attribute, int ahead, cudaStream_t stream);
  dim3 resident_grid() const;

  ClusterGeometry<D> geo_{};
  LaplacianWeights<D, 1, Real> lap1_{};
  LaplacianWeights<D, 2, Real> lap2_{};
  TimeUpdate<Real> update_{};
  int radius_ = 1;
  bool wave_ = false;
  int threads_x_ = 32, threads_y_ = 1;  // block shape
  DeviceBuffer<Real> edges_;            // resident: the tiles' edges, each step (two parities)
  std::size_t shared_bytes_ = 0;
  int active_clusters_ = 0;
};

}  // namespace heatwave::cuda
