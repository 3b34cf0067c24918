#pragma once
// The step kernel of problems whose coefficients vary in space or that have
// sources (media_step_impl.cuh). CUDA-only: include from .cu files.
#include <memory>

#include "kernels/cuda/step.cuh"

namespace heatwave::cuda {

template <int D, class Real>
std::unique_ptr<StepKernel<D, Real>> make_media_step_kernel(const Problem& problem, const LocalDomain<D>& domain);

}  // namespace heatwave::cuda
