// The baseline step kernel (step_impl.cuh), 3D.
#include "kernels/cuda/step_impl.cuh"

namespace heatwave::cuda {

HW_STEP(3, float)
HW_STEP(3, double)

}  // namespace heatwave::cuda
