// backend: host, 3D fp32 (host_backend_impl.hpp; each 3D precision a unit of
// its own: both in one took 55-64 s on CI's two cores).
#include "kernels/host/host_backend_impl.hpp"

namespace heatwave {

template std::unique_ptr<Backend<3, float>> make_host_backend(const Problem&, const LocalDomain<3>&);

}  // namespace heatwave
