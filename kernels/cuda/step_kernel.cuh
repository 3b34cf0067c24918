#pragma once
// The streaming step kernel every one-step launch runs (step_impl.cuh instantiates
// it for constant coefficients, media_step_impl.cuh where they vary), with the
// operator and the update as a policy (Op):
//   UniformOp   the Laplacian and one update for the whole grid
//   ClassOp     the Laplacian and each point's update from the table by
//               axis classes (layers, absorbing profiles: no file's field)
//   PointOp     the Laplacian and each point's own update, built from its
//               coefficients (Media's views: layer tables, absorbing profiles,
//               a file's field) where a coefficient varies and no table is made
//   FluxOp      the heat's flux form div(alpha grad u) (FluxPairs) and one update
// CUDA-only: include from .cu files.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/dispatch.hpp"
#include "io/errors.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/dependent_launch.cuh"
#include "kernels/cuda/pack.cuh"
#include "kernels/cuda/update_classes.cuh"
#include "solver/media.hpp"
#include "solver/stencil.hpp"

namespace heatwave::cuda {

// Each op also says how many blocks of 256 threads an SM must hold at least
// (__launch_bounds__' second argument, which caps a thread's registers), or
// 0: the compiler's choice (a second argument of 1 is not the same: it moved
// the plain kernels by -5% to +6%).
// And how many rows past the window's next load a thread brings into L2
// ahead of use (l2_ahead: prefetch hints, which hold no register; 0: none).

// The operator of the ops whose stencil is the Laplacian (UniformOp,
// ClassOp, PointOp): its weights, in axis order.
template <int D, int R, class Real>
struct LaplacianTerms {
  LaplacianWeights<D, R, Real> lap;
  __device__ long stride(int a) const { return lap.stride[a]; }
  __device__ Real start(Real centre) const { return lap.start(centre); }
  __device__ Real add(int a, Real sum, Real, const Real (&minus)[R + 1], const Real (&plus)[R + 1], long,
                      const Index<D>&) const {
    return lap.add(a, sum, minus, plus);
  }
};

template <int D, int R, class Real, class Eq>
struct UniformOp : LaplacianTerms<D, R, Real> {
  static constexpr int min_blocks = 0;
  static constexpr int l2_ahead = 0;
  typename Eq::template Update<Real> up;
  struct Column {};
  __device__ Column column(const Index<D>&) const { return {}; }
  struct Row {};
  __device__ Row row(const Column&, const Index<D>&) const { return {}; }
  __device__ typename Eq::template Update<Real> update(const Row&, long, long, int) const { return up; }
};

// Runs where the media kernel makes no table by classes: a coefficient from
// a file, or more classes than the table takes.
template <int D, int R, class Real, class Eq>
struct PointOp : LaplacianTerms<D, R, Real> {
  static constexpr int l2_ahead = 2;  // as ClassOp's (a file's c 512^3 fp32 r 1: 174.9 -> 188.1)
  // 3D: at most 85 registers a thread (88 free), measured when the shot ran
  // here (3D wave, layers, five absorbing faces: 143.7 -> 159.1 Gcells/s on
  // the H100; layers alone 174.8 -> 174.9; 4 blocks, 64 registers: 155.7).
  static constexpr int min_blocks = D == 3 ? 3 : 0;
  PointUpdates<D, Real, Eq> updates;
  // A thread's pack keeps its x for every row it streams: where the whole
  // pack is calm (nothing varies along x there, most of a shot's points), its
  // V points share one update a row, built once (the same bits: their
  // coefficients are the same expressions of the same values).
  using Update = typename Eq::template Update<Real>;
  struct Row {
    typename PointUpdates<D, Real, Eq>::Row shared;
    Update same;
    bool calm;
  };
  struct Column {};
  __device__ Column column(const Index<D>&) const { return {}; }
  __device__ Row row(const Column&, const Index<D>& i) const {
    Row r{updates.row(i), {}, false};
    r.calm = updates.varies && i[0] >= updates.calm_lo && i[0] + Pack<Real>::width <= updates.calm_hi;
    if (r.calm) r.same = updates.at(r.shared, 0, i[0]);  // no file field where calm: p unread
    return r;
  }
  __device__ Update update(const Row& r, long p, long x, int) const {
    return r.calm ? r.same : updates.at(r.shared, p, x);
  }
};

// The waves' c and gamma where none is read from a file: a point's update
// is an entry of the table by axis classes (UpdateClasses, made once by the
// kernel object), where PointOp builds it in double from the coefficient
// views a row (and a point in an x absorbing layer). A thread's x classes
// are fixed for its sweep; a row adds its y (and z) offset; where the pack's
// points share their x class (all but those in an x absorbing layer) the
// row loads its one entry.
template <int D, int R, class Real, class Eq>
struct ClassOp : LaplacianTerms<D, R, Real> {
  static constexpr int min_blocks = 0;
  // Rows brought into L2 ahead (H200, 3D wave fp32, against none: the shot
  // 801x801x401 r 1 206.7 -> 215.0 Gcells/s, r 4 100.7 -> 136.5; absorbing
  // faces 512^3 r 4 104.2 -> 135.9). The plain kernels lost with it (heat
  // fp32 r 1 319 -> 307 at 2 rows, 278 at 6).
  static constexpr int l2_ahead = 2;
  static constexpr int V = Pack<Real>::width;
  using Update = typename Eq::template Update<Real>;
  UpdateClasses<Update> classes;  // its maps reach V points past the storage box along x (a pack's)
  struct Column {
    int x[V];
    bool same;
  };
  __device__ Column column(const Index<D>& i) const {
    Column c;
#pragma unroll
    for (int v = 0; v < V; ++v) c.x[v] = classes.x_class[i[0] + v - classes.lo[0]];
    c.same = true;
#pragma unroll
    for (int v = 1; v < V; ++v) c.same = c.same && c.x[v] == c.x[0];
    return c;
  }
  struct Row {
    Column column;
    const UpdateEntry<Update>* at;  // the row's entries, by x class
    Update same;                    // the pack's one update where its x classes are the same
  };
  __device__ Row row(const Column& c, const Index<D>& i) const {
    long offset = classes.y_offset[i[1] - classes.lo[1]];
    if constexpr (D == 3) offset += classes.z_offset[i[2] - classes.lo[2]];
    Row r{c, classes.at + offset, {}};
    if (c.same) r.same = r.at[c.x[0]].update;
    return r;
  }
  __device__ Update update(const Row& r, long, long, int v) const {
    return r.column.same ? r.same : r.at[r.column.x[v]].update;
  }
};

// FluxPairs' terms in its order: the axes, then j, the +j pair before the -j one.
template <int D, int R, class Real, class Eq>
struct FluxOp {
  static constexpr int min_blocks = 0;
  static constexpr int l2_ahead = 0;
  FluxPairs<D, R, Real> pairs;
  typename Eq::template Update<Real> up;
  __device__ long stride(int a) const { return pairs.stride[a]; }
  __device__ Real start(Real) const { return Real(0); }
  __device__ Real add(int a, Real sum, Real centre, const Real (&minus)[R + 1], const Real (&plus)[R + 1], long p,
                      const Index<D>& i) const {
    const long along = component(i, pairs.axis);
#pragma unroll
    for (int j = 1; j <= R; ++j) {
      sum = fused(pairs.pair(a, j, p, along), plus[j] - centre, sum);
      sum = fused(pairs.pair(a, j, p - j * pairs.stride[a], a == pairs.axis ? along - j : along), minus[j] - centre,
                  sum);
    }
    return sum;
  }
  struct Column {};
  __device__ Column column(const Index<D>&) const { return {}; }
  struct Row {};
  __device__ Row row(const Column&, const Index<D>&) const { return {}; }
  __device__ typename Eq::template Update<Real> update(const Row&, long, long, int) const { return up; }
};

struct LaunchShape {
  int block_x, block_y, chunk;  // threads per block in x (and y in 3D); points along the streamed axis
  int prefetch;                 // rows loaded ahead of use: 0, 2 or 4
  bool planes = false;          // 3D: the plane-staged kernel where it is built (plane_step.cuh) ...
  int plane_chunk = 64;         // ... marching this many planes a block
};

// The launch shape per case, from the H100 sweep in docs/performance.md: 32
// threads (128 points) along x, 4 rows of them in 3D, 32 rows per thread along
// the streamed axis, no prefetch (with 16-byte packs enough bytes are in
// flight), except 3D equations that read two levels, which read the most bytes
// per point and gain from 2 rows of prefetch and shorter chunks.
// The plane-staged kernel marches 64 planes a block (chunks of 32 to 128
// measured within 1%). HEATWAVE_CUDA_LAUNCH="bx,by,chunk,prefetch" and
// HEATWAVE_CUDA_PLANES="chunk" (or "off": the register kernel everywhere)
// override them for experiments.
template <int D>
inline LaunchShape launch_shape(int levels) {
  LaunchShape s = D == 2 ? LaunchShape{32, 1, 32, 0} : LaunchShape{32, 4, 32, 0};
  if (D == 3 && levels == 2) s = LaunchShape{32, 4, 16, 2};
  const char* planes = D == 3 ? std::getenv("HEATWAVE_CUDA_PLANES") : nullptr;
  if (D == 3 && !(planes && std::string(planes) == "off")) {
    s.planes = true;
    if (planes && std::sscanf(planes, "%d", &s.plane_chunk) != 1) s.plane_chunk = 0;
    if (s.plane_chunk < 1)
      throw Error(ExitCode::invalid_value, "HEATWAVE_CUDA_PLANES: a chunk of at least 1 plane, or off");
  }
  if (const char* env = std::getenv("HEATWAVE_CUDA_LAUNCH"))
    std::sscanf(env, "%d,%d,%d,%d", &s.block_x, &s.block_y, &s.chunk, &s.prefetch);
  if (D == 2) s.block_y = 1;
  if (s.block_x * s.block_y > 256 || s.block_x < 1 || s.block_y < 1 || s.chunk < 1 ||
      (s.prefetch != 0 && s.prefetch != 2 && s.prefetch != 4))
    throw Error(ExitCode::invalid_value,
                "HEATWAVE_CUDA_LAUNCH: at most 256 threads a block, chunk >= 1, prefetch 0, 2 or 4");
  return s;
}

// One step over `box`. Each thread owns V = 16/sizeof(Real) consecutive x
// points (one 16-byte access per row: enough bytes in flight to keep HBM busy)
// and streams along S = D-1 through `chunk` rows, keeping a register window
// win[j] = the pack at offset j-R along S, P rows deeper than the stencil
// needs so that P loads are in flight while it computes (u^{n-1}, read by an
// equation second order in time, likewise). y rows in 3D are packs too; the R
// x neighbours past each end of the pack come from L1. The stencil is
// the operator's start and add (Op below), point by point, in axis order: the
// same rounding as the host. Start: the first step of an equation second order
// in time. (The kernels below, one for each kind of launch bounds, run it.)
template <int D, int R, int P, class Real, class Eq, bool Start, class Op>
__device__ __forceinline__ void step_points(const Real* __restrict__ u, Real* __restrict__ out, const Op& op,
                                            const Box<D>& box, const Layout<D>& layout, const int chunk) {
  using Vec = Pack<Real>;
  constexpr int V = Vec::width;
  constexpr int S = D - 1;
  constexpr bool reads_previous = Eq::levels == 2;
  Index<D> i;
  const long x_first = pack_start<Real>(box.lo[0]);
  i[0] = x_first + static_cast<long>(V) * (blockIdx.x * blockDim.x + threadIdx.x);
  if (i[0] >= box.hi[0]) return;
  if constexpr (D == 3) {
    i[1] = box.lo[1] + blockIdx.y * blockDim.y + threadIdx.y;
    if (i[1] >= box.hi[1]) return;
  }
  const long first = box.lo[S] + static_cast<long>(D == 2 ? blockIdx.y : blockIdx.z) * chunk;
  const long last = min(first + chunk, box.hi[S]);
  if (first >= last) return;
  i[S] = first;
  const long st = op.stride(S);
  long p = layout.offset(i);
  const bool whole = i[0] >= box.lo[0] && i[0] + V <= box.hi[0];
  const auto column = op.column(i);  // what the thread's updates share along its sweep

  // Rows past last-1+R are outside what the stencil may read: never load them.
  Vec win[2 * R + 1 + P], previous[P + 1];
#pragma unroll
  for (int j = 0; j < 2 * R + 1 + P; ++j)
    win[j] = first - R + j <= last - 1 + R ? load_pack(u + p + (j - R) * st) : Vec{};
  if constexpr (reads_previous) {
#pragma unroll
    for (int j = 0; j <= P; ++j) previous[j] = first + j < last ? load_pack(out + p + j * st) : Vec{};
  }
  // Neighbours along the other axes: x past the ends of the pack
  // (left[m] = u[p-m], right[m] = u[p+V-1+m]) and, in 3D, the y rows of the
  // pack. With prefetch they are loaded one row ahead of use too.
  struct Sides {
    Real left[R + 1], right[R + 1];
    Vec rows_minus[R + 1], rows_plus[R + 1];
  };
  auto load_sides = [&](long q, Sides& n) {
#pragma unroll
    for (int m = 1; m <= R; ++m) n.left[m] = u[q - m], n.right[m] = u[q + V - 1 + m];
    if constexpr (D == 3) {
#pragma unroll
      for (int j = 1; j <= R; ++j)
        n.rows_minus[j] = load_pack(u + q - j * op.stride(1)), n.rows_plus[j] = load_pack(u + q + j * op.stride(1));
    }
  };
  Sides next;
  if constexpr (P > 0) load_sides(p, next);
  for (long s = first; s < last; ++s, p += st) {
    Sides sides;
    if constexpr (P > 0) {
      sides = next;
      if (s + 1 < last) load_sides(p + st, next);
    } else {
      load_sides(p, sides);
    }
    const Real* left = sides.left;
    const Real* right = sides.right;
    const Vec* rows_minus = sides.rows_minus;
    const Vec* rows_plus = sides.rows_plus;
    Index<D> row_index = i;  // this row's point: what its updates share along x
    row_index[S] = s;
    const auto row = op.row(column, row_index);
    Vec result;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const Real centre = win[R].v[v];
      Index<D> at = i;  // the point's indices (read by ops whose coefficients vary)
      at[0] = i[0] + v, at[S] = s;
      Real lap_value = op.start(centre);
#pragma unroll
      for (int a = 0; a < D; ++a) {
        Real minus[R + 1], plus[R + 1];
#pragma unroll
        for (int j = 1; j <= R; ++j) {
          if (a == 0) {
            minus[j] = v - j >= 0 ? win[R].v[v - j] : left[j - v];
            plus[j] = v + j < V ? win[R].v[v + j] : right[v + j - V + 1];
          } else if (a == S) {
            minus[j] = win[R - j].v[v], plus[j] = win[R + j].v[v];
          } else {
            minus[j] = rows_minus[j].v[v], plus[j] = rows_plus[j].v[v];
          }
        }
        lap_value = op.add(a, lap_value, centre, minus, plus, p + v, at);
      }
      const auto up = op.update(row, p + v, i[0] + v, v);
      if constexpr (!reads_previous)
        result.v[v] = up.step(centre, centre, lap_value);
      else if constexpr (Start)
        result.v[v] = up.start(centre, previous[0].v[v], lap_value);
      else
        result.v[v] = up.step(centre, previous[0].v[v], lap_value);
    }
    if (whole) {
      *reinterpret_cast<Vec*>(out + p) = result;
    } else {  // a pack across the box edge: only the points inside
#pragma unroll
      for (int v = 0; v < V; ++v)
        if (i[0] + v >= box.lo[0] && i[0] + v < box.hi[0]) out[p + v] = result.v[v];
    }
#pragma unroll
    for (int j = 0; j < 2 * R + P; ++j) win[j] = win[j + 1];
    if (s + R + P + 1 <= last - 1 + R) win[2 * R + P] = load_pack(u + p + (R + P + 1) * st);
    if constexpr (constexpr int A = Op::l2_ahead; A > 0) {
      if (s + R + P + 1 + A <= last - 1 + R) prefetch_l2(u + p + (R + P + 1 + A) * st);
      if (reads_previous && s + P + 1 + A < last) prefetch_l2(out + p + (P + 1 + A) * st);
    }
    if constexpr (reads_previous) {
#pragma unroll
      for (int j = 0; j < P; ++j) previous[j] = previous[j + 1];
      if (s + P + 1 < last) previous[P] = load_pack(out + p + (P + 1) * st);
    }
  }
}

template <int D, int R, int P, class Real, class Eq, bool Start, class Op>
__global__ void __launch_bounds__(256)
    step_kernel(const Real* __restrict__ u, Real* __restrict__ out, const Op op, const Box<D> box,
                const Layout<D> layout, const int chunk) {
  follow_previous_kernel();
  step_points<D, R, P, Real, Eq, Start>(u, out, op, box, layout, chunk);
}
template <int D, int R, int P, class Real, class Eq, bool Start, class Op>
__global__ void __launch_bounds__(256, Op::min_blocks)
    step_kernel_bounded(const Real* __restrict__ u, Real* __restrict__ out, const Op op, const Box<D> box,
                        const Layout<D> layout, const int chunk) {
  follow_previous_kernel();
  step_points<D, R, P, Real, Eq, Start>(u, out, op, box, layout, chunk);
}

// Launches step_kernel with `op` over `box` (the grid from the shape), for
// prefetch depths Ps... (the shape's must be one of them).
template <int D, int R, class Real, class Eq, int... Ps, class Op>
void launch_step(const Op& op, const LaunchShape& shape, const Real* u, Real* u_next, const Box<D>& box, bool start,
                 const Layout<D>& layout, cudaStream_t stream) {
  constexpr int S = D - 1;
  const dim3 block(shape.block_x, shape.block_y);
  const unsigned chunks = static_cast<unsigned>((box.extent(S) + shape.chunk - 1) / shape.chunk);
  const long width = Pack<Real>::width;
  const long x_first = pack_start<Real>(box.lo[0]);
  const long packs = (box.hi[0] - x_first + width - 1) / width;
  dim3 grid(static_cast<unsigned>((packs + block.x - 1) / block.x), chunks);
  if constexpr (D == 3) grid = dim3(grid.x, static_cast<unsigned>((box.extent(1) + block.y - 1) / block.y), chunks);
  bool launched = false;
  auto with_prefetch = [&]<int P>() {
    if (shape.prefetch != P) return;
    launched = true;
    auto run = [&]<bool Start>() {
      if constexpr (Op::min_blocks == 0)
        launch_after_previous(step_kernel<D, R, P, Real, Eq, Start, Op>, grid, block, stream, u, u_next, op, box, layout,
                              shape.chunk);
      else
        launch_after_previous(step_kernel_bounded<D, R, P, Real, Eq, Start, Op>, grid, block, stream, u, u_next, op, box,
                              layout, shape.chunk);
    };
    if constexpr (Eq::levels == 2)
      with_bool(start, run);
    else
      run.template operator()<false>();
  };
  (with_prefetch.template operator()<Ps>(), ...);
  if (!launched) throw Error(ExitCode::internal, "step kernel: no instance for prefetch " + std::to_string(shape.prefetch));
  HW_CUDA(cudaGetLastError());
}

}  // namespace heatwave::cuda
