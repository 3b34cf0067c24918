// bench/streaming_2d's special kernel (heat r 1, Dirichlet faces: the
// design in its plainest form), its cluster shape and the resident
// prototype, with their runners against the one-step kernel.
#include <cooperative_groups.h>

#include <cstring>
#include <random>

#include "streaming_2d.cuh"

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

// A run's fields of n points: u fresh random data (the same for every
// configuration), ru its copy for the reference, v poisoned (all bits set,
// a NaN: a point a launch does not write shows up); rv the reference's scratch.
template <class Real>
void start_fields(long n, Real*& u, Real*& v, Real*& ru, Real*& rv) {
  std::vector<Real> host(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (auto& value : host) value = Real(dist(rng));
  for (Real** p : {&u, &v, &ru, &rv}) CHECK(cudaMalloc(p, n * sizeof(Real)));
  CHECK(cudaMemcpy(u, host.data(), n * sizeof(Real), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(ru, u, n * sizeof(Real), cudaMemcpyDeviceToDevice));
  CHECK(cudaMemset(v, 0xff, n * sizeof(Real)));
}

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
template <class Real, int K, int C, int NT, int Blocks, int CS>
Result run(int nx, int ny, int steps, int repeats, int segments, int extra) {
  Result r;
  r.name = std::string(sizeof(Real) == 8 ? "fp64" : "fp32") + " K " + std::to_string(K) + " C " + std::to_string(C) +
           " NT " + std::to_string(NT) + " blocks/SM " + std::to_string(Blocks) + " segments " +
           std::to_string(segments) + (CS > 1 ? " cluster " + std::to_string(CS) + " (DSMEM)" : "") +
           (extra ? " + " + std::to_string(extra) + " small kernels a launch" : "");
  steps = steps / K * K;
  const long n = long(nx) * ny;
  Real *u, *v, *ru, *rv, *scratch;
  start_fields(n, u, v, ru, rv);
  CHECK(cudaMalloc(&scratch, nx * sizeof(Real)));
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
  Real *u, *v, *ru, *rv;
  start_fields(n, u, v, ru, rv);
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

// The configurations main() runs.
template Result run<float, 4, 4, 256, 1>(int, int, int, int, int, int);
template Result run<float, 8, 4, 256, 1>(int, int, int, int, int, int);
template Result run<double, 4, 2, 256, 1>(int, int, int, int, int, int);
template Result run<float, 12, 4, 256, 2>(int, int, int, int, int, int);
template Result run<float, 12, 4, 256, 2, 2>(int, int, int, int, int, int);
template Result run<float, 12, 4, 256, 2, 4>(int, int, int, int, int, int);
template Result run<float, 12, 4, 512, 1>(int, int, int, int, int, int);
template Result run<double, 12, 2, 256, 1>(int, int, int, int, int, int);
template Result run<double, 12, 2, 256, 1, 2>(int, int, int, int, int, int);
template Result run<double, 12, 2, 256, 1, 4>(int, int, int, int, int, int);
template Result run<double, 12, 2, 256, 2>(int, int, int, int, int, int);
template Result run_resident<float, 4, 4, 256, false>(int, int, int, int, int);
template Result run_resident<float, 4, 4, 256, true>(int, int, int, int, int);
template Result run_resident<float, 8, 4, 256, false>(int, int, int, int, int);
template Result run_resident<float, 8, 4, 256, true>(int, int, int, int, int);
template Result run_resident<double, 4, 2, 256, true>(int, int, int, int, int);
