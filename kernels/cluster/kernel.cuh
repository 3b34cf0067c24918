#pragma once
// The cuda-cluster kernels as the cluster backend sees them: one object per
// case that has checked its plan fits the device and launches `steps` time
// steps at a time, out of place (the families' objects: kernel_*_object.cuh;
// the geometry every launch shares: geometry.cuh). Host code, CUDA runtime:
// include from .cu files.
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "core/equations/equations.hpp"
#include "kernels/cluster/geometry.cuh"
#include "kernels/cluster/plan.hpp"
#include "solver/domain.hpp"
#include "solver/media.hpp"
#include "solver/problem.hpp"

namespace heatwave::cuda {

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
  virtual int launch_steps(int left) const { return plan_.resident ? left : std::min(left, plan_.k); }

  // Whether launches record receivers (ClusterSamples); where not, the
  // backend has them sampled between chunks.
  virtual bool records_samples() const { return true; }

  const ClusterPlan& plan() const { return plan_; }
  int active_clusters() const { return active_clusters_; }
  std::size_t shared_bytes() const { return shared_bytes_; }

 protected:
  ClusterPlan plan_{};
  ClusterGeometry<D> geo_{};
  std::size_t shared_bytes_ = 0;
  int active_clusters_ = 0;
};

// The cluster kernel of the problem's equation for `plan` where it can run
// on the current device; else null and `reason` says why (shared memory,
// occupancy, an invalid plan, media they do not read). Each (dimension,
// precision, equation) is built in a unit of its own (kernels/cluster/units.cmake;
// the objects: kernel_2d_object.cuh, kernel_3d_object.cuh).
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
