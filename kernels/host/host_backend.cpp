// backend: host. The problem's equation's backend (each built in a unit of
// its own: host_backend.cpp.in), and the host's thread count.
#include "kernels/host/host_backend.hpp"

#include <omp.h>

#include "core/equations/equations.hpp"
#include "solver/problem.hpp"

namespace heatwave {

int host_threads() { return omp_get_max_threads(); }

template <int D, class Real>
std::unique_ptr<Backend<D, Real>> make_host_backend(const Problem& problem, const LocalDomain<D>& domain) {
  return with_equation(problem.equation, [&]<class Eq>() { return make_host_backend_for<D, Real, Eq>(problem, domain); });
}

template std::unique_ptr<Backend<2, float>> make_host_backend(const Problem&, const LocalDomain<2>&);
template std::unique_ptr<Backend<2, double>> make_host_backend(const Problem&, const LocalDomain<2>&);
template std::unique_ptr<Backend<3, float>> make_host_backend(const Problem&, const LocalDomain<3>&);
template std::unique_ptr<Backend<3, double>> make_host_backend(const Problem&, const LocalDomain<3>&);

}  // namespace heatwave
