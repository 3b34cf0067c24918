// cuda-cluster, 3D: the deep family (issue 71). One persistent block of 256
// threads an x-y tile for the whole z extent, k levels deep with no halo
// cone: each level computes its tile only, its tile edges reach the
// neighbouring tiles through global memory at a grid barrier every plane.
// Built so that nothing but arithmetic runs a level:
// - Level t trails level t-1 by r+1 planes, so it reads only planes made in
//   earlier iterations: the k levels of a plane are independent (no chain
//   of k latencies a plane; 8 warps hide them).
// - A thread makes P points a level, a y column (fp32 8, fp64 4): 6 of 8
//   y neighbours come from registers.
// - The tile, the rows, the ring slots and k are compile-time (the steady
//   loop unrolled over the rings' period): every shared address is the
//   thread's base plus an immediate. The general iterations (the sweep's
//   ends, events) are one body, compiled once: instruction fetch, not
//   arithmetic, bounds them.
// - Each level's planes z-r..z at the thread's points are a register queue
//   (z+1..z+r from shared): no register moves.
// - A level's results are held across one barrier and stored over the slot
//   just consumed: r+1 shared planes a level.
// - Edges: once the results are stored, the tile's edge values copied to
//   global memory along the strips from a per-launch list (coalesced, no
//   per-thread edge roles: stored from registers, every warp paid for the
//   lanes on a tile edge), then a flag released. No grid barrier: a block
//   waits for its neighbours' flags only an iteration later, after its
//   levels, then copies their edges asynchronously into the rings' halos,
//   waited before the iteration's last block barrier, which publishes them.
// - Point (the waves' c and gamma: layers, absorbing faces): a point's
//   update from the table by axis classes (update_classes.cuh), its entry
//   the thread's x class and its row's y class (for the sweep) and the
//   plane's z class (a level).
// - Sources and receivers: the iterations in which a level makes one of
//   their planes take the general path (a block's window), where a thread
//   whose column holds them adds them at the level their step makes, and
//   records the receivers as their level is made; the steady loop is the
//   plain kernel's.
// The stencil and update are the other backends' (LaplacianWeights::start,
// then add in axis order; the equation's update): bitwise equal to them.
// Device code: no host-only header (its kernel object: kernel_3d_deep_object.cuh).
#pragma once
#include <type_traits>
#include <utility>

#include "kernels/cluster/common.cuh"
#include "kernels/cluster/grid_barrier.cuh"
#include "kernels/cluster/kernel_args.cuh"

namespace heatwave::cuda {

// A physical face's ghost rule at distance d = 1..r past the face
// (FaceRule::Layer, made once a launch for the halos: making it takes doubles).
template <class Real>
struct DeepGhost {
  Real value, sign, shift;
  int source;  // the point it mirrors, on its axis
  bool fixed;
  __device__ Real operator()(Real v) const { return fixed ? value : sign * v + shift; }
};

// c on a periodic axis of n points, for c in [-n, 2n).
__device__ __forceinline__ int deep_wrap(int c, int n) { return c < 0 ? c + n : c >= n ? c - n : c; }

// Where an axis' tile b of T points starts: b T, the last moved back to end
// at the axis' end (n >= T). It then overlaps its neighbour, whose points
// both compute from the same values, bitwise alike: every tile is whole, so
// no thread lies past the grid.
__device__ __forceinline__ int deep_tile_start(int b, int n, int T) { return min(b * T, n - T); }

// The sweep of K levels (K: the shape's k, or 1 for a launch's remainder).
// Iteration i: level 0's plane of iteration i is z = zl + i (its copies
// issued at the start of iteration i - 1, cp.async, first read in iteration
// i + 1); level t makes z = zl + i - t(r+1)
// from level t-1's planes z-r..z+r (made in iterations i-(r+1)-r .. i-1)
// and, two levels, level t-2's at z. Level K goes to global memory.
// Ring slots: a level t >= 1 plane made in iteration m lies in slot m % (r+1)
// of its level's ring (a constant: the loop unrolled over r+1 iterations);
// level 0's in slot m % (2r+2) (r+1 read, two in flight). Register
// queues: q[t][m % (r+1)] holds level t's plane of iteration m at the
// thread's points, for the r+1 iterations m before the plane level t+1
// reads as its centre.
// z: level t's planes are [z_lo(t), z_hi(t)): past a periodic or exchanged
// side, the cone of the later levels' reach (wrapped, or in the neighbour
// rank's halo planes); past a physical face, none (its ghosts mirrored as
// they are read; level 0's stored). Steady iterations (every level's plane
// in [r, n-1-r]) leave out the tests for the faces.
template <int R, class Real, class Eq, int TX, int TY, int K, bool Point, bool Events>
__global__ void __launch_bounds__(deep_threads, 1)
    deep_kernel_3d(const Real* __restrict__ u, const Real* __restrict__ u_prev, Real* __restrict__ out_u,
                   Real* __restrict__ out_u_prev, const ClusterGeometry<3> geo, const LaplacianWeights<3, R, Real> lap,
                   const typename Eq::template Update<Real> up, int /* steps: K */, const bool start,
                   Real* __restrict__ edges, const ClusterSources<Real> sources, const ClusterSamples<Real> samples,
                   const UpdateClasses<typename Eq::template Update<Real>> classes) {
  using Update = typename Eq::template Update<Real>;
  constexpr bool two_levels = Eq::levels == 2;
  constexpr int P = deep_points(TX, TY), W = TX + 2 * R, PS = deep_plane(R, TX, TY), S = R + 1, S0 = 2 * S;
  constexpr int SV = deep_edge_values(R, TX, TY), KE = K > 1 ? K - 1 : 1;  // levels with edges (1..K-1)
  static_assert(deep_threads % TX == 0 && deep_threads / TX * P == TY && P >= R, "a thread a column of P >= r rows");
  static_assert(PS * sizeof(Real) % 8 == 0, "the lists after the rings 8-byte aligned");
  // The heat's load loop and edge-list addresses (fewer instructions; H100:
  // fp32 +8-10% on top of keep_face_slots, fp64 +1.5-3.5%). The waves keep
  // the earlier forms, which measured 4.6% faster for the wave fp32 though
  // longer (docs/performance.md).
  constexpr bool lean_lists = !two_levels;

  const ClusterAxis& ax = geo.axis[0];
  const ClusterAxis& ay = geo.axis[1];
  const ClusterAxis& az = geo.axis[2];
  const int nbx = static_cast<int>(gridDim.x), nby = static_cast<int>(gridDim.y);
  const int bx = static_cast<int>(blockIdx.x), by = static_cast<int>(blockIdx.y), block = bx + by * nbx;
  const int x0 = deep_tile_start(bx, ax.n, TX), y0 = deep_tile_start(by, ay.n, TY);
  const int tid = static_cast<int>(threadIdx.x), tx = tid % TX, ty = tid / TX * P;
  const int x = x0 + tx;
  // Shared memory: level 0's ring of S0 planes, u^{n-1}'s (two levels),
  // then S planes a level t = 1..K-1. A plane: rows -r..TY+r-1 of W points,
  // tile column c at c + r.
  Real* const ring0 = reinterpret_cast<Real*>(cluster_shared);
  Real* const rings = ring0 + (two_levels ? 2 : 1) * S0 * PS;
  const int own = (ty + R) * W + tx + R;  // the thread's first point in a plane
  Real* const mine0 = ring0 + own;
  Real* const mine = rings + own;
  auto level_plane = [&](int t, int slot) { return mine + ((t - 1) * S + slot) * PS; };

  const bool cone_lo = az.periodic || az.exchanged[0], cone_hi = az.periodic || az.exchanged[1];
  const int zl = cone_lo ? -K * R : -R;
  auto z_lo = [&](int t) { return cone_lo ? -(K - t) * R : 0; };
  auto z_hi = [&](int t) { return cone_hi ? az.n + (K - t) * R : az.n; };
  const int loads = z_hi(1) + R - zl;             // level-0 planes
  const int iterations = z_hi(K) - zl + K * S;    // level K makes its last plane in the last
  const int steady_lo = R - zl + K * S, steady_hi = az.n - R - zl + S;  // [lo, hi): every level's plane in [r, n-1-r]

  // Level 0's plane j into its ring slot (and u^{n-1}'s): the tile and r
  // around it, wrapped or from the stored ghosts. Warp w copies rows w,
  // w + 8, ... of the plane, its lanes along the row: without a periodic x
  // or y axis, a pointer walked a row and immediates (the thread's row 0 of
  // plane 0 at `first`).
  constexpr int warps = deep_threads / 32, rows0 = TY + 2 * R, chunks = (W + 31) / 32;
  const int warp = tid / 32, lane = tid % 32;
  const bool wraps = ax.periodic || ay.periodic;
  const long first = geo.lead + (x0 - R + lane) + (y0 - R + warp + geo.halo) * geo.stride[1];
  const long row_step = warps * geo.stride[1];
  auto load_plane = [&](int j) {
    int gz;
    if (j < loads && source_coordinate(az, zl + j, gz)) {
      Real* const to = ring0 + (j % S0) * PS + lane;
      const long plane = (gz + geo.halo) * geo.stride[2];
      if (!wraps) {
        const Real* from = u + first + plane;
        [[maybe_unused]] const Real* from_prev = u_prev + first + plane;
#pragma unroll
        for (int k = 0; k < (rows0 + warps - 1) / warps; ++k, from += row_step) {
          const int row = warp + k * warps;
          if ((lean_lists ? (k + 1) * warps > rows0 : rows0 % warps != 0) && row >= rows0)
            continue;  // (lean: a test in the last row only)
#pragma unroll
          for (int c = 0; c < chunks; ++c) {
            if (W % 32 != 0 && c == chunks - 1 && lane + 32 * c >= W) continue;
            load_async(to + row * W + 32 * c, from + 32 * c);
            if constexpr (two_levels) load_async(to + S0 * PS + row * W + 32 * c, from_prev + 32 * c);
          }
          if constexpr (two_levels) from_prev += row_step;
        }
      } else {
        for (int row = warp; row < rows0; row += warps) {
          const int gy = ay.periodic ? deep_wrap(y0 - R + row, ay.n) : y0 - R + row;
          const long from = geo.lead + plane + (gy + geo.halo) * geo.stride[1];
          for (int col = lane; col < W; col += 32) {
            const long at = from + (ax.periodic ? deep_wrap(x0 - R + col, ax.n) : x0 - R + col);
            load_async(to - lane + row * W + col, u + at);
            if constexpr (two_levels) load_async(to - lane + S0 * PS + row * W + col, u_prev + at);
          }
        }
      }
    }
    commit_loads();
  };

  // Edge strips: a level's plane's four, r deep, [side][depth][along]: x low
  // (the low neighbour's x-high halo), x high, y low, y high; a block's k-1
  // levels' strips together, the blocks' in a set, two sets by iteration
  // parity (a block may write the next iteration's before a slower one has
  // read this one's).
  constexpr int side_x = R * TY, side_y = R * TX;
  auto strip_offset = [](int side, int c, int a) {
    return side < 2 ? side * side_x + c * TY + a : 2 * side_x + (side - 2) * side_y + c * TX + a;
  };
  // A neighbour along an axis (-1: a physical face), and the first of the r
  // lines (tile coordinates) this tile sends it: those past the low
  // neighbour's end, those before the high neighbour's start.
  auto neighbour = [](const ClusterAxis& a, int b, int nb, bool high) {
    const int next = high ? b + 1 : b - 1;
    return a.periodic ? (next + nb) % nb : next >= 0 && next < nb ? next : -1;
  };
  auto sent_from = [&](const ClusterAxis& a, int b, int nb, int T, int start, bool high) {
    const int n = neighbour(a, b, nb, high);
    if (n < 0) return -2 * T;  // no line matches
    const int s = deep_tile_start(n, a.n, T);
    return high ? (s <= start ? s + a.n : s) - R - start : (s >= start ? s - a.n : s) + T - start;  // wrapped (or itself)
  };
  const int send_x_lo = sent_from(ax, bx, nbx, TX, x0, false), send_x_hi = sent_from(ax, bx, nbx, TX, x0, true);
  const int send_y_lo = sent_from(ay, by, nby, TY, y0, false), send_y_hi = sent_from(ay, by, nby, TY, y0, true);
  // Dirichlet face points: g at every level (y faces first, as the ghosts
  // are filled): the thread's rows on a face, a bit each, and their values
  // (a y face's rows, else the thread's x face's).
  unsigned face_rows = 0, face_rows_y = 0, written_rows = 0;
#pragma unroll
  for (int j = 0; j < P; ++j) {
    const int yy = y0 + ty + j;
    if (ay.fixed(0, yy) || ay.fixed(1, yy)) face_rows_y |= 1u << j;
    if (ay.fixed(0, yy) || ay.fixed(1, yy) || ax.fixed(0, x) || ax.fixed(1, x)) face_rows |= 1u << j;
    if (yy >= ay.upd_lo && yy < ay.upd_hi && x >= ax.upd_lo && x < ax.upd_hi) written_rows |= 1u << j;
  }
  // Steady iterations may store no face point in place: its slots
  // keep the g the general iterations stored (each slot is rewritten by a
  // general iteration after the z faces' planes, whose g differs). No
  // select a level: a predicate for row 0, one for the middle rows (an x
  // face) and one for row P-1 (a thread's rows touch a y face there only).
  // The fp32 heat only (H100: +10-15%; the fp64 heat spilled at its
  // register cap and lost 8%, the waves lost 3%: docs/performance.md).
  constexpr bool keep_face_slots = !two_levels && sizeof(Real) == 4;
  const bool store_first = !(face_rows & 1u), store_last = !(face_rows >> (P - 1) & 1u);
  const bool store_middle = !(ax.fixed(0, x) || ax.fixed(1, x));
  const Real face_x = static_cast<Real>(ax.face[ax.fixed(0, x) ? 0 : 1].value);
  const Real face_y = static_cast<Real>(ay.face[ay.fixed(0, y0 + ty) ? 0 : 1].value);  // a thread's rows touch one y face
  const bool dirichlet_z0 = az.ghosts[0] && az.face[0].type == BoundaryType::dirichlet;
  const bool dirichlet_z1 = az.ghosts[1] && az.face[1].type == BoundaryType::dirichlet;
  const long out0 = geo.lead + x + (y0 + ty + geo.halo) * geo.stride[1];
  // Point: each row's entry in the classes' table but for the plane's z
  // class (the maps reach k r past the stored points: the table is made
  // with that pad).
  [[maybe_unused]] int row_entry[Point ? P : 1];
  if constexpr (Point) {
    const int x_class = classes.x_class[x - classes.lo[0]];
#pragma unroll
    for (int j = 0; j < P; ++j) row_entry[j] = classes.y_offset[y0 + ty + j - classes.lo[1]] + x_class;
  }
  // Events: the source boxes over the thread's column (x and one of its
  // rows), a bit each; its rows with a receiver at x that the block owns
  // (tiles overlap where the last is moved back: the lower tile owns); and
  // the planes [events_lo, events_hi] these lie on. (The masks wait in
  // shared memory for the general path: the steady loop holds no register
  // of theirs.)
  const int column_x = wrapped_coordinate(ax, x);
  unsigned source_boxes = 0, sample_rows = 0;
  int events_lo = INT_MAX, events_hi = INT_MIN;
  for (int e = 0; e < (Events ? sources.count : 0); ++e) {
    const SourceBox box = sources.boxes[e];
    bool rows = false;
#pragma unroll
    for (int j = 0; j < P; ++j) rows = rows || box.holds(1, wrapped_coordinate(ay, y0 + ty + j));
    if (box.holds(0, column_x) && rows)
      source_boxes |= 1u << e, events_lo = min(events_lo, box.lo[2]), events_hi = max(events_hi, box.hi[2] - 1);
  }
  int points_begin = 0, points_end = 0;  // the sorted receiver points of the thread's rows
  if (Events && samples.count > 0 && x >= bx * TX) {
    int unused;
    sample_range<3>(samples.points, samples.count, y0 + ty, INT_MIN, INT_MIN + 1, points_begin, unused);
    sample_range<3>(samples.points, samples.count, y0 + ty + P - 1, INT_MAX - 1, INT_MAX, unused, points_end);
  }
  if (Events && samples.count > 0 && x >= bx * TX)
#pragma unroll
    for (int j = 0; j < P; ++j) {
      const int yy = y0 + ty + j;
      int begin, end;
      if (yy >= by * TY) sample_range<3>(samples.points, samples.count, yy, x, x + 1, begin, end);
      else begin = end = 0;
      for (int k = begin; k < end; ++k) {
        const int z = samples.points[k].i[2];
        sample_rows |= 1u << j, events_lo = min(events_lo, z), events_hi = max(events_hi, z);
      }
    }
  // The physical x and y faces' ghost rules, [axis][side][d-1], for the halos.
  __shared__ DeepGhost<Real> ghosts[2][2][R];
  __shared__ int events_window[Events ? 2 : 1];  // the block's events planes (INT_MAX, INT_MIN: none)
  __shared__ unsigned events_masks[Events ? 2 : 1][Events ? deep_threads : 1];  // the threads' source_boxes, sample_rows
  __shared__ int events_points[Events ? 2 : 1][Events ? deep_threads : 1];    // and points_begin, points_end
  if constexpr (Events) {
    events_masks[0][tid] = source_boxes, events_masks[1][tid] = sample_rows;
    events_points[0][tid] = points_begin, events_points[Events][tid] = points_end;
    if (tid == 0) events_window[0] = INT_MAX, events_window[1] = INT_MIN;
    __syncthreads();
    if (events_lo <= events_hi) atomicMin(&events_window[0], events_lo), atomicMax(&events_window[1], events_hi);
  }
  if (tid < 4 * R) {
    const int a = tid / (2 * R), side = tid / R % 2, d = tid % R + 1;
    const ClusterAxis& axis = geo.axis[a];
    const FaceRule::Layer<Real> layer = axis.face[side].template layer<Real>(side == 0 ? -d : axis.n - 1 + d);
    ghosts[a][side][d - 1] = {layer.value, layer.sign, layer.shift, static_cast<int>(layer.source), layer.fixed};
  }
  __syncthreads();

  // The halos of the planes levels 1..K-1 make and the edge values they
  // send, the same every iteration, listed once a launch after the rings
  // (a side of a tile wholly a neighbour's or a physical face's, the lists
  // without gaps):
  // - fetched: a halo point's place in the rings (slot 0) and its value's in
  //   the neighbour's strip (in the set of parity 0);
  // - sent: an edge value's place in the rings and in the block's strip;
  // - ghosts: a halo point on a physical face, the place of the point it
  //   mirrors, and the rule.
  using Offset = std::conditional_t<lean_lists, unsigned, int>;  // (unsigned: one IMAD.WIDE.U32 an address)
  struct Pair {
    Offset shared, global;
  };
  struct GhostItem {
    int to, from, rule;
  };
  constexpr int items = (K - 1) * SV;
  Pair* const fetched = reinterpret_cast<Pair*>(rings + (K - 1) * S * PS);
  Pair* const sent = fetched + items;
  GhostItem* const ghost_items = reinterpret_cast<GhostItem*>(sent + items);
  // The sides with a neighbour, a bit each; per level, a side's first item
  // in its list (the sides before it of the same kind).
  const unsigned has = (neighbour(ax, bx, nbx, false) >= 0 ? 1u : 0u) | (neighbour(ax, bx, nbx, true) >= 0 ? 2u : 0u) |
                       (neighbour(ay, by, nby, false) >= 0 ? 4u : 0u) | (neighbour(ay, by, nby, true) >= 0 ? 8u : 0u);
  auto sides_before = [&](int side, unsigned kind) {
    int n = 0;
    for (int b = 0; b < side; ++b) n += (kind >> b & 1) * R * (b < 2 ? TY : TX);
    return n;
  };
  const int exchanged = sides_before(4, has), ghosted = sides_before(4, ~has);
  for (int f = tid; f < items; f += deep_threads) {
    const int t = f / SV + 1, e = f - (t - 1) * SV;
    const int side = e < 2 * side_x ? e / side_x : 2 + (e - 2 * side_x) / side_y;
    const int rest = side < 2 ? e - side * side_x : e - 2 * side_x - (side - 2) * side_y;
    const int length = side < 2 ? TY : TX, c = rest / length, a = rest - c * length;
    const bool along_x = side < 2, high = side & 1;
    const int level = (t - 1) * S * PS;
    const int hx = along_x ? (high ? TX + c : c - R) : a, hy = along_x ? a : (high ? TY + c : c - R);
    const int to = level + (hy + R) * W + hx + R;
    if (has >> side & 1) {
      const int next = along_x ? neighbour(ax, bx, nbx, high) : neighbour(ay, by, nby, high);
      const int nb = along_x ? next + by * nbx : bx + next * nbx;
      const int first = along_x ? (high ? send_x_hi : send_x_lo) : (high ? send_y_hi : send_y_lo);
      const int vx = along_x ? first + c : a, vy = along_x ? a : first + c;  // the value sent, in the tile
      const int at = (t - 1) * exchanged + sides_before(side, has) + rest;
      fetched[at] = Pair{Offset(to), Offset((nb * KE + (t - 1)) * SV + strip_offset(side ^ 1, c, a))};
      sent[at] = Pair{Offset(level + (vy + R) * W + vx + R), Offset((block * KE + (t - 1)) * SV + e)};
    } else {
      const int rule = (along_x ? 0 : 2 * R) + (high ? R + c : R - 1 - c);  // ghosts[axis][side][d-1]: d = c+1, or r-c
      const int source = ghosts[along_x ? 0 : 1][high][high ? c : R - 1 - c].source - (along_x ? x0 : y0);
      const int from = level + (along_x ? (hy + R) * W + source + R : (source + R) * W + hx + R);
      ghost_items[(t - 1) * ghosted + sides_before(side, ~has) + rest] = GhostItem{to, from, rule};
    }
  }
  __syncthreads();
  const int fetches = (K - 1) * exchanged, ghost_count = (K - 1) * ghosted;
  const long set_size = static_cast<long>(nbx) * nby * KE * SV;
  // The set of iteration i's parity. Lean: the two sets' pointers selected
  // (an index from the buffer's start adds 64-bit offsets an item; an array
  // of the two goes to local memory).
  Real* const set_odd = edges + set_size;
  auto set_of = [&](int i) {
    if constexpr (!lean_lists) return edges + (i & 1) * set_size;
    Real* const set = i & 1 ? set_odd : edges;
    __builtin_assume(__isGlobal(set));  // (its stores STG, not generic)
    return set;
  };
  // The halos of the planes levels 1..K-1 made in iteration i (ring slot
  // ring_slot): the neighbours' strips (cp.async, fetched in iteration i + 1 and
  // waited before its last barrier), and a physical face's ghosts from the
  // tile.
  // The thread's items of the exchanged sides' lists (item f of `fetched`
  // and of `sent`: a halo point and an edge value of the same strip place).
  auto each_exchanged = [&](auto&& visit) {
#pragma unroll
    for (int m = 0; m < (items + deep_threads - 1) / deep_threads; ++m)
      if (tid + m * deep_threads < fetches) visit(tid + m * deep_threads);
  };
  auto fetch_halos = [&](int ring_slot, int i) {
    Real* const slot = rings + ring_slot * PS;
    const Real* const set = set_of(i);
    each_exchanged([&](int f) {
      const Pair item = fetched[f];
      load_async(slot + item.shared, set + item.global);
    });
    commit_loads();
#pragma unroll 1
    for (int f = tid; f < ghost_count; f += deep_threads) {
      const GhostItem item = ghost_items[f];
      slot[item.to] = (&ghosts[0][0][0])[item.rule](slot[item.from]);
    }
  };
  // This iteration's edge values (slot ring_slot of levels 1..K-1, stored in the
  // rings) to the block's strips, coalesced along them.
  auto send_edges = [&](int ring_slot, int i) {
    const Real* const slot = rings + ring_slot * PS;
    Real* const set = set_of(i);
    each_exchanged([&](int f) {
      const Pair item = sent[f];
      set[item.global] = slot[item.shared];
    });
  };

  // The register queues and the levels' results (held across the barrier).
  Real q[K][S][P];
  [[maybe_unused]] Real before[two_levels ? K + 1 : 1][two_levels ? P : 1];  // level t's u^{m-1} (level t-2's)
  Real result[K + 1][P];
#pragma unroll
  for (int t = 0; t < K; ++t)
#pragma unroll
    for (int s = 0; s < S; ++s)
#pragma unroll
      for (int j = 0; j < P; ++j) q[t][s][j] = 0;

  // Neighbours instead of a grid barrier: a block publishes iteration i's
  // edges by its flag (i + 1, released once they are stored); a warp waits
  // for its tile's neighbours' flags before it fetches their halos, an
  // iteration later, once it has computed its levels, so that a block
  // seldom waits (the halos of iteration i's planes are first read as
  // centres in iteration i + r + 1). Lane s < 4 watches side s's neighbour.
  // The flags follow the strips; reset and a grid barrier once a launch.
  unsigned* const flags = reinterpret_cast<unsigned*>(edges + 2 * set_size);
  int watched = -1;
  if (lane < 4 && (has >> lane & 1)) {
    const int next = lane < 2 ? neighbour(ax, bx, nbx, lane & 1) : neighbour(ay, by, nby, lane & 1);
    watched = lane < 2 ? next + by * nbx : bx + next * nbx;
  }
  auto wait_neighbours = [&](unsigned flag) {
    if (watched >= 0)
      while (load_acquire(flags + watched) < flag) {
      }
    __syncwarp();
  };
  if constexpr (K > 1) {
    if (tid == 0) flags[block] = 0;
    cooperative_groups::this_grid().sync();
  }

  // One iteration. Steady: Ph = i % S, its ring slots constants (level 0's
  // an offset an iteration). General: one body for every i (Ph = 0), its
  // slots at run time and the queues rotated by moves at its end. The
  // general code is 5x the steady loop's an iteration; compiled once a
  // phase and a span (four copies, 26,500 instructions), it took 22% of a
  // 512^3 launch's time for 8% of its instructions, most of it waiting on
  // instruction fetch (ncu, H100). Once: +12% at 512^3.
  auto iteration = [&]<bool Steady, int Ph>(const int i) {
    static_assert(Steady || Ph == 0);
    const int slot = Steady ? Ph : i % S;  // levels >= 1: the plane made now, and the centre consumed
    auto ring = [&](int m) { return (slot + m) % S; };  // slot of iteration i + m, m >= 0
    const int i0 = i % S0;
    load_plane(i + 1);  // over plane i - 2r - 1's, read last in the iteration before
    auto level0 = [&](int m) { return mine0 + ((i0 + S0 - S + m) % S0) * PS; };  // level 0's plane of iteration i - S + m
    // Levels from the last down: level t's u^{m-1} is taken from level t-2's
    // queue before level t-1 replaces it. (Planes past a level's range are
    // computed too, from what the rings hold, and never read: a level reads
    // only its range's planes of the level below, and mirrors those past a
    // physical face.)
#pragma unroll
    for (int t = K; t >= 1; --t) {
      const int p = zl + i - t * S;
      // Level t-1's planes at the thread's points: p-r..p from the queue,
      // p+1..p+r from the ring (own points), and the centre's x-y neighbours.
      const Real* const centre = t == 1 ? level0(0) : level_plane(t - 1, slot);
      Real column[P][2 * R + 1];
#pragma unroll
      for (int j = 0; j < P; ++j) {
#pragma unroll
        for (int m = 0; m <= R; ++m) column[j][R - m] = q[t - 1][(Ph + S - m) % S][j];
#pragma unroll
        for (int m = 1; m <= R; ++m) column[j][R + m] = (t == 1 ? level0(m) : level_plane(t - 1, ring(m)))[j * W];
      }
      [[maybe_unused]] Real prev[two_levels ? P : 1];
      if constexpr (two_levels) {
#pragma unroll
        for (int j = 0; j < P; ++j) prev[j] = t == 1 ? centre[S0 * PS + j * W] : before[t][j];
        if (t >= 2) {
#pragma unroll
          for (int j = 0; j < P; ++j) before[t][j] = q[t - 2][(Ph + 1) % S][j];
        }
      }
      if (!Steady && t >= 2 && !az.periodic && (p < R || p > az.n - 1 - R))
#pragma unroll
        for (int j = 0; j < P; ++j) mirror_z_ghosts<R>(column[j], az, p);
      Real ylo[R], yhi[R];
#pragma unroll
      for (int m = 1; m <= R; ++m) ylo[m - 1] = centre[-m * W], yhi[m - 1] = centre[(P - 1 + m) * W];
      // Point: the plane's entries (planes past the maps' reach, computed
      // and never read, clamped into it).
      [[maybe_unused]] const UpdateEntry<Update>* plane_entries = nullptr;
      if constexpr (Point)
        plane_entries = classes.at + classes.z_offset[(Steady ? p : min(max(p, -K * R), az.n - 1 + K * R)) - classes.lo[2]];
      auto update_at = [&](int j) {
        if constexpr (Point)
          return plane_entries[row_entry[j]].update;
        else
          return up;
      };
#pragma unroll
      for (int j = 0; j < P; ++j) {
        const Real c = column[j][R];
        Real minus[R + 1], plus[R + 1];
#pragma unroll
        for (int m = 1; m <= R; ++m) minus[m] = centre[j * W - m], plus[m] = centre[j * W + m];
        Real sum = lap.add(0, lap.start(c), minus, plus);
#pragma unroll
        for (int m = 1; m <= R; ++m) {
          minus[m] = j - m >= 0 ? column[j - m][R] : ylo[m - j - 1];
          plus[m] = j + m < P ? column[j + m][R] : yhi[j + m - P];
        }
        sum = lap.add(1, sum, minus, plus);
#pragma unroll
        for (int m = 1; m <= R; ++m) minus[m] = column[j][R - m], plus[m] = column[j][R + m];
        sum = lap.add(2, sum, minus, plus);
        const Update at = update_at(j);
        if constexpr (two_levels)
          result[t][j] = start && t == 1 ? at.start(c, prev[j], sum) : at.step(c, prev[j], sum);
        else
          result[t][j] = at.step(c, c, sum);
      }
      // Sources: the boxes over the thread's column that hold plane p, added
      // at the level of the launch's step t - 1 (before a Dirichlet face's g).
      if (Events && !Steady && events_masks[0][tid]) {
        const int gz = wrapped_coordinate(az, p), gx = wrapped_coordinate(ax, x);  // (column_x, made again)
        for (unsigned boxes = events_masks[0][tid]; boxes; boxes &= boxes - 1) {
          const SourceBox box = sources.boxes[__ffs(boxes) - 1];
          if (!box.holds(2, gz)) continue;
#pragma unroll
          for (int j = 0; j < P; ++j) {
            const int gy = wrapped_coordinate(ay, y0 + ty + j);
            if (!box.holds(1, gy)) continue;
            const Real q = box.q<3, Real>(sources.weights, gx, gy, gz);
            if (q != Real(0)) result[t][j] = update_at(j).force(result[t][j], sources.force(box, t - 1, q), start && t == 1);
          }
        }
      }
      // Dirichlet faces: g (with keep_face_slots, steady iterations leave
      // their face points' ring slots as the general ones stored them).
      if (!Steady && ((dirichlet_z0 && p == 0) || (dirichlet_z1 && p == az.n - 1))) {
        const Real g = static_cast<Real>(az.face[p == 0 ? 0 : 1].value);
#pragma unroll
        for (int j = 0; j < P; ++j) result[t][j] = g;
      } else if (!(Steady && keep_face_slots) && face_rows) {
#pragma unroll
        for (int j = 0; j < P; ++j)
          if (face_rows >> j & 1) result[t][j] = face_rows_y >> j & 1 ? face_y : face_x;
      }
      // Receivers: the thread's at plane p (owned) of a sampled step t, the
      // level or the one before it (u^{m-1}: level t-1's centre); one scan
      // of its rows' points (a search a row here, unrolled over rows, levels
      // and phases, doubled the kernel's code and its unit's compile time).
      int row;
      if (Events && !Steady && p >= 0 && p < az.n && events_masks[Events][tid] && samples.sampled(t, row)) {
        const unsigned rows = events_masks[Events][tid];
        for (int k = events_points[0][tid]; k < events_points[Events][tid]; ++k) {
          const SamplePoint point = samples.points[k];
          const int j = point.i[1] - (y0 + ty);
          if (point.i[0] != x || point.i[2] != p || j < 0 || j >= P || !(rows >> j & 1)) continue;
          Real value = 0;
#pragma unroll
          for (int m = 0; m < P; ++m)
            if (m == j) value = samples.previous ? column[m][R] : result[t][m];
          samples.rows[static_cast<long>(row) * samples.count + point.slot] = value;
        }
      }
      if (t == K) {
        // The last level: the tile's updated points to global memory (two
        // levels: and level K-1 at p, the new u^{n-1}).
        if (Steady || (p >= max(0, az.upd_lo) && p < min(az.n, az.upd_hi))) {  // (level K's range: [0, n))
          const long at = out0 + (p + geo.halo) * geo.stride[2];
          Real* out = out_u + at;
          [[maybe_unused]] Real* out_prev = out_u_prev + at;
#pragma unroll
          for (int j = 0; j < P; ++j, out += geo.stride[1]) {
            if (written_rows >> j & 1) *out = result[t][j];
            if constexpr (two_levels) {
              if (written_rows >> j & 1) *out_prev = column[j][R];
              out_prev += geo.stride[1];
            }
          }
        }
      }
      // The queue takes level t-1's plane p+1 (iteration i - r's) over the
      // oldest, p-r, used above.
#pragma unroll
      for (int j = 0; j < P; ++j) q[t - 1][(Ph + 1) % S][j] = column[j][R + 1];
    }
    __syncthreads();  // every read of the consumed slots done
#pragma unroll
    for (int t = 1; t < K; ++t) {
      Real* const to = level_plane(t, slot);
#pragma unroll
      for (int j = 0; j < P; ++j)
        if (!(Steady && keep_face_slots) || (j == 0 ? store_first : j == P - 1 ? store_last : store_middle))
          to[j * W] = result[t][j];
    }
    if constexpr (K > 1) {
      // Iteration i - 1's halos, into slot Ph - 1 (whose halos no level reads
      // in this iteration).
      if (Steady || i >= 1) {
        wait_neighbours(static_cast<unsigned>(i));
        fetch_halos(ring(S - 1), i - 1);
      }
      __syncthreads();  // the results stored
      send_edges(slot, i);
    }
    wait_loads();     // the halos, level 0's plane i + 1
    __syncthreads();  // the edges stored, the halos and the plane published
    if (K > 1 && tid == 0) release(flags + block, static_cast<unsigned>(i + 1));
    if constexpr (!Steady) {
      // Phase 0's queue places for iteration i + 1: entry e takes e + 1's.
#pragma unroll
      for (int t = 0; t < K; ++t)
#pragma unroll
        for (int j = 0; j < P; ++j) {
          const Real first = q[t][0][j];
#pragma unroll
          for (int e = 0; e + 1 < S; ++e) q[t][e][j] = q[t][e + 1][j];
          q[t][S - 1][j] = first;
        }
    }
  };

  // Iterations [from, to); steady spans start at a multiple of S and hold
  // whole periods.
  auto span = [&]<bool Steady>(int from, int to) {
    if constexpr (Steady) {
      for (int base = from; base < to; base += S)
        [&]<int... Ph>(std::integer_sequence<int, Ph...>) {
          (iteration.template operator()<true, Ph>(base + Ph), ...);
        }(std::make_integer_sequence<int, S>{});
    } else {
#pragma unroll 1
      for (int i = from; i < to; ++i) iteration.template operator()<false, 0>(i);
    }
  };
  const int a = min((max(steady_lo, 0) + S - 1) / S * S, iterations);
  const int b = max(a, a + (steady_hi - a) / S * S);
  load_plane(0);
  if constexpr (!Events) {
    // (a loop, so that the general path's code is there once)
#pragma unroll 1
    for (int part = 0; part < 3; ++part) {
      if (part == 1)
        span.template operator()<true>(a, b);
      else
        span.template operator()<false>(part == 0 ? 0 : b, part == 0 ? a : iterations);
    }
  } else {
    // The block's events window: the iterations in which a level makes one
    // of its threads' events planes (level t makes plane p in iteration p -
    // zl + t S; on a periodic z axis, where the cone's planes wrap, all),
    // whole periods within the steady span.
    int e0 = b, e1 = b;
    if (events_window[Events] >= events_window[0]) {
      const int first = az.periodic ? 0 : events_window[0] - zl + S;
      const int last = az.periodic ? iterations : events_window[Events] - zl + K * S;
      e0 = min(a + max(first - a, 0) / S * S, b);
      e1 = min(max(e0, a + (max(last + 1 - a, 0) + S - 1) / S * S), b);
    }
    // Spans: general [0, a), steady [a, e0), general [e0, e1), steady [e1,
    // b), general [b, iterations); each path's code once (five calls spilled).
#pragma unroll 1
    for (int part = 0; part < 5; ++part) {
      const int from = part == 0 ? 0 : part == 1 ? a : part == 2 ? e0 : part == 3 ? e1 : b;
      const int to = part == 0 ? a : part == 1 ? e0 : part == 2 ? e1 : part == 3 ? b : iterations;
      if (part % 2 == 1)
        span.template operator()<true>(from, to);
      else
        span.template operator()<false>(from, to);
    }
  }
  wait_loads();
}

// The kernel of a radius, precision and equation for a launch of `steps`
// levels: its shape's k, or 1 (null otherwise).
template <int R, class Real, class Eq, bool Point, bool Events>
DeepKernel3D<R, Real, Eq> deep_kernel_3d_of(int steps) {
  constexpr DeepShape shape = deep_shape(R, sizeof(Real) == 8, Eq::levels);
  if (steps == shape.k) return deep_kernel_3d<R, Real, Eq, shape.tile_x, shape.tile_y, shape.k, Point, Events>;
  if (steps == 1) return deep_kernel_3d<R, Real, Eq, shape.tile_x, shape.tile_y, 1, Point, Events>;
  return nullptr;
}
#define HEATWAVE_DEEP_3D(R, Real, Eq, Point, Events) \
  template DeepKernel3D<R, Real, Eq> deep_kernel_3d_of<R, Real, Eq, Point, Events>(int);

}  // namespace heatwave::cuda
