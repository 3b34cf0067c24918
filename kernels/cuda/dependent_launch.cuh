#pragma once
// Programmatic dependent launch (sm_90): the step kernel and the ghost fill
// follow each other every step of the cuda backend, and each is launched so
// that its blocks may be scheduled while the one before it drains (its last
// wave), instead of after the whole grid has finished and the launch
// latency has passed. A kernel so launched waits (griddepcontrol.wait)
// before it touches memory, until the kernel before it in the stream has
// finished and its writes are visible: the order and the answers are
// those of plain launches. Both instructions do nothing in a kernel launched
// plainly. HEATWAVE_CUDA_PDL=on|off, an experiment, off by default: on an
// H100 it gained 0.9% at heat fp32 512^3 and 13% at 2D 1024^2, and lost 17%
// at 128^3 (docs/performance.md, issue 72's dependent launches).
// CUDA-only: include from .cu files.
#include <cuda_runtime.h>

#include <cstdlib>
#include <string>
#include <utility>

#include "io/errors.hpp"
#include "kernels/cuda/check.hpp"

namespace heatwave::cuda {

// At the top of a kernel that may be launched dependent: wait for the
// kernel before this one, then let the next be scheduled once every block
// of this one is past its wait (triggered before the wait, a chain of
// kernels queued behind each other became resident at once, waiting, and
// crowded the running one: heat 128^3 -27% on an H100).
__device__ __forceinline__ void follow_previous_kernel() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

inline bool dependent_launches() {
  static const bool on = [] {
    const char* env = std::getenv("HEATWAVE_CUDA_PDL");
    if (!env || std::string(env) == "off") return false;
    if (std::string(env) == "on") return true;
    throw Error(ExitCode::invalid_value, std::string("HEATWAVE_CUDA_PDL=") + env + ": on or off");
  }();
  return on;
}

// kernel<<<grid, block, 0, stream>>>(args...), dependent on the kernel before
// it where dependent_launches(); the kernel calls follow_previous_kernel()
// first.
template <class... Params, class... Args>
void launch_after_previous(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = dependent_launches() ? 1 : 0;
  HW_CUDA(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

}  // namespace heatwave::cuda
