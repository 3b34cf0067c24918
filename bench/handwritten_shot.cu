// A user's afternoon of CUDA: the seismic shot written by hand, one step a
// launch, as the yardstick heatwave's own kernels must meet (issue: a real
// run as fast as the benchmark). 3D wave, float32, 7-point Laplacian; each
// thread walks a z column keeping u's three planes in registers (the usual
// 2.5D streaming), x and y neighbours through L1. Two cases on one grid:
//   plain  constant c, u = 0 on the faces
//   shot   c in three layers along z (a table), an absorbing sponge on five
//          faces (gamma from the distance to each face, heatwave's profile
//          12 c_max/w (d/w)^2), a Neumann free surface on top, a Ricker point
//          source spread over its 8 neighbours, 91 receivers sampled every 2
//          steps into a device buffer.
// Prints JSON: grid, steps, and for each case the median seconds a step and
// Gcells/s over `repeats` timed runs (CUDA events).
//   heatwave_handwritten_shot [nx ny nz steps repeats]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.hpp"

struct Grid {
  int nx, ny, nz;
  float h, dt;
};

constexpr int width = 24;  // sponge points

__device__ __forceinline__ float sponge(int i, int n, float gamma_max, bool high_free) {
  float g = 0;
  if (i < width) {
    const float d = float(width - i) / width;
    g += gamma_max * d * d;
  }
  if (!high_free && n - 1 - i < width) {
    const float d = float(width - (n - 1 - i)) / width;
    g += gamma_max * d * d;
  }
  return g;
}

template <bool Shot>
__global__ void __launch_bounds__(256) step(const float* __restrict__ u, float* __restrict__ u_prev_next,
                                            const float* __restrict__ c_of_z, Grid g, float gamma_max) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x + 1, y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (x >= g.nx - 1 || y >= g.ny - 1) return;
  const long sx = 1, sy = g.nx, sz = long(g.nx) * g.ny;
  const float inv_h2 = 1.0f / (g.h * g.h), dt2 = g.dt * g.dt;
  const int z_last = Shot ? g.nz - 1 : g.nz - 2;  // the free surface is updated (mirror ghost)
  long p = x * sx + y * sy + sz;
  float below = u[p - sz], here = u[p], above;
  float gxy = 0;
  if (Shot) gxy = sponge(x, g.nx, gamma_max, false) + sponge(y, g.ny, gamma_max, false);
  for (int z = 1; z <= z_last; ++z, p += sz) {
    above = z + 1 < g.nz ? u[p + sz] : below;  // Neumann: the ghost mirrors z - 1
    const float lap = (u[p - sx] + u[p + sx] + u[p - sy] + u[p + sy] + below + above - 6.0f * here) * inv_h2;
    float next;
    if (Shot) {
      const float c = c_of_z[z];
      const float gamma = gxy + sponge(z, g.nz, gamma_max, true);
      if (gamma > 0) {
        const float d = 0.5f * gamma * g.dt;
        next = (2.0f * here - (1.0f - d) * u_prev_next[p] + c * c * dt2 * lap) / (1.0f + d);
      } else {
        next = 2.0f * here - u_prev_next[p] + c * c * dt2 * lap;
      }
    } else {
      next = 2.0f * here - u_prev_next[p] + dt2 * lap;
    }
    u_prev_next[p] = next;
    below = here, here = above;
  }
}

__global__ void add_source(float* u, long p, long sx, long sy, long sz, float amplitude) {
  const int k = threadIdx.x;  // the 8 corners, trilinear weights 1/8 at a cell centre
  u[p + (k & 1) * sx + ((k >> 1) & 1) * sy + ((k >> 2) & 1) * sz] += amplitude / 8;
}

__global__ void sample(const float* u, const long* points, float* traces, int receivers, int slot) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < receivers) traces[long(slot) * receivers + r] = u[points[r]];
}

int main(int argc, char** argv) {
  const int nx = argc > 1 ? std::atoi(argv[1]) : 801, ny = argc > 2 ? std::atoi(argv[2]) : 801,
            nz = argc > 3 ? std::atoi(argv[3]) : 401, steps = argc > 4 ? std::atoi(argv[4]) : 600,
            repeats = argc > 5 ? std::atoi(argv[5]) : 3;
  Grid g{nx, ny, nz, 2.0f / (nx - 1), 0};
  const float c_max = 3.0f;
  g.dt = 0.9f * g.h / (c_max * std::sqrt(3.0f));
  const long n = long(nx) * ny * nz;
  float *u, *v, *c_of_z, *traces;
  long* points;
  CHECK(cudaMalloc(&u, n * sizeof(float)));
  CHECK(cudaMalloc(&v, n * sizeof(float)));
  std::vector<float> c(nz);
  for (int z = 0; z < nz; ++z) {
    const float depth = z * g.h;
    c[z] = depth < 0.5f ? 3.0f : depth < 0.85f ? 2.2f : 1.5f;
  }
  CHECK(cudaMalloc(&c_of_z, nz * sizeof(float)));
  CHECK(cudaMemcpy(c_of_z, c.data(), nz * sizeof(float), cudaMemcpyHostToDevice));
  const int receivers = 91;
  std::vector<long> at(receivers);
  for (int r = 0; r < receivers; ++r)
    at[r] = long(nz - 1) * nx * ny + long(ny / 2) * nx + (nx / 20 + r * (nx - nx / 10) / (receivers - 1));
  CHECK(cudaMalloc(&points, receivers * sizeof(long)));
  CHECK(cudaMemcpy(points, at.data(), receivers * sizeof(long), cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&traces, long(steps / 2 + 1) * receivers * sizeof(float)));
  const dim3 block(32, 8), grid((nx - 2 + 31) / 32, (ny - 2 + 7) / 8);
  const float gamma_max = 12 * c_max / (width * g.h);
  const long source = long(nz - 2 - nz / 20) * nx * ny + long(ny / 2) * nx + nx / 2;
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::printf("{\"grid\": [%d, %d, %d], \"steps\": %d, \"repeats\": %d", nx, ny, nz, steps, repeats);
  for (int shot = 0; shot < 2; ++shot) {
    std::vector<float> seconds;
    for (int r = 0; r < repeats + 1; ++r) {  // the first: warm-up
      CHECK(cudaMemset(u, 0, n * sizeof(float)));
      CHECK(cudaMemset(v, 0, n * sizeof(float)));
      CHECK(cudaEventRecord(start));
      float *now = u, *other = v;
      for (int s = 0; s < steps; ++s) {
        if (shot) {
          step<true><<<grid, block>>>(now, other, c_of_z, g, gamma_max);
          const float t = s * g.dt - 1.0f / 15, a = float(M_PI) * 15 * t;
          add_source<<<1, 8>>>(other, source, 1, nx, long(nx) * ny, (1 - 2 * a * a) * std::exp(-a * a) * g.dt * g.dt);
          if (s % 2 == 0) sample<<<1, 128>>>(other, points, traces, receivers, s / 2);
        } else {
          step<false><<<grid, block>>>(now, other, c_of_z, g, gamma_max);
        }
        std::swap(now, other);
      }
      CHECK(cudaEventRecord(stop));
      CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, start, stop));
      if (r > 0) seconds.push_back(ms / 1e3f / steps);
    }
    CHECK(cudaGetLastError());
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    std::printf(", \"%s\": {\"seconds_per_step\": %.6g, \"gcells_per_second\": %.2f}", shot ? "shot" : "plain", median,
                n / median / 1e9);
  }
  std::printf("}\n");
  return 0;
}
