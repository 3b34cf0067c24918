#pragma once
// Functions marked HW_HD compile for the host and, inside .cu files, for the device:
// the host and CUDA backends share one definition of the numerics.
#include <cmath>
#if defined(__CUDACC__)
#define HW_HD __host__ __device__ __forceinline__
#define HW_UNROLL _Pragma("unroll")
#else
// Always inlined on the host too: a stencil left out of line in a big loop
// body (the media rows) is a call a point, and the loop no longer vectorises.
#define HW_HD inline __attribute__((always_inline))
#define HW_UNROLL  // g++ unrolls the constant-trip loops at -O2/-O3 by itself
#endif

namespace heatwave {

// a*b + c rounded once: the numerics' fused multiply-adds, the same bits on
// every backend (an FFMA on the GPU; on the host the CPU's FMA where the
// build enables it, HEATWAVE_HOST_FMA, else the correctly rounded libm call).
// Written out where the numerics want one, never left to the compiler
// (-fmad=false, -ffp-contract=off): where it fuses is part of the answer.
template <class Real>
HW_HD Real fused(Real a, Real b, Real c) {
#if defined(__CUDA_ARCH__)
  return fma(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

}  // namespace heatwave
