// backend: host, 2D (host_backend_impl.hpp), and the host's thread count.
#include "kernels/host/host_backend_impl.hpp"

namespace heatwave {

int host_threads() { return omp_get_max_threads(); }

template std::unique_ptr<Backend<2, float>> make_host_backend(const Problem&, const LocalDomain<2>&);
template std::unique_ptr<Backend<2, double>> make_host_backend(const Problem&, const LocalDomain<2>&);

}  // namespace heatwave
