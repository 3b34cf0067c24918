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
//     (d) Dirichlet face points of the new level := g;
//     (e) cluster barrier: publishes the new level to the peers, and keeps a
//         block from overwriting rows a peer still copies.
//   store  the tile (the wave: both levels), out of place.
// The stencil is LaplacianWeights::along in axis order and TimeUpdate, as in
// the baseline kernel: results are bitwise equal to the cuda and host backends.
// Each thread walks down a strip of one column, keeping the 2r+1 values along
// y in registers; x neighbours come from shared memory (conflict-free).
// Periodic axes (one rank spans them) are loaded with wrapped indices: a point
// past the face is computed exactly like the one it wraps to. Exchanged faces
// (MPI) are data like any other point: their halo is loaded, and the write-back
// reaches `ahead*r` into it so that the next launch of the chunk finds it valid.
#include <cooperative_groups.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>

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
__device__ __forceinline__ void wait_loads_but_newest() { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }

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

template <int R, class Real, bool Wave>
__global__ void __launch_bounds__(512) cluster_kernel_2d(const Real* __restrict__ cur, const Real* __restrict__ prev,
                                                         Real* __restrict__ out_cur, Real* __restrict__ out_prev,
                                                         const ClusterGeometry<2> geo, const LaplacianWeights<2, R, Real> lap,
                                                         const TimeUpdate<Real> up, const int steps, const bool start) {
  using Vec = Pack<Real>;
  constexpr int V = Vec::width;
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ __align__(16) unsigned char cluster_shared[];
  const int W = geo.width;
  Real* A = reinterpret_cast<Real*>(cluster_shared) + V;  // u^m
  Real* Bf = A + level_stride<Real>(W, geo.rows);          // u^{m+1} (the wave: u^{m-1} until overwritten)
  const ClusterAxis& ax = geo.axis[0];
  const ClusterAxis& ay = geo.axis[1];
  const int B = geo.plan.cluster_y, TX = geo.plan.tile_x, TY = geo.plan.tile_y, KR = geo.plan.k * R;
  const int rank = static_cast<int>(cluster.block_rank());  // cluster dims (1, B, 1): blockIdx.y % B
  const bool outer_lo = rank == 0, outer_hi = rank == B - 1;
  const int x0 = ax.out_lo + static_cast<int>(blockIdx.x) * TX;
  const int y0 = ay.out_lo + static_cast<int>(blockIdx.y) * TY;
  const int xbase = x0 - geo.halo_left, ybase = y0 - (outer_lo ? KR : R);  // global (x, y) of shared (0, 0)
  auto at = [&](int x, int y) { return (y - ybase) * W + (x - xbase); };
  const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;
  const int tid = tx + ty * bx, nthreads = bx * by;

  // Load what step 1 reads; Dirichlet face points are g in both levels (no
  // step writes them).
  {
    const int reach = steps * R;
    const int lx0 = x0 - reach, lx1 = x0 + TX + reach;
    const int ly0 = y0 - (outer_lo ? reach : R), ly1 = y0 + TY + (outer_hi ? reach : R);
    const bool aligned = (geo.lead + xbase) % V == 0;
    for (int y = ly0 + ty; y < ly1; y += by) {
      int gy;
      if (!source_coordinate(ay, y, gy)) continue;
      const long row = geo.lead + (gy + geo.halo) * geo.stride[1];
      load_row(A + at(xbase, y), cur + row, ax, xbase, lx0, lx1, aligned, tx, bx);
      if constexpr (Wave) load_row(Bf + at(xbase, y), prev + row, ax, xbase, lx0, lx1, aligned, tx, bx);
    }
    wait_loads();
    __syncthreads();
    for (int side = 0; side < 2; ++side) {
      if (ax.ghosts[side] && ax.face[side].type == BoundaryType::dirichlet) {
        const int f = side == 0 ? 0 : ax.n - 1;
        if (f >= lx0 && f < lx1)
          for (int y = ly0 + tid; y < ly1; y += nthreads) Bf[at(f, y)] = static_cast<Real>(ax.face[side].value);
      }
      if (ay.ghosts[side] && ay.face[side].type == BoundaryType::dirichlet) {
        const int f = side == 0 ? 0 : ay.n - 1;
        if (f >= ly0 && f < ly1)
          for (int x = lx0 + tid; x < lx1; x += nthreads) Bf[at(x, f)] = static_cast<Real>(ay.face[side].value);
      }
    }
    __syncthreads();
  }

  for (int s = 1; s <= steps; ++s) {
    const int left = (steps - s) * R;  // how far past the tile step s computes, on outer sides
    if (s >= 2) {
      // Valid in A now: what step s-1 computed, plus r rows on shared sides.
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
            if (y >= ay.core_lo && y < ay.core_hi) A[at(x, y)] = peer_A[(y - peer_ybase) * W + (x - xbase)];
          }
        }
        __syncthreads();
      }
      // (b) ghosts: x ghost columns on updated rows, y ghost rows on updated columns.
      const bool x_ghosts = (ax.ghosts[0] && vx0 < 0) || (ax.ghosts[1] && vx1 > ax.n);
      const bool y_ghosts = (ay.ghosts[0] && vy0 < 0) || (ay.ghosts[1] && vy1 > ay.n);
      if (x_ghosts || y_ghosts) {
        if (x_ghosts) {
          const int first = max(vy0, ay.upd_lo), nrows = min(vy1, ay.upd_hi) - first;
          for (int i = tid; i < 2 * R * nrows; i += nthreads) {
            const int y = first + i / (2 * R), j = i % (2 * R), side = j / R;
            const int x = side == 0 ? j - R : ax.n + j - R;
            const int src = ax.face[side].source(x);
            if (ax.ghosts[side] && x >= vx0 && x < vx1 && src >= vx0 && src < vx1)
              A[at(x, y)] = ax.face[side].ghost(x, A[at(src, y)]);
          }
        }
        if (y_ghosts) {
          const int first = max(vx0, ax.upd_lo), ncols = min(vx1, ax.upd_hi) - first;
          for (int i = tid; i < 2 * R * ncols; i += nthreads) {
            const int j = i / ncols, x = first + i % ncols, side = j / R;
            const int y = side == 0 ? j - R : ay.n + j - R;
            const int src = ay.face[side].source(y);
            if (ay.ghosts[side] && y >= vy0 && y < vy1 && src >= vy0 && src < vy1)
              A[at(x, y)] = ay.face[side].ghost(y, A[at(x, src)]);
          }
        }
        __syncthreads();
      }
    }

    // (c) the stencil over the step's region, less faces and ghosts. A
    // thread owns packs of V points aligned in shared memory and walks down
    // a strip of rows with the 2r+1 packs along y in registers; packs that
    // straddle the region's edge compute every point but store only the
    // region's (the rest read neighbours nobody needs).
    const int rx0 = x0 - left, rx1 = x0 + TX + left;
    const int cx0 = max(rx0, ax.upd_lo), cx1 = min(rx1, ax.upd_hi);
    const int cy0 = max(y0 - (outer_lo ? left : 0), ay.upd_lo), cy1 = min(y0 + TY + (outer_hi ? left : 0), ay.upd_hi);
    const bool starting = Wave && start && s == 1;
    const int per_thread = (cy1 - cy0 + by - 1) >> geo.thread_rows_log2;
    const int ya = cy0 + ty * per_thread, yb = min(ya + per_thread, cy1);
    if (ya < yb) {
      const int keep_lo = cx0 - xbase, keep_hi = cx1 - xbase;  // shared columns stored
      for (int g = keep_lo / V + tx; g * V < keep_hi; g += bx) {
        const int lx = g * V;
        // Points of the pack outside the region are stored too (no step
        // reads them, ghosts are refilled before use) except a Dirichlet
        // face point, which must stay g.
        const bool whole = !face_in_pack(ax, xbase + lx, V);
        const Real* a = A + (ya - ybase) * W + lx;
        Real* b = Bf + (ya - ybase) * W + lx;
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
            else result.v[v] = starting ? up.wave_start(centre, result.v[v], lap_value) : up.wave(centre, result.v[v], lap_value);
          }
          if (whole) {
            store_pack(b, result);
          } else {
#pragma unroll
            for (int v = 0; v < V; ++v)
              if (lx + v >= keep_lo && lx + v < keep_hi) b[v] = result.v[v];
          }
#pragma unroll
          for (int j = 0; j < 2 * R; ++j) column[j] = column[j + 1];
        }
      }
    }
    // (d) publish the new level; swap.
    if (B > 1) cluster.sync();
    else __syncthreads();
    Real* t = A;
    A = Bf;
    Bf = t;
  }

  // The block's tile: updated points the launch owns, packs where aligned.
  const int wx0 = max(max(x0, ax.out_lo), ax.upd_lo), wx1 = min(min(x0 + TX, ax.out_hi), ax.upd_hi);
  const int wy0 = max(max(y0, ay.out_lo), ay.upd_lo), wy1 = min(min(y0 + TY, ay.out_hi), ay.upd_hi);
  const bool aligned = (geo.lead + xbase) % V == 0;
  for (int y = wy0 + ty; y < wy1; y += by) {
    const long row = geo.lead + (y + geo.halo) * geo.stride[1];
    for (int g = (wx0 - xbase) / V + tx; g * V < wx1 - xbase; g += bx) {
      const int x = xbase + g * V;
      if (aligned && x >= wx0 && x + V <= wx1) {
        store_pack(out_cur + row + x, load_pack(A + at(x, y)));
        if constexpr (Wave) store_pack(out_prev + row + x, load_pack(Bf + at(x, y)));
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) {
          if (x + v < wx0 || x + v >= wx1) continue;
          out_cur[row + x + v] = A[at(x + v, y)];
          if constexpr (Wave) out_prev[row + x + v] = Bf[at(x + v, y)];
        }
      }
    }
  }
}

// ------------------------------------------------------------- 3D kernel ---
//
// A block owns a tile_x x tile_y column of the grid and streams it along z
// through a slab of tile_z planes, advancing `steps` levels in a pipeline:
// level t (t = 1..steps) computes plane z = zs + i - t(r+1) in iteration i,
// from planes z-r..z+r of level t-1, all of which an earlier iteration made.
// So every level works in every iteration with one barrier between
// iterations, and each level keeps only a ring of the last P planes (P =
// 2r+2, the wave 2r+3: it also reads level t-2 at plane z) in shared memory.
// Level 0 is loaded from global memory (the wave's u^{n-1} has a ring of its
// own), level `steps` goes straight to global memory. As in 2D, the x-y
// region of level t is the tile plus (steps-t)r, and so is the z range of the
// slab: only that outer halo is computed twice. Ghosts of physical faces:
// x and y ghosts of each new plane, and z ghost planes, from FaceRule after
// the barrier; Dirichlet face points are written as g by the stencil pass.

template <int R, class Real, bool Wave>
__global__ void __launch_bounds__(512) cluster_kernel_3d(const Real* __restrict__ cur, const Real* __restrict__ prev,
                                                         Real* __restrict__ out_cur, Real* __restrict__ out_prev,
                                                         const ClusterGeometry<3> geo, const LaplacianWeights<3, R, Real> lap,
                                                         const TimeUpdate<Real> up, const int steps, const bool start) {
  using Vec = Pack<Real>;
  constexpr int V = Vec::width;
  constexpr int L = R + 1;  // planes a level lags the one before it
  extern __shared__ __align__(16) unsigned char cluster_shared[];
  const int W = geo.width, H = geo.rows, P = geo.planes, K = geo.plan.k;
  const int plane_stride = level_stride<Real>(W, H);
  // Rings: level 0 and the wave's u^{n-1} hold P+1 planes (the next plane
  // loads while a level reads the last P), levels 1..k-1 hold P.
  const int P0 = P + 1, inputs = Wave ? 2 * P0 : P0;
  constexpr int prev_level = -1;  // the wave's u^{n-1} ring
  Real* const rings = reinterpret_cast<Real*>(cluster_shared) + V;
  const ClusterAxis& ax = geo.axis[0];
  const ClusterAxis& ay = geo.axis[1];
  const ClusterAxis& az = geo.axis[2];
  const int TX = geo.plan.tile_x, TY = geo.plan.tile_y, TZ = geo.plan.tile_z, KR = K * R;
  const int x0 = ax.out_lo + static_cast<int>(blockIdx.x) * TX;
  const int y0 = ay.out_lo + static_cast<int>(blockIdx.y) * TY;
  const int z0 = az.out_lo + static_cast<int>(blockIdx.z) * TZ, z1 = min(z0 + TZ, az.out_hi);
  const int xbase = x0 - geo.halo_left, ybase = y0 - KR, zs = z0 - steps * R;
  auto plane = [&](int level, int z) {  // z >= zs
    const int slot = level == 0 ? (z - zs) % P0 : level == prev_level ? P0 + (z - zs) % P0 : inputs + (level - 1) * P + (z - zs) % P;
    return rings + slot * plane_stride;
  };
  auto at = [&](int x, int y) { return (y - ybase) * W + (x - xbase); };
  // Threads: a fixed pack column each, rows strided (PW packs a row).
  const int PW = W / V;
  const int tid = threadIdx.x + threadIdx.y * blockDim.x;
  const int pc = tid % PW, tr = tid / PW, row_stride = (blockDim.x * blockDim.y) / PW;
  const bool active = tr < row_stride;
  const bool aligned = (geo.lead + xbase) % V == 0;
  const int iterations = z1 - zs + steps * L;
  // Level 0 (and the wave's u^{n-1}): plane zl, over the tile and steps*r,
  // asynchronously (one cp.async group a plane).
  auto load_plane = [&](int zl) {
    int gz;
    if (zl < z1 + steps * R && active && source_coordinate(az, zl, gz)) {
      const int reach = steps * R;
      for (int y = y0 - reach + tr; y < y0 + TY + reach; y += row_stride) {
        int gy;
        if (!source_coordinate(ay, y, gy)) continue;
        const long row = geo.lead + (gy + geo.halo) * geo.stride[1] + (gz + geo.halo) * geo.stride[2];
        load_row(plane(0, zl) + at(xbase, y), cur + row, ax, xbase, x0 - reach, x0 + TX + reach, aligned, pc, PW);
        if constexpr (Wave) load_row(plane(prev_level, zl) + at(xbase, y), prev + row, ax, xbase, x0 - reach, x0 + TX + reach, aligned, pc, PW);
      }
    }
    commit_loads();
  };
  load_plane(zs);

  for (int i = 0; i < iterations; ++i) {
    const int zl = zs + i;
    load_plane(zl + 1);  // the plane after: in flight while this iteration computes
    // Levels 1..steps: one plane each.
    for (int t = 1; t <= steps; ++t) {
      const int z = zl - t * L, left = (steps - t) * R;
      if (z < z0 - left || z >= z1 + left || z < az.core_lo || z >= az.core_hi) continue;  // ghost planes: the ghost pass
      const int cx0 = max(x0 - left, ax.core_lo), cx1 = min(x0 + TX + left, ax.core_hi);
      const int g = (cx0 - xbase) / V + pc;
      if (!active || g * V >= cx1 - xbase) continue;
      const int lx = g * V, x = xbase + lx;
      const int cy0 = max(y0 - left, ay.core_lo), cy1 = min(y0 + TY + left, ay.core_hi);
      const bool z_face = (az.ghosts[0] && az.face[0].type == BoundaryType::dirichlet && z == 0) ||
                          (az.ghosts[1] && az.face[1].type == BoundaryType::dirichlet && z == az.n - 1);
      const Real z_value = static_cast<Real>(az.face[z == 0 ? 0 : 1].value);
      const Real* src[2 * R + 1];
#pragma unroll
      for (int j = 0; j <= 2 * R; ++j) src[j] = plane(t - 1, z - R + j) + lx;
      const Real* older = (t == 1 ? plane(prev_level, z) : plane(t - 2, z)) + lx;  // the wave's u^{m-1}
      const bool last = t == steps;
      Real* dst = last ? nullptr : plane(t, z) + lx;
      // Points of the pack on a Dirichlet x face (g whatever the stencil says).
      bool x_face[V];
#pragma unroll
      for (int v = 0; v < V; ++v) x_face[v] = face_in_pack(ax, x + v, 1);
      // The launch's output: the tile, where it is written back.
      const bool out_z = last && z >= max(z0, az.upd_lo) && z < min(z1, az.upd_hi);
      const int wx0 = max(max(x0, ax.out_lo), ax.upd_lo), wx1 = min(min(x0 + TX, ax.out_hi), ax.upd_hi);
      const int wy0 = max(max(y0, ay.out_lo), ay.upd_lo), wy1 = min(min(y0 + TY, ay.out_hi), ay.upd_hi);
      const bool whole_x = aligned && x >= wx0 && x + V <= wx1;
      const long out_plane = geo.lead + x + (z + geo.halo) * geo.stride[2];
      // Rows strided over the threads of this pack column; the start turns
      // with the level so that the rows left over go to different threads.
      const int first = cy0 + (tr + t * (cy1 - cy0)) % row_stride;
      for (int y = first; y < cy1; y += row_stride) {
        const int p = (y - ybase) * W;
        const bool y_face = (ay.ghosts[0] && ay.face[0].type == BoundaryType::dirichlet && y == 0) ||
                            (ay.ghosts[1] && ay.face[1].type == BoundaryType::dirichlet && y == ay.n - 1);
        const Vec centre = load_pack(src[R] + p);
        Real left_x[R + 1], right_x[R + 1];
#pragma unroll
        for (int m = 1; m <= R; ++m) left_x[m] = src[R][p - m], right_x[m] = src[R][p + V - 1 + m];
        Vec below[R + 1], above[R + 1], front[R + 1], back[R + 1];  // y -/+ j, z -/+ j
#pragma unroll
        for (int j = 1; j <= R; ++j) {
          below[j] = load_pack(src[R] + p - j * W), above[j] = load_pack(src[R] + p + j * W);
          front[j] = load_pack(src[R - j] + p), back[j] = load_pack(src[R + j] + p);
        }
        Vec result;
        if constexpr (Wave) result = load_pack(older + p);
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const Real c = centre.v[v];
          Real minus[R + 1], plus[R + 1];
#pragma unroll
          for (int j = 1; j <= R; ++j) {
            minus[j] = v - j >= 0 ? centre.v[v - j] : left_x[j - v];
            plus[j] = v + j < V ? centre.v[v + j] : right_x[v + j - V + 1];
          }
          Real lap_value = lap.along(0, c, minus, plus);
#pragma unroll
          for (int j = 1; j <= R; ++j) minus[j] = below[j].v[v], plus[j] = above[j].v[v];
          lap_value = lap.add_axis(1, lap_value, lap.along(1, c, minus, plus));
#pragma unroll
          for (int j = 1; j <= R; ++j) minus[j] = front[j].v[v], plus[j] = back[j].v[v];
          lap_value = lap.add_axis(2, lap_value, lap.along(2, c, minus, plus));
          Real u;
          if constexpr (!Wave) u = up.heat(c, lap_value);
          else u = (start && t == 1) ? up.wave_start(c, result.v[v], lap_value) : up.wave(c, result.v[v], lap_value);
          if (z_face) u = z_value;
          else if (y_face) u = static_cast<Real>(ay.face[y == 0 ? 0 : 1].value);
          else if (x_face[v]) u = static_cast<Real>(ax.face[x + v == 0 ? 0 : 1].value);
          result.v[v] = u;
        }
        if (!last) {
          store_pack(dst + p, result);
        } else if (out_z && y >= wy0 && y < wy1) {
          const long q = out_plane + (y + geo.halo) * geo.stride[1];
          const Real* was = src[R] + p;  // the wave's new u^{n-1}: level steps-1 at plane z
          if (whole_x) {
            store_pack(out_cur + q, result);
            if constexpr (Wave) store_pack(out_prev + q, load_pack(was));
          } else {
#pragma unroll
            for (int v = 0; v < V; ++v) {
              if (x + v < wx0 || x + v >= wx1) continue;
              out_cur[q + v] = result.v[v];
              if constexpr (Wave) out_prev[q + v] = was[v];
            }
          }
        }
      }
    }
    wait_loads_but_newest();
    __syncthreads();

    // Ghosts of the planes levels 1..steps-1 made in this iteration, where a
    // physical face is within reach (the next level reads them).
    const bool near_x = (ax.ghosts[0] && x0 - KR < 0) || (ax.ghosts[1] && x0 + TX + KR > ax.n);
    const bool near_y = (ay.ghosts[0] && y0 - KR < 0) || (ay.ghosts[1] && y0 + TY + KR > ay.n);
    const bool near_z = (az.ghosts[0] && z0 - KR < R) || (az.ghosts[1] && z1 + KR > az.n - 1 - R);
    if (near_x || near_y || near_z) {
      const int nthreads = blockDim.x * blockDim.y;
      for (int t = 1; t < steps; ++t) {
        const int z = zl - t * L, left = (steps - t) * R;
        if (z < z0 - left || z >= z1 + left) continue;
        const int vx0 = x0 - left, vx1 = x0 + TX + left, vy0 = y0 - left, vy1 = y0 + TY + left;
        Real* u = plane(t, z);
        if (z >= az.core_lo && z < az.core_hi) {
          if (near_x) {
            const int first = max(vy0, ay.upd_lo), nrows = min(vy1, ay.upd_hi) - first;
            for (int k = tid; k < 2 * R * nrows; k += nthreads) {
              const int y = first + k / (2 * R), j = k % (2 * R), side = j / R;
              const int x = side == 0 ? j - R : ax.n + j - R, from = ax.face[side].source(x);
              if (ax.ghosts[side] && x >= vx0 && x < vx1 && from >= vx0 && from < vx1) u[at(x, y)] = ax.face[side].ghost(x, u[at(from, y)]);
            }
          }
          if (near_y) {
            const int first = max(vx0, ax.upd_lo), ncols = min(vx1, ax.upd_hi) - first;
            for (int k = tid; k < 2 * R * ncols; k += nthreads) {
              const int j = k / ncols, x = first + k % ncols, side = j / R;
              const int y = side == 0 ? j - R : ay.n + j - R, from = ay.face[side].source(y);
              if (ay.ghosts[side] && y >= vy0 && y < vy1 && from >= vy0 && from < vy1) u[at(x, y)] = ay.face[side].ghost(y, u[at(x, from)]);
            }
          }
        }
        // z ghost planes: -z from plane z (z = 1..r), and n-1+j from n-1-j when plane n-1+j comes up.
        int ghost = 0, from = 0, side = -1;
        if (az.ghosts[0] && z >= 1 && z <= R && -z >= z0 - left) ghost = -z, from = z, side = 0;
        if (az.ghosts[1] && z >= az.n && z < az.n + R) ghost = z, from = az.face[1].source(z), side = 1;
        if (side >= 0 && from >= z0 - left) {
          const Real* s = plane(t, from);
          Real* d = plane(t, ghost);
          const int first_x = max(vx0, ax.upd_lo), ncols = min(vx1, ax.upd_hi) - first_x;
          const int first_y = max(vy0, ay.upd_lo), nrows = min(vy1, ay.upd_hi) - first_y;
          for (int k = tid; k < ncols * nrows; k += nthreads) {
            const int x = first_x + k % ncols, y = first_y + k / ncols;
            d[at(x, y)] = az.face[side].ghost(ghost, s[at(x, y)]);
          }
        }
      }
      __syncthreads();
    }
  }
}

template <int D, int R, class Real, bool Wave>
constexpr auto kernel_for() {
  if constexpr (D == 2) return cluster_kernel_2d<R, Real, Wave>;
  else return cluster_kernel_3d<R, Real, Wave>;
}

int round_up(int n, int m) { return (n + m - 1) / m * m; }

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
  geo_.halo_left = round_up(KR, V);
  geo_.width = round_up(geo_.halo_left + q.tile_x + KR, V);
  if constexpr (D == 2) {
    if (q.cluster_x != 1 || q.cluster_y < 1 || q.cluster_y > 16 || q.k < 1 || q.tile_x < 2 * R || q.tile_y < 2 * R || !power_of_2)
      return reason = "invalid cluster plan (" + q.text() + "): 2D clusters are 1 x (1..16) blocks, k >= 1, tiles >= 2r, thread rows a power of 2",
             false;
    geo_.rows = q.tile_y + (q.cluster_y == 1 ? 2 * KR : KR + R);
    threads_x_ = round_up(geo_.width / V, 32);  // a pack per thread across the widest step region
    // Both levels, each with its pad.
    shared_bytes_ = 2 * sizeof(Real) * static_cast<std::size_t>(level_stride<Real>(geo_.width, geo_.rows));
  } else {
    if (q.blocks() != 1 || q.k < 1 || q.tile_x < 2 * R || q.tile_y < 2 * R || q.tile_z < 1 || !power_of_2)
      return reason = "invalid cluster plan (" + q.text() + "): 3D runs clusters of 1 block (no DSMEM yet), k >= 1, tiles >= 2r, "
                      "tile_z >= 1, warps a power of 2", false;
    geo_.rows = q.tile_y + 2 * KR;
    geo_.planes = 2 * R + 2 + (wave_ ? 1 : 0);  // ring depth: what the next level (and the wave's next-but-one) reads
    threads_x_ = 32;                            // blocks of threads_y warps, a pack column per thread
    if (32 * q.threads_y < geo_.width / V)
      return reason = "cluster plan (" + q.text() + "): fewer threads than packs in a row", false;
    const int slots = (wave_ ? 2 : 1) * (geo_.planes + 1) + (q.k - 1) * geo_.planes;  // as the kernel's rings
    shared_bytes_ = sizeof(Real) * static_cast<std::size_t>(slots) * level_stride<Real>(geo_.width, geo_.rows);
  }
  if (threads_x_ * q.threads_y > 512)
    return reason = "cluster plan (" + q.text() + ") needs " + std::to_string(threads_x_ * q.threads_y) + " threads a block (at most 512)", false;
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

  auto occupancy = [&](auto kernel) {
    HW_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes_)));
    if (q.blocks() > 8) HW_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchAttribute attribute[1];
    cudaLaunchConfig_t config = launch_config(attribute, 0, nullptr);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return clusters;
  };
  if (R == 1) active_clusters_ = wave_ ? occupancy(kernel_for<D, 1, Real, true>()) : occupancy(kernel_for<D, 1, Real, false>());
  else active_clusters_ = wave_ ? occupancy(kernel_for<D, 2, Real, true>()) : occupancy(kernel_for<D, 2, Real, false>());
  if (active_clusters_ <= 0)
    return reason = "cudaOccupancyMaxActiveClusters is 0 for the plan (" + q.text() + "): clusters of " +
                    std::to_string(q.blocks()) + " blocks with " + std::to_string(shared_bytes_ / 1024) + " KiB each cannot be co-scheduled",
           false;
  return true;
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
  const int cluster_rows = q.cluster_y * q.tile_y;
  cudaLaunchConfig_t config{};
  if constexpr (D == 2)
    config.gridDim = dim3((extent(0) + q.tile_x - 1) / q.tile_x, (extent(1) + cluster_rows - 1) / cluster_rows * q.cluster_y);
  else
    config.gridDim = dim3((extent(0) + q.tile_x - 1) / q.tile_x, (extent(1) + q.tile_y - 1) / q.tile_y,
                          (extent(2) + q.tile_z - 1) / q.tile_z);
  config.blockDim = dim3(threads_x_, q.threads_y);
  config.dynamicSmemBytes = shared_bytes_;
  config.stream = stream;
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = 1;
  attribute[0].val.clusterDim.y = q.cluster_y;
  attribute[0].val.clusterDim.z = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  return config;
}

template <int D, class Real>
void ClusterKernel<D, Real>::launch(const Real* cur, const Real* prev, Real* out_cur, Real* out_prev, int steps, int ahead,
                                    bool start, cudaStream_t stream) {
  cudaLaunchAttribute attribute[1];
  const cudaLaunchConfig_t config = launch_config(attribute, ahead, stream);
  if (radius_ == 1) {
    if (wave_) HW_CUDA(cudaLaunchKernelEx(&config, kernel_for<D, 1, Real, true>(), cur, prev, out_cur, out_prev, geo_, lap1_, update_, steps, start));
    else HW_CUDA(cudaLaunchKernelEx(&config, kernel_for<D, 1, Real, false>(), cur, prev, out_cur, out_prev, geo_, lap1_, update_, steps, start));
  } else {
    if (wave_) HW_CUDA(cudaLaunchKernelEx(&config, kernel_for<D, 2, Real, true>(), cur, prev, out_cur, out_prev, geo_, lap2_, update_, steps, start));
    else HW_CUDA(cudaLaunchKernelEx(&config, kernel_for<D, 2, Real, false>(), cur, prev, out_cur, out_prev, geo_, lap2_, update_, steps, start));
  }
  HW_CUDA(cudaGetLastError());
}

template class ClusterKernel<2, float>;
template class ClusterKernel<2, double>;
template class ClusterKernel<3, float>;
template class ClusterKernel<3, double>;

}  // namespace heatwave::cuda
