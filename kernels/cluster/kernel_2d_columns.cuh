// cuda-cluster, 2D: the columns family (issue 36), register streaming as
// in EBISU (ICS'23), every level of a column in registers.
//
// A block of NT threads owns a strip of NT columns, one a thread; the
// reach = K r columns at each side are its x halo (recomputed), so NT - 2
// reach are kept. It streams a segment of rows in chunks of C rows, all K
// levels in one sweep: in iteration i, level 0 loads chunk i and level t
// computes chunk i - t. A thread keeps, for each level, its column's chunk
// that the next level reads, the r rows before it and (two levels) the
// chunk before it, in registers: y neighbours never touch shared memory. x
// neighbours come from one shared buffer a level (two chunks, by parity):
// level t reads level t-1's chunk i-t, written in iteration i-1, and writes
// its own for level t+1 to read in iteration i+1. So an iteration has one
// barrier for all levels and C rows. In the fp32 kernels of the uniform
// form a column's chunk lies in the buffer as a 16-byte plane
// (columns_plane): a level reads a neighbour column's chunk, and writes its
// own, in one shared access where a row at a time took C.
// The next chunk's loads are issued an iteration ahead into registers.
//
// K is a template argument, as is the buffers' row stride: the levels
// unroll into straight code whose shared-memory offsets are immediates (a
// run-time level count tested at each level, and stored at each, made the
// steady iteration 3x the instructions: H100 SASS, heat fp64 r 1). A launch
// runs a compiled K: the most levels, and the powers of two below
// (columns_levels_compiled, plan.hpp); launch_steps splits the rest.
//
// Faces. Level 0 is read from storage: wrapped on a periodic axis, its halo
// past an exchanged face, its ghosts (the backend fills them) past a
// physical one. x ghosts follow FaceRule at every level: the thread of the
// column a ghost mirrors writes the ghost into the shared buffer beside its
// own value, and a Dirichlet face point's g is written once, so no level
// tests for x faces and no extra barrier holds a face strip (prefilling
// the ghosts at the top of an iteration, with a barrier, held the strip
// 1.4x the others, H100, bench/streaming_2d.cu). y ghosts come from the
// thread's own window (static offsets), in the iterations whose rows lie
// within r of a y face only. The stencil is LaplacianWeights::start, then
// add in axis order, and the update the equation's: bitwise equal to the
// other backends.
//
// What varies (Form::flux: the heat's alpha constant or in layers, its pair
// coefficients from FluxTable; the update the same), and sources: a point's
// pairs are its column's (layers along x) or its row's (along y: a load the
// warp shares), from the table by the coordinate itself (it reaches past
// the points the levels make). Form::point (the waves' c and gamma
// constant, in layers, with absorbing faces): a point's update is one load
// from its column's x class's updates by row (ColumnUpdates, read out of the
// table by axis classes), indexed by the row itself (it reaches as the
// pairs' table does); where a warp's columns share an x class, as all but
// those of an x absorbing layer do, its loads are one. A thread whose
// column (the one it computes: its own, or the column its ghost mirrors)
// holds a source point adds it as the host does, Update::force before a
// Dirichlet point is set back to g, in the general path; the block takes
// that path in the iterations whose rows reach its sources' rows, as it
// does near a y face. Receivers
// (Backend::record_samples) are recorded in those iterations too: after the
// levels, the thread that keeps a receiver's column writes each sampled
// level at the receiver's row (or the level before it, u^{m-1}) into its
// sample row, so sample steps end no chunk. Kernels with sources, and with
// receivers, are their own (ColumnEvents): the values that find sources,
// held through the sweep, cost the kernels without 5-7% (H100, heat fp64
// r 1), and the receivers' code cost the sources' kernels registers (fp32
// heat r 1 k 12: 134 bytes of spills; its source row fell 7%).
#pragma once
#include "kernels/cluster/kernel_object.cuh"
#include "kernels/cluster/update_classes.cuh"

namespace heatwave::cuda {

// Rows a chunk: 16 bytes of a column (r at least: a chunk holds the r rows
// after the chunk before it). A shared buffer's row: the widest block and
// its r pads each side (a constant: immediate offsets).
template <class Real, int R>
inline constexpr int columns_chunk = std::max<int>(R, 16 / sizeof(Real));
template <int R>
inline constexpr int columns_row = columns_threads + 2 * R;
// A shared buffer holds its chunk in planes of P rows, a column's P values
// of a plane side by side: one 16-byte access (a Pack) where a row at a
// time took P, but a level's 2 r C neighbour values are live at once.
// Planes where the registers allow: fp32, the uniform form (heat fp32 r 1
// k 8 +16%, the wave fp32 k 6 +9%). Elsewhere P is 1, rows: fp64's chunk
// is two rows (+1-3% at k 12) and its k 8 heat crossed 128 registers (one
// block an SM: -32%); the flux and point forms' kernels hold their
// coefficients and spilled (H200, docs/performance.md).
template <class Real, Form F>
inline constexpr int columns_plane = sizeof(Real) == 4 && F == Form::uniform ? Pack<Real>::width : 1;
template <class Real, int R>
constexpr std::size_t columns_shared_bytes(int levels) {
  return sizeof(Real) * static_cast<std::size_t>(2 * levels * columns_chunk<Real, R> * columns_row<R>);
}

// The ghost rules of the four faces as the kernel applies them, made on the
// host from FaceRule::layer (the same Real sign and shift: bitwise the same
// ghosts): ghost j (1..r) past face [axis][side] is sign u[mirror] + shift[j];
// g is the Dirichlet value. Evaluating FaceRule in the kernel's unrolled
// levels took a unit's build past four minutes.
template <class Real, int R>
struct ColumnFaces {
  Real sign[2][2], shift[2][2][R + 1], g[2][2];
  __device__ __forceinline__ Real ghost(int axis, int side, int j, Real mirror) const {
    return sign[axis][side] * mirror + shift[axis][side][j];
  }
  static ColumnFaces make(const ClusterGeometry<2>& geo) {
    ColumnFaces f{};
    for (int a = 0; a < 2; ++a)
      for (int side = 0; side < 2; ++side) {
        const FaceRule& rule = geo.axis[a].face[side];
        f.g[a][side] = static_cast<Real>(rule.value);
        for (int j = 1; j <= R; ++j) {
          const auto layer = rule.template layer<Real>(side == 0 ? -j : geo.axis[a].n - 1 + j);
          f.sign[a][side] = layer.sign, f.shift[a][side][j] = layer.shift;
        }
      }
    return f;
  }
};

// The rows of [lo, hi) that are rows [p_lo, p_hi) of the axis (wrapped on a
// periodic one, where 0 <= p_lo < p_hi <= n): the first and the last, first >
// last where none.
__device__ __forceinline__ void rows_of(const ClusterAxis& a, int p_lo, int p_hi, int lo, int hi, int& first,
                                        int& last) {
  if (!a.periodic) {
    first = max(lo, p_lo), last = min(hi, p_hi) - 1;
    return;
  }
  const int at_lo = wrapped_coordinate(a, lo), at_last = wrapped_coordinate(a, hi - 1);
  first = at_lo >= p_lo && at_lo < p_hi ? lo : lo + (p_lo - at_lo + a.n) % a.n;
  last = at_last >= p_lo && at_last < p_hi ? hi - 1 : hi - 1 - (at_last - (p_hi - 1) + a.n) % a.n;
}

// Receivers: the value of point (x, y) at a sampled step (`made`) or
// (u^{m-1}) before it into sample row `row` of each receiver point there,
// from point `from` on (sorted by x, then y).
template <class Real>
__device__ __forceinline__ void record_column(const ClusterSamples<Real>& samples, int from, int x, int y, int row,
                                              Real before, Real made) {
  for (int k = from; k < samples.count; ++k) {
    const SamplePoint p = samples.points[k];
    if (p.i[0] != x || p.i[1] > y) break;
    if (p.i[1] == y) samples.rows[static_cast<long>(row) * samples.count + p.slot] = samples.previous ? before : made;
  }
}

// A point's step with its update: the heat's, or the waves' (the first step: start).
template <bool Wave, class Update, class Real>
__device__ __forceinline__ Real column_step(const Update& update, Real centre, Real older, Real lap, bool starting) {
  if constexpr (!Wave)
    return update.step(centre, centre, lap);
  else if (starting)
    return update.start(centre, older, lap);
  else
    return update.step(centre, older, lap);
}

// Form::point: each x class's updates row by row (the classes' table read
// out along y, made once for the kernel object), so a point's update is one
// load, where the table by classes takes two dependent ones (the row's y
// class, then the entry). Its rows reach as the y classes' map does.
template <class Update>
struct ColumnUpdates {
  const UpdateEntry<Update>* at = nullptr;  // [x_class[x - x_lo] * rows + y - y_lo]
  const int* x_class = nullptr;
  int x_lo = 0, y_lo = 0, rows = 0;
  static constexpr long max_entries = 1L << 21;  // 128 MB of fp64 damped-wave updates
};
template <class Update>
__global__ void __launch_bounds__(256)
    make_column_updates(UpdateEntry<Update>* rows_out, const UpdateClasses<Update> classes, int x_classes, int rows) {
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < static_cast<long>(x_classes) * rows;
       k += static_cast<long>(gridDim.x) * blockDim.x)
    rows_out[k] = classes.at[classes.y_offset[k % rows] + k / rows];
}

// What a columns kernel adds to the stencil: nothing, sources, or
// receivers (and sources, where the case has them).
enum class ColumnEvents { none, sources, receivers };

template <int R, int K, class Real, class Eq, Form F, ColumnEvents E>
__global__ void __launch_bounds__(columns_threads, columns_blocks_per_sm(sizeof(Real) == 8))
    columns_kernel_2d(const Real* __restrict__ u, const Real* __restrict__ u_prev, Real* __restrict__ out_u,
                      Real* __restrict__ out_u_prev, const ClusterGeometry<2> geo,
                      const LaplacianWeights<2, R, Real> lap, const typename Eq::template Update<Real> up,
                      const __grid_constant__ ColumnFaces<Real, R> faces, const FluxTable<2, R, Real> flux_table,
                      const ClusterSources<Real> sources, const bool start, const int segment_rows,
                      const ClusterSamples<Real> samples,
                      const ColumnUpdates<typename Eq::template Update<Real>> point) {
  static_assert(F != Form::flux_tiles, "the columns kernels take alpha constant or in layers, no file's");
  // The rows the levels make reach K r + (K + 1) C past the window: the
  // layers' table's entries and the point form's updates by row.
  static_assert(K * R + (K + 1) * columns_chunk<Real, R> <= flux_table_pad);
  constexpr int C = columns_chunk<Real, R>, W = columns_row<R>, P = columns_plane<Real, F>, reach = K * R;
  static_assert(C % P == 0);
  constexpr bool Wave = Eq::levels == 2;
  constexpr bool Events = E != ColumnEvents::none, Records = E == ColumnEvents::receivers;
  Real* const shared = reinterpret_cast<Real*>(cluster_shared);
  auto buffer = [&](int level, int parity) { return shared + (level * 2 + parity) * C * W + R * P; };
  // Row c of column col in a buffer (c may run on through the buffers after
  // it: each is C rows). (Rows, P 1: the expressions as before planes: the
  // flux and point forms' units compile to the same PTX, byte for byte; a
  // change of form alone moved their registers, and a spill costs 6-10%.)
  auto at = [](int c, int col) {
    if constexpr (P == 1)
      return c * W + col;
    else
      return c / P * W * P + col * P + c % P;
  };
  // Planes: a column's chunk in, and out, a Pack a plane.
  auto read_chunk = [&](const Real* b, int col, Real(&values)[C]) {
#pragma unroll
    for (int c = 0; c < C; c += P) {
      const Pack<Real> plane = load_pack(b + at(c, col));
#pragma unroll
      for (int q = 0; q < P; ++q) values[c + q] = plane.v[q];
    }
  };
  auto write_chunk = [&](Real* b, int col, const Real(&values)[C]) {
#pragma unroll
    for (int c = 0; c < C; c += P) {
      Pack<Real> plane;
#pragma unroll
      for (int q = 0; q < P; ++q) plane.v[q] = values[c + q];
      store_shared_pack(b + at(c, col), plane);
    }
  };
  const ClusterAxis& ax = geo.axis[0];
  const ClusterAxis& ay = geo.axis[1];
  const int NT = blockDim.x, tid = threadIdx.x;
  const int strip = ax.out_lo + static_cast<int>(blockIdx.x) * (NT - 2 * reach) - reach;
  const int x = strip + tid;
  const int y0 = ay.out_lo + static_cast<int>(blockIdx.y) * segment_rows, y1 = min(ay.out_hi, y0 + segment_rows);
  const int ys = y0 - reach;  // the segment's cone: level t is valid from ys + t r
  const int keep_lo = max(y0, ay.upd_lo), keep_hi = min(y1, ay.upd_hi);  // the rows stored
  const bool keep = tid >= reach && tid < NT - reach && x >= max(ax.out_lo, ax.upd_lo) && x < min(ax.out_hi, ax.upd_hi);

  // x faces. An x ghost's thread streams the column it mirrors (where the
  // block holds it): it loads that column, reads that column's x
  // neighbours, so computes its values bit for bit, and writes the ghost
  // FaceRule makes of each, sign u + shift (sign +-1: fused, the same bits).
  // Other threads write their values (sign 1, shift -0: the same bits), a
  // Dirichlet face point none (its g is written here once). (Each side by
  // name: a run-time index into the parameters copies them to local memory.)
  const bool fixed_x = ax.fixed(0, x) || ax.fixed(1, x);
  const int mirror_lo = tid - 2 * x, mirror_hi = tid + 2 * (ax.n - 1 - x);  // the thread of the column mirrored
  const bool ghost_lo = ax.ghosts[0] && x < 0 && x >= -R && mirror_lo < NT;
  const bool ghost_hi = ax.ghosts[1] && x >= ax.n && x < ax.n + R && mirror_hi >= 0;
  const int reads = ghost_lo ? mirror_lo : ghost_hi ? mirror_hi : tid;  // the thread whose x neighbours it reads
  Real sign = 1, shift = -Real(0);
  if (ghost_lo || ghost_hi) sign = ghost_lo ? faces.sign[0][0] : faces.sign[0][1];
#pragma unroll
  for (int j = 1; j <= R; ++j) {
    if (ghost_lo && x == -j) shift = faces.shift[0][0][j];
    if (ghost_hi && x == ax.n - 1 + j) shift = faces.shift[0][1][j];
  }
  const int computed = x + reads - tid;  // the column whose values the thread computes
  int gx = 0;
  const bool stored_x = source_coordinate(ax, computed, gx);
  const int chunks = (y1 - ys + C - 1) / C;  // level K's last chunk ends at or past y1

  // Events: whether the thread's column holds a source's point, and the rows
  // of the block's points (its sweep's rows that wrap to them: level 1 makes
  // rows up to K - 1 chunks past the segment's, the cone of the levels after
  // it); its first receiver point in the segment where the thread keeps a
  // column of the window (the points are sorted by x, then y); the rows of
  // both, block-wide.
  __shared__ int event_rows[2];
  [[maybe_unused]] const int source_x = Events ? wrapped_coordinate(ax, computed) : 0;
  [[maybe_unused]] unsigned sourced = 0;  // the boxes over the thread's column, a bit each
  [[maybe_unused]] int sample_from = -1;  // the first receiver point the thread records, -1: none
  [[maybe_unused]] int sample_lo = 0, sample_hi = -1;  // the rows of its receiver points
  if constexpr (Events) {
    if (tid == 0) event_rows[0] = INT_MAX, event_rows[1] = INT_MIN;
    __syncthreads();
    int lo = INT_MAX, hi = INT_MIN;
    for (int e = 0; e < sources.count; ++e) {
      const SourceBox box = sources.boxes[e];
      int first, last;
      rows_of(ay, box.lo[1], box.hi[1], ys, ys + (chunks + K) * C, first, last);
      if (!box.holds(0, source_x) || first > last) continue;
      sourced |= 1u << e, lo = min(lo, first), hi = max(hi, last);
    }
    if (Records && samples.count > 0 && tid >= reach && tid < NT - reach && x >= ax.out_lo && x < ax.out_hi) {
      int begin, end;
      sample_range<2>(samples.points, samples.count, 0, x, x + 1, begin, end);
      for (int k = begin; k < end; ++k) {
        const int y = samples.points[k].i[1];
        if (y < y0 || y >= y1) continue;
        if (sample_from < 0) sample_from = k, sample_lo = y;
        sample_hi = y;  // (sorted by y for an x)
        lo = min(lo, y), hi = max(hi, y);
      }
    }
    if (sourced || sample_from >= 0) atomicMin(&event_rows[0], lo), atomicMax(&event_rows[1], hi);
  }
  // Form::flux: the point's pairs at pairs[y pair_rows], the row's (layers
  // along y) or the column's (along x: the same entry each row). No choice
  // a level: one straight iteration, whose loads the compiler hoists.
  [[maybe_unused]] const FluxEntry<2, R, Real>* pairs = nullptr;
  [[maybe_unused]] int pair_rows = 0;
  if constexpr (F == Form::flux)
    pairs = flux_table.at - flux_table.lo + (flux_table.axis == 1 ? 0 : computed), pair_rows = flux_table.axis;
  // Form::point: the column's updates by row (its x class's).
  [[maybe_unused]] const UpdateEntry<typename Eq::template Update<Real>>* updates = nullptr;
  if constexpr (F == Form::point)
    updates = point.at + static_cast<long>(point.x_class[stored_coordinate(ax, computed) - point.x_lo]) * point.rows -
              point.y_lo;
  if (tid < 2 * R)  // pads: read only by edge columns, whose values are never kept
    for (int b = 0; b < K * 2 * C; ++b) shared[at(b, tid < R ? tid : NT + tid)] = Real(0);
  if (fixed_x) {
    const Real g = ax.fixed(0, x) ? faces.g[0][0] : faces.g[0][1];
    for (int b = 0; b < K * 2 * C; ++b) shared[at(b, R + tid)] = g;
  }
  // Whether the block holds x ghosts or a Dirichlet point (its face paths);
  // the barrier also orders the writes above before the first level reads them.
  const bool face_strip = __syncthreads_or(ghost_lo || ghost_hi || fixed_x);
  [[maybe_unused]] const int event_lo = Events ? event_rows[0] : 0, event_hi = Events ? event_rows[1] : 0;

  // Level L: the R rows before the chunk level L+1 reads, that chunk, and
  // (two levels) the chunk before it, level L+2's u^{m-1}.
  Real last[K][R], cur[K][C], old[Wave ? K : 1][C];
#pragma unroll
  for (int L = 0; L < K; ++L) {
#pragma unroll
    for (int j = 0; j < R; ++j) last[L][j] = Real(0);
#pragma unroll
    for (int c = 0; c < C; ++c) cur[L][c] = Real(0), old[Wave ? L : 0][c] = Real(0);
  }
  const long column = geo.lead + geo.halo * geo.stride[1] + gx;
  auto load_chunk = [&](const Real* field, int chunk, Real(&out)[C]) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      int gy;
      out[c] = stored_x && source_coordinate(ay, ys + chunk * C + c, gy) ? field[column + gy * geo.stride[1]] : Real(0);
    }
  };
  const long stored = geo.lead + geo.halo * geo.stride[1] + x;  // this column's first row in the outputs
  auto store_chunk = [&](Real* field, int chunk, const Real(&values)[C]) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int y = ys + chunk * C + c;
      if (y >= keep_lo && y < keep_hi) field[stored + static_cast<long>(y) * geo.stride[1]] = values[c];
    }
  };
  // A level's chunk into its shared buffer (x_faces: the block's face path).
  auto publish = [&](Real* b, const Real(&values)[C], bool x_faces) {
    if constexpr (P == 1) {
#pragma unroll
      for (int c = 0; c < C; ++c)
        if (!x_faces)
          b[at(c, tid)] = values[c];
        else if (!fixed_x)
          b[at(c, tid)] = fused(sign, values[c], shift);
    } else if (!x_faces) {
      write_chunk(b, tid, values);
    } else if (!fixed_x) {
      Real ghosts[C];
#pragma unroll
      for (int c = 0; c < C; ++c) ghosts[c] = fused(sign, values[c], shift);
      write_chunk(b, tid, ghosts);
    }
  };
  Real ahead[C], ahead_prev[C];
  load_chunk(u, 0, ahead);
  if constexpr (Wave) load_chunk(u_prev, -1, ahead_prev);
  for (int i = 0; i < chunks + K; ++i) {
    Real made[C], older[C];  // level t-1's newest chunk; (two levels) level t-2's chunk at level t's rows
#pragma unroll
    for (int c = 0; c < C; ++c) made[c] = ahead[c], older[c] = Wave ? ahead_prev[c] : Real(0);
    if (i + 1 < chunks + K) {
      load_chunk(u, i + 1, ahead);
      if constexpr (Wave) load_chunk(u_prev, i, ahead_prev);
    }
    // Level t (a constant: each level's registers are its own). General: the
    // rows lie within r of a y face or hold a source point; XFaces: the
    // block makes x ghosts.
    auto level = [&]<bool General, bool XFaces, int t>() {
      const int chunk = i - t;
      const Real* xs = buffer(t - 1, chunk & 1);
      // Level t-1's rows: chunk row k in [-R, C + R) of the window.
      auto row = [&](int k) -> Real { return k < 0 ? last[t - 1][R + k] : k < C ? cur[t - 1][k] : made[k - C]; };
      [[maybe_unused]] const bool starting = Wave && t == 1 && start;
      // The x neighbours, j columns to each side of the one read: in planes,
      // their chunks whole; in rows, a row at a time.
      [[maybe_unused]] Real lefts[R][C], rights[R][C];
      if constexpr (P > 1) {
        const int col = XFaces ? reads : tid;
#pragma unroll
        for (int j = 1; j <= R; ++j) read_chunk(xs, col - j, lefts[j - 1]), read_chunk(xs, col + j, rights[j - 1]);
      }
      Real out[C];
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int y = ys + chunk * C + c;
        const Real centre = cur[t - 1][c];
        Real minus[R + 1], plus[R + 1];
        const int x_at = at(c, XFaces ? reads : tid);
#pragma unroll
        for (int j = 1; j <= R; ++j)
          if constexpr (P > 1)
            minus[j] = lefts[j - 1][c], plus[j] = rights[j - 1][c];
          else
            minus[j] = xs[x_at - j], plus[j] = xs[x_at + j];
        // The operator, x terms first (the flux form: FluxPairs' order, axes then j).
        using Pairs = FluxPairs<2, R, Real>;
        [[maybe_unused]] FluxLane<2, R, Real> k;
        Real lap_value;
        if constexpr (F == Form::flux) {
          k = load_flux_entry(pairs + y * pair_rows);
          lap_value = 0;
#pragma unroll
          for (int j = 1; j <= R; ++j)
            lap_value =
                Pairs::add_pair_terms(lap_value, centre, k.plus[0][j - 1], plus[j], k.minus[0][j - 1], minus[j]);
        } else {
          lap_value = lap.add(0, lap.start(centre), minus, plus);
        }
#pragma unroll
        for (int j = 1; j <= R; ++j) minus[j] = row(c - j), plus[j] = row(c + j);
        bool fixed_y = false;
        if (General) {
          // y ghosts: row d from a face mirrors the rows past it from the
          // window (static offsets: the window stays in registers).
#pragma unroll
          for (int d = 0; d < R; ++d)
#pragma unroll
            for (int j = d + 1; j <= R; ++j) {
              if (ay.ghosts[0] && y == d) minus[j] = faces.ghost(1, 0, j - d, row(c + j - 2 * d));
              if (ay.ghosts[1] && y == ay.n - 1 - d) plus[j] = faces.ghost(1, 1, j - d, row(c + 2 * d - j));
            }
          fixed_y = ay.fixed(0, y) || ay.fixed(1, y);
        }
        if constexpr (F == Form::flux) {
#pragma unroll
          for (int j = 1; j <= R; ++j)
            lap_value =
                Pairs::add_pair_terms(lap_value, centre, k.plus[1][j - 1], plus[j], k.minus[1][j - 1], minus[j]);
        } else {
          lap_value = lap.add(1, lap_value, minus, plus);
        }
        // (Form::point's names only in branches the other forms discard: a
        // name the level lambda captures changes the other kernels' SASS.)
        Real next;
        if constexpr (F == Form::point)
          next = column_step<Wave>(updates[y].update, centre, older[c], lap_value, starting);
        else
          next = column_step<Wave>(up, centre, older[c], lap_value, starting);
        if (Events && General && sourced) {  // config order, f(t_n) of the launch's step t - 1
          const int source_y = wrapped_coordinate(ay, y);
          for (unsigned boxes = sourced; boxes; boxes &= boxes - 1) {
            const SourceBox& box = sources.boxes[__ffs(boxes) - 1];
            if (!box.holds(1, source_y)) continue;
            const Real q = box.q<2, Real>(sources.weights, source_x, source_y, 0);
            if (q == Real(0)) continue;
            const Real s = sources.force(box, t - 1, q);
            if constexpr (F == Form::point)
              next = updates[y].update.force(next, s, starting);
            else
              next = up.force(next, s, starting);
          }
        }
        out[c] = fixed_y ? faces.g[1][y == 0 ? 0 : 1] : next;
      }
      // Shift level t-1's window; (two levels) its chunk before cur becomes level t+1's u^{m-1}.
      Real centres[C];
#pragma unroll
      for (int j = 0; j < R; ++j) last[t - 1][j] = row(C - R + j);
#pragma unroll
      for (int c = 0; c < C; ++c) {
        centres[c] = cur[t - 1][c];
        if constexpr (Wave) older[c] = old[t - 1][c], old[t - 1][c] = cur[t - 1][c];
        cur[t - 1][c] = made[c], made[c] = out[c];
      }
      if (t == K) {
        if (keep && chunk >= 0) {
          store_chunk(out_u, chunk, out);
          if constexpr (Wave) store_chunk(out_u_prev, chunk, centres);
        }
      } else {
        publish(buffer(t, chunk & 1), out, XFaces);
      }
    };
    auto levels = [&]<bool General, bool XFaces, int... T>(std::integer_sequence<int, T...>) {
      publish(buffer(0, i & 1), made, XFaces);
      (level.template operator()<General, XFaces, T + 1>(), ...);
      if constexpr (Records) {  // (apart from General: one test on both made the kernels without capture what it names)
        if constexpr (General) {
          // Receivers, after the levels, from where each level's chunk is
          // now: level t's chunk i - t in level t's shared buffer (t < K: the
          // thread's own column, written by itself) or in made (level K), and
          // (two levels) the level before it in level t - 1's buffer (its
          // other parity). Held in registers to record inside the levels,
          // these values cost the steady path registers (H100 ptxas, heat fp64
          // r 1 k 8: 105 -> 136, past the 128 of two blocks an SM). A
          // Dirichlet x face's buffer holds g at every level; its thread
          // computes its column like any other. Only the rows of the
          // thread's receiver points look for them: a search is dependent
          // loads, and the blocks that record set a small launch's time
          // (H100, a 4001 x 2001 fp32 shot on columns k 6, searching every
          // row of the general path: 131.6 Gcells/s, these rows: 152.8).
          if (sample_from >= 0 && ys + (i - K) * C <= sample_hi && ys + i * C > sample_lo) {
            auto record_row = [&](int t, int row, int c, Real now) {
              const int y = ys + (i - t) * C + c;
              if (y < sample_lo || y > sample_hi) return;
              const Real before = Wave ? buffer(t - 1, (i - t) & 1)[at(c, tid)] : now;
              record_column(samples, sample_from, x, y, row, before, now);
            };
            int row;
#pragma unroll 1
            for (int t = 1; t < K; ++t)
              if (samples.sampled(t, row))
#pragma unroll 1
                for (int c = 0; c < C; ++c) record_row(t, row, c, buffer(t, (i - t) & 1)[at(c, tid)]);
            if (samples.sampled(K, row)) {
              const Real g = ax.fixed(0, x) ? faces.g[0][0] : faces.g[0][1];
#pragma unroll
              for (int c = 0; c < C; ++c) {
                const int y = ys + (i - K) * C + c;
                record_row(K, row, c, fixed_x && !ay.fixed(0, y) && !ay.fixed(1, y) ? g : made[c]);
              }
            }
          }
        }
      }
    };
    // The rows the levels compute this iteration, [ys + (i - K) C, ys + i C):
    // a block-uniform choice of path.
    const int rows_lo = ys + (i - K) * C, rows_hi = ys + i * C;
    if ((ay.ghosts[0] && rows_lo < R) || (ay.ghosts[1] && rows_hi > ay.n - R) ||
        (Events && rows_lo <= event_hi && rows_hi > event_lo))
      levels.template operator()<true, true>(std::make_integer_sequence<int, K>{});
    else if (face_strip)
      levels.template operator()<false, true>(std::make_integer_sequence<int, K>{});
    else
      levels.template operator()<false, false>(std::make_integer_sequence<int, K>{});
    __syncthreads();
  }
}

// The columns kernels of a form, radius, precision and equation, by level
// count: those compiled (columns_levels_compiled), null elsewhere.
template <int R, class Real, class Eq>
using ColumnsKernel2D = void (*)(const Real*, const Real*, Real*, Real*, ClusterGeometry<2>,
                                 LaplacianWeights<2, R, Real>, typename Eq::template Update<Real>, ColumnFaces<Real, R>,
                                 FluxTable<2, R, Real>, ClusterSources<Real>, bool, int, ClusterSamples<Real>,
                                 ColumnUpdates<typename Eq::template Update<Real>>);
template <int R, class Real, class Eq>
struct ColumnsKernels2D {
  static constexpr int most = max_levels_columns(R, Eq::levels, sizeof(Real) == 8);
  ColumnsKernel2D<R, Real, Eq> by_levels[most + 1] = {};
};
template <int R, class Real, class Eq, Form F, ColumnEvents E>
ColumnsKernels2D<R, Real, Eq> columns_kernels_2d() {
  ColumnsKernels2D<R, Real, Eq> kernels;
  [&]<int... K>(std::integer_sequence<int, K...>) {
    auto add = [&]<int L>() {
      if constexpr (columns_levels_compiled(R, Eq::levels, sizeof(Real) == 8, L))
        kernels.by_levels[L] = columns_kernel_2d<R, L, Real, Eq, F, E>;
    };
    (add.template operator()<K + 1>(), ...);
  }
  (std::make_integer_sequence<int, ColumnsKernels2D<R, Real, Eq>::most>{});
  return kernels;
}
// A form's columns kernels (r 1-4) of a precision and equation and their
// events (ColumnEvents): declared (`which`: extern) in the unit of the columns
// object, built (`which` empty) in a unit of their own (CMakeLists.txt
// generates both).
#define HEATWAVE_CLUSTER_COLUMNS_FORM_2D(which, Real, Eq, F, E)                                       \
  which template ColumnsKernels2D<1, Real, Eq> columns_kernels_2d<1, Real, Eq, F, ColumnEvents::E>(); \
  which template ColumnsKernels2D<2, Real, Eq> columns_kernels_2d<2, Real, Eq, F, ColumnEvents::E>(); \
  which template ColumnsKernels2D<3, Real, Eq> columns_kernels_2d<3, Real, Eq, F, ColumnEvents::E>(); \
  which template ColumnsKernels2D<4, Real, Eq> columns_kernels_2d<4, Real, Eq, F, ColumnEvents::E>();

namespace {

// The kernel object of a columns plan: checks the plan against the case and
// the device, and launches a block a strip and segment.
template <class Real, class Eq>
class ColumnsKernel2DObject final : public ClusterKernelBase<2, Real, Eq> {
  using Base = ClusterKernelBase<2, Real, Eq>;
  using Base::geo_, Base::shared_bytes_, Base::active_clusters_, Base::threads_x_, Base::threads_y_;

 public:
  bool configure(const Problem& problem, const LocalDomain<2>& domain, const ClusterPlan& q,
                 const ClusterMedia<2, Real>& media, std::string& reason) {
    if (!this->set_geometry(problem, domain, q, media, reason)) return false;
    const int R = problem.radius, K = max_levels_columns(R, Eq::levels, sizeof(Real) == 8);
    const std::string plan = "columns plan (" + q.text() + ")";
    if (q.k < 1 || q.k > K || q.tile_x < 32 || q.tile_x > columns_threads || q.tile_x % 32 != 0 ||
        q.tile_x - 2 * q.k * R < 32 || q.tile_y < 0)
      return reason = "invalid " + plan + ": k from 1 to " + std::to_string(K) + " for radius " + std::to_string(R) +
                      (Eq::levels == 2 ? " (two levels)" : "") + ", threads a multiple of 32 up to " +
                      std::to_string(columns_threads) + " keeping 32 columns past the 2 k r of halo, rows >= 0",
             false;
    if (!this->flux_pairs_.empty())
      return reason = plan + " runs alpha constant or in layers (the streaming plans run a file's)", false;
    if constexpr (has_point_form<Eq>)
      if (this->pointwise_ && !make_point_rows(reason)) return reason = plan + " " + reason, false;
    threads_x_ = q.tile_x, threads_y_ = 1;
    with_radius(R, [&]<int RR>() { shared_bytes_ = columns_shared_bytes<Real, RR>(launch_steps(q.k)); });
    if (!this->fits_device(reason)) return false;
    // The fewest blocks at once of the kernels the plan's launches may run
    // (each allowed its shared memory): the case's (with sources or without)
    // and those that record receivers. Each sizes its launches' segments.
    for (const ColumnEvents e : {case_events(), ColumnEvents::receivers}) {
      int& active = active_[static_cast<int>(e)];
      active = INT_MAX;
      with_kernels(e, [&]<int RR>(const ColumnsKernels2D<RR, Real, Eq>& kernels) {
        for (int k = 1; k <= q.k; ++k)
          if (launch_steps(k) == k) active = std::min(active, this->resident_blocks(kernels.by_levels[k]));
      });
    }
    active_clusters_ = active_[static_cast<int>(case_events())];
    if (active_clusters_ == 0 || active_[static_cast<int>(ColumnEvents::receivers)] == 0)
      return reason =
                 plan + ": no block fits an SM (" + std::to_string(shared_bytes_ / 1024) + " KiB of shared memory)",
             false;
    return true;
  }

  // The most levels compiled up to the plan's k and `left`.
  int launch_steps(int left) const override {
    int k = std::min(left, geo_.plan.k);
    while (k > 1 && !columns_levels_compiled(this->radius_, Eq::levels, sizeof(Real) == 8, k)) --k;
    return k;
  }

  void launch(const Real* u, const Real* u_prev, Real* out_u, Real* out_u_prev, int steps, const Box<2>& window,
              long step, const ClusterSamples<Real>& samples, cudaStream_t stream) override {
    if (launch_steps(steps) != steps)
      throw Error(ExitCode::internal, "a columns launch of " + std::to_string(steps) + " steps (not compiled)");
    for (int a = 0; a < 2; ++a)
      geo_.axis[a].out_lo = static_cast<int>(window.lo[a]), geo_.axis[a].out_hi = static_cast<int>(window.hi[a]);
    const ClusterPlan& q = geo_.plan;
    const int kept = q.tile_x - 2 * steps * this->radius_;
    const int strips = (geo_.axis[0].out_hi - geo_.axis[0].out_lo + kept - 1) / kept;
    const int rows = geo_.axis[1].out_hi - geo_.axis[1].out_lo;
    const ClusterSources<Real> sources = this->sources(step, steps, stream);
    const bool start = Eq::levels == 2 && step == 0;
    const ColumnEvents events = samples.count > 0 ? ColumnEvents::receivers : case_events();
    with_kernels(events, [&]<int R>(const ColumnsKernels2D<R, Real, Eq>& kernels) {
      const int segments = q.tile_y > 0 ? (rows + q.tile_y - 1) / q.tile_y
                                        : fastest_segments(strips, rows, steps, columns_chunk<Real, R>,
                                                           active_[static_cast<int>(events)]);
      const int segment_rows = (rows + segments - 1) / segments;
      const dim3 grid(strips, (rows + segment_rows - 1) / segment_rows);
      kernels.by_levels[steps]<<<grid, q.tile_x, columns_shared_bytes<Real, R>(steps), stream>>>(
          u, u_prev, out_u, out_u_prev, geo_, this->template lap<R>(), this->update_, ColumnFaces<Real, R>::make(geo_),
          this->template flux_table<R>(), sources, start, segment_rows, samples, point_rows_);
    });
    HW_CUDA(cudaGetLastError());
  }

 private:
  // Form::point: the updates by x class and row (ColumnUpdates), from the
  // table by axis classes. False, with `reason`, where there is none (a
  // file's c or gamma) or it would be larger than max_entries.
  bool make_point_rows(std::string& reason) {
    using Update = typename Eq::template Update<Real>;
    classes_.make(geo_, this->point_, flux_table_pad);
    const long entries = static_cast<long>(classes_.count(0)) * classes_.mapped(1);
    if (!classes_.view().at || entries > ColumnUpdates<Update>::max_entries)
      return reason =
                 "runs the waves' c and gamma constant, in layers or with absorbing faces, in few enough classes "
                 "along x (the streaming plans run a file's)",
             false;
    column_updates_.allocate(static_cast<std::size_t>(entries));
    const long blocks = std::min<long>((entries + 255) / 256, 4096);
    make_column_updates<Update><<<static_cast<unsigned>(blocks), 256>>>(column_updates_.get(), classes_.view(),
                                                                        classes_.count(0), classes_.mapped(1));
    HW_CUDA(cudaGetLastError());
    HW_CUDA(cudaDeviceSynchronize());
    point_rows_.at = column_updates_.get(), point_rows_.rows = classes_.mapped(1);
    point_rows_.x_class = classes_.view().x_class;
    point_rows_.x_lo = classes_.view().lo[0], point_rows_.y_lo = classes_.view().lo[1];
    return true;
  }

  // The kernels a launch without receivers runs.
  ColumnEvents case_events() const { return this->source_count_ > 0 ? ColumnEvents::sources : ColumnEvents::none; }
  // f.template operator()<R>(kernels) with the case's radius and form, and
  // `events` (the flux form only for an equation with a flux coefficient,
  // the point form for one with another).
  template <class Fn>
  void with_kernels(ColumnEvents events, Fn&& f) const {
    with_radius(this->radius_, [&]<int R>() {
      auto with_events = [&]<Form F>() {
        switch (events) {
          case ColumnEvents::none:
            return f.template operator()<R>(columns_kernels_2d<R, Real, Eq, F, ColumnEvents::none>());
          case ColumnEvents::sources:
            return f.template operator()<R>(columns_kernels_2d<R, Real, Eq, F, ColumnEvents::sources>());
          case ColumnEvents::receivers:
            return f.template operator()<R>(columns_kernels_2d<R, Real, Eq, F, ColumnEvents::receivers>());
        }
      };
      if constexpr (Eq::flux_coefficient != nullptr)
        if (this->flux_) return with_events.template operator()<Form::flux>();
      if constexpr (has_point_form<Eq>)
        if (this->pointwise_) return with_events.template operator()<Form::point>();
      with_events.template operator()<Form::uniform>();
    });
  }

  // Segments a strip (a plan's rows 0) that finish soonest: waves of blocks
  // over the GPU's block slots, times a block's rows (its segment, the cone
  // and the chunks of `chunk` rows that fill and drain the sweep). Filling
  // the slots once is not enough: at 16384^2 (71 strips, 264 slots) 3
  // segments leave 51 slots idle, 11 take three waves of shorter blocks.
  // `active`: the block slots of the launch's kernels.
  int fastest_segments(int strips, int rows, int steps, int chunk, int active) const {
    const int reach = steps * this->radius_;
    int best = 1;
    double best_rows = 0;
    for (int s = 1; s <= std::min(rows, 256); ++s) {
      const long waves = (static_cast<long>(strips) * s + active - 1) / active;
      const double block_rows = waves * ((rows + s - 1) / s + reach + steps * chunk);
      if (s == 1 || block_rows < best_rows) best = s, best_rows = block_rows;
    }
    return best;
  }

  int active_[3] = {0, 0, 0};  // blocks the GPU holds at once, by ColumnEvents
  // Form::point: the table by classes (its x classes' map), each x class's updates by row.
  UpdateClassTable<2, Real, Eq> classes_;
  DeviceBuffer<UpdateEntry<typename Eq::template Update<Real>>> column_updates_;
  ColumnUpdates<typename Eq::template Update<Real>> point_rows_;
};

}  // namespace

// The kernel object of a columns plan (null, with `reason`, where it cannot
// run): declared (`which`: extern) in the unit of the 2D kernel objects,
// built with its uniform form's kernels without events (`which` empty) in
// a unit of its own a precision and equation (CMakeLists.txt generates both).
template <class Real, class Eq>
std::unique_ptr<ClusterKernel<2, Real>> make_columns_kernel_2d(const Problem& problem, const LocalDomain<2>& domain,
                                                               const ClusterPlan& plan,
                                                               const ClusterMedia<2, Real>& media,
                                                               std::string& reason) {
  return configured<ColumnsKernel2DObject<Real, Eq>>(problem, domain, plan, media, reason);
}
#define HEATWAVE_CLUSTER_COLUMNS_2D(which, Real, Eq)                                       \
  which template std::unique_ptr<ClusterKernel<2, Real>> make_columns_kernel_2d<Real, Eq>( \
      const Problem&, const LocalDomain<2>&, const ClusterPlan&, const ClusterMedia<2, Real>&, std::string&);

}  // namespace heatwave::cuda
