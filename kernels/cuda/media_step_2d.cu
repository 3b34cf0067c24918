// The media step kernel (media_step_impl.cuh), 2D.
#include "kernels/cuda/media_step_impl.cuh"

namespace heatwave::cuda {

template std::unique_ptr<StepKernel<2, float>> make_media_step_kernel(const Problem&, const LocalDomain<2>&);
template std::unique_ptr<StepKernel<2, double>> make_media_step_kernel(const Problem&, const LocalDomain<2>&);

}  // namespace heatwave::cuda
