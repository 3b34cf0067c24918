// cuda-cluster, 2D: the columns family (issue 36), register streaming as
// in EBISU (ICS'23), every level of a column in registers.
//
// A block of NT threads owns a strip of NT columns, one a thread; the
// reach = steps*r columns at each side are its x halo (recomputed), so
// NT - 2 reach are kept. It streams a segment of rows in chunks of C rows,
// all `steps` levels in one sweep: in iteration i, level 0 loads chunk i
// and level t computes chunk i - t. A thread keeps, for each level, its
// column's chunk that the next level reads, the r rows before it and (two
// levels) the chunk before it, in registers: y neighbours never touch
// shared memory. x neighbours come from one shared buffer a level (two
// chunks, by parity): level t reads level t-1's chunk i-t, written in
// iteration i-1, and writes its own for level t+1 to read in iteration
// i+1. So an iteration has one barrier for all levels and C rows. The next
// chunk's loads are issued an iteration ahead into registers.
//
// Faces. Level 0 is read from storage: wrapped on a periodic axis, its halo
// past an exchanged face, its ghosts (the backend fills them) past a
// physical one. The upper levels' ghosts follow FaceRule: x ghosts are
// written into the shared buffers by their own columns' threads at the top
// of an iteration (strips that hold a physical x face only, with one more
// barrier), as is g at a Dirichlet x face point, so no level tests for x
// faces (testing them in the levels held every warp of a face strip at the
// barrier: 1.4-2.2x the other strips' time, H100, bench/streaming_2d.cu).
// y ghosts come from the thread's own window (static offsets), in the
// iterations whose rows lie within r of a y face only (the steady path
// tests nothing). The stencil is LaplacianWeights::start, then add in axis
// order, and the update the equation's: bitwise equal to the other backends.
#pragma once
#include "kernels/cluster/common.cuh"

namespace heatwave::cuda {

// Rows a chunk: 16 bytes of a column (r at least: a chunk holds the r rows
// after the chunk before it). Levels: max_levels_columns (plan.hpp).
template <class Real, int R>
inline constexpr int columns_chunk = std::max<int>(R, 16 / sizeof(Real));

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

template <int R, class Real, class Eq>
__global__ void __launch_bounds__(columns_threads, 2)
    columns_kernel_2d(const Real* __restrict__ u, const Real* __restrict__ u_prev, Real* __restrict__ out_u,
                      Real* __restrict__ out_u_prev, const ClusterGeometry<2> geo,
                      const LaplacianWeights<2, R, Real> lap, const typename Eq::template Update<Real> up,
                      const __grid_constant__ ColumnFaces<Real, R> faces, const int steps, const bool start,
                      const int segment_rows) {
  constexpr int K = max_levels_columns(R, Eq::levels), C = columns_chunk<Real, R>;
  constexpr bool Wave = Eq::levels == 2;
  Real* const shared = reinterpret_cast<Real*>(cluster_shared);
  const int NT = blockDim.x, W = NT + 2 * R, tid = threadIdx.x;
  auto buffer = [&](int level, int parity) { return shared + (level * 2 + parity) * C * W + R; };
  const ClusterAxis& ax = geo.axis[0];
  const ClusterAxis& ay = geo.axis[1];
  const int reach = steps * R;
  const int strip = ax.out_lo + static_cast<int>(blockIdx.x) * (NT - 2 * reach) - reach;
  const int x = strip + tid;
  const int y0 = ay.out_lo + static_cast<int>(blockIdx.y) * segment_rows, y1 = min(ay.out_hi, y0 + segment_rows);
  const int ys = y0 - reach;  // the segment's cone: level t is valid from ys + t r
  int gx = 0;
  const bool stored_x = source_coordinate(ax, x, gx);
  const bool keep = tid >= reach && tid < NT - reach && x >= max(ax.out_lo, ax.upd_lo) && x < min(ax.out_hi, ax.upd_hi);
  // This column as an x face makes it: a ghost from its mirror column, or g
  // at a Dirichlet face point (fixed); face_strip: the block holds one.
  // (Each side by name: a runtime index into the parameters copies them to local memory.)
  const bool low = x < ax.n / 2;
  const bool fixed_x = low ? ax.fixed(0, x) : ax.fixed(1, x);
  const bool ghost_x = low ? ax.ghosts[0] && x < 0 && x >= -R : ax.ghosts[1] && x >= ax.n && x < ax.n + R;
  const int ghost_j = low ? -x : x - (ax.n - 1);                    // ghost_x: 1..r past the face
  const int mirror = low ? tid - 2 * x : tid + 2 * (ax.n - 1 - x);  // the column it mirrors
  // Its rule in registers (static indices: the loop reads no table; read
  // in the loop instead, fp32 wave 377 -> 251 Gcells/s, H100).
  Real x_sign = low ? faces.sign[0][0] : faces.sign[0][1], x_shift = 0;
  const Real x_g = low ? faces.g[0][0] : faces.g[0][1];
#pragma unroll
  for (int j = 1; j <= R; ++j)
    if (ghost_j == j) x_shift = low ? faces.shift[0][0][j] : faces.shift[0][1][j];
  const bool face_strip = (ax.ghosts[0] && strip <= 0) || (ax.ghosts[1] && strip + NT >= ax.n);
  if (tid < 2 * R)  // pads: read only by edge columns, whose values are never kept
    for (int b = 0; b < steps * 2 * C; ++b) shared[b * W + (tid < R ? tid : NT + tid)] = Real(0);

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
  auto store_chunk = [&](Real* field, int chunk, const Real(&values)[C]) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int y = ys + chunk * C + c;
      if (y >= y0 && y < y1 && y >= ay.upd_lo && y < ay.upd_hi)
        field[geo.lead + (y + geo.halo) * geo.stride[1] + x] = values[c];
    }
  };
  Real ahead[C], ahead_prev[C];
  load_chunk(u, 0, ahead);
  if constexpr (Wave) load_chunk(u_prev, -1, ahead_prev);
  const int chunks = (y1 - ys + C - 1) / C;  // level `steps`'s last chunk ends at or past y1
  for (int i = 0; i < chunks + steps; ++i) {
    Real made[C], older[C];  // level t-1's newest chunk; (two levels) level t-2's chunk at level t's rows
#pragma unroll
    for (int c = 0; c < C; ++c) made[c] = ahead[c], older[c] = Wave ? ahead_prev[c] : Real(0);
    if (i + 1 < chunks + steps) {
      load_chunk(u, i + 1, ahead);
      if constexpr (Wave) load_chunk(u_prev, i, ahead_prev);
    }
    // The x faces of the chunks the levels read (written last iteration).
    // A level's chunk is read whole before any of it is written: its loads
    // overlap (one after another, with the rule read from a table copied to
    // local memory, the face strips ran 8x the others: heat fp32 r 2 81
    // Gcells/s, then 547, H100).
    if (face_strip) {
      if (ghost_x || fixed_x)
#pragma unroll
        for (int L = 0; L < K; ++L) {
          if (L < steps) {
            Real* b = buffer(L, (i - 1 - L) & 1);
            Real mirrored[C];
#pragma unroll
            for (int c = 0; c < C; ++c) mirrored[c] = b[c * W + mirror];
#pragma unroll
            for (int c = 0; c < C; ++c) b[c * W + tid] = fixed_x ? x_g : x_sign * mirrored[c] + x_shift;
          }
        }
      __syncthreads();
    }
#pragma unroll
    for (int c = 0; c < C; ++c) buffer(0, i & 1)[c * W + tid] = made[c];
    // Steady iterations (block-uniform): no level's rows within r of a y
    // face, so no y ghost or Dirichlet row to test.
    // Level t (a constant: each level's registers are its own).
    auto level = [&]<bool Steady, int t>() {
      if (t > steps) return;  // a shorter launch
      const int chunk = i - t;
      const Real* xs = buffer(t - 1, chunk & 1);
      // Level t-1's rows: chunk row k in [-R, C + R) of the window.
      auto row = [&](int k) -> Real { return k < 0 ? last[t - 1][R + k] : k < C ? cur[t - 1][k] : made[k - C]; };
      [[maybe_unused]] const bool starting = Wave && t == 1 && start;
      Real out[C];
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int y = ys + chunk * C + c;
        const Real centre = cur[t - 1][c];
        Real minus[R + 1], plus[R + 1];
#pragma unroll
        for (int j = 1; j <= R; ++j) minus[j] = xs[c * W + tid - j], plus[j] = xs[c * W + tid + j];
        Real lap_value = lap.add(0, lap.start(centre), minus, plus);
#pragma unroll
        for (int j = 1; j <= R; ++j) minus[j] = row(c - j), plus[j] = row(c + j);
        bool fixed_y = false;
        if (!Steady) {
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
        lap_value = lap.add(1, lap_value, minus, plus);
        Real next;
        if constexpr (!Wave)
          next = up.step(centre, centre, lap_value);
        else if (starting)
          next = up.start(centre, older[c], lap_value);
        else
          next = up.step(centre, older[c], lap_value);
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
      if (t == steps) {
        if (keep && chunk >= 0) {
          store_chunk(out_u, chunk, out);
          if constexpr (Wave) store_chunk(out_u_prev, chunk, centres);
        }
      } else {
#pragma unroll
        for (int c = 0; c < C; ++c) buffer(t, chunk & 1)[c * W + tid] = out[c];
      }
    };
    auto levels = [&]<bool Steady, int... T>(std::integer_sequence<int, T...>) {
      (level.template operator()<Steady, T + 1>(), ...);
    };
    // The rows the levels compute this iteration, [ys + (i - steps) C, ys + i C).
    const int rows_lo = ys + (i - steps) * C, rows_hi = ys + i * C;
    if ((!ay.ghosts[0] || rows_lo >= R) && (!ay.ghosts[1] || rows_hi <= ay.n - R))
      levels.template operator()<true>(std::make_integer_sequence<int, K>{});
    else
      levels.template operator()<false>(std::make_integer_sequence<int, K>{});
    __syncthreads();
  }
}

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
    const int R = problem.radius, K = max_levels_columns(R, Eq::levels);
    const std::string plan = "columns plan (" + q.text() + ")";
    if (q.k < 1 || q.k > K || q.tile_x < 32 || q.tile_x > columns_threads || q.tile_x % 32 != 0 ||
        q.tile_x - 2 * q.k * R < 32 || q.tile_y < 0)
      return reason = "invalid " + plan + ": k from 1 to " + std::to_string(K) + " for radius " + std::to_string(R) +
                      (Eq::levels == 2 ? " (two levels)" : "") + ", threads a multiple of 32 up to " +
                      std::to_string(columns_threads) + " keeping 32 columns past the 2 k r of halo, rows >= 0",
             false;
    if (this->flux_ || this->pointwise_ || this->source_count_ > 0)
      return reason = plan + " runs constant coefficients without sources (the streaming plans run media and sources)",
             false;
    threads_x_ = q.tile_x, threads_y_ = 1;
    with_radius(R, [&]<int RR>() {
      shared_bytes_ = sizeof(Real) * static_cast<std::size_t>(2 * q.k * columns_chunk<Real, RR> * (q.tile_x + 2 * RR));
    });
    if (!this->fits_device(reason)) return false;
    active_clusters_ = with_radius(R, [&]<int RR>() { return this->resident_blocks(columns_kernel_2d<RR, Real, Eq>); });
    if (active_clusters_ == 0)
      return reason =
                 plan + ": no block fits an SM (" + std::to_string(shared_bytes_ / 1024) + " KiB of shared memory)",
             false;
    return true;
  }

  bool records_samples() const override { return false; }

  void launch(const Real* u, const Real* u_prev, Real* out_u, Real* out_u_prev, int steps, const Box<2>& window,
              long step, const ClusterSamples<Real>& samples, cudaStream_t stream) override {
    if (samples.count > 0) throw Error(ExitCode::internal, "a columns plan records no receivers");
    for (int a = 0; a < 2; ++a)
      geo_.axis[a].out_lo = static_cast<int>(window.lo[a]), geo_.axis[a].out_hi = static_cast<int>(window.hi[a]);
    const ClusterPlan& q = geo_.plan;
    const int kept = q.tile_x - 2 * steps * this->radius_;
    const int strips = (geo_.axis[0].out_hi - geo_.axis[0].out_lo + kept - 1) / kept;
    const int rows = geo_.axis[1].out_hi - geo_.axis[1].out_lo;
    // Segments: the plan's rows, or as many as fill the GPU's block slots once.
    const int segments = q.tile_y > 0 ? (rows + q.tile_y - 1) / q.tile_y : std::max(1, active_clusters_ / strips);
    const int segment_rows = (rows + segments - 1) / segments;
    const bool start = Eq::levels == 2 && step == 0;
    with_radius(this->radius_, [&]<int R>() {
      columns_kernel_2d<R, Real, Eq>
          <<<dim3(strips, (rows + segment_rows - 1) / segment_rows), q.tile_x, shared_bytes_, stream>>>(
              u, u_prev, out_u, out_u_prev, geo_, this->template lap<R>(), this->update_,
              ColumnFaces<Real, R>::make(geo_), steps, start, segment_rows);
    });
    HW_CUDA(cudaGetLastError());
  }
};

}  // namespace

// The kernel object of a columns plan (null, with `reason`, where it cannot
// run): declared (`which`: extern) in the unit of the 2D kernel objects,
// built with its kernels (`which` empty) in a unit of its own a precision
// and equation (CMakeLists.txt generates both).
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
