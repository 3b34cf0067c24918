// backend: cuda-cluster. Temporal blocking over thread-block clusters, halos
// between the blocks of a cluster through distributed shared memory (DSMEM).
//
// 2D. A cluster of B blocks stacked along y owns a cluster tile; block `rank`
// owns tile_x x tile_y points of it. One launch advances `steps` (<= k) steps:
//   load   u^n (and the wave's u^{n-1}) over the tile plus steps*r on the
//          cluster's outer sides and r on the sides shared with a peer;
//   step s = 1..steps, on chip:
//     (a) s >= 2: the r rows next to each shared side come from the peer's
//         shared memory (its own tile rows, computed in step s-1);
//     (b) s >= 2, near a physical face: ghost points from the face rule
//         (FaceRule, as fill_ghosts: odd/even reflection);
//     (c) the stencil over the step's region: the tile plus (steps-s)*r on
//         the cluster's outer sides. Only that outer halo is computed twice
//         (by two clusters): a peer's rows never are;
//     (d) Dirichlet face points of the new level stay g (set at the load;
//         restored after the whole-pack stores of (c));
//     (e) cluster barrier: publishes the new level to the peers, and keeps a
//         block from overwriting rows a peer still copies.
//   store  the tile (the wave: both levels), out of place.
// The stencil is LaplacianWeights::along in axis order and TimeUpdate, as in
// the baseline kernel: results are bitwise equal to the cuda and host backends.
// Each thread walks down a strip of its pack column, keeping the 2r+1 packs
// along y in registers; x neighbours come from shared memory (conflict-free).
// The 2D resident kernel and the 3D kernel are described at their sections.
// Periodic axes (one rank spans them) are loaded with wrapped indices: a point
// past the face is computed exactly like the one it wraps to. Exchanged faces
// (MPI) are data like any other point: their halo is loaded, and the write-back
// reaches `ahead*r` into it so that the next launch of the chunk finds it valid.
#include <cooperative_groups.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "kernels/cluster.cuh"
#include "kernels/cuda_check.hpp"
#include "kernels/pack.cuh"

namespace heatwave::cuda {

namespace cg = cooperative_groups;

namespace {

constexpr int unbounded = INT_MAX / 4;  // the core of a periodic axis: every index

// Where coordinate c of an axis is read from: wrapped on a periodic axis, as
// is where data lies; false where nothing is stored (never read).
__device__ __forceinline__ bool source_coordinate(const ClusterAxis& a, int c, int& g) {
  if (a.periodic) {
    g = c % a.n;
    if (g < 0) g += a.n;
    return true;
  }
  g = c;
  return c >= a.load_lo && c < a.load_hi;
}

// A global -> shared copy that does not hold the thread (cp.async): a block
// issues its whole tile's loads at once instead of waiting on each in turn.
template <class Real>
__device__ __forceinline__ void load_async(Real* shared, const Real* global) {
  const unsigned destination = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(destination), "l"(global), "n"(sizeof(Real)) : "memory");
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
__device__ __forceinline__ void wait_loads_but() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

// ------------------------------------------------------------- 2D kernel ---

// Whether points [x, x + count) hold a Dirichlet face point of the axis.
__device__ __forceinline__ bool face_in_pack(const ClusterAxis& a, int x, int count) {
  for (int side = 0; side < 2; ++side) {
    const int f = side == 0 ? 0 : a.n - 1;
    if (a.ghosts[side] && a.face[side].type == BoundaryType::dirichlet && f >= x && f < x + count) return true;
  }
  return false;
}

// A level in shared memory: `rows` rows of `width` points (a multiple of the
// pack width V), with V spare points before and after so that the x
// neighbours of the first and last packs stay inside the allocation.
template <class Real>
__host__ __device__ constexpr int level_stride(int width, int rows) {
  return width * rows + 2 * Pack<Real>::width;
}

// Copies global [x_lo, x_hi) of a row into shared memory at `shared` (which
// holds global x = xbase at index 0): 16-byte copies where the packs lie
// inside the directly addressable range and are aligned, points otherwise.
template <class Real>
__device__ __forceinline__ void load_row(Real* shared, const Real* global_row, const ClusterAxis& ax, int xbase, int x_lo,
                                         int x_hi, bool aligned, int tx, int bx) {
  constexpr int V = Pack<Real>::width;
  const int direct_lo = ax.periodic ? 0 : ax.load_lo, direct_hi = ax.periodic ? ax.n : ax.load_hi;
  for (int g = (x_lo - xbase) / V + tx; g * V < x_hi - xbase; g += bx) {
    const int x = xbase + g * V;
    if (aligned && x >= x_lo && x + V <= x_hi && x >= direct_lo && x + V <= direct_hi) {
      load_async_pack(shared + g * V, global_row + x);
    } else {
#pragma unroll
      for (int v = 0; v < V; ++v) {
        int gx;
        if (x + v >= x_lo && x + v < x_hi && source_coordinate(ax, x + v, gx)) load_async(shared + g * V + v, global_row + gx);
      }
    }
  }
}

extern __shared__ __align__(16) unsigned char cluster_shared[];

// The two levels of a 2D block in dynamic shared memory, each after a pad:
// u^m and u^{m+1} (the wave: u^{m-1} until a step overwrites it).
template <class Real>
__device__ __forceinline__ void shared_levels_2d(const ClusterGeometry<2>& geo, Real*& A, Real*& Bf) {
  A = reinterpret_cast<Real*>(cluster_shared) + Pack<Real>::width;
  Bf = A + level_stride<Real>(geo.width, geo.rows);
}

// A block's levels in shared memory (2D): shared point 0 of each is global
// (xbase, ybase); rows are W points apart.
struct SharedTile2D {
  int W, xbase, ybase;
  __device__ __forceinline__ int at(int x, int y) const { return (y - ybase) * W + (x - xbase); }
};

// Loads global [lx0, lx1) x [ly0, ly1) of u^n into A (the wave's u^{n-1}
// into Bf, which the first step overwrites) and sets the Dirichlet face
// points of Bf to g: no step writes them.
template <class Real, bool Wave>
__device__ __forceinline__ void load_tile_2d(Real* A, Real* Bf, const Real* cur, const Real* prev, const ClusterGeometry<2>& geo,
                                             const SharedTile2D& s, int lx0, int lx1, int ly0, int ly1) {
  constexpr int V = Pack<Real>::width;
  const ClusterAxis& ax = geo.axis[0];
  const ClusterAxis& ay = geo.axis[1];
  const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;
  const int tid = tx + ty * bx, nthreads = bx * by;
  const bool aligned = (geo.lead + s.xbase) % V == 0;
  for (int y = ly0 + ty; y < ly1; y += by) {
    int gy;
    if (!source_coordinate(ay, y, gy)) continue;
    const long row = geo.lead + (gy + geo.halo) * geo.stride[1];
    load_row(A + s.at(s.xbase, y), cur + row, ax, s.xbase, lx0, lx1, aligned, tx, bx);
    if constexpr (Wave) load_row(Bf + s.at(s.xbase, y), prev + row, ax, s.xbase, lx0, lx1, aligned, tx, bx);
  }
  wait_loads();
  __syncthreads();
  for (int side = 0; side < 2; ++side) {
    if (ax.ghosts[side] && ax.face[side].type == BoundaryType::dirichlet) {
      const int f = side == 0 ? 0 : ax.n - 1;
      if (f >= lx0 && f < lx1)
        for (int y = ly0 + tid; y < ly1; y += nthreads) Bf[s.at(f, y)] = static_cast<Real>(ax.face[side].value);
    }
    if (ay.ghosts[side] && ay.face[side].type == BoundaryType::dirichlet) {
      const int f = side == 0 ? 0 : ay.n - 1;
      if (f >= ly0 && f < ly1)
        for (int x = lx0 + tid; x < lx1; x += nthreads) Bf[s.at(x, f)] = static_cast<Real>(ay.face[side].value);
    }
  }
  __syncthreads();
}

// Ghost points of physical faces in u, from FaceRule, where the next step
// reads them: x ghost columns on updated rows, y ghost rows on updated
// columns, inside the valid rectangle [vx0, vx1) x [vy0, vy1).
// False (block-uniform) where no face is within reach: nothing to wait for.
template <int R, class Real>
__device__ __forceinline__ bool fill_ghosts_2d(Real* u, const ClusterAxis& ax, const ClusterAxis& ay, const SharedTile2D& s, int vx0,
                                               int vx1, int vy0, int vy1) {
  const bool x_ghosts = (ax.ghosts[0] && vx0 < 0) || (ax.ghosts[1] && vx1 > ax.n);
  const bool y_ghosts = (ay.ghosts[0] && vy0 < 0) || (ay.ghosts[1] && vy1 > ay.n);
  if (!x_ghosts && !y_ghosts) return false;
  const int tid = threadIdx.x + threadIdx.y * blockDim.x, nthreads = blockDim.x * blockDim.y;
  if (x_ghosts) {
    const int first = max(vy0, ay.upd_lo), nrows = min(vy1, ay.upd_hi) - first;
    for (int i = tid; i < 2 * R * nrows; i += nthreads) {
      const int y = first + i / (2 * R), j = i % (2 * R), side = j / R;
      const int x = side == 0 ? j - R : ax.n + j - R;
      const int src = ax.face[side].source(x);
      if (ax.ghosts[side] && x >= vx0 && x < vx1 && src >= vx0 && src < vx1) u[s.at(x, y)] = ax.face[side].ghost(x, u[s.at(src, y)]);
    }
  }
  if (y_ghosts) {
    const int first = max(vx0, ax.upd_lo), ncols = min(vx1, ax.upd_hi) - first;
    for (int i = tid; i < 2 * R * ncols; i += nthreads) {
      const int j = i / ncols, x = first + i % ncols, side = j / R;
      const int y = side == 0 ? j - R : ay.n + j - R;
      const int src = ay.face[side].source(y);
      if (ay.ghosts[side] && y >= vy0 && y < vy1 && src >= vy0 && src < vy1) u[s.at(x, y)] = ay.face[side].ghost(y, u[s.at(x, src)]);
    }
  }
  return true;
}

// One step's stencil from A into Bf over [cx0, cx1) x [cy0, cy1). A thread
// owns the pack of V points at shared column lx (threads span the row) and
// walks down a strip of rows with the 2r+1 packs along y in registers; packs
// that straddle the region's edge compute and store every point (the rest
// read neighbours nobody needs; no step reads them, ghosts are refilled
// before use). `whole`: the pack holds no Dirichlet x face point.
// Starting: the wave's first step (a template parameter: no branch a row).
template <int R, class Real, bool Wave, bool Starting>
__device__ __forceinline__ void stencil_rows_2d(const Real* A, Real* Bf, const SharedTile2D& s, int lx, bool whole, int cx0, int cx1,
                                                int cy0, int cy1, int rows_log2, const ClusterAxis& ax,
                                                const LaplacianWeights<2, R, Real>& lap, const TimeUpdate<Real>& up) {
  using Vec = Pack<Real>;
  constexpr int V = Vec::width;
  const int W = s.W;
  const int per_thread = (cy1 - cy0 + static_cast<int>(blockDim.y) - 1) >> rows_log2;
  const int ya = cy0 + static_cast<int>(threadIdx.y) * per_thread, yb = min(ya + per_thread, cy1);
  if (ya >= yb || s.xbase + lx + V <= cx0 || s.xbase + lx >= cx1) return;
  const Real* a = A + (ya - s.ybase) * W + lx;
  Real* b = Bf + (ya - s.ybase) * W + lx;
  Vec column[2 * R + 1];  // the packs at y - R + j
#pragma unroll
  for (int j = 0; j < 2 * R; ++j) column[j] = load_pack(a + (j - R) * W);
#pragma unroll(2 * R + 1)  // the window shifts by renaming registers
  for (int y = ya; y < yb; ++y, a += W, b += W) {
    column[2 * R] = load_pack(a + R * W);
    Real left_x[R + 1], right_x[R + 1];  // x neighbours past the pack's ends
#pragma unroll
    for (int m = 1; m <= R; ++m) left_x[m] = a[-m], right_x[m] = a[V - 1 + m];
    Vec result;
    if constexpr (Wave) result = load_pack(b);  // u^{m-1}
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const Real centre = column[R].v[v];
      Real minus[R + 1], plus[R + 1];
#pragma unroll
      for (int j = 1; j <= R; ++j) {
        minus[j] = v - j >= 0 ? column[R].v[v - j] : left_x[j - v];
        plus[j] = v + j < V ? column[R].v[v + j] : right_x[v + j - V + 1];
      }
      Real lap_value = lap.along(0, centre, minus, plus);
#pragma unroll
      for (int j = 1; j <= R; ++j) minus[j] = column[R - j].v[v], plus[j] = column[R + j].v[v];
      lap_value = lap.add_axis(1, lap_value, lap.along(1, centre, minus, plus));
      if constexpr (!Wave) result.v[v] = up.heat(centre, lap_value);
      else if constexpr (Starting) result.v[v] = up.wave_start(centre, result.v[v], lap_value);
      else result.v[v] = up.wave(centre, result.v[v], lap_value);
    }
    store_pack(b, result);
#pragma unroll
    for (int j = 0; j < 2 * R; ++j) column[j] = column[j + 1];
  }
  // The whole-pack stores wrote over a Dirichlet face point of the pack: it
  // keeps g (a pass after the strip, not a branch a row).
  if (!whole) {
#pragma unroll
    for (int v = 0; v < V; ++v)
      for (int side = 0; side < 2; ++side)
        if (ax.ghosts[side] && ax.face[side].type == BoundaryType::dirichlet && s.xbase + lx + v == (side == 0 ? 0 : ax.n - 1))
          for (int y = ya; y < yb; ++y) Bf[(y - s.ybase) * W + lx + v] = static_cast<Real>(ax.face[side].value);
  }
}

template <int R, class Real, bool Wave>
__device__ __forceinline__ void stencil_2d(const Real* A, Real* Bf, const SharedTile2D& s, int lx, bool whole, int cx0, int cx1,
                                           int cy0, int cy1, int rows_log2, const ClusterAxis& ax,
                                           const LaplacianWeights<2, R, Real>& lap, const TimeUpdate<Real>& up, bool starting) {
  if (Wave && starting) stencil_rows_2d<R, Real, Wave, true>(A, Bf, s, lx, whole, cx0, cx1, cy0, cy1, rows_log2, ax, lap, up);
  else stencil_rows_2d<R, Real, Wave, false>(A, Bf, s, lx, whole, cx0, cx1, cy0, cy1, rows_log2, ax, lap, up);
}

// Writes [wx0, wx1) x [wy0, wy1) of A (the wave: and of Bf, its u^{n-1}) to
// global memory, packs where aligned.
template <class Real, bool Wave>
__device__ __forceinline__ void store_tile_2d(const Real* A, const Real* Bf, Real* out_cur, Real* out_prev, const ClusterGeometry<2>& geo,
                                              const SharedTile2D& s, int wx0, int wx1, int wy0, int wy1) {
  constexpr int V = Pack<Real>::width;
  const bool aligned = (geo.lead + s.xbase) % V == 0;
  for (int y = wy0 + static_cast<int>(threadIdx.y); y < wy1; y += blockDim.y) {
    const long row = geo.lead + (y + geo.halo) * geo.stride[1];
    for (int g = (wx0 - s.xbase) / V + static_cast<int>(threadIdx.x); g * V < wx1 - s.xbase; g += blockDim.x) {
      const int x = s.xbase + g * V;
      if (aligned && x >= wx0 && x + V <= wx1) {
        store_pack(out_cur + row + x, load_pack(A + s.at(x, y)));
        if constexpr (Wave) store_pack(out_prev + row + x, load_pack(Bf + s.at(x, y)));
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) {
          if (x + v < wx0 || x + v >= wx1) continue;
          out_cur[row + x + v] = A[s.at(x + v, y)];
          if constexpr (Wave) out_prev[row + x + v] = Bf[s.at(x + v, y)];
        }
      }
    }
  }
}

template <int R, class Real, bool Wave>
__global__ void __launch_bounds__(512) cluster_kernel_2d(const Real* __restrict__ cur, const Real* __restrict__ prev,
                                                         Real* __restrict__ out_cur, Real* __restrict__ out_prev,
                                                         const ClusterGeometry<2> geo, const LaplacianWeights<2, R, Real> lap,
                                                         const TimeUpdate<Real> up, const int steps, const bool start) {
  constexpr int V = Pack<Real>::width;
  cg::cluster_group cluster = cg::this_cluster();
  const int W = geo.width;
  Real *A, *Bf;
  shared_levels_2d(geo, A, Bf);
  const ClusterAxis& ax = geo.axis[0];
  const ClusterAxis& ay = geo.axis[1];
  const int B = geo.plan.cluster_y, TX = geo.plan.tile_x, TY = geo.plan.tile_y, KR = geo.plan.k * R;
  const int rank = static_cast<int>(cluster.block_rank());  // cluster dims (1, B, 1): blockIdx.y % B
  const bool outer_lo = rank == 0, outer_hi = rank == B - 1;
  const int x0 = ax.out_lo + static_cast<int>(blockIdx.x) * TX;
  const int y0 = ay.out_lo + static_cast<int>(blockIdx.y) * TY;
  const SharedTile2D s{W, x0 - geo.halo_left, y0 - (outer_lo ? KR : R)};
  const int xbase = s.xbase;
  const int tid = threadIdx.x + threadIdx.y * blockDim.x, nthreads = blockDim.x * blockDim.y;
  const int lx = threadIdx.x * V;                       // the thread's pack column in shared memory, every step
  const bool whole = !face_in_pack(ax, xbase + lx, V);  // no Dirichlet x face point in it

  // What step 1 reads.
  const int reach = steps * R;
  load_tile_2d<Real, Wave>(A, Bf, cur, prev, geo, s, x0 - reach, x0 + TX + reach, y0 - (outer_lo ? reach : R),
                           y0 + TY + (outer_hi ? reach : R));

  for (int step = 1; step <= steps; ++step) {
    const int left = (steps - step) * R;  // how far past the tile the step computes, on outer sides
    if (step >= 2) {
      // Valid in A now: what the last step computed, plus r rows on shared sides.
      const int vx0 = x0 - left - R, vx1 = x0 + TX + left + R;
      const int vy0 = y0 - (outer_lo ? left + R : R), vy1 = y0 + TY + (outer_hi ? left + R : R);
      // (a) rows from the peers; ghost rows and columns are each block's own.
      if (B > 1) {
        const int cx0 = max(vx0, ax.core_lo), ncols = min(vx1, ax.core_hi) - cx0;
        for (int side = 0; side < 2; ++side) {
          if (side == 0 ? outer_lo : outer_hi) continue;
          const int peer = side == 0 ? rank - 1 : rank + 1;
          const Real* peer_A = cluster.map_shared_rank(A, peer);
          const int peer_ybase = (side == 0 ? y0 - TY : y0 + TY) - (peer == 0 ? KR : R);
          const int first = side == 0 ? y0 - R : y0 + TY;
          for (int i = tid; i < R * ncols; i += nthreads) {
            const int y = first + i / ncols, x = cx0 + i % ncols;
            if (y >= ay.core_lo && y < ay.core_hi) A[s.at(x, y)] = peer_A[(y - peer_ybase) * W + (x - xbase)];
          }
        }
        __syncthreads();
      }
      // (b) ghosts of physical faces.
      if (fill_ghosts_2d<R>(A, ax, ay, s, vx0, vx1, vy0, vy1)) __syncthreads();
    }
    // (c) the stencil over the step's region, less faces and ghosts.
    const int cx0 = max(x0 - left, ax.upd_lo), cx1 = min(x0 + TX + left, ax.upd_hi);
    const int cy0 = max(y0 - (outer_lo ? left : 0), ay.upd_lo), cy1 = min(y0 + TY + (outer_hi ? left : 0), ay.upd_hi);
    stencil_2d<R, Real, Wave>(A, Bf, s, lx, whole, cx0, cx1, cy0, cy1, geo.thread_rows_log2, ax, lap, up, Wave && start && step == 1);
    // (d) publish the new level; swap.
    if (B > 1) cluster.sync();
    else __syncthreads();
    Real* t = A;
    A = Bf;
    Bf = t;
  }

  // The block's tile: updated points the launch owns.
  store_tile_2d<Real, Wave>(A, Bf, out_cur, out_prev, geo, s, max(max(x0, ax.out_lo), ax.upd_lo), min(min(x0 + TX, ax.out_hi), ax.upd_hi),
                            max(max(y0, ay.out_lo), ay.upd_lo), min(min(y0 + TY, ay.out_hi), ay.upd_hi));
}

// ------------------------------------------------------- 2D resident kernel ---
//
// Where every tile of the rank's domain fits in the GPU's shared memory at
// once, a block keeps its tile (and r of halo) on chip for all the steps of
// a launch. After each step it publishes the r rows and columns along its
// edges in global memory (two buffers, by step parity, so a block that runs
// ahead never overwrites edges a neighbour still reads), the grid
// synchronises (a cooperative launch: every block is resident), and the
// block reads its neighbours' edges into its halo (wrapping on periodic
// axes) and fills the ghosts of physical faces. The fields cross global
// memory once a launch, the edges once a step. One rank without
// MPI-exchanged faces; clusters of one block (DSMEM did not pay in 2D).

template <int R, class Real, bool Wave>
__global__ void __launch_bounds__(512) resident_kernel_2d(const Real* __restrict__ cur, const Real* __restrict__ prev,
                                                          Real* __restrict__ out_cur, Real* __restrict__ out_prev,
                                                          const ClusterGeometry<2> geo, const LaplacianWeights<2, R, Real> lap,
                                                          const TimeUpdate<Real> up, const int steps, const bool start,
                                                          Real* __restrict__ edges) {
  constexpr int V = Pack<Real>::width;
  cg::grid_group grid = cg::this_grid();
  const int W = geo.width;
  Real *A, *Bf;
  shared_levels_2d(geo, A, Bf);
  const ClusterAxis& ax = geo.axis[0];
  const ClusterAxis& ay = geo.axis[1];
  const int TX = geo.plan.tile_x, TY = geo.plan.tile_y;
  const int x0 = static_cast<int>(blockIdx.x) * TX, x1 = min(x0 + TX, ax.n);
  const int y0 = static_cast<int>(blockIdx.y) * TY, y1 = min(y0 + TY, ay.n);
  const SharedTile2D s{W, x0 - geo.halo_left, y0 - R};
  const int tid = threadIdx.x + threadIdx.y * blockDim.x, nthreads = blockDim.x * blockDim.y;
  const int lx = threadIdx.x * V;
  const bool whole = !face_in_pack(ax, s.xbase + lx, V);
  const int cx0 = max(x0, ax.upd_lo), cx1 = min(x1, ax.upd_hi), cy0 = max(y0, ay.upd_lo), cy1 = min(y1, ay.upd_hi);

  // Edge j (< r) of `side` (0: x low, 1: x high, 2: y low, 3: y high) of a block, at a step parity.
  const int E = max(TX, TY), nbx = gridDim.x, nby = gridDim.y;
  auto edge = [&](int parity, int bx, int by, int side, int j) {
    return edges + ((((static_cast<long>(parity) * nby + by) * nbx + bx) * 4 + side) * R + j) * E;
  };
  // The neighbour block along an axis, or -1 past a physical face.
  auto neighbour = [&](int b, int nb, bool periodic, int dir) { return b + dir >= 0 && b + dir < nb ? b + dir : periodic ? (b + dir + nb) % nb : -1; };
  const int bx = blockIdx.x, by = blockIdx.y;
  const int west = neighbour(bx, nbx, ax.periodic, -1), east = neighbour(bx, nbx, ax.periodic, 1);
  const int south = neighbour(by, nby, ay.periodic, -1), north = neighbour(by, nby, ay.periodic, 1);
  const int rows = y1 - y0, cols = x1 - x0;

  load_tile_2d<Real, Wave>(A, Bf, cur, prev, geo, s, x0 - R, x1 + R, y0 - R, y1 + R);
  for (int step = 1; step <= steps; ++step) {
    stencil_2d<R, Real, Wave>(A, Bf, s, lx, whole, cx0, cx1, cy0, cy1, geo.thread_rows_log2, ax, lap, up, Wave && start && step == 1);
    __syncthreads();
    if (step < steps) {
      const int parity = step & 1;
      for (int i = tid; i < R * rows; i += nthreads) {
        const int j = i / rows, y = y0 + i % rows;
        edge(parity, bx, by, 0, j)[y - y0] = Bf[s.at(x0 + j, y)];
        edge(parity, bx, by, 1, j)[y - y0] = Bf[s.at(x1 - R + j, y)];
      }
      for (int i = tid; i < R * cols; i += nthreads) {
        const int j = i / cols, x = x0 + i % cols;
        edge(parity, bx, by, 2, j)[x - x0] = Bf[s.at(x, y0 + j)];
        edge(parity, bx, by, 3, j)[x - x0] = Bf[s.at(x, y1 - R + j)];
      }
      grid.sync();
      for (int i = tid; i < R * rows; i += nthreads) {
        const int j = i / rows, y = y0 + i % rows;
        if (west >= 0) Bf[s.at(x0 - R + j, y)] = edge(parity, west, by, 1, j)[y - y0];
        if (east >= 0) Bf[s.at(x1 + j, y)] = edge(parity, east, by, 0, j)[y - y0];
      }
      for (int i = tid; i < R * cols; i += nthreads) {
        const int j = i / cols, x = x0 + i % cols;
        if (south >= 0) Bf[s.at(x, y0 - R + j)] = edge(parity, bx, south, 3, j)[x - x0];
        if (north >= 0) Bf[s.at(x, y1 + j)] = edge(parity, bx, north, 2, j)[x - x0];
      }
      __syncthreads();
      if (fill_ghosts_2d<R>(Bf, ax, ay, s, x0 - R, x1 + R, y0 - R, y1 + R)) __syncthreads();
    }
    Real* t = A;
    A = Bf;
    Bf = t;
  }
  store_tile_2d<Real, Wave>(A, Bf, out_cur, out_prev, geo, s, cx0, cx1, cy0, cy1);
}

// ------------------------------------------------------------- 3D kernel ---
//
// A block owns a tile_x x tile_y column of the grid and streams it along z
// through a slab of tile_z planes, advancing Steps levels in a pipeline.
// A thread owns one pack of the block's shared plane, (x, y), at every level
// for the whole sweep: in iteration i, level t computes its pack of plane
// p_t = zs + i - t*r from level t-1's planes p_t-r..p_t+r. Each level keeps a
// ring of its last 2r+1 planes in shared memory (level 0 also the planes in
// flight from global memory, loaded a few planes ahead with cp.async; the
// wave's u^{n-1} a ring of its own): plane p_t+r of level t-1 was written
// earlier in this iteration by the same thread (its z neighbours are its own
// pack), the others in earlier iterations, so one barrier an iteration orders
// everything. The wave's u^{m-1} at p_t is level t-2's plane p_t, still in
// its ring. Level Steps goes straight to global memory. As in 2D, the x-y
// region of level t is the tile plus (Steps-t)r, and so is its z range: only
// that halo is computed twice (by neighbouring blocks). Physical faces: x and
// y ghosts of the planes of levels 1..Steps-1 from FaceRule after the
// barrier, z ghost planes mirrored as they are read; Dirichlet face points
// are g at every level. Steps is a template parameter: the levels unroll.
// Clusters over x-y (Clustered): on sides a peer block serves, levels
// compute the tile only and the r columns or rows past it come from the
// peer's ring through DSMEM after each iteration's cluster barrier.

// Blocks an SM the compiler keeps registers for (__launch_bounds__): the
// heat fits 64 registers (two blocks of up to 512 threads), the wave, which
// also reads u^{m-1}, gains nothing from two (H100, 512^3: docs/performance.md).
template <bool Wave>
constexpr int min_blocks_3d() { return Wave ? 1 : 2; }
// Levels a 3D launch can pipeline (each is unrolled code; deeper pipelines
// recompute more halo than they save).
__host__ __device__ constexpr int max_levels_3d(int R) { return R == 1 ? 4 : 3; }
// Ring planes. Level 0 (and the wave's u^{n-1}): the 2r+1 that level 1
// reads and the rest in flight from global memory (an iteration is shorter
// than its latency), a power of 2 (slots by masks). Levels 1..Steps-1: the
// 2r+1 that the next level reads.
__host__ __device__ constexpr int level0_planes_3d() { return 8; }
__host__ __device__ constexpr int upper_planes_3d(int R) { return 2 * R + 1; }

// z ghost planes of a column of 2r+1 planes around plane p (p within r of a
// physical z face): FaceRule from the plane each mirrors, which the column
// holds. The cases are unrolled so that the column stays in registers.
template <int R, class Real>
__device__ __forceinline__ void mirror_z_ghosts(Pack<Real> (&w)[2 * R + 1], const ClusterAxis& az, int p) {
  constexpr int V = Pack<Real>::width;
#pragma unroll
  for (int m = 0; m < R; ++m) {
    if (az.ghosts[0] && p == m) {  // planes m-r..-1 mirror 2r-2m-j
#pragma unroll
      for (int j = 0; j < R - m; ++j)
#pragma unroll
        for (int v = 0; v < V; ++v) w[j].v[v] = az.face[0].ghost(m - R + j, w[2 * R - 2 * m - j].v[v]);
    }
    if (az.ghosts[1] && p == az.n - 1 - m) {  // planes n..n-1-m+r mirror 2r+2m-j
#pragma unroll
      for (int j = R + m + 1; j <= 2 * R; ++j)
#pragma unroll
        for (int v = 0; v < V; ++v) w[j].v[v] = az.face[1].ghost(p - R + j, w[2 * R + 2 * m - j].v[v]);
    }
  }
}

template <int R, class Real, bool Wave, int Steps, bool Clustered>
__global__ void __launch_bounds__(512, min_blocks_3d<Wave>())
    cluster_kernel_3d(const Real* __restrict__ cur, const Real* __restrict__ prev, Real* __restrict__ out_cur,
                      Real* __restrict__ out_prev, const ClusterGeometry<3> geo, const LaplacianWeights<3, R, Real> lap,
                      const TimeUpdate<Real> up, int /* steps: Steps */, const bool start) {
  using Vec = Pack<Real>;
  constexpr int V = Vec::width, reach = Steps * R;
  // A: level-0 planes in flight; the ring also holds the 2r+1 level 1 reads.
  constexpr int S0 = level0_planes_3d(), S = upper_planes_3d(R), A = S0 - 2 * R - 1;
  const int W = geo.width, PS = geo.plane;
  Real* const level0 = reinterpret_cast<Real*>(cluster_shared) + V;
  Real* const prev0 = level0 + S0 * PS;                   // the wave's u^{n-1}
  Real* const upper = level0 + (Wave ? 2 : 1) * S0 * PS;  // level t >= 1: planes (t-1)S .. tS-1
  const ClusterAxis& ax = geo.axis[0];
  const ClusterAxis& ay = geo.axis[1];
  const ClusterAxis& az = geo.axis[2];
  const int TX = geo.plan.tile_x, TY = geo.plan.tile_y, TZ = geo.plan.tile_z;
  const int x0 = ax.out_lo + static_cast<int>(blockIdx.x) * TX;
  const int y0 = ay.out_lo + static_cast<int>(blockIdx.y) * TY;
  const int z0 = az.out_lo + static_cast<int>(blockIdx.z) * TZ, z1 = min(z0 + TZ, az.out_hi);
  const int xbase = x0 - geo.halo_left, ybase = y0 - geo.plan.k * R, zs = z0 - reach;
  const SharedTile2D plane_tile{W, xbase, ybase};  // a plane of a level's ring
  const int x = xbase + static_cast<int>(threadIdx.x) * V, y = ybase + static_cast<int>(threadIdx.y);
  const int own = plane_tile.at(x, y);  // the thread's pack in a shared plane
  // The cluster: CX x CY blocks over x-y (rank x-major). A side of the tile
  // is served by a peer where the cluster goes on and the peer's tile holds
  // core points: there every level computes the tile only, and the r columns
  // or rows past it come from the peer's ring through DSMEM. Other sides
  // compute (Steps-t)r past the tile, as a cluster of one does everywhere.
  // (Clustered is a template parameter: a cluster of one carries none of this.)
  cg::cluster_group cluster = cg::this_cluster();
  const int CX = Clustered ? geo.plan.cluster_x : 1, CY = Clustered ? geo.plan.cluster_y : 1;
  const int rx = static_cast<int>(blockIdx.x) % CX, ry = static_cast<int>(blockIdx.y) % CY;
  const bool peer_x0 = Clustered && rx > 0, peer_x1 = Clustered && rx < CX - 1 && x0 + TX < ax.core_hi;
  const bool peer_y0 = Clustered && ry > 0, peer_y1 = Clustered && ry < CY - 1 && y0 + TY < ay.core_hi;
  // A level's x-y region with `left` to go: [rx0, rx1) x [ry0, ry1), clipped to the core.
  auto region = [&](int left, int& rx0, int& rx1, int& ry0, int& ry1) {
    rx0 = max(x0 - (peer_x0 ? 0 : left), ax.core_lo), rx1 = min(x0 + TX + (peer_x1 ? 0 : left), ax.core_hi);
    ry0 = max(y0 - (peer_y0 ? 0 : left), ay.core_lo), ry1 = min(y0 + TY + (peer_y1 ? 0 : left), ay.core_hi);
  };

  // What the thread does, fixed for the sweep. Levels it computes: its pack
  // meets the level's x-y region (points past the region are computed too
  // and never read).
  unsigned computes = 0;
#pragma unroll
  for (int t = 1; t <= Steps; ++t) {
    int cx0, cx1, cy0, cy1;
    region((Steps - t) * R, cx0, cx1, cy0, cy1);
    if (x + V > cx0 && x < cx1 && y >= cy0 && y < cy1) computes |= 1u << t;
  }
  // Lanes on a Dirichlet x or y face keep g at every level (y before x at
  // edges, as fill_ghosts orders them).
  unsigned face_lanes = 0;
  Vec face_value{};
#pragma unroll
  for (int v = 0; v < V; ++v)
    for (int a = 1; a >= 0; --a)
      for (int side = 0; side < 2; ++side) {
        const ClusterAxis& axis = geo.axis[a];
        const int c = a == 0 ? x + v : y;
        if (!(face_lanes >> v & 1) && axis.ghosts[side] && axis.face[side].type == BoundaryType::dirichlet &&
            c == (side == 0 ? 0 : axis.n - 1))
          face_lanes |= 1u << v, face_value.v[v] = static_cast<Real>(axis.face[side].value);
      }
  // The write-back: updated points of the tile the launch owns.
  const int wx0 = max(max(x0, ax.out_lo), ax.upd_lo), wx1 = min(min(x0 + TX, ax.out_hi), ax.upd_hi);
  const int wy0 = max(max(y0, ay.out_lo), ay.upd_lo), wy1 = min(min(y0 + TY, ay.out_hi), ay.upd_hi);
  const bool aligned = (geo.lead + xbase) % V == 0;
  const bool writes = y >= wy0 && y < wy1 && x + V > wx0 && x < wx1, whole_x = aligned && x >= wx0 && x + V <= wx1;
  const long out_column = geo.lead + x + (y + geo.halo) * geo.stride[1] + geo.halo * geo.stride[2];
  // The load: the thread's pack of each level-0 plane (whole where the pack
  // lies in stored data, point by point at faces and wrapped axes).
  // (r past the tile on peer sides: what level 1 reads there.)
  const int lx0 = x0 - (peer_x0 ? R : reach), lx1 = x0 + TX + (peer_x1 ? R : reach);
  const int ly0 = y0 - (peer_y0 ? R : reach), ly1 = y0 + TY + (peer_y1 ? R : reach);
  int gy = 0;
  const bool loads = y >= ly0 && y < ly1 && x + V > lx0 && x < lx1 && source_coordinate(ay, y, gy);
  const bool load_whole = aligned && x >= (ax.periodic ? 0 : ax.load_lo) && x + V <= (ax.periodic ? ax.n : ax.load_hi);
  const long row = geo.lead + (gy + geo.halo) * geo.stride[1];
  const int iterations = z1 + reach - zs;  // level-0 planes zs .. z1+reach-1
  auto load_plane = [&](int i) {
    int gz;
    if (loads && i < iterations && source_coordinate(az, zs + i, gz)) {
      const long offset = row + (gz + geo.halo) * geo.stride[2];
      const int slot = (i & (S0 - 1)) * PS + own;
      if (load_whole) {
        load_async_pack(level0 + slot, cur + offset + x);
        if constexpr (Wave) load_async_pack(prev0 + slot, prev + offset + x);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) {
          int gx;
          if (x + v < lx0 || x + v >= lx1 || !source_coordinate(ax, x + v, gx)) continue;
          load_async(level0 + slot + v, cur + offset + gx);
          if constexpr (Wave) load_async(prev0 + slot + v, prev + offset + gx);
        }
      }
    }
    commit_loads();
  };
  // Whether a face's ghosts are within reach of the block (x, y) or slab (z).
  const bool near_xy = (ax.ghosts[0] && x0 - reach < 0) || (ax.ghosts[1] && x0 + TX + reach > ax.n) ||
                       (ay.ghosts[0] && y0 - reach < 0) || (ay.ghosts[1] && y0 + TY + reach > ay.n);
  // Level t computes (plane zs + i - t*r is inside its slab and not a ghost
  // plane) in iterations [first[t], last[t]); level Steps writes back in
  // [out_first, out_last). Block-uniform, fixed for the sweep.
  int first[Steps + 1], last[Steps + 1];
#pragma unroll
  for (int t = 1; t <= Steps; ++t) {
    const int left = (Steps - t) * R;
    first[t] = max(z0 - left, az.core_lo) - zs + t * R, last[t] = min(z1 + left, az.core_hi) - zs + t * R;
  }
  const int out_first = max(z0, az.upd_lo) - zs + reach, out_last = min(z1, az.upd_hi) - zs + reach;

#pragma unroll
  for (int i = 0; i < A; ++i) load_plane(i);
  for (int i = 0; i < iterations; ++i) {
    wait_loads_but<A - 1>();  // plane i has landed
    if constexpr (Clustered) cluster.sync();  // also: the peers' planes of the last iteration are complete
    else __syncthreads();
    load_plane(i + A);  // lands while the next A iterations compute

    // x and y ghosts of the planes levels 1..Steps-1 made in the last
    // iteration, where a physical face is within reach (the next level reads
    // them r iterations later).
    if (near_xy && i > 0) {
      for (int t = 1; t < Steps; ++t) {
        const int q = i - 1 - t * R, left = (Steps - t) * R;
        if (i - 1 < first[t] || i - 1 >= last[t]) continue;
        fill_ghosts_2d<R>(upper + ((t - 1) * S + q % S) * PS, ax, ay, plane_tile, x0 - (peer_x0 ? 0 : left),
                          x0 + TX + (peer_x1 ? 0 : left), y0 - (peer_y0 ? 0 : left), y0 + TY + (peer_y1 ? 0 : left));
      }
      __syncthreads();
    }
    // Peer sides: the r columns and rows past the tile of the level t-1
    // plane that each level t >= 2 reads in this iteration (written r
    // iterations ago), from the peer's ring (the same slot: same slab).
    if constexpr (Clustered) {
      const int tid = threadIdx.x + threadIdx.y * blockDim.x, nthreads = blockDim.x * blockDim.y;
      const int rank = static_cast<int>(cluster.block_rank());
      for (int t = 2; t <= Steps; ++t) {
        if (i < first[t] || i >= last[t]) continue;
        const int q = i - t * R;
        Real* u = upper + ((t - 2) * S + q % S) * PS;
        int cx0, cx1, cy0, cy1;
        region((Steps - t) * R, cx0, cx1, cy0, cy1);  // where level t reads neighbours
        for (int side = 0; side < 2; ++side) {
          if (side == 0 ? peer_x0 : peer_x1) {
            const Real* v = cluster.map_shared_rank(u, rank + (side == 0 ? -1 : 1));
            const int shift = side == 0 ? -TX : TX, first_x = side == 0 ? x0 - R : x0 + TX;  // shift: the peer's x0 - ours
            for (int k = tid; k < R * (cy1 - cy0); k += nthreads) {
              const int xx = first_x + k % R, yy = cy0 + k / R;
              u[plane_tile.at(xx, yy)] = v[plane_tile.at(xx - shift, yy)];
            }
          }
          if (side == 0 ? peer_y0 : peer_y1) {
            const Real* v = cluster.map_shared_rank(u, rank + (side == 0 ? -CX : CX));
            const int shift = side == 0 ? -TY : TY, first_y = side == 0 ? y0 - R : y0 + TY;
            for (int k = tid; k < R * (cx1 - cx0); k += nthreads) {
              const int xx = cx0 + k % (cx1 - cx0), yy = first_y + k / (cx1 - cx0);
              u[plane_tile.at(xx, yy)] = v[plane_tile.at(xx, yy - shift)];
            }
          }
        }
      }
      __syncthreads();
    }

#pragma unroll
    for (int t = 1; t <= Steps; ++t) {
      const int q = i - t * R, p = zs + q;
      if (i >= first[t] && i < last[t] && (computes >> t & 1)) {
        Vec result;
        // Level t-1's planes p-r..p+r at (x, y), from its ring; z ghost
        // planes (never computed) mirror the planes they reflect.
        auto plane_of = [&](int level, int qq) {  // plane zs + qq of a level
          return level == 0 ? level0 + (qq & (S0 - 1)) * PS : upper + ((level - 1) * S + qq % S) * PS;
        };
        Vec column[2 * R + 1];
#pragma unroll
        for (int j = 0; j <= 2 * R; ++j) column[j] = load_pack(plane_of(t - 1, q - R + j) + own);
        if (t >= 2 && ((az.ghosts[0] && p < R) || (az.ghosts[1] && p > az.n - 1 - R))) mirror_z_ghosts<R>(column, az, p);
        const Real* c = plane_of(t - 1, q) + own;
        const Vec& mid = column[R];
        Real left_x[R + 1], right_x[R + 1];
        Vec below[R + 1], above[R + 1];
#pragma unroll
        for (int j = 1; j <= R; ++j) {
          left_x[j] = c[-j], right_x[j] = c[V - 1 + j];
          below[j] = load_pack(c - j * W), above[j] = load_pack(c + j * W);
        }
        if constexpr (Wave) result = load_pack((t == 1 ? prev0 + (q & (S0 - 1)) * PS : plane_of(t >= 2 ? t - 2 : 0, q)) + own);  // u^{m-1}
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const Real centre = mid.v[v];
          Real minus[R + 1], plus[R + 1];
#pragma unroll
          for (int j = 1; j <= R; ++j) {
            minus[j] = v - j >= 0 ? mid.v[v - j] : left_x[j - v];
            plus[j] = v + j < V ? mid.v[v + j] : right_x[v + j - V + 1];
          }
          Real lap_value = lap.along(0, centre, minus, plus);
#pragma unroll
          for (int j = 1; j <= R; ++j) minus[j] = below[j].v[v], plus[j] = above[j].v[v];
          lap_value = lap.add_axis(1, lap_value, lap.along(1, centre, minus, plus));
#pragma unroll
          for (int j = 1; j <= R; ++j) minus[j] = column[R - j].v[v], plus[j] = column[R + j].v[v];
          lap_value = lap.add_axis(2, lap_value, lap.along(2, centre, minus, plus));
          if constexpr (!Wave) result.v[v] = up.heat(centre, lap_value);
          else result.v[v] = start && t == 1 ? up.wave_start(centre, result.v[v], lap_value) : up.wave(centre, result.v[v], lap_value);
        }
        // Dirichlet face points keep g, z faces first (rare: a branch, not a select a point).
        const int z_side = p == 0 ? 0 : 1;
        if ((p == 0 || p == az.n - 1) && az.ghosts[z_side] && az.face[z_side].type == BoundaryType::dirichlet) {
#pragma unroll
          for (int v = 0; v < V; ++v) result.v[v] = static_cast<Real>(az.face[z_side].value);
        } else if (face_lanes) {
#pragma unroll
          for (int v = 0; v < V; ++v)
            if (face_lanes >> v & 1) result.v[v] = face_value.v[v];
        }
        if (t < Steps) {
          store_pack(plane_of(t, q) + own, result);
        } else if (writes && i >= out_first && i < out_last) {
          const long out = out_column + p * geo.stride[2];
          if (whole_x) {
            store_pack(out_cur + out, result);
            if constexpr (Wave) store_pack(out_prev + out, mid);  // the new u^{n-1}: level Steps-1 at p
          } else {
#pragma unroll
            for (int v = 0; v < V; ++v) {
              if (x + v < wx0 || x + v >= wx1) continue;
              out_cur[out + v] = result.v[v];
              if constexpr (Wave) out_prev[out + v] = mid.v[v];
            }
          }
        }
      }
    }
  }
  if constexpr (Clustered) cluster.sync();  // peers may still read this block's rings
}

// The 3D kernel for a launch of `steps` steps (1..max_levels_3d(R)), in
// clusters of one block or more.
template <int R, class Real, bool Wave, bool Clustered, int... S>
auto kernels_3d(std::integer_sequence<int, S...>) {
  return std::array{cluster_kernel_3d<R, Real, Wave, S + 1, Clustered>...};
}

template <int D, int R, class Real, bool Wave>
auto kernel_for(int steps, bool clustered) {
  constexpr auto counts = std::make_integer_sequence<int, max_levels_3d(R)>{};
  if constexpr (D == 2) return cluster_kernel_2d<R, Real, Wave>;
  else return clustered ? kernels_3d<R, Real, Wave, true>(counts)[steps - 1] : kernels_3d<R, Real, Wave, false>(counts)[steps - 1];
}

int round_up(int n, int m) { return (n + m - 1) / m * m; }

// Blocks of a resident kernel the whole GPU holds at once.
template <class Kernel>
int resident_room(Kernel kernel, int threads, std::size_t shared_bytes) {
  HW_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)));
  HW_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
  int device = 0, sms = 0, per_sm = 0;
  HW_CUDA(cudaGetDevice(&device));
  HW_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  HW_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes));
  return per_sm * sms;
}

}  // namespace

// ---------------------------------------------------------------- host side ---

template <int D, class Real>
bool ClusterKernel<D, Real>::configure(const Problem& problem, const LocalDomain<D>& domain, const ClusterPlan& plan,
                                       std::string& reason) {
  const int R = problem.config.radius;
  radius_ = R;
  wave_ = problem.config.equation == Equation::wave;
  int device = 0, can = 0;
  HW_CUDA(cudaGetDevice(&device));
  HW_CUDA(cudaDeviceGetAttribute(&can, cudaDevAttrClusterLaunch, device));
  if (!can) return reason = "this device cannot launch thread-block clusters", false;

  const int H = domain.layout.halo;
  for (int a = 0; a < D; ++a) {
    ClusterAxis& x = geo_.axis[a];
    const bool ex_lo = domain.exchanged[a][0], ex_hi = domain.exchanged[a][1];
    x.n = static_cast<int>(domain.layout.owned[a]);
    if (x.n < 2 * R + 2) return reason = "fewer than 2r+2 points along an axis", false;
    x.periodic = !ex_lo && !ex_hi && domain.face[a][0].type == BoundaryType::periodic;
    x.load_lo = ex_lo ? -H : -R, x.load_hi = ex_hi ? x.n + H : x.n + R;
    x.core_lo = ex_lo ? -H : 0, x.core_hi = ex_hi ? x.n + H : x.n;
    if (x.periodic) x.core_lo = -unbounded, x.core_hi = unbounded;
    x.upd_lo = x.core_lo + (domain.dirichlet(a, 0) ? 1 : 0);
    x.upd_hi = x.core_hi - (domain.dirichlet(a, 1) ? 1 : 0);
    for (int side = 0; side < 2; ++side) {
      x.exchanged[side] = domain.exchanged[a][side];
      x.ghosts[side] = !x.exchanged[side] && !x.periodic;
      x.face[side] = domain.face[a][side];
    }
  }
  const auto strides = domain.layout.strides();
  geo_.lead = domain.layout.lead();
  geo_.halo = domain.layout.halo;
  for (int a = 0; a < D; ++a) geo_.stride[a] = strides[a];

  const ClusterPlan& q = plan;
  const int KR = q.k * R;
  constexpr int V = Pack<Real>::width;
  const bool power_of_2 = q.threads_y >= 1 && (q.threads_y & (q.threads_y - 1)) == 0;
  geo_.plan = q;
  geo_.thread_rows_log2 = 0;
  while ((1 << geo_.thread_rows_log2) < q.threads_y) ++geo_.thread_rows_log2;
  // Shared column 0 is KR rounded up to packs left of the tile: tiles that
  // are whole packs then start on 16-byte boundaries, so loads and stores are packs.
  geo_.halo_left = shared_halo_left(KR, V);
  geo_.width = shared_width(KR, q.tile_x, V);
  if (q.resident) {
    bool fits = D == 2 && q.blocks() == 1 && power_of_2 && q.tile_x > R && q.tile_y > R;
    for (int a = 0; a < 2 && a < D; ++a) {
      const int n = geo_.axis[a].n, t = a == 0 ? q.tile_x : q.tile_y;
      fits = fits && (n % t == 0 || n % t > R);  // a neighbour's edge lies in one tile
    }
    if (!fits)
      return reason = "invalid cluster plan (" + q.text() + "): resident mode is 2D, tiles (and the last, partial ones) wider than r, "
                      "thread rows a power of 2", false;
    for (int a = 0; a < D; ++a)
      if (domain.exchanged[a][0] || domain.exchanged[a][1])
        return reason = "cluster plan (" + q.text() + "): resident mode keeps a whole domain on chip, and this rank's has MPI-exchanged faces",
               false;
    geo_.halo_left = shared_halo_left(R, V);
    geo_.width = shared_width(R, q.tile_x, V);
    geo_.rows = q.tile_y + 2 * R;
    threads_x_ = round_up(geo_.width / V, 32);
    threads_y_ = q.threads_y;
    geo_.plane = level_stride<Real>(geo_.width, geo_.rows);
    shared_bytes_ = 2 * sizeof(Real) * static_cast<std::size_t>(geo_.plane);  // both levels, each with its pad
  } else if constexpr (D == 2) {
    if (q.cluster_x != 1 || q.cluster_y < 1 || q.cluster_y > 16 || q.k < 1 || q.tile_x < 2 * R || q.tile_y < 2 * R || !power_of_2)
      return reason = "invalid cluster plan (" + q.text() + "): 2D clusters are 1 x (1..16) blocks, k >= 1, tiles >= 2r, thread rows a power of 2",
             false;
    geo_.rows = q.tile_y + (q.cluster_y == 1 ? 2 * KR : KR + R);
    threads_x_ = round_up(geo_.width / V, 32);  // a pack per thread across the widest step region
    threads_y_ = q.threads_y;
    geo_.plane = level_stride<Real>(geo_.width, geo_.rows);
    shared_bytes_ = 2 * sizeof(Real) * static_cast<std::size_t>(geo_.plane);  // both levels, each with its pad
  } else {
    if (q.cluster_x < 1 || q.cluster_y < 1 || q.blocks() > 8 || q.k < 1 || q.k > max_levels_3d(R) || q.tile_x < 2 * R ||
        q.tile_y < 2 * R || q.tile_z < 1 || q.threads_y != 1)
      return reason = "invalid cluster plan (" + q.text() + "): 3D clusters are up to 8 blocks over x-y, k from 1 to " +
                      std::to_string(max_levels_3d(R)) + " for radius " + std::to_string(R) +
                      ", tiles >= 2r, tile_z >= 1, threads_y 1 (a thread a pack of the plane)",
             false;
    geo_.rows = q.tile_y + 2 * KR;
    threads_x_ = geo_.width / V;
    threads_y_ = geo_.rows;  // a thread a pack of the shared plane
    const int slots = (wave_ ? 2 : 1) * level0_planes_3d() + (q.k - 1) * upper_planes_3d(R);  // as the kernel's rings
    geo_.plane = level_stride<Real>(geo_.width, geo_.rows);
    shared_bytes_ = sizeof(Real) * static_cast<std::size_t>(slots) * geo_.plane;
  }
  if (threads_x_ * threads_y_ > 512)
    return reason = "cluster plan (" + q.text() + ") needs " + std::to_string(threads_x_ * threads_y_) + " threads a block (at most 512)", false;
  cudaDeviceProp prop{};
  HW_CUDA(cudaGetDeviceProperties(&prop, device));
  if (shared_bytes_ > prop.sharedMemPerBlockOptin)
    return reason = "cluster plan (" + q.text() + ") needs " + std::to_string(shared_bytes_ / 1024) +
                    " KiB of shared memory a block, more than the device's " + std::to_string(prop.sharedMemPerBlockOptin / 1024),
           false;

  lap1_ = LaplacianWeights<D, 1, Real>::make(problem.spacing, domain.layout.strides());
  lap2_ = LaplacianWeights<D, 2, Real>::make(problem.spacing, domain.layout.strides());
  const double dt = problem.dt, c = problem.config.c;
  update_ = {static_cast<Real>(problem.config.alpha * dt), static_cast<Real>(c * c * dt * dt), static_cast<Real>(0.5 * c * c * dt * dt),
             static_cast<Real>(dt)};

  if (q.resident) {
    if constexpr (D == 2) {
      // Every tile must be on chip at once: the grid synchronises each step.
      const int threads = threads_x_ * threads_y_;
      const int room = R == 1 ? (wave_ ? resident_room(resident_kernel_2d<1, Real, true>, threads, shared_bytes_)
                                       : resident_room(resident_kernel_2d<1, Real, false>, threads, shared_bytes_))
                              : (wave_ ? resident_room(resident_kernel_2d<2, Real, true>, threads, shared_bytes_)
                                       : resident_room(resident_kernel_2d<2, Real, false>, threads, shared_bytes_));
      const dim3 grid = resident_grid();
      const long tiles = static_cast<long>(grid.x) * grid.y;
      if (tiles > room)
        return reason = "cluster plan (" + q.text() + "): the domain's " + std::to_string(tiles) + " tiles do not fit on chip at once (room for " +
                        std::to_string(room) + ")",
               false;
      active_clusters_ = room;
      // Edges: 2 parities x tiles x 4 sides x r x the longer tile side.
      edges_.allocate(static_cast<std::size_t>(2 * tiles * 4 * R) * std::max(q.tile_x, q.tile_y));
    }
    return true;
  }
  const bool clustered = q.blocks() > 1;
  // Every kernel the plan launches (3D: one a step count) may use the
  // shared memory; the plan's own step count sets the occupancy.
  auto occupancy = [&](auto kernel_of) {
    for (int s = 1; s <= (D == 3 ? q.k : 1); ++s) {
      HW_CUDA(cudaFuncSetAttribute(kernel_of(s), cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes_)));
      // As much shared memory as the SM has: blocks an SM are limited by it, not by L1.
      HW_CUDA(cudaFuncSetAttribute(kernel_of(s), cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
      if (q.blocks() > 8) HW_CUDA(cudaFuncSetAttribute(kernel_of(s), cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    }
    cudaLaunchAttribute attribute[1];
    cudaLaunchConfig_t config = launch_config(attribute, 0, nullptr);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel_of(q.k), &config) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return clusters;
  };
  if (R == 1)
    active_clusters_ = wave_ ? occupancy([clustered](int s) { return kernel_for<D, 1, Real, true>(s, clustered); })
                             : occupancy([clustered](int s) { return kernel_for<D, 1, Real, false>(s, clustered); });
  else
    active_clusters_ = wave_ ? occupancy([clustered](int s) { return kernel_for<D, 2, Real, true>(s, clustered); })
                             : occupancy([clustered](int s) { return kernel_for<D, 2, Real, false>(s, clustered); });
  if (active_clusters_ <= 0)
    return reason = "cudaOccupancyMaxActiveClusters is 0 for the plan (" + q.text() + "): clusters of " +
                    std::to_string(q.blocks()) + " blocks with " + std::to_string(shared_bytes_ / 1024) + " KiB each cannot be co-scheduled",
           false;
  return true;
}

// A resident launch: a block a tile of the whole domain.
template <int D, class Real>
dim3 ClusterKernel<D, Real>::resident_grid() const {
  return dim3((geo_.axis[0].n + geo_.plan.tile_x - 1) / geo_.plan.tile_x, (geo_.axis[1].n + geo_.plan.tile_y - 1) / geo_.plan.tile_y);
}

template <int D, class Real>
cudaLaunchConfig_t ClusterKernel<D, Real>::launch_config(cudaLaunchAttribute* attribute, int ahead, cudaStream_t stream) {
  const ClusterPlan& q = geo_.plan;
  for (int a = 0; a < D; ++a) {
    ClusterAxis& x = geo_.axis[a];
    // Exchanged sides: the next launch of the chunk reads ahead*r into the halo.
    x.out_lo = x.exchanged[0] ? -ahead * radius_ : 0;
    x.out_hi = x.exchanged[1] ? x.n + ahead * radius_ : x.n;
  }
  auto extent = [&](int a) { return geo_.axis[a].out_hi - geo_.axis[a].out_lo; };
  // Whole clusters along x and y (blocks past the extent have empty tiles).
  auto blocks = [&](int a, int tile, int cluster) { return (extent(a) + cluster * tile - 1) / (cluster * tile) * cluster; };
  cudaLaunchConfig_t config{};
  if constexpr (D == 2)
    config.gridDim = dim3(blocks(0, q.tile_x, 1), blocks(1, q.tile_y, q.cluster_y));
  else
    config.gridDim = dim3(blocks(0, q.tile_x, q.cluster_x), blocks(1, q.tile_y, q.cluster_y), (extent(2) + q.tile_z - 1) / q.tile_z);
  config.blockDim = dim3(threads_x_, threads_y_);
  config.dynamicSmemBytes = shared_bytes_;
  config.stream = stream;
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = q.cluster_x;
  attribute[0].val.clusterDim.y = q.cluster_y;
  attribute[0].val.clusterDim.z = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  return config;
}

template <int D, class Real>
void ClusterKernel<D, Real>::launch(const Real* cur, const Real* prev, Real* out_cur, Real* out_prev, int steps, int ahead,
                                    bool start, cudaStream_t stream) {
  if (geo_.plan.resident) {
    if constexpr (D == 2) {
      // One cooperative launch for the chunk: every block resident, grid-wide barriers between steps.
      cudaLaunchAttribute attribute[1];
      attribute[0].id = cudaLaunchAttributeCooperative;
      attribute[0].val.cooperative = 1;
      cudaLaunchConfig_t config{};
      config.gridDim = resident_grid();
      config.blockDim = dim3(threads_x_, threads_y_);
      config.dynamicSmemBytes = shared_bytes_;
      config.stream = stream;
      config.attrs = attribute;
      config.numAttrs = 1;
      for (int a = 0; a < D; ++a) geo_.axis[a].out_lo = 0, geo_.axis[a].out_hi = geo_.axis[a].n;
      Real* edges = edges_.get();
      if (radius_ == 1) {
        if (wave_) HW_CUDA(cudaLaunchKernelEx(&config, resident_kernel_2d<1, Real, true>, cur, prev, out_cur, out_prev, geo_, lap1_, update_, steps, start, edges));
        else HW_CUDA(cudaLaunchKernelEx(&config, resident_kernel_2d<1, Real, false>, cur, prev, out_cur, out_prev, geo_, lap1_, update_, steps, start, edges));
      } else {
        if (wave_) HW_CUDA(cudaLaunchKernelEx(&config, resident_kernel_2d<2, Real, true>, cur, prev, out_cur, out_prev, geo_, lap2_, update_, steps, start, edges));
        else HW_CUDA(cudaLaunchKernelEx(&config, resident_kernel_2d<2, Real, false>, cur, prev, out_cur, out_prev, geo_, lap2_, update_, steps, start, edges));
      }
      HW_CUDA(cudaGetLastError());
    }
    return;
  }
  cudaLaunchAttribute attribute[1];
  const cudaLaunchConfig_t config = launch_config(attribute, ahead, stream);
  if (radius_ == 1) {
    if (wave_) HW_CUDA(cudaLaunchKernelEx(&config, kernel_for<D, 1, Real, true>(steps, geo_.plan.blocks() > 1), cur, prev, out_cur, out_prev, geo_, lap1_, update_, steps, start));
    else HW_CUDA(cudaLaunchKernelEx(&config, kernel_for<D, 1, Real, false>(steps, geo_.plan.blocks() > 1), cur, prev, out_cur, out_prev, geo_, lap1_, update_, steps, start));
  } else {
    if (wave_) HW_CUDA(cudaLaunchKernelEx(&config, kernel_for<D, 2, Real, true>(steps, geo_.plan.blocks() > 1), cur, prev, out_cur, out_prev, geo_, lap2_, update_, steps, start));
    else HW_CUDA(cudaLaunchKernelEx(&config, kernel_for<D, 2, Real, false>(steps, geo_.plan.blocks() > 1), cur, prev, out_cur, out_prev, geo_, lap2_, update_, steps, start));
  }
  HW_CUDA(cudaGetLastError());
}

template class ClusterKernel<2, float>;
template class ClusterKernel<2, double>;
template class ClusterKernel<3, float>;
template class ClusterKernel<3, double>;

}  // namespace heatwave::cuda
