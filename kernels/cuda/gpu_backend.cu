#include "kernels/cuda/gpu_backend.cuh"

#include <string>

#include "io/errors.hpp"

namespace heatwave::cuda {

EventSpans::~EventSpans() {
  if (start_) cudaEventDestroy(start_);
  for (const Open& o : pending_) cudaEventDestroy(o.start), cudaEventDestroy(o.stop);
  for (cudaEvent_t e : free_) cudaEventDestroy(e);
}

cudaEvent_t EventSpans::take() {
  cudaEvent_t e = nullptr;
  if (!free_.empty()) {
    e = free_.back();
    free_.pop_back();
  } else {
    HW_CUDA(cudaEventCreate(&e));
  }
  return e;
}

void EventSpans::begin() {
  if (!start_) start_ = take();
  HW_CUDA(cudaEventRecord(start_, stream_));
}

void EventSpans::end(int kind) {
  const cudaEvent_t stop = take();
  HW_CUDA(cudaEventRecord(stop, stream_));
  pending_.push_back({kind, start_, stop});
  start_ = nullptr;
  settle(false);
}

// Adds the spans that have finished (all of them when `wait`), in order.
void EventSpans::settle(bool wait) {
  std::size_t done = 0;
  for (; done < pending_.size(); ++done) {
    const Open& o = pending_[done];
    if (wait) {
      HW_CUDA(cudaEventSynchronize(o.stop));
    } else if (cudaEventQuery(o.stop) != cudaSuccess) {
      cudaGetLastError();  // cudaErrorNotReady is not an error here
      break;
    }
    float ms = 0;
    HW_CUDA(cudaEventElapsedTime(&ms, o.start, o.stop));
    totals_[static_cast<std::size_t>(o.kind)] += ms * 1e-3;
    free_.push_back(o.start), free_.push_back(o.stop);
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<long>(done));
}

std::array<double, 3> EventSpans::seconds() {
  settle(true);
  return totals_;
}

template <int D, class Real>
GpuBackend<D, Real>::GpuBackend(const Problem& problem, const LocalDomain<D>& domain)
    : problem_(problem),
      equation_(info(problem.equation)),
      fields_(problem, domain),
      step_kernel_(make_step_kernel<D, Real>(problem, fields_.domain())) {}

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
  full_fills_ = 1;
}

template <int D, class Real>
void GpuBackend<D, Real>::update(const Box<D>& region) {
  step_kernel_->launch(fields_.u.get(), fields_.u_next.get(), region, step_, fields_.stream());
}

template <int D, class Real>
void GpuBackend<D, Real>::finish_step() {
  std::swap(fields_.u, fields_.u_next);
  fields_.fill_ghosts(fields_.u.get(), nullptr, nullptr, ghosts_of_new_level());
  ++step_;
}

template <int D, class Real>
void GpuBackend<D, Real>::write(Level level, const Real* owned) {
  fields_.write(field(level), owned);
  if (level == Level::current) fields_.fill_ghosts(fields_.u.get());
  full_fills_ = 1;
  fields_.synchronize();
}

template <int D, class Real>
LocalStats GpuBackend<D, Real>::stats() {
  fields_.fill_ghosts(fields_.u.get());
  const double c2 = with_equation(problem_.equation, [&]<class Eq>() { return Eq::energy_c2(problem_.coefficients); });
  return fields_.stats(fields_.u.get(), fields_.u_next.get(), equation_.has_energy && step_ > 0, c2,
                       step_kernel_->kinetic_weight());
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
