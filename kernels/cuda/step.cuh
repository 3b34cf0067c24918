#pragma once
// The baseline step kernel: one time step over a box per launch. The cuda
// backend runs every step with it; cuda-cluster runs it for the parts of a
// step the halo exchange overlaps, and times it as the plan to beat.
// CUDA-only: include from .cu files.
#include <cuda_runtime.h>

#include <memory>

#include "solver/box.hpp"
#include "solver/problem.hpp"

namespace heatwave::cuda {

// The kernel for one case, its equation and radius fixed at compile time
// behind this interface (make_step_kernel picks them).
template <int D, class Real>
class StepKernel {
 public:
  virtual ~StepKernel() = default;
  // u^{n+1} over `box` from u (and u_next's u^{n-1}, or v0 on the `start`
  // step, for an equation second order in time) into u_next, queued on `stream`.
  virtual void launch(const Real* u, Real* u_next, const Box<D>& box, bool start, cudaStream_t stream) const = 0;
};

// For the problem's equation, on fields of this layout.
template <int D, class Real>
std::unique_ptr<StepKernel<D, Real>> make_step_kernel(const Problem& problem, const Layout<D>& layout);

}  // namespace heatwave::cuda
