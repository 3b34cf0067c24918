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

// Through CUDA's own 16-byte vector types: a copy of the Pack struct is
// sometimes lowered point by point (four shared-memory stores for one).
template <class Real>
__device__ __forceinline__ Pack<Real> load_pack(const Real* p) {
  Pack<Real> r;
  if constexpr (sizeof(Real) == 4) {
    const float4 q = *reinterpret_cast<const float4*>(p);
    r.v[0] = q.x, r.v[1] = q.y, r.v[2] = q.z, r.v[3] = q.w;
  } else {
    const double2 q = *reinterpret_cast<const double2*>(p);
    r.v[0] = q.x, r.v[1] = q.y;
  }
  return r;
}

template <class Real>
__device__ __forceinline__ void store_pack(Real* p, const Pack<Real>& value) {
  if constexpr (sizeof(Real) == 4)
    *reinterpret_cast<float4*>(p) = make_float4(value.v[0], value.v[1], value.v[2], value.v[3]);
  else
    *reinterpret_cast<double2*>(p) = make_double2(value.v[0], value.v[1]);
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
