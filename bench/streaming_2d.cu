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
//   heatwave_streaming_2d [nx ny steps repeats]
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

// Level 0 is u^n; a launch writes level K = u^{n+K} into v at the strip's
// kept columns and the segment's rows.
template <class Real, int K, int C, int NT, int Blocks>
__global__ void __launch_bounds__(NT, Blocks)
    streaming(const Real* __restrict__ u, Real* __restrict__ v, int nx, int ny, int rows_per_segment, Real a) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int W = NT + 2;  // a row of a level's buffer: the strip and one pad point each side
  Real* shared = reinterpret_cast<Real*>(smem);
  auto buffer = [&](int level, int parity, int row) { return shared + ((level * 2 + parity) * C + row) * W + 1; };
  const int tid = threadIdx.x;
  const int x = blockIdx.x * (NT - 2 * K) - K + tid;
  const int y0 = blockIdx.y * rows_per_segment, y1 = min(ny, y0 + rows_per_segment);
  const int ys = y0 - K;  // the segment's y cone: level t is valid from ys + t
  const bool inside_x = x >= 0 && x < nx, fixed_x = x <= 0 || x >= nx - 1;
  const bool keep = tid >= K && tid < NT - K && inside_x;
  if (tid < 2)  // pads: read only by edge columns, whose values are never kept
    for (int b = 0; b < K * 2 * C; ++b) shared[b * W + (tid == 0 ? 0 : W - 1)] = Real(0);

  Real last[K], cur[K][C];  // level L's row before the chunk level L+1 reads, and that chunk
#pragma unroll
  for (int L = 0; L < K; ++L) {
    last[L] = Real(0);
#pragma unroll
    for (int c = 0; c < C; ++c) cur[L][c] = Real(0);
  }
  auto load_chunk = [&](int chunk, Real(&out)[C]) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int y = ys + chunk * C + c;
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
    for (int c = 0; c < C; ++c) buffer(0, i & 1, c)[tid] = made[c];
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
        for (int c = 0; c < C; ++c) buffer(t, chunk & 1, c)[tid] = out[c];
      } else if (keep && chunk >= 0) {
#pragma unroll
        for (int c = 0; c < C; ++c) {
          const int y = ys + chunk * C + c;
          if (y >= y0 && y < y1) v[long(y) * nx + x] = out[c];
        }
      }
    }
    __syncthreads();
  }
}

struct Result {
  std::string name;
  double gcells = 0;
  long differing = -1;
  int blocks = 0;
};

template <class Real, int K, int C, int NT, int Blocks = 1>
Result run(int nx, int ny, int steps, int repeats, int segments) {
  Result r;
  r.name = std::string(sizeof(Real) == 8 ? "fp64" : "fp32") + " K " + std::to_string(K) + " C " + std::to_string(C) +
           " NT " + std::to_string(NT) + " blocks/SM " + std::to_string(Blocks) + " segments " +
           std::to_string(segments);
  steps = steps / K * K;
  const long n = long(nx) * ny;
  std::vector<Real> host(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (auto& value : host) value = Real(dist(rng));
  Real *u, *v, *ru, *rv;
  for (Real** p : {&u, &v, &ru, &rv}) CHECK(cudaMalloc(p, n * sizeof(Real)));
  CHECK(cudaMemcpy(u, host.data(), n * sizeof(Real), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(ru, u, n * sizeof(Real), cudaMemcpyDeviceToDevice));
  CHECK(cudaMemset(v, 0xff, n * sizeof(Real)));  // poison: NaNs where a launch writes nothing
  const Real a = Real(0.2);
  const size_t shared = size_t(K) * 2 * C * (NT + 2) * sizeof(Real);
  auto kernel = streaming<Real, K, C, NT, Blocks>;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)) != cudaSuccess) {
    cudaGetLastError();
    r.name += " (shared memory over the limit)";
    for (Real* p : {u, v, ru, rv}) cudaFree(p);
    return r;
  }
  const int strips = (nx + NT - 2 * K - 1) / (NT - 2 * K);
  const int rows = (ny + segments - 1) / segments;
  const dim3 grid(strips, segments);
  r.blocks = strips * segments;
  auto launches = [&](int count, Real*& from, Real*& to) {
    for (int s = 0; s < count; ++s) {
      kernel<<<grid, NT, shared>>>(from, to, nx, ny, rows, a);
      std::swap(from, to);
    }
  };
  // Correctness: `steps` steps both ways from the same start.
  Real *a0 = u, *a1 = v;
  launches(steps / K, a0, a1);
  CHECK(cudaGetLastError());
  Real *b0 = ru, *b1 = rv;
  for (int s = 0; s < steps; ++s) {
    one_step<<<dim3((nx + 255) / 256, ny), 256>>>(b0, b1, nx, ny, a);
    std::swap(b0, b1);
  }
  CHECK(cudaDeviceSynchronize());
  std::vector<Real> got(n), want(n);
  CHECK(cudaMemcpy(got.data(), a0, n * sizeof(Real), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(want.data(), b0, n * sizeof(Real), cudaMemcpyDeviceToHost));
  r.differing = 0;
  for (long i = 0; i < n; ++i) r.differing += std::memcmp(&got[i], &want[i], sizeof(Real)) != 0;
  // Speed: a warm-up, then the median of `repeats`.
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  launches(steps / K, a0, a1);
  std::vector<double> seconds;
  for (int rep = 0; rep < repeats; ++rep) {
    CHECK(cudaEventRecord(start));
    launches(steps / K, a0, a1);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    seconds.push_back(ms * 1e-3);
  }
  std::sort(seconds.begin(), seconds.end());
  r.gcells = double(n) * steps / seconds[seconds.size() / 2] * 1e-9;
  for (Real* p : {u, v, ru, rv}) CHECK(cudaFree(p));
  return r;
}

int main(int argc, char** argv) {
  const int nx = argc > 1 ? std::atoi(argv[1]) : 8352, ny = argc > 2 ? std::atoi(argv[2]) : 8352;
  const int steps = argc > 3 ? std::atoi(argv[3]) : 144, repeats = argc > 4 ? std::atoi(argv[4]) : 7;
  // Segments of rows: 1-3 blocks along y at one block an SM, and 3-7 at two
  // (the blocks of 36 strips then fill 132 SMs once or twice).
  std::vector<Result> results;
  for (int segments : {1, 2, 3}) {
    results.push_back(run<double, 8, 4, 256>(nx, ny, steps, repeats, segments));
    results.push_back(run<double, 12, 4, 256>(nx, ny, steps, repeats, segments));
    results.push_back(run<float, 12, 8, 256>(nx, ny, steps, repeats, segments));
    results.push_back(run<float, 16, 4, 256>(nx, ny, steps, repeats, segments));
  }
  for (int segments : {3, 4, 5, 6, 7}) {
    results.push_back(run<double, 12, 2, 256, 2>(nx, ny, steps, repeats, segments));
    results.push_back(run<double, 8, 2, 256, 2>(nx, ny, steps, repeats, segments));
    results.push_back(run<float, 12, 4, 256, 2>(nx, ny, steps, repeats, segments));
    results.push_back(run<float, 8, 4, 256, 2>(nx, ny, steps, repeats, segments));
  }
  std::printf("{\"grid\": [%d, %d], \"steps\": %d, \"results\": [\n", nx, ny, steps);
  for (size_t i = 0; i < results.size(); ++i)
    std::printf("  {\"plan\": \"%s\", \"blocks\": %d, \"differing\": %ld, \"gcells\": %.1f}%s\n",
                results[i].name.c_str(), results[i].blocks, results[i].differing, results[i].gcells,
                i + 1 < results.size() ? "," : "");
  std::printf("]}\n");
  return 0;
}
