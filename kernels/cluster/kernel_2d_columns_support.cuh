// cuda-cluster, 2D: what the columns kernels (kernel_2d_columns.cuh) share
// with their kernel object: the shape of a chunk and of the shared buffers,
// the faces' ghost rules, the point form's updates by row, and the small
// steps of a column (its rows on an axis, its receivers, its update).
// Device code (ColumnFaces::make and rows_of also run on the host).
#pragma once
#include <cstddef>

#include "kernels/cluster/common.cuh"
#include "kernels/cuda/update_classes.cuh"

namespace heatwave::cuda {

// Rows a chunk: 16 bytes of a column (r at least: a chunk holds the r rows
// after the chunk before it). A shared buffer's row: the widest block and
// its r pads each side (a constant: immediate offsets).
template <class Real, int R>
inline constexpr int columns_chunk = max_of(R, static_cast<int>(16 / sizeof(Real)));
// A form's kernels' shape (plan.hpp: threads, blocks an SM, levels).
template <class Real, class Eq, Form F, int R>
inline constexpr ColumnsShape columns_form_shape = columns_shape(R, Eq::levels, sizeof(Real) == 8, F != Form::uniform);
constexpr int columns_row_points(int threads, int radius) { return threads + 2 * radius; }
template <class Real, class Eq, Form F, int R>
inline constexpr int columns_row = columns_row_points(columns_form_shape<Real, Eq, F, R>.threads, R);
// The widest rows (points, the storage's row stride) the kernels address: a
// chunk's rows (4 at most) at int offsets from its first row's address.
inline constexpr long columns_max_row_stride = INT_MAX / 4;
static_assert(columns_chunk<float, 4> <= 4 && columns_chunk<double, 4> <= 4);
// A shared buffer holds its chunk in planes of P rows, a column's P values
// of a plane side by side: one 16-byte access (a Pack) where a row at a
// time took P, but a level's 2 r C neighbour values are live at once.
// Planes where the registers allow: fp32, the uniform form (heat fp32 r 1
// k 8 +16%, the wave fp32 k 6 +9%). Elsewhere P is 1, rows: fp64's chunk
// is two rows (+1-4% at k 12) and its k 8 heat crossed 128 registers (one
// block an SM: -32%; held to 128 for two, without a spill, still -3%); the
// flux and point forms' kernels hold their
// coefficients and spilled (H200, docs/performance.md).
template <class Real, Form F>
inline constexpr int columns_plane = sizeof(Real) == 4 && F == Form::uniform ? Pack<Real>::width : 1;
template <class Real, int R>
constexpr std::size_t columns_shared_bytes(int levels, int threads) {
  return sizeof(Real) * static_cast<std::size_t>(2 * levels * columns_chunk<Real, R> * columns_row_points(threads, R));
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
// last where none. (Also the host's: the launches' segments weigh them.)
HW_HD void rows_of(const ClusterAxis& a, int p_lo, int p_hi, int lo, int hi, int& first, int& last) {
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

// The level counts a form's kernels with events E are compiled for.
template <class Real, class Eq, Form F, int R, ColumnEvents E>
inline constexpr ColumnsShape columns_kernels_shape = columns_events_shape(columns_form_shape<Real, Eq, F, R>, E,
                                                                           sizeof(Real) == 8);

}  // namespace heatwave::cuda
