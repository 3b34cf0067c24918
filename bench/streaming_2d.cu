// Issue 36's first step: the 2D register-streaming design measured on its
// own before it becomes a cluster-kernel family. Heat 2D, 5-point star,
// Dirichlet faces (face points keep their value), fp32 and fp64.
//
// A block owns a strip of NT columns (one a thread; the K columns at each
// side are its x halo, recomputed, so NT - 2K are kept) and a segment of
// rows, which it streams in chunks of C rows, all K levels in one sweep:
// in iteration i, level 0 loads chunk i and level t computes chunk i - t.
// A thread keeps, for each level, its column's values of the chunk the next
// level reads and the row before it, in registers: y neighbours never touch
// shared memory. x neighbours come from one shared buffer a level (two
// chunks, by parity): level t reads level t-1's chunk i-t, written in
// iteration i-1, and writes its own chunk i-t for level t+1 to read in
// iteration i+1. So an iteration has ONE barrier for all K levels and C rows.
// The next chunk's loads are issued an iteration ahead into registers.
//
// Checked bit for bit against a one-step kernel with the same arithmetic
// (fresh random data, poisoned outputs); prints JSON with the median
// Gcells/s of each configuration (CUDA events, warm-up first).
//   heatwave_streaming_2d [nx ny steps repeats segments [clusters | threads]]
// (clusters: the special kernel in clusters of 1, 2 and 4 blocks; threads:
// one block of 512 an SM, and the wave at 8 levels in one of 384;
// resident: the resident prototype, run_resident; overhead: small kernels
// after each launch.)
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda_check.hpp"

// The update both kernels make: one expression, so results are bitwise equal.
template <class Real>
__device__ __forceinline__ Real heat(Real c, Real w, Real e, Real n, Real s, Real a) {
  return c + a * ((w + e) + (n + s) - Real(4) * c);
}

template <class Real>
__global__ void one_step(const Real* __restrict__ u, Real* __restrict__ v, int nx, int ny, Real a) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= nx) return;
  const long i = long(y) * nx + x;
  if (x == 0 || x == nx - 1 || y == 0 || y == ny - 1) {
    v[i] = u[i];
    return;
  }
  v[i] = heat(u[i], u[i - 1], u[i + 1], u[i - nx], u[i + nx], a);
}

// The block's dynamic shared memory.
__device__ __forceinline__ unsigned char* smem_base() {
  extern __shared__ __align__(16) unsigned char smem[];
  return smem;
}

// Level 0 is u^n; a launch writes level K = u^{n+K} into v at the strip's
// kept columns and the segment's rows.
// CS > 1 (issue 36's cluster shape): a cluster of CS blocks along x owns a
// strip of CS NT columns, with the K-column halo at its outer sides only.
// A block's edge thread writes its values into the neighbouring block's pad
// column too (DSMEM), and the iteration ends at a cluster barrier instead
// of the block's: the halo recomputed shrinks by CS, each iteration waits
// for the cluster.
//
// Cache (the resident prototype, below): the block's kept columns and rows
// stay on chip between launches in `cache` (shared memory, a row of NT - 2K
// a segment row): level 0 reads them from there (`from_cache`: every launch
// but a run's first), level K writes them there, and to v only where a
// neighbouring block reads them (within K of the kept region's edges) or
// where `all_out` (a run's last launch).
template <class Real, int K, int C, int NT, int CS, bool Cache>
__device__ __forceinline__ void stream_segment(const Real* __restrict__ u, Real* __restrict__ v, int nx, int ny,
                                               int rows_per_segment, Real a, Real* cache, bool from_cache,
                                               bool all_out) {
  static_assert(!Cache || CS == 1, "the cache is a lone block's");
  namespace cg = cooperative_groups;
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int W = NT + 2;  // a row of a level's buffer: the strip and one pad point each side
  Real* shared = reinterpret_cast<Real*>(smem);
  auto buffer = [&](int level, int parity, int row) { return shared + ((level * 2 + parity) * C + row) * W + 1; };
  const int tid = threadIdx.x;
  const int rank = CS > 1 ? static_cast<int>(blockIdx.x) % CS : 0, column = rank * NT + tid;  // in the cluster's strip
  const int x = static_cast<int>(blockIdx.x) / CS * (CS * NT - 2 * K) - K + column;
  const int y0 = blockIdx.y * rows_per_segment, y1 = min(ny, y0 + rows_per_segment);
  const int ys = y0 - K;  // the segment's y cone: level t is valid from ys + t
  const bool inside_x = x >= 0 && x < nx, fixed_x = x <= 0 || x >= nx - 1;
  const bool keep = column >= K && column < CS * NT - K && inside_x;
  if (tid < 2)  // pads: read only by edge columns, whose values are never kept (or a peer's, below)
    for (int b = 0; b < K * 2 * C; ++b) shared[b * W + (tid == 0 ? 0 : W - 1)] = Real(0);
  // The neighbouring block's pad this thread's values also go to (none: null).
  [[maybe_unused]] Real* peer = nullptr;
  [[maybe_unused]] int peer_pad = 0;
  if constexpr (CS > 1) {
    cg::cluster_group cluster = cg::this_cluster();
    if (tid == 0 && rank > 0) peer = cluster.map_shared_rank(shared, rank - 1), peer_pad = W - 1;
    if (tid == NT - 1 && rank < CS - 1) peer = cluster.map_shared_rank(shared, rank + 1), peer_pad = 0;
    cluster.sync();  // the pads are zeroed before a peer writes them
  }
  auto publish = [&](int level, int parity, int row, Real value) {
    buffer(level, parity, row)[tid] = value;
    if constexpr (CS > 1)
      if (peer) peer[((level * 2 + parity) * C + row) * W + peer_pad] = value;
  };

  Real last[K], cur[K][C];  // level L's row before the chunk level L+1 reads, and that chunk
#pragma unroll
  for (int L = 0; L < K; ++L) {
    last[L] = Real(0);
#pragma unroll
    for (int c = 0; c < C; ++c) cur[L][c] = Real(0);
  }
  // (Cache) the thread's place in the block's kept region, and whether a
  // neighbouring block reads its points there (K columns or rows from an edge).
  [[maybe_unused]] Real* cached = Cache ? cache + (tid - K) : nullptr;
  [[maybe_unused]] const bool edge_x = tid < 2 * K || tid >= NT - 2 * K;
  auto load_chunk = [&](int chunk, Real(&out)[C]) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int y = ys + chunk * C + c;
      if (Cache && from_cache && keep && y >= y0 && y < y1)
        out[c] = cached[(y - y0) * (NT - 2 * K)];
      else
        out[c] = inside_x && y >= 0 && y < ny ? u[long(y) * nx + x] : Real(0);
    }
  };
  Real ahead[C];
  load_chunk(0, ahead);
  const int chunks = (y1 - ys + C - 1) / C;  // level K's last chunk ends at or past y1
  for (int i = 0; i < chunks + K; ++i) {
    Real made[C];
#pragma unroll
    for (int c = 0; c < C; ++c) made[c] = ahead[c];
    if (i + 1 < chunks + K) load_chunk(i + 1, ahead);
      // Level 0's chunk i for level 1's x neighbours next iteration.
#pragma unroll
    for (int c = 0; c < C; ++c) publish(0, i & 1, c, made[c]);
#pragma unroll
    for (int t = 1; t <= K; ++t) {
      // Level t, chunk i - t, from level t-1's chunk (cur[t-1]), the row
      // before it (last[t-1]) and the first row of its next chunk (made[0],
      // computed just now by level t-1).
      const int chunk = i - t;
      const Real* xs = buffer(t - 1, chunk & 1, 0);
      Real out[C];
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int y = ys + chunk * C + c;
        const Real centre = cur[t - 1][c];
        const Real north = c == 0 ? last[t - 1] : cur[t - 1][c - 1];
        const Real south = c == C - 1 ? made[0] : cur[t - 1][c + 1];
        const Real west = xs[c * W + tid - 1], east = xs[c * W + tid + 1];
        const bool fixed = fixed_x || y <= 0 || y >= ny - 1;
        out[c] = fixed ? centre : heat(centre, west, east, north, south, a);
      }
      last[t - 1] = cur[t - 1][C - 1];
#pragma unroll
      for (int c = 0; c < C; ++c) cur[t - 1][c] = made[c], made[c] = out[c];
      if (t < K) {
#pragma unroll
        for (int c = 0; c < C; ++c) publish(t, chunk & 1, c, out[c]);
      } else if (keep && chunk >= 0) {
#pragma unroll
        for (int c = 0; c < C; ++c) {
          const int y = ys + chunk * C + c;
          if (y < y0 || y >= y1) continue;
          if constexpr (Cache) {
            cached[(y - y0) * (NT - 2 * K)] = out[c];
            if (all_out || edge_x || y < y0 + K || y >= y1 - K) v[long(y) * nx + x] = out[c];
          } else
            v[long(y) * nx + x] = out[c];
        }
      }
    }
    if constexpr (CS > 1)
      cg::this_cluster().sync();
    else
      __syncthreads();
  }
}

template <class Real, int K, int C, int NT, int Blocks, int CS = 1>
__global__ void __launch_bounds__(NT, Blocks)
    streaming(const Real* __restrict__ u, Real* __restrict__ v, int nx, int ny, int rows_per_segment, Real a) {
  stream_segment<Real, K, C, NT, CS, false>(u, v, nx, ny, rows_per_segment, a, nullptr, false, true);
}

// The resident prototype: one cooperative launch (every block resident, one
// an SM) runs `launches` sweeps of K steps, the grid meeting between them;
// Cache: each block keeps its kept region on chip between sweeps (after the
// level buffers in shared memory), so only the edges its neighbours read go
// through global memory. Without Cache it measures what a launch costs.
template <class Real, int K, int C, int NT, bool Cache>
__global__ void __launch_bounds__(NT, 1)
    resident(Real* u, Real* v, int nx, int ny, int rows_per_segment, Real a, int launches) {
  Real* cache = reinterpret_cast<Real*>(smem_base()) + size_t(K) * 2 * C * (NT + 2);
  for (int l = 0; l < launches; ++l) {
    const bool even = (l & 1) == 0;
    stream_segment<Real, K, C, NT, 1, Cache>(even ? u : v, even ? v : u, nx, ny, rows_per_segment, a, cache, l > 0,
                                             l == launches - 1);
    cooperative_groups::this_grid().sync();
  }
}

// ----------------------------------------------------------- the general case ---
// The same design with what a family must carry: radius R (R rows before and
// after a chunk in the window, K R-column x halos, a K R-row y cone), the
// wave's second level (level t's u^{m-1} is level t-2's chunk: one more chunk
// a level in registers), and ghost points from face rules (Dirichlet: -u + 2g,
// Neumann: u + 2 j h q; y ghosts from the thread's own window, x ghosts from
// the mirrored column in the shared buffer), as heatwave's FaceRule.
struct Face {
  bool fixed;                  // Dirichlet: the face point keeps its value
  float sign, shift0, shift1;  // ghost j points past the face: sign * u[mirror] + shift0 + shift1 * j
};

template <class Real, int R>
struct General {
  int nx, ny;
  Real centre_weight, wx[R + 1], wy[R + 1], coef;  // lap = c u + sum_j w_j (minus_j + plus_j), x then y
  Face face[2][2];                                 // [axis][side]
  __device__ __forceinline__ Real ghost(int axis, int side, int j, Real mirror) const {
    const Face& f = face[axis][side];
    return Real(f.sign) * mirror + (Real(f.shift0) + Real(f.shift1) * Real(j));
  }
};

template <class Real, int R, bool Wave>
__device__ __forceinline__ Real general_update(const General<Real, R>& p, Real centre, Real prev,
                                               const Real (&xm)[R + 1], const Real (&xp)[R + 1],
                                               const Real (&ym)[R + 1], const Real (&yp)[R + 1]) {
  Real sum = p.centre_weight * centre;
#pragma unroll
  for (int j = 1; j <= R; ++j) sum = fma(p.wx[j], xm[j] + xp[j], sum);
#pragma unroll
  for (int j = 1; j <= R; ++j) sum = fma(p.wy[j], ym[j] + yp[j], sum);
  if constexpr (Wave)
    return fma(p.coef, sum, Real(2) * centre - prev);
  else
    return fma(p.coef, sum, centre);
}

template <class Real, int R, bool Wave>
__global__ void general_one_step(const Real* __restrict__ u, const Real* __restrict__ u_prev, Real* __restrict__ v,
                                 const __grid_constant__ General<Real, R> p) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, nx = p.nx, ny = p.ny;
  if (x >= nx) return;
  auto at = [&](int xx, int yy) -> Real {  // a star neighbour: one coordinate at most past a face
    if (xx < 0) return p.ghost(0, 0, -xx, u[long(yy) * nx - xx]);
    if (xx >= nx) return p.ghost(0, 1, xx - (nx - 1), u[long(yy) * nx + 2 * (nx - 1) - xx]);
    if (yy < 0) return p.ghost(1, 0, -yy, u[long(-yy) * nx + xx]);
    if (yy >= ny) return p.ghost(1, 1, yy - (ny - 1), u[long(2 * (ny - 1) - yy) * nx + xx]);
    return u[long(yy) * nx + xx];
  };
  const long i = long(y) * nx + x;
  const bool fixed = (p.face[0][0].fixed && x == 0) || (p.face[0][1].fixed && x == nx - 1) ||
                     (p.face[1][0].fixed && y == 0) || (p.face[1][1].fixed && y == ny - 1);
  if (fixed) {
    v[i] = u[i];
    return;
  }
  Real xm[R + 1], xp[R + 1], ym[R + 1], yp[R + 1];
#pragma unroll
  for (int j = 1; j <= R; ++j) xm[j] = at(x - j, y), xp[j] = at(x + j, y), ym[j] = at(x, y - j), yp[j] = at(x, y + j);
  v[i] = general_update<Real, R, Wave>(p, u[i], Wave ? u_prev[i] : Real(0), xm, xp, ym, yp);
}

// Prefill: in a strip that holds x ghost columns, their threads write the
// ghosts into the shared buffers the levels read, at the top of each
// iteration (one more barrier there), so no level tests for x ghosts.
// block_ns (not null): each block's run time, for the load balance.
template <class Real, int R, bool Wave, int K, int C, int NT, int Blocks, bool Faces = true, bool Prefill = false>
__global__ void __launch_bounds__(NT, Blocks)
    general_streaming(const Real* __restrict__ u, const Real* __restrict__ u_prev, Real* __restrict__ v,
                      Real* __restrict__ v_prev, const __grid_constant__ General<Real, R> p, int rows_per_segment,
                      long long* block_ns) {
  long long started = 0;
  if (block_ns && threadIdx.x == 0) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(started));
  static_assert(C >= R, "a chunk holds the R rows after the one before it");
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int W = NT + 2 * R, KR = K * R;
  Real* shared = reinterpret_cast<Real*>(smem);
  auto buffer = [&](int level, int parity) { return shared + (level * 2 + parity) * C * W + R; };
  const int tid = threadIdx.x, nx = p.nx, ny = p.ny;
  const int x = blockIdx.x * (NT - 2 * KR) - KR + tid;
  const int y0 = blockIdx.y * rows_per_segment, y1 = min(ny, y0 + rows_per_segment);
  const int ys = y0 - KR;  // level t is valid from ys + t R
  const bool inside_x = x >= 0 && x < nx;
  const bool near_x = inside_x && (x < R || x > nx - 1 - R);  // reads an x ghost
  const bool fixed_x = (p.face[0][0].fixed && x == 0) || (p.face[0][1].fixed && x == nx - 1);
  const bool keep = tid >= KR && tid < NT - KR && inside_x;
  // A warp with no column within R of an x face (or on a Dirichlet one)
  // takes the steady path: in a face strip, only the face's warp does not.
  const bool steady_x = Prefill || !__any_sync(0xffffffffu, near_x || fixed_x);
  // Prefill: whether the strip holds x ghost columns, and this thread's ghost (mirror column, rule).
  const int strip_lo = blockIdx.x * (NT - 2 * KR) - KR;
  const bool ghost_strip = strip_lo < 0 || strip_lo + NT > nx;
  const bool ghost_x = x < 0 ? x >= -R : x > nx - 1 && x <= nx - 1 + R;
  const int mirror = x < 0 ? tid - 2 * x : tid + 2 * (nx - 1) - 2 * x;
  const int ghost_side = x < 0 ? 0 : 1, ghost_j = x < 0 ? -x : x - (nx - 1);
  if (tid < 2 * R)  // pads: read only by edge columns, whose values are never kept
    for (int b = 0; b < K * 2 * C; ++b) shared[b * W + (tid < R ? tid : NT + tid)] = Real(0);

  // Level L: the R rows before the chunk level L+1 reads, that chunk, and
  // (the wave) the chunk before it, level L+2's u^{m-1}.
  Real last[K][R], cur[K][C], old[Wave ? K : 1][C];
#pragma unroll
  for (int L = 0; L < K; ++L) {
#pragma unroll
    for (int j = 0; j < R; ++j) last[L][j] = Real(0);
#pragma unroll
    for (int c = 0; c < C; ++c) cur[L][c] = Real(0), old[Wave ? L : 0][c] = Real(0);
  }
  auto load_chunk = [&](const Real* field, int chunk, Real(&out)[C]) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int y = ys + chunk * C + c;
      out[c] = inside_x && y >= 0 && y < ny ? field[long(y) * nx + x] : Real(0);
    }
  };
  Real ahead[C], ahead_prev[C];
  load_chunk(u, 0, ahead);
  if constexpr (Wave) load_chunk(u_prev, -1, ahead_prev);
  const int chunks = (y1 - ys + C - 1) / C;
  for (int i = 0; i < chunks + K; ++i) {
    Real made[C], older[C];  // level t-1's newest chunk; (the wave) level t-2's chunk at level t's rows
#pragma unroll
    for (int c = 0; c < C; ++c) made[c] = ahead[c], older[c] = Wave ? ahead_prev[c] : Real(0);
    if (i + 1 < chunks + K) {
      load_chunk(u, i + 1, ahead);
      if constexpr (Wave) load_chunk(u_prev, i, ahead_prev);
    }
    if (Prefill && ghost_strip) {
      if (ghost_x)
#pragma unroll
        for (int L = 0; L < K; ++L) {
          Real* b = buffer(L, (i - 1 - L) & 1);
#pragma unroll
          for (int c = 0; c < C; ++c) b[c * W + tid] = p.ghost(0, ghost_side, ghost_j, b[c * W + mirror]);
        }
      __syncthreads();
    }
#pragma unroll
    for (int c = 0; c < C; ++c) buffer(0, i & 1)[c * W + tid] = made[c];
    // Steady iterations (a warp-uniform choice): no level's rows within R of
    // a y face and no x face in the warp, so no ghost or fixed-point tests.
    auto levels = [&]<bool Steady>() {
#pragma unroll
      for (int t = 1; t <= K; ++t) {
        const int chunk = i - t;
        const Real* xs = buffer(t - 1, chunk & 1);
        // Level t-1's rows: chunk row k in [-R, C + R) of the window.
        auto row = [&](int k) -> Real { return k < 0 ? last[t - 1][R + k] : k < C ? cur[t - 1][k] : made[k - C]; };
        Real out[C];
#pragma unroll
        for (int c = 0; c < C; ++c) {
          const int y = ys + chunk * C + c;
          const Real centre = cur[t - 1][c];
          Real xm[R + 1], xp[R + 1], ym[R + 1], yp[R + 1];
#pragma unroll
          for (int j = 1; j <= R; ++j)
            xm[j] = xs[c * W + tid - j], xp[j] = xs[c * W + tid + j], ym[j] = row(c - j), yp[j] = row(c + j);
          if (!Prefill && !Steady && near_x) {
#pragma unroll
            for (int j = 1; j <= R; ++j) {
              if (x - j < 0) xm[j] = p.ghost(0, 0, j - x, xs[c * W + tid + j - 2 * x]);
              if (x + j > nx - 1) xp[j] = p.ghost(0, 1, x + j - (nx - 1), xs[c * W + tid + 2 * (nx - 1) - 2 * x - j]);
            }
          }
          if (!Steady && y >= 0 && y < ny && (y < R || y > ny - 1 - R)) {
            // y ghosts: row d from a face mirrors its neighbours past the face
            // from rows of the window (static offsets: the window stays in registers).
#pragma unroll
            for (int d = 0; d < R; ++d)
#pragma unroll
              for (int j = d + 1; j <= R; ++j) {
                if (y == d) ym[j] = p.ghost(1, 0, j - d, row(c + j - 2 * d));
                if (y == ny - 1 - d) yp[j] = p.ghost(1, 1, j - d, row(c + 2 * d - j));
              }
          }
          const bool fixed = Steady ? Prefill && fixed_x
                                    : fixed_x || (p.face[1][0].fixed && y == 0) || (p.face[1][1].fixed && y == ny - 1);
          out[c] = fixed ? centre : general_update<Real, R, Wave>(p, centre, older[c], xm, xp, ym, yp);
        }
        // Shift level t-1's window; (the wave) its chunk before cur becomes level t+1's u^{m-1}.
        Real centres[C];
#pragma unroll
        for (int j = 0; j < R; ++j) last[t - 1][j] = row(C - R + j);
#pragma unroll
        for (int c = 0; c < C; ++c) {
          centres[c] = cur[t - 1][c];
          if constexpr (Wave) older[c] = old[t - 1][c], old[t - 1][c] = cur[t - 1][c];
          cur[t - 1][c] = made[c], made[c] = out[c];
        }
        if (t < K) {
#pragma unroll
          for (int c = 0; c < C; ++c) buffer(t, chunk & 1)[c * W + tid] = out[c];
        } else if (keep && chunk >= 0) {
#pragma unroll
          for (int c = 0; c < C; ++c) {
            const int y = ys + chunk * C + c;
            if (y >= y0 && y < y1) {
              v[long(y) * nx + x] = out[c];
              if constexpr (Wave) v_prev[long(y) * nx + x] = centres[c];
            }
          }
        }
      }
    };
    const int rows_lo = ys + (i - K) * C, rows_hi = ys + i * C;  // the levels' rows this iteration
    if (!Faces || (steady_x && rows_lo >= R && rows_hi <= ny - R))
      levels.template operator()<true>();
    else if constexpr (Faces)
      levels.template operator()<false>();
    __syncthreads();
  }
  if (block_ns && threadIdx.x == 0) {
    long long ended;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ended));
    block_ns[blockIdx.y * gridDim.x + blockIdx.x] = ended - started;
  }
}

// Gcells/s of `run` (which advances `steps` steps of `cells` points): a
// warm-up, then the median of `repeats` timed with CUDA events.
template <class Run>
double median_gcells(Run run, double cells, int steps, int repeats) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  run();
  std::vector<double> seconds;
  for (int rep = 0; rep < repeats; ++rep) {
    CHECK(cudaEventRecord(start));
    run();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    seconds.push_back(ms * 1e-3);
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  std::sort(seconds.begin(), seconds.end());
  return cells * steps / seconds[seconds.size() / 2] * 1e-9;
}

struct Result {
  std::string name;
  double gcells = 0;
  long differing = -1;
  int blocks = 0;
  std::string clocks;  // the general kernel: per-block run times
};

// Points of `got` (device) that differ, bit for bit, from `steps` steps of
// one_step from ru (which holds the start; rv: its scratch).
template <class Real>
long differing_from_one_step(const Real* got_d, Real* ru, Real* rv, int nx, int ny, int steps, Real a) {
  const long n = long(nx) * ny;
  for (int s = 0; s < steps; ++s) {
    one_step<<<dim3((nx + 255) / 256, ny), 256>>>(ru, rv, nx, ny, a);
    std::swap(ru, rv);
  }
  CHECK(cudaDeviceSynchronize());
  std::vector<Real> got(n), want(n);
  CHECK(cudaMemcpy(got.data(), got_d, n * sizeof(Real), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(want.data(), ru, n * sizeof(Real), cudaMemcpyDeviceToHost));
  long differing = 0;
  for (long i = 0; i < n; ++i) differing += std::memcmp(&got[i], &want[i], sizeof(Real)) != 0;
  return differing;
}

// A small kernel as heatwave's ghost fills are (a row of points): what each
// adds to a launch where launches are short.
template <class Real>
__global__ void touch_row(Real* scratch, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) scratch[i] += Real(1);
}

// extra: small kernels queued after each launch (touch_row over a row).
template <class Real, int K, int C, int NT, int Blocks = 1, int CS = 1>
Result run(int nx, int ny, int steps, int repeats, int segments, int extra = 0) {
  Result r;
  r.name = std::string(sizeof(Real) == 8 ? "fp64" : "fp32") + " K " + std::to_string(K) + " C " + std::to_string(C) +
           " NT " + std::to_string(NT) + " blocks/SM " + std::to_string(Blocks) + " segments " +
           std::to_string(segments) + (CS > 1 ? " cluster " + std::to_string(CS) + " (DSMEM)" : "") +
           (extra ? " + " + std::to_string(extra) + " small kernels a launch" : "");
  steps = steps / K * K;
  const long n = long(nx) * ny;
  std::vector<Real> host(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (auto& value : host) value = Real(dist(rng));
  Real *u, *v, *ru, *rv, *scratch;
  for (Real** p : {&u, &v, &ru, &rv}) CHECK(cudaMalloc(p, n * sizeof(Real)));
  CHECK(cudaMalloc(&scratch, nx * sizeof(Real)));
  CHECK(cudaMemcpy(u, host.data(), n * sizeof(Real), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(ru, u, n * sizeof(Real), cudaMemcpyDeviceToDevice));
  CHECK(cudaMemset(v, 0xff, n * sizeof(Real)));  // poison: NaNs where a launch writes nothing
  const Real a = Real(0.2);
  const size_t shared = size_t(K) * 2 * C * (NT + 2) * sizeof(Real);
  auto kernel = streaming<Real, K, C, NT, Blocks, CS>;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)) != cudaSuccess) {
    cudaGetLastError();
    r.name += " (shared memory over the limit)";
    for (Real* p : {u, v, ru, rv, scratch}) cudaFree(p);
    return r;
  }
  const int strips = (nx + CS * NT - 2 * K - 1) / (CS * NT - 2 * K);  // a cluster's each
  const int rows = (ny + segments - 1) / segments;
  const dim3 grid(strips * CS, segments);
  r.blocks = strips * CS * segments;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = CS, attribute[0].val.clusterDim.y = 1, attribute[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid, config.blockDim = dim3(NT), config.dynamicSmemBytes = shared;
  config.attrs = attribute, config.numAttrs = 1;
  auto launches = [&](int count, Real*& from, Real*& to) {
    for (int s = 0; s < count; ++s) {
      if constexpr (CS > 1)
        CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<const Real*>(from), to, nx, ny, rows, a));
      else
        kernel<<<grid, NT, shared>>>(from, to, nx, ny, rows, a);
      for (int e = 0; e < extra; ++e) touch_row<<<(nx + 255) / 256, 256>>>(scratch, nx);
      std::swap(from, to);
    }
  };
  // Correctness: `steps` steps both ways from the same start.
  Real *a0 = u, *a1 = v;
  launches(steps / K, a0, a1);
  CHECK(cudaGetLastError());
  r.differing = differing_from_one_step(a0, ru, rv, nx, ny, steps, a);
  r.gcells = median_gcells([&] { launches(steps / K, a0, a1); }, double(n), steps, repeats);
  for (Real* p : {u, v, ru, rv, scratch}) CHECK(cudaFree(p));
  return r;
}

// The resident prototype (heat r 1, Dirichlet) against one_step: a
// cooperative launch of strips x segments blocks, all resident (one an SM),
// with or without the on-chip cache of each block's kept region.
template <class Real, int K, int C, int NT, bool Cache>
Result run_resident(int nx, int ny, int steps, int repeats, int segments) {
  Result r;
  r.name = std::string(sizeof(Real) == 8 ? "fp64" : "fp32") + " K " + std::to_string(K) + " C " + std::to_string(C) +
           " NT " + std::to_string(NT) + " segments " + std::to_string(segments) +
           (Cache ? " resident (kept region on chip)" : " persistent (one launch, grid barriers)");
  steps = steps / K * K;
  const long n = long(nx) * ny;
  const int strips = (nx + NT - 2 * K - 1) / (NT - 2 * K), rows = (ny + segments - 1) / segments;
  r.blocks = strips * segments;
  const size_t shared =
      size_t(K) * 2 * C * (NT + 2) * sizeof(Real) + (Cache ? size_t(NT - 2 * K) * rows * sizeof(Real) : 0);
  auto kernel = resident<Real, K, C, NT, Cache>;
  int device = 0, sms = 0, per_sm = 0;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, NT, shared) != cudaSuccess ||
      per_sm * sms < r.blocks) {
    cudaGetLastError();
    r.name += " (not every block resident: " + std::to_string(shared / 1024) + " KiB of shared memory a block)";
    return r;
  }
  std::vector<Real> host(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (auto& value : host) value = Real(dist(rng));
  Real *u, *v, *ru, *rv;
  for (Real** p : {&u, &v, &ru, &rv}) CHECK(cudaMalloc(p, n * sizeof(Real)));
  CHECK(cudaMemcpy(u, host.data(), n * sizeof(Real), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(ru, u, n * sizeof(Real), cudaMemcpyDeviceToDevice));
  CHECK(cudaMemset(v, 0xff, n * sizeof(Real)));  // poison
  const Real a = Real(0.2);
  int launches = steps / K;
  auto run = [&](Real*& from, Real*& to) {
    int segment_rows = rows;
    Real alpha = a;
    void* args[] = {&from, &to, &nx, &ny, &segment_rows, &alpha, &launches};
    CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(kernel), dim3(strips, segments), dim3(NT), args, shared));
    if (launches & 1) std::swap(from, to);  // where the last sweep wrote
  };
  Real *a0 = u, *a1 = v;
  run(a0, a1);
  CHECK(cudaGetLastError());
  r.differing = differing_from_one_step(a0, ru, rv, nx, ny, steps, a);
  r.gcells = median_gcells([&] { run(a0, a1); }, double(n), steps, repeats);
  for (Real* p : {u, v, ru, rv}) CHECK(cudaFree(p));
  return r;
}

// The general kernel against general_one_step: faces of every kind (x low
// Dirichlet, x high Neumann, y low Neumann, y high Dirichlet).
template <class Real, int R, bool Wave, int K, int C, int NT, int Blocks = 1, bool Faces = true, bool Prefill = false>
Result run_general(int nx, int ny, int steps, int repeats, int segments) {
  Result r;
  r.name = std::string(Wave ? "wave " : "heat ") + (sizeof(Real) == 8 ? "fp64" : "fp32") + " r " + std::to_string(R) +
           " K " + std::to_string(K) + " C " + std::to_string(C) + " NT " + std::to_string(NT) + " blocks/SM " +
           std::to_string(Blocks) + " segments " + std::to_string(segments) +
           (Faces ? Prefill ? " (general, x ghosts prefilled)" : " (general)"
                  : " (general, face code left out: wrong near the faces)");
  steps = steps / K * K;
  const long n = long(nx) * ny;
  General<Real, R> p{};
  p.nx = nx, p.ny = ny;
  Real total = 0;
  for (int j = 1; j <= R; ++j) p.wx[j] = Real(1.0 / (j * j)), p.wy[j] = Real(0.8 / (j * j)), total += p.wx[j] + p.wy[j];
  p.centre_weight = -2 * total;
  p.coef = Real(0.2) / (4 * total);
  const float h = 1.0f / (nx - 1);
  p.face[0][0] = {true, -1.0f, 0.5f, 0.0f};       // Dirichlet g = 0.25
  p.face[0][1] = {false, 1.0f, 0.0f, h};          // Neumann q = 0.5
  p.face[1][0] = {false, 1.0f, 0.0f, -0.5f * h};  // Neumann q = -0.25
  p.face[1][1] = {true, -1.0f, -0.2f, 0.0f};      // Dirichlet g = -0.1
  std::vector<Real> host(n), host_prev(n);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (auto& value : host) value = Real(dist(rng));
  for (auto& value : host_prev) value = Real(dist(rng));
  Real *u, *up, *v, *vp, *ra, *rb, *rc;
  for (Real** q : {&u, &up, &v, &vp, &ra, &rb, &rc}) CHECK(cudaMalloc(q, n * sizeof(Real)));
  CHECK(cudaMemcpy(u, host.data(), n * sizeof(Real), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(up, host_prev.data(), n * sizeof(Real), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(rb, u, n * sizeof(Real), cudaMemcpyDeviceToDevice));  // reference: ra u^{m-1}, rb u^m
  CHECK(cudaMemcpy(ra, up, n * sizeof(Real), cudaMemcpyDeviceToDevice));
  CHECK(cudaMemset(v, 0xff, n * sizeof(Real)));  // poison
  CHECK(cudaMemset(vp, 0xff, n * sizeof(Real)));
  const size_t shared = size_t(K) * 2 * C * (NT + 2 * R) * sizeof(Real);
  auto kernel = general_streaming<Real, R, Wave, K, C, NT, Blocks, Faces, Prefill>;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)) != cudaSuccess) {
    cudaGetLastError();
    r.name += " (shared memory over the limit)";
    for (Real* q : {u, up, v, vp, ra, rb, rc}) cudaFree(q);
    return r;
  }
  const int strips = (nx + NT - 2 * K * R - 1) / (NT - 2 * K * R);
  const int rows = (ny + segments - 1) / segments;
  const dim3 grid(strips, segments);
  r.blocks = strips * segments;
  long long* block_ns = nullptr;
  auto launches = [&](int count, Real*& a, Real*& a_prev, Real*& b, Real*& b_prev) {
    for (int s = 0; s < count; ++s) {
      kernel<<<grid, NT, shared>>>(a, a_prev, b, b_prev, p, rows, block_ns);
      std::swap(a, b), std::swap(a_prev, b_prev);
    }
  };
  launches(steps / K, u, up, v, vp);
  CHECK(cudaGetLastError());
  for (int s = 0; s < steps; ++s) {
    general_one_step<Real, R, Wave><<<dim3((nx + 255) / 256, ny), 256>>>(rb, ra, rc, p);
    Real* t = ra;
    ra = rb, rb = rc, rc = t;  // (u^{m-1}, u^m) <- (u^m, u^{m+1})
  }
  CHECK(cudaDeviceSynchronize());
  std::vector<Real> got(n), want(n);
  r.differing = 0;
  for (int level = 0; level < (Wave ? 2 : 1); ++level) {
    CHECK(cudaMemcpy(got.data(), level == 0 ? u : up, n * sizeof(Real), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(want.data(), level == 0 ? rb : ra, n * sizeof(Real), cudaMemcpyDeviceToHost));
    for (long i = 0; i < n; ++i) r.differing += std::memcmp(&got[i], &want[i], sizeof(Real)) != 0;
  }
  r.gcells = median_gcells([&] { launches(steps / K, u, up, v, vp); }, double(n), steps, repeats);
  // One more launch with a clock a block: the slowest blocks against the median.
  CHECK(cudaMalloc(&block_ns, r.blocks * sizeof(long long)));
  launches(1, u, up, v, vp);
  std::vector<long long> ns(r.blocks);
  CHECK(cudaMemcpy(ns.data(), block_ns, r.blocks * sizeof(long long), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(block_ns));
  std::vector<int> order(r.blocks);
  for (int b = 0; b < r.blocks; ++b) order[b] = b;
  std::sort(order.begin(), order.end(), [&](int a, int b) { return ns[a] > ns[b]; });
  r.clocks = "median block " + std::to_string(ns[order[r.blocks / 2]] / 1000) + " us; slowest (strip, segment, us):";
  for (int k = 0; k < 6; ++k)
    r.clocks += " (" + std::to_string(order[k] % strips) + ", " + std::to_string(order[k] / strips) + ", " +
                std::to_string(ns[order[k]] / 1000) + ")";
  for (Real* q : {u, up, v, vp, ra, rb, rc}) CHECK(cudaFree(q));
  return r;
}

int main(int argc, char** argv) {
  const int nx = argc > 1 ? std::atoi(argv[1]) : 8352, ny = argc > 2 ? std::atoi(argv[2]) : 8352;
  const int steps = argc > 3 ? std::atoi(argv[3]) : 144, repeats = argc > 4 ? std::atoi(argv[4]) : 7;
  // The special kernel (heat r 1, Dirichlet) beside the general one on the
  // same plan (x ghosts tested in the levels, and prefilled), then the
  // prefilled general kernel's wave and radii; 7 segments of two blocks an
  // SM fill the 132 SMs twice at EBISU's sizes (36 strips).
  const int segments = argc > 5 ? std::atoi(argv[5]) : 7;
  std::vector<Result> results;
  if (argc > 6 && std::strcmp(argv[6], "resident") == 0) {
    // Issue 36's resident mode, prototyped: at `segments` (all blocks
    // resident, one an SM), the special kernel's launches against one
    // persistent launch, without and with the kept regions on chip; k 4 and 8.
    results.push_back(run<float, 4, 4, 256, 1>(nx, ny, steps, repeats, segments));
    results.push_back(run_resident<float, 4, 4, 256, false>(nx, ny, steps, repeats, segments));
    results.push_back(run_resident<float, 4, 4, 256, true>(nx, ny, steps, repeats, segments));
    results.push_back(run<float, 8, 4, 256, 1>(nx, ny, steps, repeats, segments));
    results.push_back(run_resident<float, 8, 4, 256, false>(nx, ny, steps, repeats, segments));
    results.push_back(run_resident<float, 8, 4, 256, true>(nx, ny, steps, repeats, segments));
    results.push_back(run<double, 4, 2, 256, 1>(nx, ny, steps, repeats, segments));
    results.push_back(run_resident<double, 4, 2, 256, true>(nx, ny, steps, repeats, segments));
  } else if (argc > 6 && std::strcmp(argv[6], "overhead") == 0) {
    // What small kernels after each launch (heatwave's ghost fills: two a
    // launch, four for the wave) cost where launches are short.
    for (int extra : {0, 1, 2, 4}) results.push_back(run<float, 4, 4, 256, 1>(nx, ny, steps, repeats, segments, extra));
    for (int extra : {0, 2}) results.push_back(run<float, 8, 4, 256, 1>(nx, ny, steps, repeats, segments, extra));
  } else if (argc > 6 && std::strcmp(argv[6], "clusters") == 0) {
    // The special kernel in clusters of 1, 2 and 4 blocks along x (issue 36's cluster shape).
    results.push_back(run<float, 12, 4, 256, 2>(nx, ny, steps, repeats, segments));
    results.push_back(run<float, 12, 4, 256, 2, 2>(nx, ny, steps, repeats, segments));
    results.push_back(run<float, 12, 4, 256, 2, 4>(nx, ny, steps, repeats, segments));
    results.push_back(run<double, 12, 2, 256, 1>(nx, ny, steps, repeats, segments));
    results.push_back(run<double, 12, 2, 256, 1, 2>(nx, ny, steps, repeats, segments));
    results.push_back(run<double, 12, 2, 256, 1, 4>(nx, ny, steps, repeats, segments));
  } else if (argc > 6 && std::strcmp(argv[6], "threads") == 0) {
    // One block of 512 an SM against two of 256 (the same 128 registers a
    // thread, half the recomputed x halo), and the wave at 8 levels in one
    // block of 384 (168 registers) against 6 levels in two of 256; each at
    // segment counts around whole waves of blocks over 132 SMs (at 8352^2:
    // 36, 18, 35 and 23 strips).
    results.push_back(run<float, 12, 4, 256, 2>(nx, ny, steps, repeats, 7));
    for (int s : {7, 14, 22}) results.push_back(run<float, 12, 4, 512, 1>(nx, ny, steps, repeats, s));
    results.push_back(run_general<float, 1, true, 6, 4, 256, 2, true, true>(nx, ny, steps, repeats, 7));
    for (int s : {5, 11, 17})
      results.push_back(run_general<float, 1, true, 8, 4, 384, 1, true, true>(nx, ny, steps, repeats, s));
  } else {
    results.push_back(run<double, 12, 2, 256, 2>(nx, ny, steps, repeats, segments));
    results.push_back(run_general<double, 1, false, 12, 2, 256, 2>(nx, ny, steps, repeats, segments));
    results.push_back(run_general<double, 1, false, 12, 2, 256, 2, true, true>(nx, ny, steps, repeats, segments));
    results.push_back(run<float, 12, 4, 256, 2>(nx, ny, steps, repeats, segments));
    results.push_back(run_general<float, 1, false, 12, 4, 256, 2, true, true>(nx, ny, steps, repeats, segments));
    results.push_back(run_general<double, 1, true, 6, 2, 256, 2, true, true>(nx, ny, steps, repeats, segments));
    results.push_back(run_general<double, 1, true, 8, 2, 256, 2, true, true>(nx, ny, steps, repeats, segments));
    results.push_back(run_general<float, 1, true, 6, 4, 256, 2, true, true>(nx, ny, steps, repeats, segments));
    results.push_back(run_general<float, 1, true, 8, 4, 256, 2, true, true>(nx, ny, steps, repeats, segments));
    results.push_back(run_general<double, 2, false, 6, 2, 256, 2, true, true>(nx, ny, steps, repeats, segments));
    results.push_back(run_general<float, 2, false, 6, 4, 256, 2, true, true>(nx, ny, steps, repeats, segments));
    results.push_back(run_general<float, 4, false, 4, 4, 256, 2, true, true>(nx, ny, steps, repeats, segments));
  }
  std::printf("{\"grid\": [%d, %d], \"steps\": %d, \"results\": [\n", nx, ny, steps);
  for (size_t i = 0; i < results.size(); ++i)
    std::printf("  {\"plan\": \"%s\", \"blocks\": %d, \"differing\": %ld, \"gcells\": %.1f, \"clocks\": \"%s\"}%s\n",
                results[i].name.c_str(), results[i].blocks, results[i].differing, results[i].gcells,
                results[i].clocks.c_str(), i + 1 < results.size() ? "," : "");
  std::printf("]}\n");
  return 0;
}
