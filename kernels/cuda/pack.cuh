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

// The first x of the aligned pack that holds x (x < 0 in the ghosts).
template <class Real>
__host__ __device__ constexpr long pack_start(long x) {
  constexpr long V = Pack<Real>::width;
  return x - ((x % V) + V) % V;
}

template <class Real>
__device__ __forceinline__ Pack<Real> load_pack(const Real* p) {
  return *reinterpret_cast<const Pack<Real>*>(p);
}

template <class Real>
__device__ __forceinline__ void store_pack(Real* p, const Pack<Real>& value) {
  *reinterpret_cast<Pack<Real>*>(p) = value;
}

// A hint that brings the line holding p into L2 (no register, no wait): a
// load issued later finds it there.
__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

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

// A global -> shared copy that does not hold the thread (cp.async): a block
// issues its whole tile's loads at once instead of waiting on each in turn.
template <class Real>
__device__ __forceinline__ void load_async(Real* shared, const Real* global) {
  const unsigned destination = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(destination), "l"(global), "n"(sizeof(Real))
               : "memory");
}
template <class Real>
__device__ __forceinline__ void load_async_pack(Real* shared, const Real* global) {
  const unsigned destination = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(destination), "l"(global) : "memory");
}
__device__ __forceinline__ void wait_loads() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }
__device__ __forceinline__ void commit_loads() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most the N newest groups of copies are still in flight.
template <int N>
__device__ __forceinline__ void wait_loads_but() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

}  // namespace heatwave::cuda
