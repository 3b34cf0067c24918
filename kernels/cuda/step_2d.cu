// The baseline step kernel (step_impl.cuh), 2D.
#include "kernels/cuda/step_impl.cuh"

namespace heatwave::cuda {

HW_STEP(2, float)
HW_STEP(2, double)

}  // namespace heatwave::cuda
