#pragma once
// backend: host. The numerics on the CPU with OpenMP, one implementation
// templated over dimension, precision and equation (the radius is dispatched
// once per call to compile-time loops).
#include <memory>

#include "solver/backend.hpp"

namespace heatwave {

template <int D, class Real>
std::unique_ptr<Backend<D, Real>> make_host_backend(const Problem& problem, const LocalDomain<D>& domain);
// The backend of one equation (host_backend_impl.hpp; a unit each).
template <int D, class Real, class Eq>
std::unique_ptr<Backend<D, Real>> make_host_backend_for(const Problem& problem, const LocalDomain<D>& domain);

// OpenMP threads the host backend runs with (for logs and metrics).
int host_threads();

}  // namespace heatwave
