#pragma once
// The baseline step kernel: one time step over a box per launch. The cuda
// backend runs every step with it; cuda-cluster runs it for the parts of a
// step the halo exchange overlaps, and times it as the plan to beat.
// CUDA-only: include from .cu files.
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "solver/box.hpp"
#include "solver/domain.hpp"
#include "solver/media.hpp"
#include "solver/problem.hpp"

namespace heatwave::cuda {

// The kernel for one case, its equation and radius fixed at compile time
// behind this interface (make_step_kernel picks them).
template <int D, class Real>
class StepKernel {
 public:
  virtual ~StepKernel() = default;
  // Step `step` (from u^step to u^{step+1}) over `box`: from u (and u_next's
  // u^{n-1}, or v0 on step 0, for an equation second order in time) into
  // u_next, queued on `stream`.
  virtual void launch(const Real* u, Real* u_next, const Box<D>& box, long step, cudaStream_t stream) const = 0;
  // The wave energy's kinetic weight where c varies (views of device memory; 1 elsewhere).
  virtual KineticWeight<Real> kinetic_weight() const { return {}; }
  // The flux coefficient's pair coefficients as dense fields, where it varies
  // (device memory, [a * R + j - 1]; empty: it does not): what cuda-cluster's
  // 2D tiles load where alpha comes from a file. Made on first call: the
  // one-step kernels compute them where they use them.
  virtual std::vector<const Real*> flux_pairs() const { return {}; }
  // The same as views (FluxPairs<D, R, Real> of device memory, R the
  // problem's radius: the K tables or a file's alpha), where it varies; null
  // elsewhere: what cuda-cluster's kernels read.
  virtual const void* flux_view() const { return nullptr; }
  // The equation's PointUpdates<D, Real, Eq> (device views) where a
  // coefficient other than the flux one varies; null elsewhere.
  virtual const void* point_updates() const { return nullptr; }
  // The sources' points and q (host memory, Media::sources) and their time
  // functions, for cuda-cluster, which adds them inside its pipeline; false
  // where one is a field (every point: the one-step launch adds it).
  virtual bool source_terms(std::vector<SourceTerm<D, Real>>& terms, std::vector<TimeFunction>& times) const {
    terms.clear(), times.clear();
    return true;
  }
};

// For the problem's equation, on fields of this domain: the media kernel
// (media_step.cuh) where coefficients vary or sources are given.
template <int D, class Real>
std::unique_ptr<StepKernel<D, Real>> make_step_kernel(const Problem& problem, const LocalDomain<D>& domain);
// The constant-coefficient kernel alone (media_step_impl.cuh runs it for a problem with sources only).
template <int D, class Real>
std::unique_ptr<StepKernel<D, Real>> make_plain_step_kernel(const Problem& problem, const LocalDomain<D>& domain);

}  // namespace heatwave::cuda
