// backend: host, 2D fp64 (host_backend_impl.hpp).
#include "kernels/host/host_backend_impl.hpp"

namespace heatwave {

template std::unique_ptr<Backend<2, double>> make_host_backend(const Problem&, const LocalDomain<2>&);

}  // namespace heatwave
