// backend: host, 2D fp32 (host_backend_impl.hpp), and the host's thread
// count. Each precision is a unit of its own: both in one took 60-66 s in
// the validation mutants' builds on CI's two cores.
#include "kernels/host/host_backend_impl.hpp"

namespace heatwave {

int host_threads() { return omp_get_max_threads(); }

template std::unique_ptr<Backend<2, float>> make_host_backend(const Problem&, const LocalDomain<2>&);

}  // namespace heatwave
