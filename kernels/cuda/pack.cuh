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

// A pack into shared memory as one 16-byte store. The compiler splits some
// Pack stores into four (the 3D pipeline's levels), whatever the type: the
// PTX is written out here ("memory": ordered with the loads around it, as a
// plain store is).
template <class Real>
__device__ __forceinline__ void store_shared_pack(Real* p, const Pack<Real>& value) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
  if constexpr (sizeof(Real) == 4)
    asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(a), "f"(value.v[0]), "f"(value.v[1]), "f"(value.v[2]),
                 "f"(value.v[3])
                 : "memory");
  else
    asm volatile("st.shared.v2.f64 [%0], {%1, %2};" ::"r"(a), "d"(value.v[0]), "d"(value.v[1]) : "memory");
}

}  // namespace heatwave::cuda
