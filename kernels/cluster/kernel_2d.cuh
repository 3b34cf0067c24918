// cuda-cluster, 2D. Temporal blocking over thread-block clusters, halos
// between the blocks of a cluster through distributed shared memory (DSMEM).
//
// A cluster of B blocks stacked along y owns a cluster tile; block `rank`
// owns tile_x x tile_y points of it. One launch advances `steps` (<= k) steps:
//   load   u^n (and u^{n-1} for two levels) over the tile plus steps*r on the
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
//   store  the tile (two levels: both), out of place.
// The stencil is LaplacianWeights::start, then add in axis order, and the update the
// equation's, as in the baseline kernel: results are bitwise equal to the cuda
// and host backends. Each thread walks down a strip of its pack column,
// keeping the 2r+1 packs along y in registers; x neighbours come from shared
// memory (conflict-free). The resident kernel is described at its section.
// Periodic axes (one rank spans them) are loaded with wrapped indices: a point
// past the face is computed exactly like the one it wraps to. Exchanged faces
// (MPI) are data like any other point: their halo is loaded, and the write-back
// reaches `ahead*r` into it so that the next launch of the chunk finds it valid.
// Device code: no host-only header (the kernel object: kernel_2d_object.cuh).
#pragma once
#include "kernels/cluster/grid_barrier.cuh"
#include "kernels/cluster/kernel_2d_forms.cuh"
#include "kernels/cluster/kernel_args.cuh"

namespace heatwave::cuda {

// Whether points [x, x + count) hold a Dirichlet face point of the axis.
__device__ __forceinline__ bool face_in_pack(const ClusterAxis& a, int x, int count) {
  for (int side = 0; side < 2; ++side) {
    const int f = a.face_point(side);
    if (f >= x && f < x + count && a.fixed(side, f)) return true;
  }
  return false;
}

// Copies global [x_lo, x_hi) of a row into shared memory at `shared` (which
// holds global x = xbase at index 0): 16-byte copies where the packs lie
// inside the directly addressable range and are aligned, points otherwise.
template <class Real>
__device__ __forceinline__ void load_row(Real* shared, const Real* global_row, const ClusterAxis& ax, int xbase,
                                         int x_lo, int x_hi, bool aligned, int tx, int bx) {
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
        if (x + v >= x_lo && x + v < x_hi && source_coordinate(ax, x + v, gx))
          load_async(shared + g * V + v, global_row + gx);
      }
    }
  }
}

// The two levels of a 2D block in dynamic shared memory, each after a pad:
// u^m and u^{m+1} (two levels: u^{m-1} until a step overwrites it).
template <class Real>
__device__ __forceinline__ void shared_levels_2d(const ClusterGeometry<2>& geo, Real*& u_now, Real*& u_next) {
  u_now = reinterpret_cast<Real*>(cluster_shared) + Pack<Real>::width;
  u_next = u_now + level_stride<Real>(geo.width, geo.rows);
}

// Loads global [lx0, lx1) x [ly0, ly1) of u^n into u_now (two levels: u^{n-1}
// into u_next, which the first step overwrites) and sets the Dirichlet face
// points of u_next to g: no step writes them.
// `Pairs` pair tiles (FluxTiles) are loaded alike into `pairs`.
template <class Real, int Levels, int Pairs = 0, class Tiles = FluxTiles<1, Real>>
__device__ __forceinline__ void load_tile_2d(Real* u_now, Real* u_next, const Real* u, const Real* u_prev,
                                             const ClusterGeometry<2>& geo, const SharedPlane& s, int lx0, int lx1,
                                             int ly0, int ly1, const Tiles& tiles = {}, Real* pairs = nullptr) {
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
    load_row(u_now + s.at(s.xbase, y), u + row, ax, s.xbase, lx0, lx1, aligned, tx, bx);
    if constexpr (Levels == 2)
      load_row(u_next + s.at(s.xbase, y), u_prev + row, ax, s.xbase, lx0, lx1, aligned, tx, bx);
#pragma unroll
    for (int i = 0; i < Pairs; ++i)
      load_row(pairs + i * geo.plane + s.at(s.xbase, y), tiles.global[i] + row, ax, s.xbase, lx0, lx1, aligned, tx, bx);
  }
  wait_loads();
  __syncthreads();
  for (int side = 0; side < 2; ++side) {
    const int fx = ax.face_point(side), fy = ay.face_point(side);
    if (ax.fixed(side, fx) && fx >= lx0 && fx < lx1)
      for (int y = ly0 + tid; y < ly1; y += nthreads) u_next[s.at(fx, y)] = static_cast<Real>(ax.face[side].value);
    if (ay.fixed(side, fy) && fy >= ly0 && fy < ly1)
      for (int x = lx0 + tid; x < lx1; x += nthreads) u_next[s.at(x, fy)] = static_cast<Real>(ay.face[side].value);
  }
  __syncthreads();
}

// One step's stencil from u_now into u_next over [cx0, cx1) x [cy0, cy1). A
// thread owns the pack of V points at shared column lx (threads span the row) and
// walks down a strip of rows with the 2r+1 packs along y in registers; packs
// that straddle the region's edge compute and store every point (the rest
// read neighbours nobody needs; no step reads them, ghosts are refilled
// before use). `whole`: the pack holds no Dirichlet x face point.
// Starting: the first step of an equation second order in time (a template
// parameter: no branch a row).
// Form::flux: the operator is the flux form over the pairs of `flux_table`
// (alpha constant or in layers: a row's points share theirs where the
// layers run along y). Form::flux_tiles (alpha from a file): over the pair
// planes at `pairs` (plane apart), y pairs kept in a register window like
// the column.
template <int R, class Real, class Eq, bool Starting, Form F>
__device__ __forceinline__ void stencil_rows_2d(const Real* u_now, Real* u_next, const SharedPlane& s, int lx,
                                                bool whole, int cx0, int cx1, int cy0, int cy1, int rows_log2,
                                                const ClusterGeometry<2>& geo, const LaplacianWeights<2, R, Real>& lap,
                                                const typename Eq::template Update<Real>& up,
                                                const PointUpdates<2, Real, Eq>& updates, const Real* pairs, int plane,
                                                const FluxTable<2, R, Real>& flux_table,
                                                const PipelineEvents2D<Real>& events, int m) {
  using Vec = Pack<Real>;
  using Update = typename Eq::template Update<Real>;
  constexpr bool Tiles = F == Form::flux_tiles;
  const ClusterAxis& ax = geo.axis[0];
  constexpr int V = Vec::width;
  const int W = s.W;
  const int per_thread = (cy1 - cy0 + static_cast<int>(blockDim.y) - 1) >> rows_log2;
  const int ya = cy0 + static_cast<int>(threadIdx.y) * per_thread, yb = min(ya + per_thread, cy1);
  if (ya >= yb || s.xbase + lx + V <= cx0 || s.xbase + lx >= cx1) return;
  const Real* a = u_now + (ya - s.ybase) * W + lx;
  Real* b = u_next + (ya - s.ybase) * W + lx;
  Vec column[2 * R + 1];  // the packs at y - R + j
#pragma unroll
  for (int j = 0; j < 2 * R; ++j) column[j] = load_pack(a + (j - R) * W);
  // Flux: pair plane a * R + j - 1 at this pack; y pairs of rows y - R + i in ky[j - 1][i].
  const Real* k = Tiles ? pairs + (a - u_now) : nullptr;
  Vec ky[R][R + 1];
  if constexpr (Tiles) {
#pragma unroll
    for (int j = 1; j <= R; ++j)
#pragma unroll
      for (int i = 0; i < R; ++i) ky[j - 1][i] = load_pack(k + (R + j - 1) * plane + (i - R) * W);
  }
  [[maybe_unused]] PointPack2D<Real, Eq> point;
  if constexpr (F == Form::point) point = PointPack2D<Real, Eq>(updates, ax, s, s.xbase + lx);
#pragma unroll(2 * R + 1)  // the window shifts by renaming registers
  for (int y = ya; y < yb; ++y, a += W, b += W, k += W) {
    column[2 * R] = load_pack(a + R * W);
    Real left_x[R + 1], right_x[R + 1];  // x neighbours past the pack's ends
#pragma unroll
    for (int m = 1; m <= R; ++m) left_x[m] = a[-m], right_x[m] = a[V - 1 + m];
    Vec kx[R];               // x pairs at the pack's points,
    Real kx_left[R][R + 1];  // and past its left end
    [[maybe_unused]] FluxLane<2, R, Real> row_pairs;  // from the table, layers along y: the row's
    if (F == Form::flux && flux_table.axis == 1) row_pairs = flux_table.lane(geo, {s.xbase + lx, y});
    if constexpr (Tiles) {
#pragma unroll
      for (int j = 1; j <= R; ++j) {
        kx[j - 1] = load_pack(k + (j - 1) * plane);
#pragma unroll
        for (int m = 1; m <= j; ++m) kx_left[j - 1][m] = k[(j - 1) * plane - m];
        ky[j - 1][R] = load_pack(k + (R + j - 1) * plane);
      }
    }
    Vec result;
    if constexpr (Eq::levels == 2) result = load_pack(b);  // u^{m-1}
    if constexpr (F == Form::point) point.start_row(updates, geo, y);
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const Real centre = column[R].v[v];
      const Update at = [&] {
        if constexpr (F == Form::point)
          return point.at(updates, geo, y, v);
        else
          return up;
      }();
      Real minus[R + 1], plus[R + 1];
      pack_x_neighbours<R>(column[R], left_x, right_x, v, minus, plus);
      Real lap_value;
      if constexpr (F == Form::flux) {
        // FluxPairs' order: axes, then j (add_pair_terms).
        using Pairs = FluxPairs<2, R, Real>;
        const FluxLane<2, R, Real> kk = flux_table.axis == 1 ? row_pairs : flux_table.lane(geo, {s.xbase + lx + v, y});
        lap_value = 0;
#pragma unroll
        for (int j = 1; j <= R; ++j)
          lap_value =
              Pairs::add_pair_terms(lap_value, centre, kk.plus[0][j - 1], plus[j], kk.minus[0][j - 1], minus[j]);
#pragma unroll
        for (int j = 1; j <= R; ++j)
          lap_value = Pairs::add_pair_terms(lap_value, centre, kk.plus[1][j - 1], column[R + j].v[v],
                                            kk.minus[1][j - 1], column[R - j].v[v]);
      } else if constexpr (Tiles) {
        // FluxPairs' order: axes, then j (add_pair_terms).
        using Pairs = FluxPairs<2, R, Real>;
        lap_value = 0;
#pragma unroll
        for (int j = 1; j <= R; ++j)
          lap_value = Pairs::add_pair_terms(lap_value, centre, kx[j - 1].v[v], plus[j],
                                            v - j >= 0 ? kx[j - 1].v[v - j] : kx_left[j - 1][j - v], minus[j]);
#pragma unroll
        for (int j = 1; j <= R; ++j)
          lap_value = Pairs::add_pair_terms(lap_value, centre, ky[j - 1][R].v[v], column[R + j].v[v],
                                            ky[j - 1][R - j].v[v], column[R - j].v[v]);
      } else {
        lap_value = lap.add(0, lap.start(centre), minus, plus);
#pragma unroll
        for (int j = 1; j <= R; ++j) minus[j] = column[R - j].v[v], plus[j] = column[R + j].v[v];
        lap_value = lap.add(1, lap_value, minus, plus);
      }
      if constexpr (Eq::levels == 1)
        result.v[v] = at.step(centre, centre, lap_value);
      else if constexpr (Starting)
        result.v[v] = at.start(centre, result.v[v], lap_value);
      else
        result.v[v] = at.step(centre, result.v[v], lap_value);
    }
    store_pack(b, result);
#pragma unroll
    for (int j = 0; j < 2 * R; ++j) column[j] = column[j + 1];
    if constexpr (Tiles) {
#pragma unroll
      for (int j = 0; j < R; ++j)
#pragma unroll
        for (int i = 0; i < R; ++i) ky[j][i] = ky[j][i + 1];
    }
  }
  // The sources at the pack's points in the strip (few threads have any: a
  // pass after the strip, in shared memory, keeps them out of the row loop).
  // Box by box (config order: each point's sources keep their order), row by row.
  if (events.eventful)
    for (unsigned lanes = source_lanes<2>(events.sources, geo, s.xbase + lx, 0); lanes; lanes &= lanes - 1)
      for (int y = ya; y < yb; ++y) {
        Real* pack = u_next + (y - s.ybase) * W + lx;
        store_pack(pack, add_source_box<2, Real, Eq, F>(load_pack(pack), __ffs(lanes) - 1, events.sources, geo,
                                                        s.xbase + lx, y, 0, m, Starting, up, updates));
      }
  // The whole-pack stores wrote over a Dirichlet face point of the pack: it
  // keeps g (a pass after the strip, not a branch a row).
  if (!whole) {
#pragma unroll
    for (int v = 0; v < V; ++v)
      for (int side = 0; side < 2; ++side)
        if (ax.fixed(side, s.xbase + lx + v))
          for (int y = ya; y < yb; ++y) u_next[(y - s.ybase) * W + lx + v] = static_cast<Real>(ax.face[side].value);
  }
}

// Sources and receivers: what the thread adds and records (PipelineEvents2D)
// at the step of the launch m (from 0).
template <int R, class Real, class Eq, Form F>
__device__ __forceinline__ void stencil_2d(const Real* u_now, Real* u_next, const SharedPlane& s, int lx, bool whole,
                                           int cx0, int cx1, int cy0, int cy1, int rows_log2,
                                           const ClusterGeometry<2>& geo, const LaplacianWeights<2, R, Real>& lap,
                                           const typename Eq::template Update<Real>& up,
                                           const PointUpdates<2, Real, Eq>& updates, bool starting, const Real* pairs,
                                           int plane, const FluxTable<2, R, Real>& flux_table,
                                           const PipelineEvents2D<Real>& events, int m) {
  if (Eq::levels == 2 && starting)
    stencil_rows_2d<R, Real, Eq, true, F>(u_now, u_next, s, lx, whole, cx0, cx1, cy0, cy1, rows_log2, geo, lap, up,
                                          updates, pairs, plane, flux_table, events, m);
  else
    stencil_rows_2d<R, Real, Eq, false, F>(u_now, u_next, s, lx, whole, cx0, cx1, cy0, cy1, rows_log2, geo, lap, up,
                                           updates, pairs, plane, flux_table, events, m);
}

// Writes [wx0, wx1) x [wy0, wy1) of u_now (two levels: and of u_next, its
// u^{n-1}) to global memory, packs where aligned.
template <class Real, int Levels>
__device__ __forceinline__ void store_tile_2d(const Real* u_now, const Real* u_next, Real* out_u, Real* out_u_prev,
                                              const ClusterGeometry<2>& geo, const SharedPlane& s, int wx0, int wx1,
                                              int wy0, int wy1) {
  constexpr int V = Pack<Real>::width;
  const bool aligned = (geo.lead + s.xbase) % V == 0;
  for (int y = wy0 + static_cast<int>(threadIdx.y); y < wy1; y += blockDim.y) {
    const long row = geo.lead + (y + geo.halo) * geo.stride[1];
    for (int g = (wx0 - s.xbase) / V + static_cast<int>(threadIdx.x); g * V < wx1 - s.xbase; g += blockDim.x) {
      const int x = s.xbase + g * V;
      if (aligned && x >= wx0 && x + V <= wx1) {
        store_pack(out_u + row + x, load_pack(u_now + s.at(x, y)));
        if constexpr (Levels == 2) store_pack(out_u_prev + row + x, load_pack(u_next + s.at(x, y)));
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) {
          if (x + v < wx0 || x + v >= wx1) continue;
          out_u[row + x + v] = u_now[s.at(x + v, y)];
          if constexpr (Levels == 2) out_u_prev[row + x + v] = u_next[s.at(x + v, y)];
        }
      }
    }
  }
}

template <int R, class Real, class Eq, Form F>
__global__ void __launch_bounds__(512)
    cluster_kernel_2d(const Real* __restrict__ u, const Real* __restrict__ u_prev, Real* __restrict__ out_u,
                      Real* __restrict__ out_u_prev, const ClusterGeometry<2> geo,
                      const LaplacianWeights<2, R, Real> lap, const typename Eq::template Update<Real> up,
                      const int steps, const bool start, const FluxTiles<R, Real> flux,
                      const FluxTable<2, R, Real> flux_table, const PointUpdates<2, Real, Eq> updates,
                      const ClusterSources<Real> sources, const ClusterSamples<Real> samples) {
  constexpr int V = Pack<Real>::width;
  constexpr int Pairs = F == Form::flux_tiles ? FluxTiles<R, Real>::count : 0;
  Cluster cluster;
  const int W = geo.width;
  Real *u_now, *u_next;
  shared_levels_2d(geo, u_now, u_next);
  Real* const pairs = shared_pairs_2d<Real>(geo);
  const ClusterAxis& ax = geo.axis[0];
  const ClusterAxis& ay = geo.axis[1];
  const int B = geo.plan.cluster_y, TX = geo.plan.tile_x, TY = geo.plan.tile_y, KR = geo.plan.k * R;
  const int rank = static_cast<int>(cluster.block_rank());  // cluster dims (1, B, 1): blockIdx.y % B
  const bool outer_lo = rank == 0, outer_hi = rank == B - 1;
  const int x0 = ax.out_lo + static_cast<int>(blockIdx.x) * TX;
  const int y0 = ay.out_lo + static_cast<int>(blockIdx.y) * TY;
  const SharedPlane s{W, x0 - geo.halo_left, y0 - (outer_lo ? KR : R)};
  const int xbase = s.xbase;
  const int tid = threadIdx.x + threadIdx.y * blockDim.x, nthreads = blockDim.x * blockDim.y;
  const int lx = threadIdx.x * V;                       // the thread's pack column in shared memory, every step
  const bool whole = !face_in_pack(ax, xbase + lx, V);  // no Dirichlet x face point in it
  const PipelineEvents2D<Real> events(sources, samples, geo, xbase + lx, x0, min(x0 + TX, ax.out_hi), y0,
                                      min(y0 + TY, ay.out_hi));

  // What step 1 reads (and the calm rows' updates).
  const int reach = steps * R;
  if constexpr (F == Form::point) make_calm_updates_2d(updates, geo, s);
  load_tile_2d<Real, Eq::levels, Pairs>(u_now, u_next, u, u_prev, geo, s, x0 - reach, x0 + TX + reach,
                                        y0 - (outer_lo ? reach : R), y0 + TY + (outer_hi ? reach : R), flux, pairs);

  for (int step = 1; step <= steps; ++step) {
    const int left = (steps - step) * R;  // how far past the tile the step computes, on outer sides
    if (step >= 2) {
      // Valid in u_now now: what the last step computed, plus r rows on shared sides.
      const int vx0 = x0 - left - R, vx1 = x0 + TX + left + R;
      const int vy0 = y0 - (outer_lo ? left + R : R), vy1 = y0 + TY + (outer_hi ? left + R : R);
      // (a) rows from the peers; ghost rows and columns are each block's own.
      if (B > 1) {
        const int cx0 = max(vx0, ax.core_lo), ncols = min(vx1, ax.core_hi) - cx0;
        for (int side = 0; side < 2; ++side) {
          if (side == 0 ? outer_lo : outer_hi) continue;
          const int peer = side == 0 ? rank - 1 : rank + 1;
          const Real* peer_u = cluster.map_shared_rank(u_now, peer);
          const int peer_ybase = (side == 0 ? y0 - TY : y0 + TY) - (peer == 0 ? KR : R);
          const int first = side == 0 ? y0 - R : y0 + TY;
          for (int i = tid; i < R * ncols; i += nthreads) {
            const int y = first + i / ncols, x = cx0 + i % ncols;
            if (y >= ay.core_lo && y < ay.core_hi) u_now[s.at(x, y)] = peer_u[(y - peer_ybase) * W + (x - xbase)];
          }
        }
        __syncthreads();
      }
      // (b) ghosts of physical faces.
      if (fill_ghosts_2d<R>(u_now, ax, ay, s, vx0, vx1, vy0, vy1)) __syncthreads();
    }
    // (c) the stencil over the step's region, less faces and ghosts.
    const int cx0 = max(x0 - left, ax.upd_lo), cx1 = min(x0 + TX + left, ax.upd_hi);
    const int cy0 = max(y0 - (outer_lo ? left : 0), ay.upd_lo), cy1 = min(y0 + TY + (outer_hi ? left : 0), ay.upd_hi);
    stencil_2d<R, Real, Eq, F>(u_now, u_next, s, lx, whole, cx0, cx1, cy0, cy1, geo.thread_rows_log2, geo, lap, up,
                               updates, Eq::levels == 2 && start && step == 1, pairs, geo.plane, flux_table, events,
                               step - 1);
    // (d) publish the new level; swap.
    if (B > 1)
      cluster.sync();
    else
      __syncthreads();
    Real* t = u_now;
    u_now = u_next;
    u_next = t;
    events.record(u_now, u_next, s, step);
    if (events.wait_after(step)) __syncthreads();
  }

  // The block's tile: updated points the launch owns.
  store_tile_2d<Real, Eq::levels>(u_now, u_next, out_u, out_u_prev, geo, s, max(max(x0, ax.out_lo), ax.upd_lo),
                                  min(min(x0 + TX, ax.out_hi), ax.upd_hi), max(max(y0, ay.out_lo), ay.upd_lo),
                                  min(min(y0 + TY, ay.out_hi), ay.upd_hi));
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

template <int R, class Real, class Eq, Form F>
__global__ void __launch_bounds__(512)
    resident_kernel_2d(const Real* __restrict__ u, const Real* __restrict__ u_prev, Real* __restrict__ out_u,
                       Real* __restrict__ out_u_prev, const ClusterGeometry<2> geo,
                       const LaplacianWeights<2, R, Real> lap, const typename Eq::template Update<Real> up,
                       const int steps, const bool start, Real* __restrict__ edges, const FluxTiles<R, Real> flux,
                       const FluxTable<2, R, Real> flux_table, const PointUpdates<2, Real, Eq> updates,
                       const ClusterSources<Real> sources, const ClusterSamples<Real> samples) {
  constexpr int V = Pack<Real>::width;
  constexpr int Pairs = F == Form::flux_tiles ? FluxTiles<R, Real>::count : 0;
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const int W = geo.width;
  Real *u_now, *u_next;
  shared_levels_2d(geo, u_now, u_next);
  Real* const pairs = shared_pairs_2d<Real>(geo);
  const ClusterAxis& ax = geo.axis[0];
  const ClusterAxis& ay = geo.axis[1];
  const int TX = geo.plan.tile_x, TY = geo.plan.tile_y;
  const int x0 = static_cast<int>(blockIdx.x) * TX, x1 = min(x0 + TX, ax.n);
  const int y0 = static_cast<int>(blockIdx.y) * TY, y1 = min(y0 + TY, ay.n);
  const SharedPlane s{W, x0 - geo.halo_left, y0 - R};
  const int tid = threadIdx.x + threadIdx.y * blockDim.x, nthreads = blockDim.x * blockDim.y;
  const int lx = threadIdx.x * V;
  const bool whole = !face_in_pack(ax, s.xbase + lx, V);
  const PipelineEvents2D<Real> events(sources, samples, geo, s.xbase + lx, x0, x1, y0, y1);
  const int cx0 = max(x0, ax.upd_lo), cx1 = min(x1, ax.upd_hi), cy0 = max(y0, ay.upd_lo), cy1 = min(y1, ay.upd_hi);

  // Edge j (< r) of `side` (0: x low, 1: x high, 2: y low, 3: y high) of a block, at a step parity.
  const int E = max(TX, TY), nbx = gridDim.x, nby = gridDim.y;
  auto edge = [&](int parity, int bx, int by, int side, int j) {
    return edges + ((((static_cast<long>(parity) * nby + by) * nbx + bx) * 4 + side) * R + j) * E;
  };
  // The neighbour block along an axis, or -1 past a physical face.
  auto neighbour = [&](int b, int nb, bool periodic, int dir) {
    return b + dir >= 0 && b + dir < nb ? b + dir : periodic ? (b + dir + nb) % nb : -1;
  };
  const int bx = blockIdx.x, by = blockIdx.y;
  const int west = neighbour(bx, nbx, ax.periodic, -1), east = neighbour(bx, nbx, ax.periodic, 1);
  const int south = neighbour(by, nby, ay.periodic, -1), north = neighbour(by, nby, ay.periodic, 1);
  const int rows = y1 - y0, cols = x1 - x0;

  if constexpr (F == Form::point) make_calm_updates_2d(updates, geo, s);
  load_tile_2d<Real, Eq::levels, Pairs>(u_now, u_next, u, u_prev, geo, s, x0 - R, x1 + R, y0 - R, y1 + R, flux, pairs);
  for (int step = 1; step <= steps; ++step) {
    stencil_2d<R, Real, Eq, F>(u_now, u_next, s, lx, whole, cx0, cx1, cy0, cy1, geo.thread_rows_log2, geo, lap, up,
                               updates, Eq::levels == 2 && start && step == 1, pairs, geo.plane, flux_table, events,
                               step - 1);
    __syncthreads();
    if (step < steps) {
      const int parity = step & 1;
      for (int i = tid; i < R * rows; i += nthreads) {
        const int j = i / rows, y = y0 + i % rows;
        edge(parity, bx, by, 0, j)[y - y0] = u_next[s.at(x0 + j, y)];
        edge(parity, bx, by, 1, j)[y - y0] = u_next[s.at(x1 - R + j, y)];
      }
      for (int i = tid; i < R * cols; i += nthreads) {
        const int j = i / cols, x = x0 + i % cols;
        edge(parity, bx, by, 2, j)[x - x0] = u_next[s.at(x, y0 + j)];
        edge(parity, bx, by, 3, j)[x - x0] = u_next[s.at(x, y1 - R + j)];
      }
      grid.sync();
      for (int i = tid; i < R * rows; i += nthreads) {
        const int j = i / rows, y = y0 + i % rows;
        if (west >= 0) u_next[s.at(x0 - R + j, y)] = edge(parity, west, by, 1, j)[y - y0];
        if (east >= 0) u_next[s.at(x1 + j, y)] = edge(parity, east, by, 0, j)[y - y0];
      }
      for (int i = tid; i < R * cols; i += nthreads) {
        const int j = i / cols, x = x0 + i % cols;
        if (south >= 0) u_next[s.at(x, y0 - R + j)] = edge(parity, bx, south, 3, j)[x - x0];
        if (north >= 0) u_next[s.at(x, y1 + j)] = edge(parity, bx, north, 2, j)[x - x0];
      }
      __syncthreads();
      if (fill_ghosts_2d<R>(u_next, ax, ay, s, x0 - R, x1 + R, y0 - R, y1 + R)) __syncthreads();
    }
    Real* t = u_now;
    u_now = u_next;
    u_next = t;
    events.record(u_now, u_next, s, step);
    if (events.wait_after(step)) __syncthreads();
  }
  store_tile_2d<Real, Eq::levels>(u_now, u_next, out_u, out_u_prev, geo, s, cx0, cx1, cy0, cy1);
}

// The 2D kernels of a form, streaming and resident (kernel_args.cuh).
template <int R, class Real, class Eq, Form F>
Kernels2D<R, Real, Eq> kernels_2d() {
  return {cluster_kernel_2d<R, Real, Eq, F>, resident_kernel_2d<R, Real, Eq, F>};
}
// A form's kernels of one radius, precision and equation, built in a unit
// of their own (kernels/cluster/units.cmake).
#define HEATWAVE_TILES_2D(R, Real, Eq, F) template Kernels2D<R, Real, Eq> kernels_2d<R, Real, Eq, F>();

}  // namespace heatwave::cuda
