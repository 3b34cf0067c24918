// cuda-cluster, 3D: the pipeline kernel. Temporal blocking along z over
// thread-block clusters that tile x-y, halos between the blocks of a cluster
// through distributed shared memory (DSMEM); the pipeline is described at
// the kernel. The stencil is LaplacianWeights::start, then add in axis
// order, and the update the equation's: bitwise equal to the cuda and host
// backends. The kernel object that checks a plan and launches it:
// kernel_3d_object.cuh. Device code: no host-only header.
#pragma once
#include <array>
#include <utility>

#include "kernels/cluster/common.cuh"
#include "kernels/cluster/kernel_3d_forms.cuh"
#include "kernels/cluster/kernel_args.cuh"

namespace heatwave::cuda {

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
// everything. Two levels: u^{m-1} at p_t is level t-2's plane p_t, still in
// its ring. Level Steps goes straight to global memory. As in 2D, the x-y
// region of level t is the tile plus (Steps-t)r, and so is its z range: only
// that halo is computed twice (by neighbouring blocks). Physical faces: x and
// y ghosts of the planes of levels 1..Steps-1 from FaceRule after the
// barrier, z ghost planes mirrored as they are read; Dirichlet face points
// are g at every level. Steps is a template parameter: the levels unroll.
// Clusters over x-y (Clustered): on sides a peer block serves, levels
// compute the tile only and the r columns or rows past it come from the
// peer's ring through DSMEM after a cluster barrier every r iterations.
// Events: the launch has sources or receivers. A launch with neither runs a
// kernel without their code (the uniform form's; the media's forms carry
// it always): their window, tests and registers made the fp64 wave's 3D
// kernel 6.6% slower even where no thread took them (docs/performance.md).

// Blocks an SM the compiler keeps registers for (__launch_bounds__): the
// heat fits 64 registers (two blocks of up to 512 threads), the wave, which
// also reads u^{m-1}, gains nothing from two (H100, 512^3: docs/performance.md).
// (The heat's flux form spills at 64, yet one block an SM with 106-124
// registers and none ran it no faster: H100, 512^3 layers, 0.666 against
// 0.632 ms a step.)
template <int Levels>
constexpr int min_blocks_3d() {
  return Levels == 2 ? 1 : 2;
}
// The slot of plane qq in a ring of N planes, given plane i's (i mod N): a
// mask where N is a power of 2; otherwise from i's slot, since qq - i is a
// constant once the levels unroll (one modulo an iteration serves them all;
// a modulo by 3 or 5 is ~5 instructions).
template <int N>
__device__ __forceinline__ int ring_slot_3d(int i_slot, int i, int qq) {
  if constexpr ((N & (N - 1)) == 0) {
    return qq & (N - 1);
  } else {
    const int slot = i_slot + ((qq - i) % N + N) % N;
    return slot >= N ? slot - N : slot;
  }
}

template <int R, class Real, class Eq, int Steps, bool Clustered, Form F, bool Events>
__global__ void __launch_bounds__(512, min_blocks_3d<Eq::levels>())
    cluster_kernel_3d(const Real* __restrict__ u, const Real* __restrict__ u_prev, Real* __restrict__ out_u,
                      Real* __restrict__ out_u_prev, const ClusterGeometry<3> geo,
                      const LaplacianWeights<3, R, Real> lap, const typename Eq::template Update<Real> up,
                      int /* steps: Steps */, const bool start, const PointUpdates<3, Real, Eq> updates,
                      const ClusterSources<Real> sources, const ClusterSamples<Real> samples,
                      const UpdateClasses<typename Eq::template Update<Real>> classes,
                      const __grid_constant__ FluxPairs<3, R, Real> flux, const FluxTable<3, R, Real> flux_table) {
  constexpr bool two_levels = Eq::levels == 2;
  using Vec = Pack<Real>;
  constexpr int V = Vec::width, reach = Steps * R;
  // in_flight: level-0 planes in flight; the ring also holds the 2r+1 level 1 reads.
  constexpr int S0 = level0_planes_3d(R), S = upper_planes_3d(R), in_flight = S0 - 2 * R - 1;
  const int W = geo.width, PS = geo.plane;
  // Shared memory: level 0's ring of S0 planes, u^{n-1}'s (two levels), then
  // S planes a level t >= 1 (planes (t-1)S .. tS-1 of `upper`).
  Real* const level0 = reinterpret_cast<Real*>(cluster_shared) + V;
  Real* const upper = level0 + (two_levels ? 2 : 1) * S0 * PS;
  const ClusterAxis& ax = geo.axis[0];
  const ClusterAxis& ay = geo.axis[1];
  const ClusterAxis& az = geo.axis[2];
  const int TX = geo.plan.tile_x, TY = geo.plan.tile_y, TZ = geo.plan.tile_z;
  const int x0 = ax.out_lo + static_cast<int>(blockIdx.x) * TX;
  const int y0 = ay.out_lo + static_cast<int>(blockIdx.y) * TY;
  // The waves' kernels keep z0 and the steady window below (opaque): at
  // their 124-128 registers the compiler otherwise recomputes them from
  // blockIdx in every iteration, 25 more instructions before the steady path
  // (fp32 3D wave 2-5% slower, H100). The heat's kernels, at 64 registers,
  // are faster without: kept, they recompute other values instead (fp64 r2
  // 6% slower). docs/performance.md, "the 3D pipeline's loop top".
  auto kept = [](int v) { return two_levels ? opaque(v) : v; };
  const int z0 = kept(az.out_lo + static_cast<int>(blockIdx.z) * TZ), z1 = min(z0 + TZ, az.out_hi);
  const int xbase = x0 - geo.halo_left, ybase = y0 - geo.plan.k * R, zs = z0 - reach;
  const SharedPlane plane_tile{W, xbase, ybase};  // a plane of a level's ring
  const int x = xbase + static_cast<int>(threadIdx.x) * V, y = ybase + static_cast<int>(threadIdx.y);
  const int own = plane_tile.at(x, y);  // the thread's pack in a shared plane
  [[maybe_unused]] PointColumn3D<Real, Eq> point;
  if constexpr (F == Form::point) point = PointColumn3D<Real, Eq>(classes, geo, x, y);
  // The thread's pack in level 0's slot 0, as a shared address the compiler
  // must keep: it would otherwise recompute it (and the block's shared
  // window) at every level. Its planes are plane strides PS from it.
  Real* const mine = static_cast<Real*>(
      __cvta_shared_to_generic(opaque(static_cast<unsigned>(__cvta_generic_to_shared(level0 + own)))));
  const int upper_slots = (two_levels ? 2 : 1) * S0 * PS;  // level 1's slot 0, from level 0's
  // The cluster: CX x CY blocks over x-y (rank x-major). A side of the tile
  // is served by a peer where the cluster goes on and the peer's tile holds
  // core points: there every level computes the tile only, and the r columns
  // or rows past it come from the peer's ring through DSMEM. Other sides
  // compute (Steps-t)r past the tile, as a cluster of one does everywhere.
  // (Clustered is a template parameter: a cluster of one carries none of this.)
  // A tile that ends the domain at a physical face with r points or fewer
  // before it computes its low side itself: the ghosts it fills mirror points
  // up to r inside the face, and a peer's columns or rows arrive r iterations
  // after a plane was made, its ghosts one iteration after.
  Cluster cluster;
  const int CX = Clustered ? geo.plan.cluster_x : 1, CY = Clustered ? geo.plan.cluster_y : 1;
  const int rx = static_cast<int>(blockIdx.x) % CX, ry = static_cast<int>(blockIdx.y) % CY;
  const bool peer_x0 = Clustered && rx > 0 && !(ax.ghosts[1] && x0 + R >= ax.n),
             peer_x1 = Clustered && rx < CX - 1 && x0 + TX < ax.core_hi;
  const bool peer_y0 = Clustered && ry > 0 && !(ay.ghosts[1] && y0 + R >= ay.n),
             peer_y1 = Clustered && ry < CY - 1 && y0 + TY < ay.core_hi;
  // A level's x-y region with `left` to go: [rx0, rx1) x [ry0, ry1), clipped to the core.
  auto region = [&](int left, int& rx0, int& rx1, int& ry0, int& ry1) {
    rx0 = max(x0 - (peer_x0 ? 0 : left), ax.core_lo), rx1 = min(x0 + TX + (peer_x1 ? 0 : left), ax.core_hi);
    ry0 = max(y0 - (peer_y0 ? 0 : left), ay.core_lo), ry1 = min(y0 + TY + (peer_y1 ? 0 : left), ay.core_hi);
  };

  // What the thread does, fixed for the sweep (`role` below). Levels it
  // computes: its pack meets the level's x-y region (points past the region
  // are computed too and never read).
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
            c == axis.face_point(side))
          face_lanes |= 1u << v, face_value.v[v] = static_cast<Real>(axis.face[side].value);
      }
  // The write-back: updated points of the tile the launch owns.
  const int wx0 = max(max(x0, ax.out_lo), ax.upd_lo), wx1 = min(min(x0 + TX, ax.out_hi), ax.upd_hi);
  const int wy0 = max(max(y0, ay.out_lo), ay.upd_lo), wy1 = min(min(y0 + TY, ay.out_hi), ay.upd_hi);
  const bool aligned = (geo.lead + xbase) % V == 0;
  const bool writes = y >= wy0 && y < wy1 && x + V > wx0 && x < wx1, whole_x = aligned && x >= wx0 && x + V <= wx1;
  // The thread's role in one register (opaque): bit t (1..Steps), level t
  // computes; writes_bit, level Steps writes back; whole_bit, its pack is
  // whole. Otherwise the compiler makes the tests again at every level: the
  // heat's plain kernels, at 58 registers, remade the write-back's from the
  // geometry in the steady path (fp32 r 1 2% slower than with Events). The
  // heat's kernels with Events keep the levels' bits only: at 64 registers
  // the write-back's spilled in their loop (fp32 r 1 with a source 4-6% slower).
  constexpr unsigned writes_bit = 1u, whole_bit = 1u << (Steps + 1);
  constexpr bool keeps_writes = two_levels || !Events;
  const unsigned role =
      opaque(computes | (keeps_writes ? (writes ? writes_bit : 0u) | (whole_x ? whole_bit : 0u) : 0u));
  const bool writes_back = keeps_writes ? (role & writes_bit) != 0 : writes,
             whole_pack = keeps_writes ? (role & whole_bit) != 0 : whole_x;
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
  auto load_plane = [&](int i, int slot) {  // slot: plane i's in the ring
    int gz;
    if (loads && i < iterations && source_coordinate(az, zs + i, gz)) {
      const long offset = row + (gz + geo.halo) * geo.stride[2];
      Real* const to = mine + slot * PS;  // u^{n-1}'s: S0 planes on
      if (load_whole) {
        load_async_pack(to, u + offset + x);
        if constexpr (two_levels) load_async_pack(to + S0 * PS, u_prev + offset + x);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) {
          int gx;
          if (x + v < lx0 || x + v >= lx1 || !source_coordinate(ax, x + v, gx)) continue;
          load_async(to + v, u + offset + gx);
          if constexpr (two_levels) load_async(to + S0 * PS + v, u_prev + offset + gx);
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
  // Steady iterations: every level within its [first, last), level Steps
  // within the write-back's, and every level's plane p = zs + i - t*r at
  // least r from a z face with ghosts (no mirrored column, no Dirichlet plane).
  int steady_first = out_first, steady_last = out_last;
#pragma unroll
  for (int t = 1; t <= Steps; ++t) steady_first = max(steady_first, first[t]), steady_last = min(steady_last, last[t]);
  if (az.ghosts[0]) steady_first = max(steady_first, R - zs + reach);           // level Steps' plane >= r
  if (az.ghosts[1]) steady_last = min(steady_last, az.n - 1 - R - zs + R + 1);  // level 1's plane <= n-1-r
  steady_first = kept(steady_first), steady_last = kept(steady_last);
  // The thread's receiver points: those of its pack's lanes in the block's
  // tile and the launch's window (the block that owns a point records it).
  auto own_samples = [&](int& begin, int& end) {
    begin = end = 0;
    if (Events && samples.count > 0 && y >= y0 && y < min(y0 + TY, ay.out_hi))
      sample_range<3>(samples.points, samples.count, y, max(x, x0), min(x + V, min(x0 + TX, ax.out_hi)), begin, end);
  };
  // A thread with a source's or a receiver's point in its pack column (a
  // few in a launch) takes the general path in the iterations where a level
  // makes one of their planes, [events_first, events_last] (on a periodic z
  // axis, where planes wrap, in every iteration), and there adds or records
  // them; the others hold an empty window (the heat's kernels run at their
  // 64 registers). The source boxes over the pack column are found once, for
  // the sweep, as the deep kernel does: finding them at each level made the
  // wave's k 4 kernel 22% longer (166 KB against 136 KB of code).
  int events_first = INT_MAX, events_last = INT_MIN;
  const unsigned source_boxes = Events ? source_lanes<3>(sources, geo, x, y) : 0u;
  if constexpr (Events) {
    int z_lo = INT_MAX, z_hi = INT_MIN;
    for (unsigned lanes = source_boxes; lanes; lanes &= lanes - 1) {
      const SourceBox box = sources.boxes[__ffs(lanes) - 1];
      z_lo = min(z_lo, box.lo[2]), z_hi = max(z_hi, box.hi[2] - 1);
    }
    int begin, end;
    own_samples(begin, end);
    for (int k = begin; k < end; ++k) {
      const int z = samples.points[k].i[2];
      z_lo = min(z_lo, z), z_hi = max(z_hi, z);
    }
    if (z_lo <= z_hi)  // level t makes plane zs + i - t r in iteration i
      events_first = az.periodic ? INT_MIN : z_lo - zs + R, events_last = az.periodic ? INT_MAX : z_hi - zs + reach;
  }
  // Threads that take the steady iterations' lean path outside their events'
  // window: with Form::point, their updates from the classes' table (without
  // one, each point's is made from the coefficient views: the general path's).
  // With Form::flux, their pair coefficients from the table by the layers'
  // coordinate, shared by a pack's points (layers along x and a file's alpha:
  // each point's, on the general path).
  const bool steady_thread = F == Form::point  ? classes.at != nullptr
                             : F == Form::flux ? flux_table.at != nullptr && flux_table.axis != 0
                                               : true;

  // Two levels at radius 1: each level's last three planes at the thread's
  // pack, in registers: the z neighbours of the next level's stencil and
  // u^{m-1}, three 16-byte shared loads fewer a level (the centre still
  // comes from the ring, where x ghosts are filled). Level t's newest is
  // the pack it computed in this iteration, plane p_t = p_{t+1} + 1. The
  // wave runs one block an SM with registers to spare; the heat's two
  // blocks an SM have not (64 registers: H100, heat 3D fp32 115 GCells/s
  // with windows against 364 without; docs/performance.md), nor radius 2.
  constexpr bool windows = R == 1 && two_levels;
  Vec window[windows ? Steps : 1][2 * R + 1];
#pragma unroll
  for (int i = 0; i < in_flight; ++i) load_plane(i, i);
  for (int i = 0; i < iterations; ++i) {
    const int i_ring0 = (S0 & (S0 - 1)) == 0 ? 0 : i % S0;  // plane i's slot in level 0's ring (masks: unused)
    wait_loads_but<in_flight - 1>();  // plane i has landed
    // Clusters: a cluster barrier every r iterations, block barriers between
    // (see the peer copies below).
    const bool cluster_barrier = Clustered && i % R == 0;  // a constant false for clusters of one
    if (cluster_barrier)
      cluster.sync();  // also: the peers' planes of the last r iterations are complete
    else
      __syncthreads();
    // lands while the next in_flight iterations compute
    load_plane(i + in_flight, ring_slot_3d<S0>(i_ring0, i, i + in_flight));
    // Ring slots: plane qq's is qq mod S (levels 1..Steps-1) or mod S0 (level 0).
    const int i_ring = i % S;
    auto ring_slot = [&](int qq) { return ring_slot_3d<S>(i_ring, i, qq); };
    auto ring0_slot = [&](int qq) { return ring_slot_3d<S0>(i_ring0, i, qq); };

    // x and y ghosts of the planes levels 1..Steps-1 made in the last
    // iteration, where a physical face is within reach (the next level reads
    // them r iterations later).
    if (near_xy && i > 0) {
      for (int t = 1; t < Steps; ++t) {
        const int q = i - 1 - t * R, left = (Steps - t) * R;
        if (i - 1 < first[t] || i - 1 >= last[t]) continue;
        fill_ghosts_2d<R>(upper + ((t - 1) * S + ring_slot(q)) * PS, ax, ay, plane_tile, x0 - (peer_x0 ? 0 : left),
                          x0 + TX + (peer_x1 ? 0 : left), y0 - (peer_y0 ? 0 : left), y0 + TY + (peer_y1 ? 0 : left));
      }
      __syncthreads();
    }
    // Peer sides: the r columns and rows past the tile of the level t-1
    // planes that each level t >= 2 reads in this iteration and the r-1
    // after it, from the peer's ring (the same slot: same slab). A level
    // reads a plane's x-y neighbours r iterations after it was made, so the
    // cluster barrier that starts each run of r iterations has published
    // every plane the run reads; the peer overwrites a slot 2r+1 iterations
    // after making its plane, past the next cluster barrier. (One cluster
    // barrier serves r iterations: ~300 ns each, docs/performance.md.)
    if (cluster_barrier) {
      const int tid = threadIdx.x + threadIdx.y * blockDim.x, nthreads = blockDim.x * blockDim.y;
      const int rank = static_cast<int>(cluster.block_rank());
#pragma unroll
      for (int d = 0; d < R; ++d)
        for (int t = 2; t <= Steps; ++t) {
          const int j = i + d;  // the iteration that reads it
          if (j < first[t] || j >= last[t]) continue;
          const int q = j - t * R;
          Real* u = upper + ((t - 2) * S + ring_slot(q)) * PS;
          int cx0, cx1, cy0, cy1;
          region((Steps - t) * R, cx0, cx1, cy0, cy1);  // where level t reads neighbours
          for (int side = 0; side < 2; ++side) {
            if (side == 0 ? peer_x0 : peer_x1) {
              const Real* v = cluster.map_shared_rank(u, rank + (side == 0 ? -1 : 1));
              const int shift = side == 0 ? -TX : TX,
                        first_x = side == 0 ? x0 - R : x0 + TX;  // shift: the peer's x0 - ours
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

    // The levels' packs of this iteration. Steady (a block-uniform template
    // argument): every level computes a plane of its slab that is neither a
    // z ghost's source nor a z face, and level Steps writes back; the tests
    // for the pipeline's fill and drain and for z faces are then left out
    // (most iterations of a slab: the per-level setup weighs as much as the
    // stencil, "3D: what bounds it" in docs/performance.md).
    auto own_pack = [&](int level, int qq) {  // the thread's pack of plane zs + qq of a level
      return mine + (level == 0 ? ring0_slot(qq) * PS : upper_slots + ((level - 1) * S + ring_slot(qq)) * PS);
    };
    // Radius 1: level 0's plane i joins its window (the level-0 planes
    // p-1..p+1 that level 1 reads in this iteration).
    auto push = [](Vec(&w)[2 * R + 1], const Vec& pack) {
#pragma unroll
      for (int j = 0; j < 2 * R; ++j) w[j] = w[j + 1];
      w[2 * R] = pack;
    };
    if constexpr (windows) push(window[0], load_pack(own_pack(0, i)));
    // Steady, what a pack's lanes share (0: nothing known). Form::flux: L is
    // the layers' axis (1 or 2): the pairs along the other axes are the same
    // both ways (a register each; one steady path for both axes instead ran
    // the 3D layers 7.5% slower, H100). Form::point: L 1 where the lanes
    // share their x class, so their update (one, not one a lane).
    auto levels = [&]<bool Steady, int L = 0>() {
#pragma unroll
      for (int t = 1; t <= Steps; ++t) {
        const int q = i - t * R, p = zs + q;
        Vec result;
        if ((Steady || (i >= first[t] && i < last[t])) && (role >> t & 1)) {
          // Level t-1's planes p-r..p+r at (x, y): its window (radius 1) or
          // its ring; z ghost planes (never computed) mirror the planes they reflect.
          Vec column[2 * R + 1];
#pragma unroll
          for (int j = 0; j <= 2 * R; ++j) {
            if constexpr (windows)  // the centre from the ring: x ghosts are filled there
              column[j] = j == R ? load_pack(own_pack(t - 1, q)) : window[t - 1][j];
            else
              column[j] = load_pack(own_pack(t - 1, q - R + j));
          }
          if (!Steady && t >= 2 && ((az.ghosts[0] && p < R) || (az.ghosts[1] && p > az.n - 1 - R)))
            mirror_z_ghosts<R>(column, az, p);
          const Real* c = own_pack(t - 1, q);
          const Vec& mid = column[R];
          Real left_x[R + 1], right_x[R + 1];
          Vec below[R + 1], above[R + 1];
#pragma unroll
          for (int j = 1; j <= R; ++j) {
            left_x[j] = c[-j], right_x[j] = c[V - 1 + j];
            below[j] = load_pack(c - j * W), above[j] = load_pack(c + j * W);
          }
          if constexpr (two_levels) {  // u^{m-1}: level t-2 at p (t = 1: the loaded u^{n-1})
            if (t == 1)
              result = load_pack(mine + (S0 + ring0_slot(q)) * PS);
            else if constexpr (windows)
              result = window[t >= 2 ? t - 2 : 0][0];
            else
              result = load_pack(own_pack(t >= 2 ? t - 2 : 0, q));
          }
          // Form::point: the plane's updates (steady threads: from the table).
          [[maybe_unused]] typename PointColumn3D<Real, Eq>::Plane point_plane;
          if constexpr (F == Form::point) point_plane = point.template plane<Steady>(updates, classes, geo, y, p);
          // Form::flux, steady: the pack's pair coefficients where its points share them (layers along y or z).
          [[maybe_unused]] FluxLane<3, R, Real> pack_pairs;
          if constexpr (F == Form::flux)
            if (Steady) pack_pairs = flux_table.lane(geo, {x, y, p});
#pragma unroll
          for (int v = 0; v < V; ++v) {
            const Real centre = mid.v[v];
            const typename Eq::template Update<Real> at = [&] {
              if constexpr (F == Form::point)
                return point.template at<Steady, L == 1>(updates, geo, point_plane, x, v);
              else
                return up;
            }();
            Real minus[R + 1], plus[R + 1];
            pack_x_neighbours<R>(mid, left_x, right_x, v, minus, plus);
            Real lap_value;
            if constexpr (F == Form::flux) {
              // FluxPairs' order: axes, then j (add_pair_terms).
              const FluxLane<3, R, Real> k = Steady          ? pack_pairs
                                             : flux_table.at ? flux_table.lane(geo, {x + v, y, p})
                                                             : flux_lane(flux, geo, {x + v, y, p});
              auto minus_pair = [&](int a, int j) {  // the same as the plus pair off the layers' axis
                return L != 0 && a != L ? k.plus[a][j - 1] : k.minus[a][j - 1];
              };
              using Pairs = FluxPairs<3, R, Real>;
              lap_value = 0;
#pragma unroll
              for (int j = 1; j <= R; ++j)
                lap_value =
                    Pairs::add_pair_terms(lap_value, centre, k.plus[0][j - 1], plus[j], minus_pair(0, j), minus[j]);
#pragma unroll
              for (int j = 1; j <= R; ++j)
                lap_value = Pairs::add_pair_terms(lap_value, centre, k.plus[1][j - 1], above[j].v[v], minus_pair(1, j),
                                                  below[j].v[v]);
#pragma unroll
              for (int j = 1; j <= R; ++j)
                lap_value = Pairs::add_pair_terms(lap_value, centre, k.plus[2][j - 1], column[R + j].v[v],
                                                  minus_pair(2, j), column[R - j].v[v]);
            } else {
              lap_value = lap.add(0, lap.start(centre), minus, plus);
#pragma unroll
              for (int j = 1; j <= R; ++j) minus[j] = below[j].v[v], plus[j] = above[j].v[v];
              lap_value = lap.add(1, lap_value, minus, plus);
#pragma unroll
              for (int j = 1; j <= R; ++j) minus[j] = column[R - j].v[v], plus[j] = column[R + j].v[v];
              lap_value = lap.add(2, lap_value, minus, plus);
            }
            if constexpr (!two_levels)
              result.v[v] = at.step(centre, centre, lap_value);
            else
              result.v[v] =
                  start && t == 1 ? at.start(centre, result.v[v], lap_value) : at.step(centre, result.v[v], lap_value);
          }
          if constexpr (Events)
            if (!Steady && source_boxes)
              result = add_sources<3, Real, Eq, F>(result, source_boxes, sources, geo, x, y, p, t - 1, start && t == 1,
                                                   up, updates);
          // Dirichlet face points keep g, z faces first (rare: a branch, not a
          // select a point). ClusterAxis::fixed spelled out here and in the face
          // lanes above, p tested first: asking it per level cost 12% at 512^3
          // on the H100, its inlined form in the lanes 1-2%.
          const int z_side = p == 0 ? 0 : 1;
          if (!Steady && (p == 0 || p == az.n - 1) && az.ghosts[z_side] &&
              az.face[z_side].type == BoundaryType::dirichlet) {
#pragma unroll
            for (int v = 0; v < V; ++v) result.v[v] = static_cast<Real>(az.face[z_side].value);
          } else if (face_lanes) {
#pragma unroll
            for (int v = 0; v < V; ++v)
              if (face_lanes >> v & 1) result.v[v] = face_value.v[v];
          }
          // Receivers: the level of step t of the launch, or the one before
          // it (u^{m-1}: level t-1 at p), on planes of the block's slab.
          int row;
          if (!Steady && Events && events_first <= events_last && p >= z0 && p < z1 && samples.sampled(t, row)) {
            int begin, end;
            own_samples(begin, end);
            record_samples_3d(result, mid, samples, begin, end, x, p, row);
          }
          if (t < Steps) {
            store_shared_pack(own_pack(t, q), result);
          } else if (writes_back && (Steady || (i >= out_first && i < out_last))) {
            const long out = out_column + p * geo.stride[2];
            if (whole_pack) {
              store_pack(out_u + out, result);
              if constexpr (two_levels) store_pack(out_u_prev + out, mid);  // the new u^{n-1}: level Steps-1 at p
            } else {
#pragma unroll
              for (int v = 0; v < V; ++v) {
                if (x + v < wx0 || x + v >= wx1) continue;
                out_u[out + v] = result.v[v];
                if constexpr (two_levels) out_u_prev[out + v] = mid.v[v];
              }
            }
          }
        }
        // The level's window moves on every iteration, computed or not (a
        // plane a level skips is never read as a valid neighbour).
        if constexpr (windows)
          if (t < Steps) push(window[t], result);
      }
    };
    if (steady_thread && i >= steady_first && i < steady_last && (!Events || i < events_first || i > events_last)) {
      if constexpr (F == Form::flux) {
        if (flux_table.axis == 1)
          levels.template operator()<true, 1>();
        else
          levels.template operator()<true, 2>();
      } else if constexpr (F == Form::point && Steps < 4) {
        // All but the packs in an x absorbing layer (a branch a warp at its
        // edges). Not at k 4: the second steady path's registers cost more
        // than it saves there (the shot's 56x24x64 k 4: 1.72 against 1.21 ms
        // a step in the autotune, spills 36 -> 56 bytes).
        if (point.x_same)
          levels.template operator()<true, 1>();
        else
          levels.template operator()<true>();
      } else {
        levels.template operator()<true>();
      }
    } else {
      levels.template operator()<false>();
    }
  }
  if constexpr (Clustered) cluster.sync();  // peers may still read this block's rings
}

// The kernels of a form for every step count (kernel_args.cuh).
template <int R, class Real, class Eq, bool Clustered, Form F, bool Events, int... S>
auto kernels_3d(std::integer_sequence<int, S...>) {
  return std::array<Kernel3D<R, Real, Eq>, sizeof...(S)>{
      cluster_kernel_3d<R, Real, Eq, S + 1, Clustered, F, Events>...};
}
template <int R, class Real, class Eq, Form F, bool Clustered, bool Events>
Kernel3D<R, Real, Eq> kernel_3d_of(int steps) {
  constexpr auto counts = std::make_integer_sequence<int, max_levels_3d(R)>{};
  return kernels_3d<R, Real, Eq, Clustered, F, Events>(counts)[steps - 1];
}
// A form's kernels of one radius, precision, equation, clustering and
// Events, built in a unit of their own (kernels/cluster/units.cmake).
#define HEATWAVE_PIPELINE_3D(R, Real, Eq, F, Clustered, Events) \
  template Kernel3D<R, Real, Eq> kernel_3d_of<R, Real, Eq, F, Clustered, Events>(int);

}  // namespace heatwave::cuda
