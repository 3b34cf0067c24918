// backend: cuda. Every step is one launch of the baseline step kernel over
// the step's update box; the rest is GpuBackend's.
#include "kernels/cuda/cuda_backend.hpp"

#include "kernels/cuda/gpu_backend.cuh"

namespace heatwave::cuda {

namespace {

template <int D, class Real>
class CudaBackend final : public GpuBackend<D, Real> {
 public:
  using GpuBackend<D, Real>::GpuBackend;
  BackendKind kind() const override { return BackendKind::cuda; }
  void advance(int k) override {
    for (int m = 0; m < k; ++m) {
      this->update(this->fields_.domain().update_box(this->problem_.radius, k - 1 - m));
      this->finish_step();
    }
  }
};

}  // namespace

template <int D, class Real>
std::unique_ptr<Backend<D, Real>> make_cuda_backend(const Problem& problem, const LocalDomain<D>& domain) {
  return std::make_unique<CudaBackend<D, Real>>(problem, domain);
}

template std::unique_ptr<Backend<2, float>> make_cuda_backend(const Problem&, const LocalDomain<2>&);
template std::unique_ptr<Backend<2, double>> make_cuda_backend(const Problem&, const LocalDomain<2>&);
template std::unique_ptr<Backend<3, float>> make_cuda_backend(const Problem&, const LocalDomain<3>&);
template std::unique_ptr<Backend<3, double>> make_cuda_backend(const Problem&, const LocalDomain<3>&);

}  // namespace heatwave::cuda
