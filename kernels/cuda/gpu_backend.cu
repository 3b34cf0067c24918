#include "kernels/cuda/gpu_backend.cuh"

#include <string>

#include "io/errors.hpp"

namespace heatwave::cuda {

template <int D, class Real>
GpuBackend<D, Real>::GpuBackend(const Problem& problem, const LocalDomain<D>& domain)
    : problem_(problem),
      equation_(info(problem.equation)),
      fields_(problem, domain),
      step_kernel_(make_step_kernel<D, Real>(problem, fields_.domain().layout)) {}

template <int D, class Real>
void GpuBackend<D, Real>::initialize() {
  fields_.set_initial(fields_.u.get(), InitialSpec::initial(problem_));
  fields_.fill_ghosts(fields_.u.get());
  if (equation_.levels == 2) {
    fields_.set_initial(fields_.u_next.get(), InitialSpec::velocity(problem_));  // v0, where u^{n-1} will be
  } else {  // Dirichlet face points must hold g in both buffers
    HW_CUDA(cudaMemcpyAsync(fields_.u_next.get(), fields_.u.get(),
                            fields_.domain().layout.storage_size() * sizeof(Real), cudaMemcpyDeviceToDevice,
                            fields_.stream()));
  }
  fields_.synchronize();
  step_ = 0;
}

template <int D, class Real>
void GpuBackend<D, Real>::update(const Box<D>& region) {
  step_kernel_->launch(fields_.u.get(), fields_.u_next.get(), region, step_ == 0, fields_.stream());
}

template <int D, class Real>
void GpuBackend<D, Real>::finish_step() {
  std::swap(fields_.u, fields_.u_next);
  fields_.fill_ghosts(fields_.u.get());
  ++step_;
}

template <int D, class Real>
void GpuBackend<D, Real>::write(Level level, const Real* owned) {
  fields_.write(field(level), owned);
  if (level == Level::current) fields_.fill_ghosts(fields_.u.get());
  fields_.synchronize();
}

template <int D, class Real>
LocalStats GpuBackend<D, Real>::stats() {
  fields_.fill_ghosts(fields_.u.get());
  const double c2 = with_equation(problem_.equation, [&]<class Eq>() { return Eq::energy_c2(problem_.coefficients); });
  return fields_.stats(fields_.u.get(), fields_.u_next.get(), equation_.has_energy && step_ > 0, c2);
}

template <int D, class Real>
Real* GpuBackend<D, Real>::field(Level level) {
  if (level == Level::previous && equation_.levels < 2)
    throw Error(ExitCode::internal, std::string("the ") + equation_.name + " equation has no previous level");
  return level == Level::current ? fields_.u.get() : fields_.u_next.get();
}

template class GpuBackend<2, float>;
template class GpuBackend<2, double>;
template class GpuBackend<3, float>;
template class GpuBackend<3, double>;

}  // namespace heatwave::cuda
