#pragma once
// What the 2D and 3D cluster kernels share on the device: wrapped
// coordinates, cp.async copies, the thread-block cluster, a level or plane in
// shared memory and its ghosts, sources, receivers and the flux form. Device
// code: no host-only header (the host side of a kernel object is
// kernel_object.cuh).
#include <climits>
#include <utility>

#include "kernels/cluster/geometry.cuh"
#include "kernels/cluster/source_box.hpp"
#include "kernels/cuda/pack.cuh"
#include "solver/media_views.hpp"
#include "solver/stencil.hpp"

namespace heatwave::cuda {

inline constexpr int unbounded = INT_MAX / 4;  // the core of a periodic axis: every index

// How a kernel's stencil and update take the coefficients: constant; the flux
// form where the flux coefficient varies (the heat's alpha), over its pairs
// by the layers' coordinate or from a file's alpha (FluxTable, flux_lane), or
// in 2D from a file over pair tiles loaded with the field tile (flux_tiles);
// or an update made at each point where another coefficient varies (c,
// gamma, absorbing profiles: PointUpdates).
enum class Form { uniform, flux, flux_tiles, point };
// Whether an equation has a coefficient other than the flux one (the waves'
// c and gamma): only then are its kernels of Form::point made.
template <class Eq>
inline constexpr bool has_point_form = Eq::coefficients.size() > (Eq::flux_coefficient != nullptr ? 1u : 0u);

// Coordinate c of an axis wrapped into [0, n) on a periodic axis (one rank
// spans it), else c.
HW_HD int wrapped_coordinate(const ClusterAxis& a, int c) {
  if (!a.periodic) return c;
  const int g = c % a.n;
  return g < 0 ? g + a.n : g;
}

// The ghost at coordinate i of a face from the value it mirrors: of a point,
// or of each lane of a pack.
template <class Real>
__device__ __forceinline__ void mirror_into(Real& ghost, const FaceRule& face, int i, const Real& source) {
  ghost = face.ghost(i, source);
}
template <class Real>
__device__ __forceinline__ void mirror_into(Pack<Real>& ghost, const FaceRule& face, int i, const Pack<Real>& source) {
#pragma unroll
  for (int v = 0; v < Pack<Real>::width; ++v) ghost.v[v] = face.ghost(i, source.v[v]);
}

// z ghost planes of a column of 2r+1 planes around plane p (p within r of a
// physical z face), a point or a pack of points each (the 3D pipeline, the
// deep family): FaceRule from the plane each mirrors, which the column
// holds. The cases are unrolled so that the column stays in registers (the
// rules from the kernel's parameters, which the compiler rematerialises
// rather than keeping them in registers across a sweep, as it would a
// table's).
template <int R, class T>
__device__ __forceinline__ void mirror_z_ghosts(T (&w)[2 * R + 1], const ClusterAxis& az, int p) {
#pragma unroll
  for (int m = 0; m < R; ++m) {
    if (az.ghosts[0] && p == m) {  // planes m-r..-1 mirror 2r-2m-j
#pragma unroll
      for (int j = 0; j < R - m; ++j) mirror_into(w[j], az.face[0], m - R + j, w[2 * R - 2 * m - j]);
    }
    if (az.ghosts[1] && p == az.n - 1 - m) {  // planes n..n-1-m+r mirror 2r+2m-j
#pragma unroll
      for (int j = R + m + 1; j <= 2 * R; ++j) mirror_into(w[j], az.face[1], p - R + j, w[2 * R + 2 * m - j]);
    }
  }
}

// Where coordinate c of an axis lies in the rank's storage, for tables and
// fields indexed by it: wrapped on a periodic axis, else clamped to the
// stored points (a pack's points past the region it computes are computed
// and never kept: any stored point serves them).
__device__ __forceinline__ int stored_coordinate(const ClusterAxis& a, int c) {
  if (a.periodic) {
    const int g = c % a.n;
    return g < 0 ? g + a.n : g;
  }
  return min(max(c, a.load_lo), a.load_hi - 1);
}

// Where coordinate c of an axis is read from: wrapped on a periodic axis, as
// is where data lies; false where nothing is stored (never read).
__device__ __forceinline__ bool source_coordinate(const ClusterAxis& a, int c, int& g) {
  if (a.periodic) {
    g = c % a.n;
    if (g < 0) g += a.n;
    return true;
  }
  g = c;
  return a.holds_data(c);
}

// The thread-block cluster as the kernels use it: what cooperative_groups'
// cluster_group calls (sm_90's builtins), without that header, which costs
// nvcc 3 s a unit (docs/performance.md, "What a unit costs").
struct Cluster {
  __device__ static void sync() {
    __cluster_barrier_arrive();
    __cluster_barrier_wait();
  }
  __device__ static unsigned block_rank() { return __clusterRelativeBlockRank(); }
  template <class T>
  __device__ static T* map_shared_rank(T* address, int rank) {
    return static_cast<T*>(__cluster_map_shared_rank(address, rank));
  }
};

// A level in shared memory: `rows` rows of `width` points (a multiple of the
// pack width V), with V spare points before and after so that the x
// neighbours of the first and last packs stay inside the allocation.
template <class Real>
__host__ __device__ constexpr int level_stride(int width, int rows) {
  return width * rows + 2 * Pack<Real>::width;
}

extern __shared__ __align__(16) unsigned char cluster_shared[];

// A level (2D) or a plane (3D) in shared memory: shared point 0 is global
// (xbase, ybase); rows are W points apart.
struct SharedPlane {
  int W, xbase, ybase;
  __device__ __forceinline__ int at(int x, int y) const { return (y - ybase) * W + (x - xbase); }
};

// Ghost points of physical faces in u, from FaceRule, where the next step
// reads them: x ghost columns on updated rows, y ghost rows on updated
// columns, inside the valid rectangle [vx0, vx1) x [vy0, vy1).
// False (block-uniform) where no face is within reach: nothing to wait for.
template <int R, class Real>
__device__ __forceinline__ bool fill_ghosts_2d(Real* u, const ClusterAxis& ax, const ClusterAxis& ay,
                                               const SharedPlane& s, int vx0, int vx1, int vy0, int vy1) {
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
      if (ax.ghosts[side] && x >= vx0 && x < vx1 && src >= vx0 && src < vx1)
        u[s.at(x, y)] = ax.face[side].ghost(x, u[s.at(src, y)]);
    }
  }
  if (y_ghosts) {
    const int first = max(vx0, ax.upd_lo), ncols = min(vx1, ax.upd_hi) - first;
    for (int i = tid; i < 2 * R * ncols; i += nthreads) {
      const int j = i / ncols, x = first + i % ncols, side = j / R;
      const int y = side == 0 ? j - R : ay.n + j - R;
      const int src = ay.face[side].source(y);
      if (ay.ghosts[side] && y >= vy0 && y < vy1 && src >= vy0 && src < vy1)
        u[s.at(x, y)] = ay.face[side].ghost(y, u[s.at(x, src)]);
    }
  }
  return true;
}

// Lane v's x neighbours in a pack of V points: minus[j] and plus[j] the
// points j left and right of it, from the pack or, past its ends, from
// left[j - v] and right[v + j - V + 1] (left[j], right[j]: the point j
// before the pack's first, after its last). v is a constant once the lanes
// unroll, so each is a register.
template <int R, class Real>
__device__ __forceinline__ void pack_x_neighbours(const Pack<Real>& pack, const Real (&left)[R + 1],
                                                  const Real (&right)[R + 1], int v, Real (&minus)[R + 1],
                                                  Real (&plus)[R + 1]) {
  constexpr int V = Pack<Real>::width;
#pragma unroll
  for (int j = 1; j <= R; ++j) {
    minus[j] = v - j >= 0 ? pack.v[v - j] : left[j - v];
    plus[j] = v + j < V ? pack.v[v + j] : right[v + j - V + 1];
  }
}

// A value the compiler must keep as it is: short of registers, it would
// otherwise recompute a thread's fixed flags from their inputs wherever they
// are tested (in the 3D pipeline's steady iterations, ~18 instructions a level).
__device__ __forceinline__ unsigned opaque(unsigned v) {
  asm volatile("mov.b32 %0, %0;" : "+r"(v));
  return v;
}
__device__ __forceinline__ int opaque(int v) { return static_cast<int>(opaque(static_cast<unsigned>(v))); }

// ------------------------------------------------ sources in the pipeline ---
//
// A launch adds each source at every level it produces, as the host adds it
// after step n: the point's Update::force with fused(f(t_n), q, 0), sources
// in config order, before a Dirichlet face point is set back to g. So a
// source may switch on in the middle of a launch, and levels computed twice
// (the halos of temporal blocking, a neighbour rank's points) carry it too.
// A source's points are boxes of the rank's coordinates (a point source's
// 2^D points, a Gaussian's box; a periodic axis splits a box where it wraps),
// each with its source's factors along its axes (SourceTerm): a short list,
// a few numbers an axis however many points a box holds (SourceBox, made
// on the host: source_boxes.hpp). A thread with a box over its pack
// (source_lanes) takes the kernels' general path and finds them again
// there; the others keep one flag (kernel_2d.cuh, kernel_3d_pipeline.cuh).

template <class Real>
struct ClusterSources {
  const SourceBox* boxes = nullptr;
  int count = 0;
  int sources = 0;
  const Real* weights = nullptr;  // the boxes' factors along their axes
  const Real* factors = nullptr;  // f(t_n) of source s at the launch's step m (from 0): [m * sources + s]
  // f(t_n) of `source` at the launch's step m.
  __device__ Real factor(int source, int m) const { return factors[m * sources + source]; }
  // What `box` adds with q at the level that the launch's step m makes.
  __device__ Real force(const SourceBox& box, int m, Real q) const { return fused(factor(box.source, m), q, Real(0)); }
};

// The source boxes over the pack of V points from x (in 3D, of row y too: a
// thread's pack for a whole sweep), a bit each.
template <int D, class Real>
__device__ __forceinline__ unsigned source_lanes(const ClusterSources<Real>& sources, const ClusterGeometry<D>& geo,
                                                 int x, int y) {
  constexpr int V = Pack<Real>::width;
  unsigned lanes = 0;
  for (int e = 0; e < sources.count; ++e) {
    const SourceBox box = sources.boxes[e];
    bool in_pack = false;
#pragma unroll
    for (int v = 0; v < V; ++v) in_pack = in_pack || box.holds(0, wrapped_coordinate(geo.axis[0], x + v));
    if (in_pack && (D == 2 || box.holds(1, wrapped_coordinate(geo.axis[1], y)))) lanes |= 1u << e;
  }
  return lanes;
}

// `result` with source box e added: the pack of V points from (x, y, z) (z:
// 3D) of the level that the launch's step m makes, `start` where that is
// the first step. The 2D kernels add the boxes in shared memory after a
// strip of rows, the 3D kernel in the iterations it does not count as
// steady: the rare path stays out of the stencil's loop. (Inline: a call
// would save the stencil's registers around it, and a kernel parameter whose
// address is taken is copied to local memory.)
template <int D, class Real, class Eq, Form F>
__device__ __forceinline__ Pack<Real> add_source_box(Pack<Real> result, int e, const ClusterSources<Real>& sources,
                                                     const ClusterGeometry<D>& geo, int x, int y, int z, int m,
                                                     bool start, const typename Eq::template Update<Real>& up,
                                                     const PointUpdates<D, Real, Eq>& updates) {
  constexpr int V = Pack<Real>::width;
  const SourceBox box = sources.boxes[e];
  const int gy = wrapped_coordinate(geo.axis[1], y), gz = D == 3 ? wrapped_coordinate(geo.axis[D - 1], z) : 0;
  if (!box.holds(1, gy) || (D == 3 && !box.holds(D - 1, gz))) return result;
#pragma unroll
  for (int v = 0; v < V; ++v) {
    const int gx = wrapped_coordinate(geo.axis[0], x + v);
    if (!box.holds(0, gx)) continue;
    const Real q = box.q<D, Real>(sources.weights, gx, gy, gz);
    if (q == Real(0)) continue;  // a point of the box that is not the source's
    typename Eq::template Update<Real> at = up;
    if constexpr (F == Form::point) {
      Index<D> i{};
      i[0] = gx, i[1] = gy;
      long p = geo.lead + gx + (gy + geo.halo) * geo.stride[1];
      if constexpr (D == 3) i[D - 1] = gz, p += (gz + geo.halo) * geo.stride[D - 1];
      at = updates.at(p, i);
    }
    result.v[v] = at.force(result.v[v], sources.force(box, m, q), start);
  }
  return result;
}
// The boxes at `lanes` (source_lanes) added, in config order.
template <int D, class Real, class Eq, Form F>
__device__ __forceinline__ Pack<Real> add_sources(Pack<Real> result, unsigned lanes,
                                                  const ClusterSources<Real>& sources, const ClusterGeometry<D>& geo,
                                                  int x, int y, int z, int m, bool start,
                                                  const typename Eq::template Update<Real>& up,
                                                  const PointUpdates<D, Real, Eq>& updates) {
  for (; lanes; lanes &= lanes - 1)
    result = add_source_box<D, Real, Eq, F>(result, __ffs(lanes) - 1, sources, geo, x, y, z, m, start, up, updates);
  return result;
}

// ----------------------------------------------- receivers in the pipeline ---
//
// A launch records the receivers' points (Backend::record_samples) at each
// level whose step is sampled, as it makes it: the block that owns a point
// (its tile, in the launch's window) writes the level's value into the
// backend's sample rows, so sample steps end no chunk. The points are sorted
// (3D: by y, then x; 2D: by x), and a thread finds its own by a binary search
// where it records them; the flag that marks a thread with a source's point
// marks one with a receiver's too.

// The thread's sample points: [begin, end) of those with x in [x_lo, x_hi)
// (3D: and in row y).
template <int D>
__device__ __forceinline__ void sample_range(const SamplePoint* points, int count, int y, int x_lo, int x_hi,
                                             int& begin, int& end) {
  auto bound = [&](int x) {  // the first point not before (y, x)
    int lo = 0, hi = count;
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      const SamplePoint p = points[mid];
      if ((D == 3 && p.i[1] < y) || ((D == 2 || p.i[1] == y) && p.i[0] < x))
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  };
  begin = bound(x_lo), end = x_hi > x_lo ? bound(x_hi) : begin;
}

// Writes the pack of V points from x in plane z (the thread's sample points
// [begin, end)) into the sample row (3D: a thread's pack column is its own):
// the level made, or the one before it. (Chosen lane by lane: choosing a
// pack would copy the packs to local memory.)
template <class Real>
__device__ __forceinline__ void record_samples_3d(const Pack<Real>& level, const Pack<Real>& before,
                                                  const ClusterSamples<Real>& samples, int begin, int end, int x,
                                                  int z, int row) {
  for (int k = begin; k < end; ++k) {
    const SamplePoint point = samples.points[k];
    if (point.i[2] != z) continue;
    Real v = 0;
#pragma unroll
    for (int lane = 0; lane < Pack<Real>::width; ++lane)
      if (point.i[0] == x + lane) v = samples.previous ? before.v[lane] : level.v[lane];
    samples.rows[static_cast<long>(row) * samples.count + point.slot] = v;
  }
}

// ------------------------------------------- the flux form (Form::flux) ---
//
// Where the heat's alpha varies, the stencil is the flux form over the pair
// coefficients K (FluxPairs, solver/media.hpp). A point's: plus[a][j - 1]
// of the pair from the point to +j along axis a, minus[a][j - 1] of the pair
// from -j to the point.
template <int D, int R, class Real>
struct FluxLane {
  Real plus[D][R], minus[D][R];
};
// The point c's: from the tables along the layers' axis, or a file's alpha
// by the pairs' harmonic means. Coordinates are stored_coordinate's: a point
// past the region a step computes is computed from any stored values and
// never kept.
template <int D, int R, class Real>
__device__ __forceinline__ FluxLane<D, R, Real> flux_lane(const FluxPairs<D, R, Real>& f, const ClusterGeometry<D>& geo,
                                                          const int (&c)[D]) {
  int s[D];
#pragma unroll
  for (int a = 0; a < D; ++a) s[a] = stored_coordinate(geo.axis[a], c[a]);
  FluxLane<D, R, Real> k;
  if (f.alpha) {
    auto offset = [&](const int(&i)[D]) {
      long o = geo.lead + i[0];
#pragma unroll
      for (int a = 1; a < D; ++a) o += (i[a] + geo.halo) * geo.stride[a];
      return o;
    };
    const long q = offset(s);
#pragma unroll
    for (int a = 0; a < D; ++a)
#pragma unroll
      for (int j = 1; j <= R; ++j) {
        int hi[D], lo[D];
#pragma unroll
        for (int b = 0; b < D; ++b) hi[b] = lo[b] = s[b];
        hi[a] = stored_coordinate(geo.axis[a], c[a] + j), lo[a] = stored_coordinate(geo.axis[a], c[a] - j);
        k.plus[a][j - 1] = f.file_pair(a, j, q, offset(hi));
        k.minus[a][j - 1] = f.file_pair(a, j, offset(lo), q);
      }
    return k;
  }
  int along = s[0];
#pragma unroll
  for (int a = 1; a < D; ++a) along = f.axis == a ? s[a] : along;
#pragma unroll
  for (int a = 0; a < D; ++a)
#pragma unroll
    for (int j = 1; j <= R; ++j) {
      k.plus[a][j - 1] = f.table_pair(a, j, along);
      k.minus[a][j - 1] = a == f.axis ? f.table_pair(a, j, stored_coordinate(geo.axis[a], c[a] - j)) : k.plus[a][j - 1];
    }
  return k;
}
// Where alpha is constant or in layers, a point's K depend only on its
// coordinate along the layers' axis: a table of them by that coordinate
// (FluxLane padded to 16 bytes: a few vector loads), made once for the
// kernel object. Off x, a pack's points share theirs (one entry a pack and
// row or plane); along x each lane has its own.
template <int D, int R, class Real>
struct alignas(16) FluxEntry {
  FluxLane<D, R, Real> k;
};
// The entries reach flux_table_pad points past the stored ones at both
// ends, made for those coordinates as they are (flux_lane wraps or clamps
// them): a kernel whose points stay within that reach indexes the table by
// the coordinate itself (entry: no wrapping or clamping a point).
inline constexpr int flux_table_pad = 64;
template <int D, int R, class Real>
struct FluxTable {
  const FluxEntry<D, R, Real>* at = nullptr;  // [c - lo], c the coordinate along `axis` in [lo, hi); null: none
  // [c - lo]: the last coordinate up to which every entry is c's, bit for
  // bit (a layer's inside: the 2D columns kernels take one entry for the
  // rows of an iteration that lie in one).
  const int* same_to = nullptr;
  int axis = 0, lo = 0, hi = 0;
  __device__ const FluxLane<D, R, Real>& lane(const ClusterGeometry<D>& geo, const int (&c)[D]) const {
    int along = stored_coordinate(geo.axis[0], c[0]);
#pragma unroll
    for (int a = 1; a < D; ++a)
      if (axis == a) along = stored_coordinate(geo.axis[a], c[a]);
    return entry(along);
  }
  __device__ const FluxLane<D, R, Real>& entry(int c) const { return at[c - lo].k; }
};
// An entry's pairs by 16-byte loads (a FluxLane of scalars loads one at a time).
template <int D, int R, class Real>
__device__ __forceinline__ FluxLane<D, R, Real> load_flux_entry(const FluxEntry<D, R, Real>* entry) {
  constexpr int vectors = sizeof(FluxEntry<D, R, Real>) / sizeof(uint4);
  static_assert(sizeof(FluxEntry<D, R, Real>) % sizeof(uint4) == 0);
  union {
    FluxEntry<D, R, Real> entry;
    uint4 v[vectors];
  } loaded;
#pragma unroll
  for (int i = 0; i < vectors; ++i) loaded.v[i] = __ldg(reinterpret_cast<const uint4*>(entry) + i);
  return loaded.entry.k;
}
// Entry k: the K of the point lo + k along the axis (0 along the others).
template <int D, int R, class Real>
__global__ void __launch_bounds__(256) make_flux_table(FluxEntry<D, R, Real>* table, const FluxPairs<D, R, Real> f,
                                                       const ClusterGeometry<D> geo, int lo, int n) {
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) {
    int c[D];
#pragma unroll
    for (int a = 0; a < D; ++a) c[a] = f.axis == a ? lo + k : 0;
    table[k].k = flux_lane(f, geo, c);
  }
}

}  // namespace heatwave::cuda
