#pragma once
// backend: cuda, behind a plain C++ header (the registry includes it).
#include <memory>

#include "solver/backend.hpp"

namespace heatwave::cuda {

// One step per launch (kernels/cuda/step_impl.cuh), fields in device memory on the
// current device.
template <int D, class Real>
std::unique_ptr<Backend<D, Real>> make_cuda_backend(const Problem& problem, const LocalDomain<D>& domain);

}  // namespace heatwave::cuda
