#pragma once
// The one-step kernel in 3D with its planes staged in shared memory (the
// register-window kernel, step_kernel.cuh, keeps its neighbours in L1 and
// registers). step_impl.cuh runs it where it measured faster: constant
// coefficients at fp32 radius 4 and fp64 radius 3 and 4, where the
// 2R+1-plane register window caps the register kernel's occupancy. CUDA-only: include from .cu files.
#include <cuda_runtime.h>

#include "kernels/cuda/step_kernel.cuh"

namespace heatwave::cuda {

// A neighbour pair along an axis: the values at -j and +j.
template <class Real>
struct Neighbours {
  Real minus, plus;
};

// The V updates of a pack whose first point is i (i[D-1]: its row along the
// streamed axis), from its centre values, the level before (an equation
// second order in time) and neighbour(a, j, v), the pair at distance j along
// axis a of point v: the operator's start and add point by point in axis
// order, then the equation's update: step_points' arithmetic, so it rounds
// as the host backend does. (step_points keeps its own copy of the loop: run
// through this function it measured 3-7% slower at radius 1 and 2 on the
// H200, heat fp64 r 1 194.9 -> 180.5 Gcells/s.)
template <int D, int R, class Real, class Eq, bool Start, class Op, class Neighbour>
__device__ __forceinline__ Pack<Real> update_pack(const Op& op, const typename Op::Row& row, const Pack<Real>& centre,
                                                  const Pack<Real>& previous, const long p, const Index<D>& i,
                                                  const Neighbour& neighbour) {
  Pack<Real> result;
#pragma unroll
  for (int v = 0; v < Pack<Real>::width; ++v) {
    const Real c = centre.v[v];
    Index<D> at = i;  // the point's indices (read by ops whose coefficients vary)
    at[0] = i[0] + v;
    Real lap_value = op.start(c);
#pragma unroll
    for (int a = 0; a < D; ++a) {
      Real minus[R + 1], plus[R + 1];
#pragma unroll
      for (int j = 1; j <= R; ++j) {
        const Neighbours<Real> n = neighbour(a, j, v);
        minus[j] = n.minus, plus[j] = n.plus;
      }
      lap_value = op.add(a, lap_value, c, minus, plus, p + v, at);
    }
    const auto up = op.update(row, p + v, i[0] + v, v);
    if constexpr (Eq::levels == 1)
      result.v[v] = up.step(c, c, lap_value);
    else if constexpr (Start)
      result.v[v] = up.start(c, previous.v[v], lap_value);
    else
      result.v[v] = up.step(c, previous.v[v], lap_value);
  }
  return result;
}

// Stores a pack at p whose first point is x: whole, or (across the box's x
// edge) only its points inside [lo, hi).
template <class Real>
__device__ __forceinline__ void store_in_box(Real* out, const long p, const Pack<Real>& result, const long x,
                                             const long lo, const long hi) {
  if (x >= lo && x + Pack<Real>::width <= hi) {
    store_pack(out + p, result);
  } else {
#pragma unroll
    for (int v = 0; v < Pack<Real>::width; ++v)
      if (x + v >= lo && x + v < hi) out[p + v] = result.v[v];
  }
}

// 3D, planes staged in shared memory: a block of 32 x 8 threads owns a tile
// of 32 packs by 8 rows and marches it along z through `chunk` planes. Each
// plane of the tile with its R-deep x and y halos is copied into a ring of
// shared planes by cp.async, Ahead planes before it is first read, so a
// block keeps whole planes in flight from HBM without holding registers for
// them; a thread then reads its pack's x, y and z neighbours from the ring
// (2R + 1 planes) and computes it with update_pack, as step_points does. The
// waves' u^{n-1} comes the same way, a pack a thread. One barrier a plane:
// it publishes the plane just waited for and frees the slot read in the
// iteration before. Only what the stencil may read is copied: rows and whole
// packs within R of the box, planes up to its last + R.
template <int R, class Real, int Levels, int Ahead>
struct PlaneTile {
  static constexpr int V = Pack<Real>::width;
  static constexpr int threads_x = 32, threads_y = 8, threads = threads_x * threads_y;
  static constexpr int pad = (R + V - 1) / V;  // packs of x halo on each side
  static constexpr int row_packs = threads_x + 2 * pad, rows = threads_y + 2 * R;
  static constexpr int plane_packs = rows * row_packs;
  static constexpr int copies = (plane_packs + threads - 1) / threads;  // a thread's copies a plane
  static constexpr int ring = 2 * R + 1 + Ahead;                        // planes of u
  static constexpr int previous_ring = Levels == 2 ? Ahead + 1 : 0;     // planes of u^{n-1}, a pack a thread
  static constexpr std::size_t bytes = sizeof(Pack<Real>) * (ring * plane_packs + previous_ring * threads);
};

template <int R, int Ahead, class Real, class Eq, bool Start, class Op>
__device__ __forceinline__ void plane_step_points(const Real* __restrict__ u, Real* __restrict__ out, const Op& op,
                                                  const Box<3>& box, const Layout<3>& layout, const int chunk) {
  using Vec = Pack<Real>;
  using T = PlaneTile<R, Real, Eq::levels, Ahead>;
  constexpr int V = T::V, NP = T::ring, NQ = T::previous_ring;
  extern __shared__ Vec planes[];  // [NP][rows][row_packs], then [NQ][threads]
  Vec* const previous_planes = planes + NP * T::plane_packs;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * T::threads_x + tx;
  const long x_tile = pack_start<Real>(box.lo[0]) + static_cast<long>(V) * T::threads_x * blockIdx.x;
  const long y_tile = box.lo[1] + static_cast<long>(T::threads_y) * blockIdx.y;
  const long first = box.lo[2] + static_cast<long>(blockIdx.z) * chunk;
  const long last = min(first + chunk, box.hi[2]);
  if (first >= last) return;
  const long sy = op.stride(1), sz = op.stride(2);
  const long origin = layout.offset(Index<3>{x_tile, y_tile, first});  // (x_tile, y_tile) in the first plane

  // This thread's copies of a plane: tile packs tid, tid + 256, ...
  long from[T::copies];
  int to[T::copies];
  bool copied[T::copies];
#pragma unroll
  for (int k = 0; k < T::copies; ++k) {
    const int h = tid + k * T::threads, r = h / T::row_packs, c = h % T::row_packs;
    const long y = y_tile - R + r, x = x_tile + static_cast<long>(c - T::pad) * V;
    copied[k] = h < T::plane_packs && y >= box.lo[1] - R && y < box.hi[1] + R && x + V > box.lo[0] - R &&
                x < box.hi[0] + R;
    from[k] = (x - x_tile) + (y - y_tile) * sy, to[k] = h;
  }
  const Index<3> i{x_tile + static_cast<long>(V) * tx, y_tile + ty, first};
  const bool computes = i[0] < box.hi[0] && i[1] < box.hi[1];
  const long own = static_cast<long>(V) * tx + ty * sy;  // the thread's pack from (x_tile, y_tile)
  const int centre_pack = (R + ty) * T::row_packs + T::pad + tx;
  // Plane q of u into ring slot `slot` (with u^{n-1}'s plane q - R into
  // `previous_slot`), one group of copies (empty past what may be read).
  const auto copy_plane = [&](long q, int slot, int previous_slot) {
    if (q <= last - 1 + R) {
#pragma unroll
      for (int k = 0; k < T::copies; ++k)
        if (copied[k]) load_async_pack(&planes[slot * T::plane_packs + to[k]].v[0], u + origin + (q - first) * sz + from[k]);
    }
    if constexpr (NQ > 0)
      if (computes && q - R >= first && q - R < last)
        load_async_pack(&previous_planes[previous_slot * T::threads + tid].v[0], out + origin + own + (q - R - first) * sz);
    commit_loads();
  };
  const auto wrap = [](int slot, int n) { return slot >= n ? slot - n : slot; };
#pragma unroll 1
  for (int j = 0; j < 2 * R + Ahead; ++j) copy_plane(first - R + j, j, j >= 2 * R ? j - 2 * R : 0);
  int base = 0, previous_base = 0;  // the slots of planes s - R and (u^{n-1}) s
#pragma unroll 1
  for (long s = first; s < last; ++s) {
    wait_loads_but<Ahead - 1>();  // plane s + R is here (and u^{n-1}'s s) ...
    __syncthreads();              // ... for every thread, and slot s - R - 1 is free
    copy_plane(s + R + Ahead, wrap(base + NP - 1, NP), NQ > 0 ? wrap(previous_base + NQ - 1, NQ) : 0);
    if (computes) {
      const Vec* plane[2 * R + 1];  // planes s - R .. s + R
#pragma unroll
      for (int j = 0; j <= 2 * R; ++j) plane[j] = planes + wrap(base + j, NP) * T::plane_packs + centre_pack;
      const Vec centre = plane[R][0];
      Real line[(2 * T::pad + 1) * V];  // the row's points from pad packs before the pack to pad after
#pragma unroll
      for (int m = 0; m <= 2 * T::pad; ++m) {
        const Vec pack = m == T::pad ? centre : plane[R][m - T::pad];
#pragma unroll
        for (int v = 0; v < V; ++v) line[m * V + v] = pack.v[v];
      }
      Vec y_minus[R + 1], y_plus[R + 1], z_minus[R + 1], z_plus[R + 1];
#pragma unroll
      for (int j = 1; j <= R; ++j) {
        y_minus[j] = plane[R][-j * T::row_packs], y_plus[j] = plane[R][j * T::row_packs];
        z_minus[j] = plane[R - j][0], z_plus[j] = plane[R + j][0];
      }
      const Vec previous = NQ > 0 ? previous_planes[previous_base * T::threads + tid] : Vec{};
      const auto neighbour = [&](int a, int j, int v) -> Neighbours<Real> {
        if (a == 0) return {line[T::pad * V + v - j], line[T::pad * V + v + j]};
        if (a == 1) return {y_minus[j].v[v], y_plus[j].v[v]};
        return {z_minus[j].v[v], z_plus[j].v[v]};
      };
      Index<3> at = i;
      at[2] = s;
      const long p = origin + own + (s - first) * sz;
      store_in_box(out, p, update_pack<3, R, Real, Eq, Start>(op, op.row(op.column(at), at), centre, previous, p, at, neighbour), i[0],
                   box.lo[0], box.hi[0]);
    }
    base = wrap(base + 1, NP);
    if constexpr (NQ > 0) previous_base = wrap(previous_base + 1, NQ);
  }
  wait_loads();  // the empty groups past the last plane
}

// (Registers at the compiler's choice: shared memory bounds the blocks an SM.)
template <int R, int Ahead, class Real, class Eq, bool Start, class Op>
__global__ void __launch_bounds__(256)
    plane_step_kernel(const Real* __restrict__ u, Real* __restrict__ out, const Op op, const Box<3> box,
                      const Layout<3> layout, const int chunk) {
  plane_step_points<R, Ahead, Real, Eq, Start>(u, out, op, box, layout, chunk);
}
// Launches plane_step_kernel with `op` over `box`, Ahead planes in flight
// (2: at radius 4 as fast as 3 and 3-10% faster than 1, measured on the H200).
template <int R, class Real, class Eq, int Ahead = 2, class Op>
void launch_plane_step(const Op& op, const LaunchShape& shape, const Real* u, Real* u_next, const Box<3>& box, bool start,
                       const Layout<3>& layout, cudaStream_t stream) {
  using T = PlaneTile<R, Real, Eq::levels, Ahead>;
  const long packs = (box.hi[0] - pack_start<Real>(box.lo[0]) + T::V - 1) / T::V;
  const dim3 block(T::threads_x, T::threads_y);
  const dim3 grid(static_cast<unsigned>((packs + T::threads_x - 1) / T::threads_x),
                  static_cast<unsigned>((box.extent(1) + T::threads_y - 1) / T::threads_y),
                  static_cast<unsigned>((box.extent(2) + shape.plane_chunk - 1) / shape.plane_chunk));
  constexpr std::size_t bytes = T::bytes;
  auto run = [&]<bool Start>() {
    const auto kernel = plane_step_kernel<R, Ahead, Real, Eq, Start, Op>;
    static const bool sized = [&] {  // shared memory past 48 KB is asked for once a kernel
      HW_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
      return true;
    }();
    (void)sized;
    kernel<<<grid, block, bytes, stream>>>(u, u_next, op, box, layout, shape.plane_chunk);
  };
  if constexpr (Eq::levels == 2)
    with_bool(start, run);
  else
    run.template operator()<false>();
  HW_CUDA(cudaGetLastError());
}

}  // namespace heatwave::cuda
