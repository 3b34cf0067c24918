#pragma once
// V consecutive x points of a field, loaded and stored as one 16-byte access:
// enough bytes in flight per thread for HBM, a quarter of the instructions for
// shared memory. CUDA-only.
namespace heatwave::cuda {

template <class Real>
struct alignas(16) Pack {
  static constexpr int width = 16 / sizeof(Real);
  Real v[width];
};

template <class Real>
__device__ __forceinline__ Pack<Real> load_pack(const Real* p) {
  return *reinterpret_cast<const Pack<Real>*>(p);
}

template <class Real>
__device__ __forceinline__ void store_pack(Real* p, const Pack<Real>& value) {
  *reinterpret_cast<Pack<Real>*>(p) = value;
}

}  // namespace heatwave::cuda
