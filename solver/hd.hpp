#pragma once
// Functions marked HW_HD compile for the host and, inside .cu files, for the device:
// the host and CUDA backends share one definition of the numerics.
#if defined(__CUDACC__)
#define HW_HD __host__ __device__ __forceinline__
#define HW_UNROLL _Pragma("unroll")
#else
#define HW_HD inline
#define HW_UNROLL  // g++ unrolls the constant-trip loops at -O2/-O3 by itself
#endif
