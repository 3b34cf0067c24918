#pragma once
// backend: host. The numerics on the CPU with OpenMP, one implementation
// templated over dimension, precision and equation (the radius is dispatched
// once per call to compile-time loops).
#include <memory>

#include "solver/backend.hpp"

namespace heatwave {

template <int D, class Real>
std::unique_ptr<Backend<D, Real>> make_host_backend(const Problem& problem, const LocalDomain<D>& domain);

// OpenMP threads the host backend runs with (for logs and metrics).
int host_threads();

}  // namespace heatwave
