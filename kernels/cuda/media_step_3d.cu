// The media step kernel (media_step_impl.cuh), 3D.
#include "kernels/cuda/media_step_impl.cuh"

namespace heatwave::cuda {

template std::unique_ptr<StepKernel<3, float>> make_media_step_kernel(const Problem&, const LocalDomain<3>&);
template std::unique_ptr<StepKernel<3, double>> make_media_step_kernel(const Problem&, const LocalDomain<3>&);

}  // namespace heatwave::cuda
