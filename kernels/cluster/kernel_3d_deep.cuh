// cuda-cluster, 3D: the deep family (issue 35). One persistent block an
// x-y tile for the whole z extent, k levels deep with no halo cone: each
// level computes its tile only, and its tile edges reach the neighbouring
// tiles through global memory at a grid-wide barrier every r planes. The
// stencil and update are the pipeline's (LaplacianWeights::start, then add
// in axis order; the equation's update): bitwise equal to the other backends.
// Device code: no host-only header (its kernel object: kernel_3d_deep_object.cuh).
#pragma once
#include <type_traits>
#include <utility>

#include "kernels/cluster/grid_barrier.cuh"
#include "kernels/cluster/kernel_3d_pipeline.cuh"

namespace heatwave::cuda {

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
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
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

// The deep family's kernels (kernel_args.cuh): the rings' kernel of the
// uniform form with sources or none and, at radius 1 in fp32, the register
// windows' kernels by level count; the media's form F (the heat's flux
// form, the waves' point form: the rings' kernel, with sources' code: a
// launch without them finds no lanes).
template <int R, class Real, class Eq>
DeepKernels3D<R, Real, Eq> deep_kernels_3d() {
  DeepKernels3D<R, Real, Eq> kernels{deep_kernel_3d<R, Real, Eq>, deep_kernel_3d<R, Real, Eq, 0, true>, {}};
  if constexpr (R == 1 && std::is_same_v<Real, float>)
    [&]<int... L>(std::integer_sequence<int, L...>) {
      ((kernels.windows[L + 2] = deep_kernel_3d<1, Real, Eq, L + 2>), ...);
    }(std::make_integer_sequence<int, deep_window_levels - 1>{});
  return kernels;
}
template <int R, class Real, class Eq, Form F>
DeepKernel3D<R, Real, Eq> deep_media_kernel_3d() {
  return deep_kernel_3d<R, Real, Eq, 0, true, F>;
}
// The uniform form's kernels of a radius, precision and equation, and a
// media form's, built in units of their own (kernels/cluster/units.cmake).
#define HEATWAVE_DEEP_3D(R, Real, Eq) template DeepKernels3D<R, Real, Eq> deep_kernels_3d<R, Real, Eq>();
#define HEATWAVE_DEEP_MEDIA_3D(R, Real, Eq, F) \
  template DeepKernel3D<R, Real, Eq> deep_media_kernel_3d<R, Real, Eq, F>();

}  // namespace heatwave::cuda
