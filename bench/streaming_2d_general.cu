// bench/streaming_2d's general kernel and its runner against a one-step
// kernel with the same arithmetic.
#include <cstring>
#include <random>

#include "streaming_2d.cuh"

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

// The general kernel against general_one_step: faces of every kind (x low
// Dirichlet, x high Neumann, y low Neumann, y high Dirichlet).
template <class Real, int R, bool Wave, int K, int C, int NT, int Blocks, bool Faces, bool Prefill>
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

// The configurations main() runs.
template Result run_general<float, 1, true, 6, 4, 256, 2, true, true>(int, int, int, int, int);
template Result run_general<float, 1, true, 8, 4, 384, 1, true, true>(int, int, int, int, int);
template Result run_general<float, 1, true, 8, 4, 256, 2, true, true>(int, int, int, int, int);
template Result run_general<float, 1, false, 12, 4, 256, 2, true, true>(int, int, int, int, int);
template Result run_general<float, 2, false, 6, 4, 256, 2, true, true>(int, int, int, int, int);
template Result run_general<float, 4, false, 4, 4, 256, 2, true, true>(int, int, int, int, int);
template Result run_general<double, 1, false, 12, 2, 256, 2>(int, int, int, int, int);
template Result run_general<double, 1, false, 12, 2, 256, 2, true, true>(int, int, int, int, int);
template Result run_general<double, 1, true, 6, 2, 256, 2, true, true>(int, int, int, int, int);
template Result run_general<double, 1, true, 8, 2, 256, 2, true, true>(int, int, int, int, int);
template Result run_general<double, 2, false, 6, 2, 256, 2, true, true>(int, int, int, int, int);
