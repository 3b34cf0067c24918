#pragma once
// The host backend: the numerics on the CPU with OpenMP, one implementation
// templated over dimension and precision (radius and equation are dispatched
// once per call to compile-time kernels).
#include <memory>
#include <vector>

#include "solver/backend.hpp"

namespace heatwave {

template <int D, class Real>
std::unique_ptr<Backend<D, Real>> make_host_backend(const Problem& problem, const LocalDomain<D>& domain);

// OpenMP threads the host backend runs with (for logs and metrics).
int host_threads();

}  // namespace heatwave
