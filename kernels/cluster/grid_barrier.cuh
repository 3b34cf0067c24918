#pragma once
// The grid barrier of a cooperative launch (cooperative_groups'
// grid_group::sync), for the resident 2D tiles and the deep 3D family.
// cooperative_groups.h brings in libcu++ unless
// _CG_LIMIT_INCLUDED_DEPENDENCIES is defined: 3.5 s of nvcc a unit, for the
// same barrier (its PTX compared: docs/performance.md, "The build's units").
#ifndef _CG_LIMIT_INCLUDED_DEPENDENCIES
#define _CG_LIMIT_INCLUDED_DEPENDENCIES
#endif
#include <cooperative_groups.h>

namespace heatwave::cuda {

// A flag between blocks in place of a grid barrier (the deep 3D family's
// neighbours): what the releasing thread has written, and what its block
// wrote before a __syncthreads, is visible to a thread whose acquiring load
// sees the value.
__device__ __forceinline__ void release(unsigned* flag, unsigned value) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
}
__device__ __forceinline__ unsigned load_acquire(const unsigned* flag) {
  unsigned value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(value) : "l"(flag) : "memory");
  return value;
}

}  // namespace heatwave::cuda
