// cuda-cluster, 3D: the deep family (issue 35). One persistent block an
// x-y tile for the whole z extent, k levels deep with no halo cone: each
// level computes its tile only, and its tile edges reach the neighbouring
// tiles through global memory at a grid-wide barrier every r planes. The
// stencil and update are the pipeline's (LaplacianWeights::start, then add
// in axis order; the equation's update): bitwise equal to the other backends.
#pragma once
#include <utility>

#include "io/errors.hpp"
#include "kernels/cluster/kernel_3d_pipeline.cuh"
#include "kernels/cluster/kernel_object.cuh"

namespace heatwave::cuda {

// A thread owns a pack of V points on deep_rows rows of its block's tile, at
// every level, for the whole sweep (the y neighbours inside its rows come
// from registers). One row and 512 threads, 16 warps an SM, ran 11-34%
// faster than two rows and 256 threads (H100, A/B in one call: heat fp32
// 512^3 at 64x32 k 6 192.9 against 173.3, 64x16 k 6 184.9 against 138.5).
inline constexpr int deep_rows = 1;
inline constexpr int deep_threads = 512;  // at most a block: 128 registers a thread, one block an SM
// Level-0 planes loaded ahead (cp.async): at 2, 6 KB an SM in flight left
// the H100's loads waiting on DRAM latency (k 1: 101 Gcells/s).
inline constexpr int deep_in_flight = 4;
inline constexpr int deep_items = 2;  // load and edge items a thread keeps the geometry of, in registers
// Launches of 2 to deep_window_levels levels at r 1 in fp32 keep each
// level's z window at the thread's pack in registers (deep_kernel_3d's
// Levels): a level then reads only its x and y neighbours from shared
// memory. A/B in one call (H100, 64x32): heat fp32 512^3 k 4 253.4 against
// 215.1, wave fp32 k 4 225.5 against 185.7. k 5's windows fit 128 registers
// only with the steady path (heat k 5 301.9 against k 6's 275.7 without
// windows); k 6's spill, and fp64 lost 2.6% at k 4.
inline constexpr int deep_window_levels = 5;
// Ring planes: level 0 (and u^{n-1}) the 2r+1 that level 1 reads and those
// in flight; levels 1..k-1 the 2r+1 that the next level reads.
__host__ __device__ constexpr int deep_level0_planes(int R) { return 2 * R + 1 + deep_in_flight; }
// The edge buffer (deep_kernel_3d's `edges`): a block's strips of one
// level's plane (4 sides, r deep, as long as the tile's longer side), and
// the levels it keeps them for; r planes a level, two sets by parity.
__host__ __device__ constexpr long deep_strip_values(int R, int tile_x, int tile_y) {
  return 4L * R * (tile_x > tile_y ? tile_x : tile_y);
}
__host__ __device__ inline int deep_strip_levels(int k) { return max(k - 1, 1); }

// The sweep. Level 0 is the input: its plane of iteration i (the tile and
// r around it, from global memory: wrapped, or the stored ghosts) lands
// deep_in_flight iterations after its copies were issued. Level t makes
// plane zl + i - t r in iteration i from level t-1's planes p-r..p+r at
// its own points (the thread's: made in this iteration and the 2r before)
// and level t-1's plane p around them (made r iterations ago, its edges
// from the neighbouring tiles since). Level k goes to global memory.
// Every r iterations each block writes the edges (r deep) of the planes its
// levels 1..k-1 made in the last r iterations to `edges`, the grid meets
// (grid.sync: a cooperative launch, every block resident), and each block
// reads its neighbours' edges into its rings' halos (two sets of `edges`,
// by parity: a fast block writes the next set while a slow one still
// reads). Physical faces: x-y ghosts from FaceRule at that exchange, z
// ghost planes mirrored as they are read; Dirichlet face points are g at
// every level.
// Levels: 0, k from `steps` and the columns from the rings in shared
// memory; else k, each level's column in registers. Sourced: the launch has
// sources to add (inlined in every kernel, their code cost 6-8% without
// any: H100, heat fp32 512^3, 64x32 k 4 and 6). F, as the pipeline's: the
// update `up` and the stencil's weights (uniform); each point's update
// (Form::point: the waves' media and absorbing faces, from the classes'
// table or the coefficient views); or the flux form over the pairs' K
// (Form::flux: the heat's varying alpha, from the layers' table or a file).
template <int R, class Real, class Eq, int Levels = 0, bool Sourced = false, Form F = Form::uniform>
__global__ void __launch_bounds__(deep_threads, 1)
    deep_kernel_3d(const Real* __restrict__ u, const Real* __restrict__ u_prev, Real* __restrict__ out_u,
                   Real* __restrict__ out_u_prev, const ClusterGeometry<3> geo, const LaplacianWeights<3, R, Real> lap,
                   const typename Eq::template Update<Real> up, const int steps, const bool start,
                   Real* __restrict__ edges, const ClusterSources<Real> sources,
                   const PointUpdates<3, Real, Eq> updates,
                   const UpdateClasses<typename Eq::template Update<Real>> classes,
                   const __grid_constant__ FluxPairs<3, R, Real> flux, const FluxTable<3, R, Real> flux_table) {
  static_assert(F == Form::uniform || (Levels == 0 && deep_rows == 1),
                "media: the rings' kernel, a thread one pack column");
  constexpr bool two_levels = Eq::levels == 2;
  using Vec = Pack<Real>;
  constexpr int V = Vec::width, NY = deep_rows, S = 2 * R + 1, S0 = deep_level0_planes(R);
  const int W = geo.width, PS = geo.plane, K = Levels > 0 ? Levels : steps;
  // Level t's column at the thread's pack (Levels > 0): its planes made 2r..0 iterations ago.
  static_assert(Levels == 0 || NY == 1, "a window is one row's");
  Vec window[Levels > 0 ? Levels : 1][2 * R + 1];
  auto push = [](Vec(&w)[2 * R + 1], const Vec& v) {
#pragma unroll
    for (int e = 0; e < 2 * R; ++e) w[e] = w[e + 1];
    w[2 * R] = v;
  };
  const ClusterAxis& ax = geo.axis[0];
  const ClusterAxis& ay = geo.axis[1];
  const ClusterAxis& az = geo.axis[2];
  const int TX = geo.plan.tile_x, TY = geo.plan.tile_y;
  const int nbx = static_cast<int>(gridDim.x), nby = static_cast<int>(gridDim.y);
  const int bx = static_cast<int>(blockIdx.x), by = static_cast<int>(blockIdx.y), block = bx + by * nbx;
  const int x0 = bx * TX, y0 = by * TY, x1 = min(x0 + TX, ax.n), y1 = min(y0 + TY, ay.n);
  // Shared memory: level 0's ring of S0 planes, u^{n-1}'s (two levels), then
  // S planes a level t >= 1 (planes (t-1)S .. tS-1 of `upper`).
  Real* const level0 = reinterpret_cast<Real*>(cluster_shared) + V;
  Real* const upper = level0 + (two_levels ? 2 : 1) * S0 * PS;
  const int xbase = x0 - geo.halo_left;
  const SharedPlane tile{W, xbase, y0 - R};
  const int tid = static_cast<int>(threadIdx.x + threadIdx.y * blockDim.x);
  const int nthreads = static_cast<int>(blockDim.x * blockDim.y);
  const int x = x0 + static_cast<int>(threadIdx.x) * V, y = y0 + static_cast<int>(threadIdx.y) * NY;
  const int own = tile.at(x, y);  // the thread's first pack in a shared plane
  [[maybe_unused]] PointColumn3D<Real, Eq> point;
  if constexpr (F == Form::point) point = PointColumn3D<Real, Eq>(classes, geo, x, y);

  // z: level 0's plane of iteration i is zl + i; level t's planes are
  // [z_lo(t), z_hi(t)): past a periodic or exchanged side, the cone of the
  // later levels' reach (wrapped, or in the neighbour rank's halo planes);
  // past a physical face, none (its ghosts mirrored).
  const bool cone_lo = az.periodic || az.exchanged[0], cone_hi = az.periodic || az.exchanged[1];
  const int zl = cone_lo ? -K * R : -R;
  auto z_lo = [&](int t) { return cone_lo ? -(K - t) * R : 0; };
  auto z_hi = [&](int t) { return cone_hi ? az.n + (K - t) * R : az.n; };
  const int loads = z_hi(1) + R - zl;           // level-0 planes
  const int iterations = az.n - zl + K * R;     // level k makes plane n-1 last
  const bool aligned = (geo.lead + xbase) % V == 0;  // shared packs are global packs

  // Level 0's plane j (iteration j's) into its ring slot: the packs over
  // [x0 - r, x1 + r) x [y0 - r, y1 + r). An item is a pack: its shared
  // offset and its offset in a global plane are the same for every plane,
  // so each thread keeps its first deep_items' (-1: none, or not loaded as
  // one 16-byte copy), and finds the others' again for each plane.
  const int pc0 = (geo.halo_left - R) / V, pc1 = (geo.halo_left + (x1 - x0) + R + V - 1) / V;
  const int load_cols = pc1 - pc0, load_items = load_cols * (y1 - y0 + 2 * R);
  auto load_item = [&](int e, int& to, long& from) {  // from -1: lane by lane
    const int row = e / load_cols, xx = xbase + (pc0 + e - row * load_cols) * V, yy = y0 - R + row;
    int gy;
    to = tile.at(xx, yy), from = -2;  // -2: nothing stored there
    if (!source_coordinate(ay, yy, gy)) return;
    const bool whole = aligned && xx >= (ax.periodic ? 0 : ax.load_lo) && xx + V <= (ax.periodic ? ax.n : ax.load_hi);
    from = whole ? geo.lead + (gy + geo.halo) * geo.stride[1] + xx : -1;
  };
  int load_to[deep_items];
  long load_from[deep_items];
#pragma unroll
  for (int m = 0; m < deep_items; ++m) {
    load_to[m] = 0, load_from[m] = -2;
    if (tid + m * nthreads < load_items) load_item(tid + m * nthreads, load_to[m], load_from[m]);
  }
  auto load_plane = [&](int j) {
    int gz;
    if (j < loads && source_coordinate(az, zl + j, gz)) {
      Real* const ring = level0 + (j % S0) * PS;
      const long plane_offset = (gz + geo.halo) * geo.stride[2];
      auto load = [&](int e, int to_offset, long from) {
        Real* const to = ring + to_offset;
        if (from >= 0) {
          load_async_pack(to, u + plane_offset + from);
          if constexpr (two_levels) load_async_pack(to + S0 * PS, u_prev + plane_offset + from);
          return;
        }
        if (from == -2) return;
        const int row = e / load_cols, xx = xbase + (pc0 + e - row * load_cols) * V;
        int gy;
        source_coordinate(ay, y0 - R + row, gy);
        const long offset = geo.lead + plane_offset + (gy + geo.halo) * geo.stride[1];
#pragma unroll
        for (int v = 0; v < V; ++v) {
          int gx;
          if (!source_coordinate(ax, xx + v, gx)) continue;
          load_async(to + v, u + offset + gx);
          if constexpr (two_levels) load_async(to + S0 * PS + v, u_prev + offset + gx);
        }
      };
#pragma unroll
      for (int m = 0; m < deep_items; ++m) load(tid + m * nthreads, load_to[m], load_from[m]);
      for (int e = tid + deep_items * nthreads; e < load_items; e += nthreads) {
        int to;
        long from;
        load_item(e, to, from);
        load(e, to, from);
      }
    }
    commit_loads();
  };

  // The exchange of iteration i (i a multiple of r): the planes levels
  // 1..k-1 made in iterations i-r..i-1. An edge point e of the tile: side
  // (x low, x high, y low, y high), depth c < r into the tile, a along the
  // side. Its geometry is the same for every plane and level: the point's
  // offset in a shared plane and in a strip, the halo point it fills, and
  // what from (the neighbour's strip, or a ghost from FaceRule).
  const int L = max(TX, TY), ex_levels = deep_strip_levels(geo.plan.k);
  const int ex_y = R * (y1 - y0), ex_x = R * (x1 - x0), ex_items = 2 * ex_y + 2 * ex_x;
  const long strip_size = deep_strip_values(R, TX, TY),
             level_strips = static_cast<long>(nbx) * nby * ex_levels * R * strip_size;
  struct EdgeItem {
    int own = 0, halo = 0;  // offsets in a shared plane: the tile point sent, the halo point filled
    int sent = 0;           // the tile point's offset in the block's strips of a plane
    long received = -1;     // the halo point's in the neighbour's strips (-1: a ghost)
    FaceRule::Layer<Real> ghost{};  // a ghost: from the point it mirrors, at `mirror` in a shared plane
    int mirror = 0;
  };
  auto edge_item = [&](int e) {
    int side, c, a;
    if (e < 2 * ex_y) {
      side = e / ex_y, e -= side * ex_y, c = e / (y1 - y0), a = e - c * (y1 - y0);
    } else {
      e -= 2 * ex_y;
      side = e / ex_x, e -= side * ex_x, c = e / (x1 - x0), a = e - c * (x1 - x0), side += 2;
    }
    const bool along_x = side < 2, high = side & 1;
    EdgeItem it;
    it.own = tile.at(side == 0 ? x0 + c : side == 1 ? x1 - R + c : x0 + a,
                     side == 2 ? y0 + c : side == 3 ? y1 - R + c : y0 + a);
    const int hx = along_x ? (high ? x1 + c : x0 - R + c) : x0 + a;
    const int hy = along_x ? y0 + a : (high ? y1 + c : y0 - R + c);
    it.halo = tile.at(hx, hy);
    it.sent = (side * R + c) * L + a;
    const ClusterAxis& axis = along_x ? ax : ay;
    const int n_blocks = along_x ? nbx : nby, at = along_x ? bx : by;
    int next = high ? at + 1 : at - 1;
    if (axis.periodic) next = (next + n_blocks) % n_blocks;
    if (next >= 0 && next < n_blocks) {
      const int nb = along_x ? next + by * nbx : bx + next * nbx;
      it.received = nb * static_cast<long>(ex_levels) * R * strip_size + ((side ^ 1) * R + c) * L + a;
    } else {
      const int h = along_x ? hx : hy;
      it.ghost = axis.face[high].template layer<Real>(h);
      const int source = static_cast<int>(it.ghost.source);  // within r of the face: in the tile
      it.mirror = along_x ? tile.at(source, hy) : tile.at(hx, source);
    }
    return it;
  };
  // The thread's first edge point, kept for the sweep (at r 1-2 the only
  // one: the work next to the grid barrier is on every block's critical path).
  const EdgeItem first_edge = tid < ex_items ? edge_item(tid) : EdgeItem{};
  auto edge_at = [&](int e) { return e == tid ? first_edge : edge_item(e); };
  cg::grid_group grid = cg::this_grid();
  auto exchange = [&](int i) {
    const int parity = (i / R) & 1;
    Real* const sets = edges + parity * level_strips;
    // Level t's plane made in iteration i - r + d (null: none).
    auto made = [&](int t, int d) -> Real* {
      const int j = i - R + d, q = zl + j - t * R;
      if (j < 0 || q < z_lo(t) || q >= z_hi(t)) return nullptr;
      return upper + ((t - 1) * S + j % S) * PS;
    };
    // (level, plane) pairs: their strips are R * strip_size apart by level, strip_size by plane.
    const int pairs = (K - 1) * R;
    const long own_strips = block * static_cast<long>(ex_levels) * R * strip_size;
    for (int e = tid; e < ex_items; e += nthreads) {
      const EdgeItem it = edge_at(e);
      for (int td = 0; td < pairs; ++td)
        if (const Real* plane = made(td / R + 1, td % R)) sets[own_strips + td * strip_size + it.sent] = plane[it.own];
    }
    grid.sync();  // orders the strips' stores before the neighbours' loads
    for (int e = tid; e < ex_items; e += nthreads) {
      const EdgeItem it = edge_at(e);
      // Several pairs at a time: their loads from L2 in flight together
      // (all of them up to k 9 at r 1).
      constexpr int batch = 8;
      for (int td0 = 0; td0 < pairs; td0 += batch) {
        Real value[batch];
        Real* plane[batch];
#pragma unroll
        for (int b = 0; b < batch; ++b) {
          const int td = td0 + b;
          plane[b] = td < pairs ? made(td / R + 1, td % R) : nullptr;
          if (!plane[b]) continue;
          value[b] = it.received >= 0 ? sets[it.received + td * strip_size] : it.ghost(plane[b][it.mirror]);
        }
#pragma unroll
        for (int b = 0; b < batch; ++b)
          if (plane[b]) plane[b][it.halo] = value[b];
      }
    }
    __syncthreads();
  };

  // Dirichlet face points: g at every level (z faces first, then y, then
  // x, as the ghosts are filled). The thread's lanes on an x or y face, a
  // bit each, and their values, fixed for the sweep (tested per lane and
  // level, they cost 104 instructions an update at k 1: ncu, H100).
  unsigned face_lanes = 0;
  Vec face_value[NY];
#pragma unroll
  for (int j = 0; j < NY; ++j)
#pragma unroll
    for (int v = 0; v < V; ++v) {
      // (No pointer to an axis: taking a kernel parameter's address copies it to local memory.)
      const int yy = y + j, xx = x + v;
      face_value[j].v[v] = 0;
      const bool on_y = ay.fixed(0, yy) || ay.fixed(1, yy), on_x = ax.fixed(0, xx) || ax.fixed(1, xx);
      if (!on_y && !on_x) continue;
      face_lanes |= 1u << (j * V + v);
      face_value[j].v[v] =
          static_cast<Real>(on_y ? ay.face[ay.fixed(0, yy) ? 0 : 1].value : ax.face[ax.fixed(0, xx) ? 0 : 1].value);
    }
  face_lanes = opaque(face_lanes);
  const bool dirichlet_z = az.ghosts[0] && az.face[0].type == BoundaryType::dirichlet;
  const bool dirichlet_z1 = az.ghosts[1] && az.face[1].type == BoundaryType::dirichlet;
  // The thread's first pack in level 0's ring slot 0 and in level 1's, as
  // shared addresses the compiler must keep (it would otherwise rework them
  // at every level).
  const Real* const mine0 = static_cast<Real*>(
      __cvta_shared_to_generic(opaque(static_cast<unsigned>(__cvta_generic_to_shared(level0 + own)))));
  Real* const mine = static_cast<Real*>(
      __cvta_shared_to_generic(opaque(static_cast<unsigned>(__cvta_generic_to_shared(upper + own)))));
  // An iteration's ring offsets: of the plane made m iterations ago (m <= 2r).
  int ago[S] = {}, ago0[S] = {};

  const bool straddles = x < x1 && x + V > x1;  // a pack across a partial tile's end
  // The sources' points in the thread's pack, found once for the sweep (found
  // at every level, the search ran a source case 2.5x slower: H100, heat fp32
  // 512^3, 64x32 k 6, 104.6 Gcells/s).
  const unsigned source_lanes_here = Sourced ? source_lanes<3>(sources, geo, x, y) : 0u;
  // Level t's plane of iteration i.
  // Steady (iterations [steady_lo, steady_hi)): every level's plane lies in
  // [r, n-1-r], so none is out of its range, mirrors a z ghost, is a z face
  // or is past the planes level k writes; the tests for those are left out.
  const int steady_lo = R - zl + K * R, steady_hi = az.n - zl;
  auto level = [&]<bool Steady>(int t, int i) {
    const int p = zl + i - t * R;
    if (!Steady && (p < z_lo(t) || p >= z_hi(t))) {
      if constexpr (Levels > 0)
        if (t < K) push(window[t], Vec{});  // a plane past the level's range: z ghosts are mirrored as read
      return;
    }
    // Level t-1's plane made m iterations ago (m <= 2r), at the thread's first pack.
    auto made = [&](int level, int m) -> const Real* {
      return level == 0 ? mine0 + ago0[m] : mine + (level - 1) * S * PS + ago[m];
    };
    // Level t-1's planes p-r..p+r (plane p-r+e made 2r-e iterations ago) at the thread's rows.
    Vec column[NY][S];
#pragma unroll
    for (int e = 0; e < S; ++e) {
      if constexpr (Levels > 0) {
        // A pack across a partial tile's end takes its lanes past the end
        // (its last valid lane's x neighbours) from the exchanged halo.
        column[0][e] = e == R && straddles ? load_pack(made(t - 1, R)) : window[t - 1][e];
      } else {
        const Real* c = made(t - 1, 2 * R - e);
#pragma unroll
        for (int j = 0; j < NY; ++j) column[j][e] = load_pack(c + j * W);
      }
    }
    if (!Steady && !az.periodic && t >= 2 && (p < R || p > az.n - 1 - R))
#pragma unroll
      for (int j = 0; j < NY; ++j) mirror_z_ghosts<R>(column[j], az, p);
    // The rows past the thread's at plane p, and each row's x neighbours.
    const Real* mid = made(t - 1, R);
    Vec lower[R], higher[R];
    Real left_x[NY][R + 1], right_x[NY][R + 1];
#pragma unroll
    for (int k = 0; k < R; ++k) lower[k] = load_pack(mid - (k + 1) * W), higher[k] = load_pack(mid + (NY + k) * W);
#pragma unroll
    for (int j = 0; j < NY; ++j)
#pragma unroll
      for (int k = 1; k <= R; ++k) left_x[j][k] = mid[j * W - k], right_x[j][k] = mid[j * W + V - 1 + k];
    // u^{m-1}: level t-2 at p (t = 1: the loaded u^{n-1}, its plane made r iterations ago).
    [[maybe_unused]] Vec before[NY];  // two levels only
    if constexpr (two_levels) {
      bool windowed = false;  // (if constexpr: without windows, the window is never written)
      if constexpr (Levels > 0)
        if (t >= 2) before[0] = window[t - 2][0], windowed = true;
      if (!windowed) {
        const Real* b = t == 1 ? made(0, R) + S0 * PS : made(t - 2, 2 * R);
#pragma unroll
        for (int j = 0; j < NY; ++j) before[j] = load_pack(b + j * W);
      }
    }
    Vec result[NY];
    // Form::point: the plane's updates at the thread's pack column.
    [[maybe_unused]] typename PointColumn3D<Real, Eq>::Plane point_plane;
    if constexpr (F == Form::point) point_plane = point.template plane<false>(updates, classes, geo, y, p);
#pragma unroll
    for (int j = 0; j < NY; ++j) {
      const Vec& centre_pack = column[j][R];
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const Real centre = centre_pack.v[v];
        const typename Eq::template Update<Real> at = [&] {
          if constexpr (F == Form::point)
            return point.template at<false>(updates, geo, point_plane, x, v);
          else
            return up;
        }();
        Real minus[R + 1], plus[R + 1];
        // Form::flux: the point's pair coefficients, its sum in FluxPairs' order (axes, then j).
        [[maybe_unused]] FluxLane<3, R, Real> pairs;
        if constexpr (F == Form::flux)
          pairs = flux_table.at ? flux_table.lane(geo, {x + v, y + j, p}) : flux_lane(flux, geo, {x + v, y + j, p});
        auto add_axis = [&](int a, Real sum) {
          if constexpr (F == Form::flux) {
#pragma unroll
            for (int k = 1; k <= R; ++k)
              sum = FluxPairs<3, R, Real>::add_pair_terms(sum, centre, pairs.plus[a][k - 1], plus[k],
                                                          pairs.minus[a][k - 1], minus[k]);
            return sum;
          } else {
            return lap.add(a, sum, minus, plus);
          }
        };
        pack_x_neighbours<R>(centre_pack, left_x[j], right_x[j], v, minus, plus);
        Real lap_value = add_axis(0, F == Form::flux ? Real(0) : lap.start(centre));
#pragma unroll
        for (int k = 1; k <= R; ++k) {
          minus[k] = j - k >= 0 ? column[j - k][R].v[v] : lower[k - j - 1].v[v];
          plus[k] = j + k < NY ? column[j + k][R].v[v] : higher[j + k - NY].v[v];
        }
        lap_value = add_axis(1, lap_value);
#pragma unroll
        for (int k = 1; k <= R; ++k) minus[k] = column[j][R - k].v[v], plus[k] = column[j][R + k].v[v];
        lap_value = add_axis(2, lap_value);
        if constexpr (two_levels)
          result[j].v[v] = start && t == 1 ? at.start(centre, before[j].v[v], lap_value)
                                           : at.step(centre, before[j].v[v], lap_value);
        else
          result[j].v[v] = at.step(centre, centre, lap_value);
      }
    }
    if constexpr (Sourced)
      if (source_lanes_here)
        result[0] = add_sources<3, Real, Eq, F>(result[0], source_lanes_here, sources, geo, x, y, p, t - 1,
                                                start && t == 1, up, updates);
    // Dirichlet face points keep g.
    if (!Steady && ((dirichlet_z && p == 0) || (dirichlet_z1 && p == az.n - 1))) {
      const Real g = static_cast<Real>(az.face[p == 0 ? 0 : 1].value);
#pragma unroll
      for (int j = 0; j < NY; ++j)
#pragma unroll
        for (int v = 0; v < V; ++v) result[j].v[v] = g;
    } else if (face_lanes) {
#pragma unroll
      for (int j = 0; j < NY; ++j)
#pragma unroll
        for (int v = 0; v < V; ++v)
          if (face_lanes >> (j * V + v) & 1) result[j].v[v] = face_value[j].v[v];
    }
    if (t < K) {
      Real* const to = mine + (t - 1) * S * PS + ago[0];
#pragma unroll
      for (int j = 0; j < NY; ++j) store_shared_pack(to + j * W, result[j]);
      if constexpr (Levels > 0) push(window[t], result[0]);
      return;
    }
    // Level k: the tile's updated points to global memory (two levels: and
    // level k-1 at p, the new u^{n-1}).
    if (!Steady && (p < az.upd_lo || p >= az.upd_hi)) return;
    const int wx0 = max(x0, ax.upd_lo), wx1 = min(x1, ax.upd_hi);
    const bool whole = aligned && x >= wx0 && x + V <= wx1;
#pragma unroll
    for (int j = 0; j < NY; ++j) {
      const int yy = y + j;
      if (yy >= y1 || yy < ay.upd_lo || yy >= ay.upd_hi) continue;
      const long out = geo.lead + x + (yy + geo.halo) * geo.stride[1] + (p + geo.halo) * geo.stride[2];
      if (whole) {
        store_pack(out_u + out, result[j]);
        if constexpr (two_levels) store_pack(out_u_prev + out, column[j][R]);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) {
          if (x + v < wx0 || x + v >= wx1) continue;
          out_u[out + v] = result[j].v[v];
          if constexpr (two_levels) out_u_prev[out + v] = column[j][R].v[v];
        }
      }
    }
  };

#pragma unroll
  for (int j = 0; j < deep_in_flight; ++j) load_plane(j);
  for (int i = 0; i < iterations; ++i) {
    wait_loads_but<deep_in_flight - 1>();  // plane i has landed
    __syncthreads();                       // it, and the planes made in the last iteration, are complete
    if (K > 1 && i % R == 0) exchange(i);
    load_plane(i + deep_in_flight);  // into the slot of plane i - 2r - 1, read last in the last iteration
    const int ring = i % S, ring0 = i % S0;
#pragma unroll
    for (int m = 0; m < S; ++m)
      ago[m] = (ring - m < 0 ? ring - m + S : ring - m) * PS,
      ago0[m] = (ring0 - m < 0 ? ring0 - m + S0 : ring0 - m) * PS;
    if constexpr (Levels > 0) push(window[0], load_pack(mine0 + ago0[0]));
    auto levels = [&]<bool Steady>() {
      if constexpr (Levels > 0) {
#pragma unroll
        for (int t = 1; t <= Levels; ++t) level.template operator()<Steady>(t, i);
      } else {
#pragma unroll 1
        for (int t = 1; t <= K; ++t) level.template operator()<Steady>(t, i);
      }
    };
    if (i >= steady_lo && i < steady_hi)
      levels.template operator()<true>();
    else
      levels.template operator()<false>();
  }
}

// The deep family's kernel of the media's form F (the heat's flux form or the
// waves' point form; the rings' kernel, with sources or none: a launch
// without them finds no lanes) at radius R: declared (`which`: extern) in
// the unit of the deep kernel object, built (`which` empty) in a unit of
// their own a form and radius pair (CMakeLists.txt generates both; with the
// object they took its unit to 41 s alone on the 2-core VM).
template <int R, class Real, class Eq>
using DeepKernel3D = void (*)(const Real*, const Real*, Real*, Real*, ClusterGeometry<3>, LaplacianWeights<3, R, Real>,
                              typename Eq::template Update<Real>, int, bool, Real*, ClusterSources<Real>,
                              PointUpdates<3, Real, Eq>, UpdateClasses<typename Eq::template Update<Real>>,
                              FluxPairs<3, R, Real>, FluxTable<3, R, Real>);
template <int R, class Real, class Eq, Form F>
DeepKernel3D<R, Real, Eq> deep_media_kernel_3d() {
  return deep_kernel_3d<R, Real, Eq, 0, true, F>;
}
#define HEATWAVE_CLUSTER_DEEP_MEDIA_3D(which, Real, Eq, F, R) \
  which template DeepKernel3D<R, Real, Eq> deep_media_kernel_3d<R, Real, Eq, Form::F>();

namespace {

// The kernel object of a deep plan: checks the plan against the case and
// the device (shared memory, every block resident at once) and launches
// the sweep cooperatively.
template <class Real, class Eq>
class DeepKernel3DObject final : public ClusterKernelBase<3, Real, Eq> {
  using Base = ClusterKernelBase<3, Real, Eq>;
  using Base::geo_, Base::shared_bytes_, Base::active_clusters_, Base::threads_x_, Base::threads_y_;

 public:
  bool configure(const Problem& problem, const LocalDomain<3>& domain, const ClusterPlan& q,
                 const ClusterMedia<3, Real>& media, std::string& reason) {
    if (!this->set_geometry(problem, domain, q, media, reason)) return false;
    const int R = problem.radius;
    constexpr int V = Pack<Real>::width;
    const std::string plan = "deep plan (" + q.text() + ")";
    if (q.k < 1 || q.k > max_levels_deep || q.tile_x < 2 * R || q.tile_y < 2 * R || q.tile_x % V != 0 ||
        q.tile_y % deep_rows != 0)
      return reason = "invalid " + plan + ": k from 1 to " + std::to_string(max_levels_deep) +
                      ", tiles >= 2r, tile_x a multiple of " + std::to_string(V) + " and tile_y of " +
                      std::to_string(deep_rows),
             false;
    // Ranks along z only: a launch computes the cone into the z halos (as on
    // a periodic axis) and writes the owned planes, one launch a halo
    // exchange (the halos at most k r deep; overlap does not split it).
    for (int a = 0; a < 2; ++a)
      if (domain.exchanged[a][0] || domain.exchanged[a][1])
        return reason = plan + " splits ranks along z only: this rank exchanges halos along " + "xy"[a], false;
    const ClusterAxis& az = geo_.axis[2];
    for (int side = 0; side < 2; ++side) {
      const int halo = side == 0 ? -az.load_lo : az.load_hi - az.n;
      if (domain.exchanged[2][side] && halo > q.k * R)
        return reason = plan + " runs a launch a halo exchange: halos of " + std::to_string(halo) +
                        " planes (parallel.exchange_every) are deeper than its k r = " + std::to_string(q.k * R),
               false;
    }
    // Each block's strips lie in its own tile: a last, partial tile is whole or more than r wide.
    for (int a = 0; a < 2; ++a) {
      const int n = geo_.axis[a].n, tile = a == 0 ? q.tile_x : q.tile_y;
      if (n % tile != 0 && n % tile <= R)
        return reason = plan + " leaves a last tile of " + std::to_string(n % tile) + " points along " + "xy"[a] +
                        " (at most r)",
               false;
    }
    geo_.halo_left = shared_halo_left(R, V);
    geo_.width = shared_width(R, q.tile_x, V);
    geo_.rows = q.tile_y + 2 * R;
    geo_.plane = level_stride<Real>(geo_.width, geo_.rows);
    threads_x_ = q.tile_x / V, threads_y_ = q.tile_y / deep_rows;
    if (threads_x_ * threads_y_ > deep_threads)
      return reason = plan + " needs " + std::to_string(threads_x_ * threads_y_) + " threads a block (at most " +
                      std::to_string(deep_threads) + ")",
             false;
    const int slots = Eq::levels * deep_level0_planes(R) + (q.k - 1) * (2 * R + 1);
    shared_bytes_ = sizeof(Real) * static_cast<std::size_t>(slots) * geo_.plane;
    if (!this->fits_device(reason)) return false;
    blocks_x_ = (geo_.axis[0].n + q.tile_x - 1) / q.tile_x, blocks_y_ = (geo_.axis[1].n + q.tile_y - 1) / q.tile_y;
    active_clusters_ = INT_MAX;  // the fewest of any kernel the plan's launches may run
    each_kernel(R, q.k,
                [&](auto kernel) { active_clusters_ = std::min(active_clusters_, this->resident_blocks(kernel)); });
    if (blocks_x_ * blocks_y_ > active_clusters_)
      return reason = plan + " needs its " + std::to_string(blocks_x_ * blocks_y_) +
                      " blocks resident at once, and " + std::to_string(active_clusters_) + " fit",
             false;
    edges_.allocate(static_cast<std::size_t>(2L * blocks_x_ * blocks_y_ * deep_strip_levels(q.k) * R *
                                             deep_strip_values(R, q.tile_x, q.tile_y)));
    if constexpr (has_point_form<Eq>)
      if (this->pointwise_) classes_.make(geo_, this->point_);
    return true;
  }

  bool records_samples() const override { return false; }

  // The kernels a plan's launches may run (launch's choice; a run's last launch may have fewer levels).
  template <class F>
  void each_kernel(int radius, int k, F&& f) const {
    if (this->flux_ || this->pointwise_) return with_radius(radius, [&]<int R>() { media_kernel<R>(f); });
    with_radius(radius, [&]<int R>() {
      f(deep_kernel_3d<R, Real, Eq>);
      if (this->source_count() > 0) f(deep_kernel_3d<R, Real, Eq, 0, true>);
    });
    if (radius == 1)
      each_window_kernel([&](auto kernel, int levels) {
        if (k >= levels) f(kernel);
      });
  }
  // The register-window kernels (r 1, fp32): f(kernel, its levels), 2 to deep_window_levels.
  template <class F>
  static void each_window_kernel(F&& f) {
    if constexpr (std::is_same_v<Real, float>) {
      auto each = [&]<int... L>(std::integer_sequence<int, L...>) {
        (f(deep_kernel_3d<1, Real, Eq, L + 2>, L + 2), ...);
      };
      each(std::make_integer_sequence<int, deep_window_levels - 1>{});
    }
  }

  void launch(const Real* u, const Real* u_prev, Real* out_u, Real* out_u_prev, int steps, const Box<3>& window,
              long step, const ClusterSamples<Real>& samples, cudaStream_t stream) override {
    for (int a = 0; a < 3; ++a)
      if (window.lo[a] != 0 || window.hi[a] != geo_.axis[a].n || samples.count > 0)
        throw Error(ExitCode::internal, "a deep plan writes the owned box and records no receivers");
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeCooperative;
    attribute[0].val.cooperative = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(blocks_x_, blocks_y_);
    config.blockDim = dim3(threads_x_, threads_y_);
    config.dynamicSmemBytes = shared_bytes_;
    config.stream = stream;
    config.attrs = attribute;
    config.numAttrs = 1;
    const bool start = Eq::levels == 2 && step == 0;
    const ClusterSources<Real> sources = this->sources(step, steps, stream);
    auto run = [&]<int R>(auto kernel, const LaplacianWeights<3, R, Real>& lap) {
      HW_CUDA(cudaLaunchKernelEx(&config, kernel, u, u_prev, out_u, out_u_prev, geo_, lap, this->update_, steps, start,
                                 edges_.get(), sources, this->point_, classes_.view(), this->template flux<R>(),
                                 this->template flux_table<R>()));
      HW_CUDA(cudaGetLastError());
    };
    if (this->flux_ || this->pointwise_)
      return with_radius(this->radius_,
                         [&]<int R>() { media_kernel<R>([&](auto kernel) { run(kernel, this->template lap<R>()); }); });
    if (sources.count > 0) {
      with_radius(this->radius_, [&]<int R>() { run(deep_kernel_3d<R, Real, Eq, 0, true>, this->template lap<R>()); });
      return;
    }
    bool windowed = false;
    if (this->radius_ == 1)
      each_window_kernel([&](auto kernel, int levels) {
        if (steps == levels) run(kernel, this->template lap<1>()), windowed = true;
      });
    if (windowed) return;
    with_radius(this->radius_, [&]<int R>() { run(deep_kernel_3d<R, Real, Eq>, this->template lap<R>()); });
  }

 private:
  // f(the media's one kernel a radius, deep_media_kernel_3d).
  template <int R, class Fn>
  void media_kernel(Fn&& f) const {
    if constexpr (Eq::flux_coefficient != nullptr)
      if (this->flux_) return f(deep_media_kernel_3d<R, Real, Eq, Form::flux>());
    if constexpr (has_point_form<Eq>)
      if (this->pointwise_) f(deep_media_kernel_3d<R, Real, Eq, Form::point>());
  }

  int blocks_x_ = 0, blocks_y_ = 0;
  DeviceBuffer<Real> edges_;  // the tiles' edge strips (deep_kernel_3d)
  UpdateClassTable<3, Real, Eq> classes_;  // Form::point
};

}  // namespace

// The kernel object of a deep plan (null, with `reason`, where it cannot
// run): declared (`which`: extern) in the unit of the pipeline's kernel
// objects, built with its kernels (`which` empty) in a unit of their own
// (CMakeLists.txt generates both; in the objects' unit they took it past a
// minute on CI's two cores).
template <class Real, class Eq>
std::unique_ptr<ClusterKernel<3, Real>> make_deep_kernel_3d(const Problem& problem, const LocalDomain<3>& domain,
                                                            const ClusterPlan& plan, const ClusterMedia<3, Real>& media,
                                                            std::string& reason) {
  return configured<DeepKernel3DObject<Real, Eq>>(problem, domain, plan, media, reason);
}
#define HEATWAVE_CLUSTER_DEEP_3D(which, Real, Eq)                                       \
  which template std::unique_ptr<ClusterKernel<3, Real>> make_deep_kernel_3d<Real, Eq>( \
      const Problem&, const LocalDomain<3>&, const ClusterPlan&, const ClusterMedia<3, Real>&, std::string&);

}  // namespace heatwave::cuda
