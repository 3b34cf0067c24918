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
// the points the levels make); an iteration whose rows lie in one layer
// loads one entry for all of them. Form::point (the waves' c and gamma
// constant, in layers, with absorbing faces): a point's update is one load
// from its column's x class's updates by row (ColumnUpdates, read out of the
// table by axis classes), indexed by the row itself (it reaches as the
// pairs' table does); where a warp's columns share an x class, as all but
// those of an x absorbing layer do, its loads are one. A thread whose
// column (the one it computes: its own, or the column its ghost mirrors)
// holds a source point adds it as the host does (Update::force), after the
// level's chunk, a box at a time, in the iterations whose rows reach the
// block's sources' rows (a path of their own, and the general one near a y
// face). Receivers
// (Backend::record_samples) are recorded in those iterations too: after the
// levels, the thread that keeps a receiver's column writes each sampled
// level at the receiver's row (or the level before it, u^{m-1}) into its
// sample row, so sample steps end no chunk. Kernels with sources, and with
// receivers, are their own (ColumnEvents): the values that find sources,
// held through the sweep, cost the kernels without 5-7% (H100, heat fp64
// r 1), and the receivers' code cost the sources' kernels registers (fp32
// heat r 1 k 12: 134 bytes of spills; its source row fell 7%).
// Device code: no host-only header (the kernel object: kernel_2d_columns_object.cuh).
#pragma once
#include <utility>

#include "kernels/cluster/kernel_2d_columns_support.cuh"
#include "kernels/cluster/kernel_args.cuh"

namespace heatwave::cuda {

template <int R, int K, class Real, class Eq, Form F, ColumnEvents E>
__global__ void __launch_bounds__(columns_form_shape<Real, Eq, F, R>.threads,
                                  columns_form_shape<Real, Eq, F, R>.blocks_per_sm)
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
  constexpr int C = columns_chunk<Real, R>, W = columns_row<Real, Eq, F, R>, P = columns_plane<Real, F>, reach = K * R;
  static_assert(C % P == 0);
  constexpr bool Wave = Eq::levels == 2;
  constexpr bool Events = E != ColumnEvents::none, Records = E == ColumnEvents::receivers;
  // (Held, below: the fp32 flux form's sources kernels only, one block of
  // 384 an SM at 128 registers or 168. ptxas, r 1: their k 8 holds 166,
  // was 128; the uniform form's k 8 spilled 16/32 bytes at 128, the point
  // form's k 6 56/96, the receivers kernels' k 8-12 20-56 bytes; fp64's
  // k 8, 122 -> 154, lost its second block an SM: the sink -30%, H200.)
  constexpr bool Held = F == Form::flux && E == ColumnEvents::sources && sizeof(Real) == 4;
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
  [[maybe_unused]] struct {
    int lo = 0, hi = 0, y_factor = 0, source = 0;
    Real x_weight = 0;
  } held;                                 // where one box is over it (below)
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
    // Held: one box over the column (a Gaussian's, a point source's): its
    // rows, its weight along x and its place in f, for the sweep (else each
    // level loads the box, then its weight and f from its fields, a chained
    // load a chunk).
    if (Held && sourced != 0 && (sourced & (sourced - 1)) == 0) {
      const SourceBox box = sources.boxes[__ffs(sourced) - 1];
      held.lo = box.lo[1], held.hi = box.hi[1], held.y_factor = box.factor[1] - box.lo[1], held.source = box.source;
      held.x_weight = sources.weights[box.factor[0] + source_x - box.lo[0]];
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
  if constexpr (F == Form::flux) {
    // (A strip's columns past the table, more than its pad past the rank's
    // edge, are never kept: they read its last entry, not past its end.)
    const int column = min(max(computed, flux_table.lo), flux_table.hi - 1);
    pairs = flux_table.at - flux_table.lo + (flux_table.axis == 1 ? 0 : column), pair_rows = flux_table.axis;
  }
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
  // A chunk's rows in storage: one 64-bit address a chunk, its rows at int
  // offsets from it (each row's coordinate and 64-bit address took some 22
  // instructions: 88 of the steady iteration's 650, sm_90a SASS, heat fp32
  // r 1 k 12). On a periodic axis a row wraps where it may.
  const long column = geo.lead + geo.halo * geo.stride[1] + gx;
  const int row_stride = static_cast<int>(geo.stride[1]);  // (at most columns_max_row_stride)
  auto load_chunk = [&](const Real* field, int chunk, Real(&out)[C]) {
    const int y = ys + chunk * C;
    if (!ay.periodic) {
      const Real* row = field + column + static_cast<long>(y) * geo.stride[1];
#pragma unroll
      for (int c = 0; c < C; ++c, row += row_stride)
        out[c] = stored_x && ay.holds_data(y + c) ? *row : Real(0);
      return;
    }
#pragma unroll
    for (int c = 0; c < C; ++c) {
      int gy;
      out[c] = stored_x && source_coordinate(ay, y + c, gy) ? field[column + gy * geo.stride[1]] : Real(0);
    }
  };
  const long stored = geo.lead + geo.halo * geo.stride[1] + x;  // this column's first row in the outputs
  auto store_chunk = [&](Real* field, int chunk, const Real(&values)[C]) {
    const int y = ys + chunk * C;
    Real* row = field + stored + static_cast<long>(y) * geo.stride[1];
#pragma unroll
    for (int c = 0; c < C; ++c, row += row_stride)
      if (y + c >= keep_lo && y + c < keep_hi) *row = values[c];
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
  const int iterations = chunks + K;
  // Form::flux: whether rows [lo, hi) have one entry (a column's, layers
  // along x; along y, rows inside a layer). The paths but the general one
  // load it once an iteration, not once a point (ptxas, fp32 r 1: k 8 165
  // registers before, 160; k 12 spilled 18/40 bytes, none now); the
  // iterations whose rows cross a layer's edge take the general path.
  auto uniform_pairs = [&](int lo, int hi) {
    if constexpr (F == Form::flux)
      return pair_rows == 0 || flux_table.same_to[lo - flux_table.lo] >= hi - 1;
    else
      return true;
  };
  constexpr int S = Events || F != Form::uniform || R > 1 ? 1 : Wave ? 3 : K <= 8 ? 2 : 1;  // (below)
  // Iteration i: on the steady path (Steady; with x ghosts, XGhosts), or on
  // the one its rows take.
  auto iterate = [&]<bool Steady, bool XGhosts = false>(const int i) {
    Real made[C], older[C];  // level t-1's newest chunk; (two levels) level t-2's chunk at level t's rows
#pragma unroll
    for (int c = 0; c < C; ++c) made[c] = ahead[c], older[c] = Wave ? ahead_prev[c] : Real(0);
    if (i + 1 < iterations) {
      load_chunk(u, i + 1, ahead);
      if constexpr (Wave) load_chunk(u_prev, i, ahead_prev);
    }
    const int rows_lo = ys + (i - K) * C, rows_hi = ys + i * C;  // the rows the levels compute this iteration
    // Form::flux off the general path: the rows' one entry (uniform_pairs).
    [[maybe_unused]] FluxLane<2, R, Real> pairs_now;
    if constexpr (F == Form::flux) pairs_now = load_flux_entry(pairs + rows_lo * pair_rows);
    // Level t (a constant: each level's registers are its own). General: the
    // rows lie within r of a y face; XFaces: the block makes x ghosts;
    // AtEvents: the rows reach its sources' or receivers' points.
    auto level = [&]<bool General, bool XFaces, bool AtEvents, int t>() {
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
          k = General ? load_flux_entry(pairs + y * pair_rows) : pairs_now;
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
        out[c] = fixed_y ? faces.g[1][y == 0 ? 0 : 1] : next;
      }
      // Sources, in config order, f(t_n) of the launch's step t - 1, added
      // to the chunk box by box: a box's fields, the column's weight and f
      // are loaded once a chunk, where a row at a time chained those loads
      // at every point.
      auto add_source = [&](int c, int y, Real s) {
        if constexpr (F == Form::point)
          out[c] = updates[y].update.force(out[c], s, starting);
        else
          out[c] = up.force(out[c], s, starting);
      };
      if (Held && AtEvents && sourced && (sourced & (sourced - 1)) == 0) {
        // (q and f as below: the same products, the same bits.)
        const Real f = sources.factor(held.source, t - 1);
#pragma unroll
        for (int c = 0; c < C; ++c) {
          const int y = ys + chunk * C + c, source_y = wrapped_coordinate(ay, y);
          if (source_y < held.lo || source_y >= held.hi) continue;
          const Real q = held.x_weight * sources.weights[held.y_factor + source_y];
          if (q == Real(0)) continue;
          add_source(c, y, fused(f, q, Real(0)));
        }
      } else if (Events && AtEvents && sourced)
        for (unsigned boxes = sourced; boxes; boxes &= boxes - 1) {
          const SourceBox box = sources.boxes[__ffs(boxes) - 1];
#pragma unroll
          for (int c = 0; c < C; ++c) {
            const int y = ys + chunk * C + c, source_y = wrapped_coordinate(ay, y);
            if (!box.holds(1, source_y)) continue;  // (no box holds a Dirichlet point: make_source_boxes)
            const Real q = box.q<2, Real>(sources.weights, source_x, source_y, 0);
            if (q == Real(0)) continue;
            add_source(c, y, sources.force(box, t - 1, q));
          }
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
    auto levels = [&]<bool General, bool XFaces, bool AtEvents, int... T>(std::integer_sequence<int, T...>) {
      publish(buffer(0, i & 1), made, XFaces);
      (level.template operator()<General, XFaces, AtEvents, T + 1>(), ...);
      if constexpr (Records) {  // (apart: one test on both made the kernels without capture what it names)
        if constexpr (AtEvents) {
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
          if (sample_from >= 0 && rows_lo <= sample_hi && rows_hi > sample_lo) {
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
    // A block-uniform choice of path, by the rows: near a y face (all of it;
    // and Form::flux where the rows cross a layer's edge), at the events'
    // rows (a path of their own: on the y faces' path, with its tests and
    // each point's chained loads of its box, weight and f, a Gaussian's
    // blocks ran 3.3x the instructions of the others, H200, the sink), with
    // x ghosts, or the steady one. (The tests written out: as a
    // lambda's, the y faces' test put the axis in local memory and the heat
    // fp32 r 1 k 12 kernel spilled 30/84 bytes, where it spills 4/4.)
    constexpr auto all_levels = std::make_integer_sequence<int, K>{};
    if constexpr (Steady)
      levels.template operator()<false, XGhosts, false>(all_levels);
    else if ((ay.ghosts[0] && rows_lo < R) || (ay.ghosts[1] && rows_hi > ay.n - R) || !uniform_pairs(rows_lo, rows_hi))
      levels.template operator()<true, true, Events>(all_levels);
    else if (Events && rows_lo <= event_hi && rows_hi > event_lo)
      levels.template operator()<false, true, Events>(all_levels);
    else if (face_strip || S > 1)
      levels.template operator()<false, true, false>(all_levels);
    else
      levels.template operator()<false, false, false>(all_levels);
    __syncthreads();
  };
  // The uniform form's steady path without events runs S iterations at a
  // time, unrolled at r 1 (the waves 3, the heat 2 up to 8 levels): each
  // iteration shifts a level's window (two levels: and its u^{m-1}) a chunk
  // on, and over the shifts' period those are renames, not register moves.
  // The iterations of no run of S take the x faces' path (right for any
  // block). A face strip's block (x ghosts, a Dirichlet x point) runs its
  // runs unrolled too, on the x faces' path: left one at a time, its blocks
  // set the time of each wave of a launch of few waves (fp32 wave 8568^2,
  // 24 strips x 11 segments: two waves on 132 SMs; unrolled +10%, at
  // 16384^2's 6.8 waves +2%, H200). Elsewhere the registers had no room
  // (ptxas, fp32 at 128: the heat's r 1 k 12 spilled 42/88 bytes, its r 2
  // k 6 4/4, the waves' point form at k 6 46/92) or it lost (the fp32 wave
  // r 2 k 4: -8%, H200).
  if constexpr (S == 1) {
    for (int i = 0; i < iterations; ++i) iterate.template operator()<false>(i);
  } else {
    auto steady_run = [&](int i) {
      const int lo = ys + (i - K) * C, hi = ys + (i + S - 1) * C;
      return i + S <= iterations && !(ay.ghosts[0] && lo < R) && !(ay.ghosts[1] && hi > ay.n - R);
    };
    auto steady = [&]<bool XGhosts, int... s>(int from, std::integer_sequence<int, s...>) {
      (iterate.template operator()<true, XGhosts>(from + s), ...);
    };
      // (The face strips' loop and the others' written out: as one lambda's,
      // the heat fp32 r 1 k 8 kernel spilled 4/8 bytes.)
#pragma unroll 1
    for (int i = 0; i < iterations;) {
      if (!steady_run(i))
        iterate.template operator()<false>(i++);
      else if (face_strip)
#pragma unroll 1
        do steady.template operator()<true>(i, std::make_integer_sequence<int, S>{}), i += S;
        while (steady_run(i));
      else
#pragma unroll 1
        do steady.template operator()<false>(i, std::make_integer_sequence<int, S>{}), i += S;
        while (steady_run(i));
    }
  }
}

// The columns kernels of a form, radius, precision, equation and events by
// level count (kernel_args.cuh).
template <int R, class Real, class Eq, Form F, ColumnEvents E>
ColumnsKernels2D<R, Real, Eq> columns_kernels_2d() {
  ColumnsKernels2D<R, Real, Eq> kernels;
  [&]<int... K>(std::integer_sequence<int, K...>) {
    auto add = [&]<int L>() {
      if constexpr (columns_levels_compiled(columns_kernels_shape<Real, Eq, F, R, E>, L))
        kernels.by_levels[L] = columns_kernel_2d<R, L, Real, Eq, F, E>;
    };
    (add.template operator()<K + 1>(), ...);
  }
  (std::make_integer_sequence<int, ColumnsKernels2D<R, Real, Eq>::most>{});
  return kernels;
}
// A form's columns kernels of a radius, precision and equation and their
// events (ColumnEvents), built in a unit of their own (kernels/cluster/units.cmake).
#define HEATWAVE_COLUMNS_2D(R, Real, Eq, F, E) \
  template ColumnsKernels2D<R, Real, Eq> columns_kernels_2d<R, Real, Eq, F, E>();

}  // namespace heatwave::cuda
