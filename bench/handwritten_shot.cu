// A user's afternoon of CUDA: the one-step kernels a user writes by hand, as
// the yardsticks heatwave's own one-step kernel must meet (issue 72). Each
// thread owns one x-y point and walks its whole z column, keeping the 2R+1
// planes of u it needs along z in registers (the usual 2.5D streaming), x and
// y neighbours through L1; blocks of 32 x 8; float32; the central
// difference of order 2R. Cases on one grid:
//   heat   the heat equation, constant alpha, u = 0 on the faces
//   plain  the wave equation, constant c, u = 0 on the faces
//   shot   the wave with c in three layers along z (a table), an absorbing
//          sponge on five faces (gamma from the distance to each face,
//          heatwave's profile 12 c_max/w (d/w)^2), a free surface on top
//          (mirror ghosts), a Ricker point source spread over its 8
//          neighbours, 91 receivers sampled every 2 steps into a device buffer.
// Prints JSON: grid, steps, radius, and for each case the median seconds a
// step and Gcells/s over `repeats` timed runs (CUDA events).
//   heatwave_handwritten_shot [nx ny nz steps repeats radius cases]
// radius 1 or 4 (default 1); cases a comma list (default plain,shot).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_check.hpp"

struct Grid {
  int nx, ny, nz;
  float h, dt;
};

enum class Case { heat, plain, shot };

constexpr int width = 24;  // sponge points

// The second derivative's central weights of order 2R (j = 0 the centre).
__host__ __device__ constexpr float weight(int R, int j) {
  constexpr float r1[2] = {-2.0f, 1.0f};
  constexpr float r4[5] = {-205.0f / 72, 8.0f / 5, -1.0f / 5, 8.0f / 315, -1.0f / 560};
  return R == 1 ? r1[j] : r4[j];
}

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

// u_prev_next: u^{n-1} in, u^{n+1} out (the waves); the heat's u^{n+1}.
template <int R, Case C>
__global__ void __launch_bounds__(256) step(const float* __restrict__ u, float* __restrict__ u_prev_next,
                                            const float* __restrict__ c_of_z, Grid g, float gamma_max) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x + R, y = blockIdx.y * blockDim.y + threadIdx.y + R;
  if (x >= g.nx - R || y >= g.ny - R) return;
  const long sx = 1, sy = g.nx, sz = long(g.nx) * g.ny;
  const float inv_h2 = 1.0f / (g.h * g.h), dt2 = g.dt * g.dt;
  constexpr bool Shot = C == Case::shot;
  const int z_last = Shot ? g.nz - 1 : g.nz - 1 - R;  // the free surface is updated (mirror ghosts)
  long p = x * sx + y * sy + R * sz;
  float win[2 * R + 1];  // win[R + j]: the plane at z + j
#pragma unroll
  for (int j = 0; j < 2 * R; ++j) win[j] = u[p + (j - R) * sz];
  float gxy = 0;
  if (Shot) gxy = sponge(x, g.nx, gamma_max, false) + sponge(y, g.ny, gamma_max, false);
  for (int z = R; z <= z_last; ++z, p += sz) {
    win[2 * R] = z + R < g.nz ? u[p + R * sz] : win[2 * (g.nz - 1 - z)];  // a mirror ghost past the top
    float lap = 3 * weight(R, 0) * win[R];
#pragma unroll
    for (int j = 1; j <= R; ++j)
      lap += weight(R, j) * (u[p - j * sx] + u[p + j * sx] + u[p - j * sy] + u[p + j * sy] + win[R - j] + win[R + j]);
    lap *= inv_h2;
    const float here = win[R];
    float next;
    if constexpr (C == Case::heat) {
      next = here + dt2 * lap;  // dt2 holds alpha dt for the heat
    } else if constexpr (Shot) {
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
#pragma unroll
    for (int j = 0; j < 2 * R; ++j) win[j] = win[j + 1];
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

template <int R>
void launch(Case c, dim3 grid, dim3 block, const float* now, float* other, const float* c_of_z, Grid g, float gm) {
  if (c == Case::heat) step<R, Case::heat><<<grid, block>>>(now, other, c_of_z, g, gm);
  if (c == Case::plain) step<R, Case::plain><<<grid, block>>>(now, other, c_of_z, g, gm);
  if (c == Case::shot) step<R, Case::shot><<<grid, block>>>(now, other, c_of_z, g, gm);
}

int main(int argc, char** argv) {
  const int nx = argc > 1 ? std::atoi(argv[1]) : 801, ny = argc > 2 ? std::atoi(argv[2]) : 801,
            nz = argc > 3 ? std::atoi(argv[3]) : 401, steps = argc > 4 ? std::atoi(argv[4]) : 600,
            repeats = argc > 5 ? std::atoi(argv[5]) : 3, radius = argc > 6 ? std::atoi(argv[6]) : 1;
  const std::string list = argc > 7 ? argv[7] : "plain,shot";
  if (radius != 1 && radius != 4) {
    std::fprintf(stderr, "heatwave_handwritten_shot: radius %d: built for 1 and 4\n", radius);
    return 2;
  }
  std::vector<Case> cases;
  for (size_t at = 0; at <= list.size();) {
    const size_t end = std::min(list.find(',', at), list.size());
    const std::string name = list.substr(at, end - at);
    if (name == "heat") cases.push_back(Case::heat);
    else if (name == "plain") cases.push_back(Case::plain);
    else if (name == "shot") cases.push_back(Case::shot);
    else {
      std::fprintf(stderr, "heatwave_handwritten_shot: case '%s': one of heat, plain, shot\n", name.c_str());
      return 2;
    }
    at = end + 1;
  }
  Grid g{nx, ny, nz, 2.0f / (nx - 1), 0};
  const float c_max = 3.0f;
  g.dt = 0.9f * g.h / (c_max * std::sqrt(3.0f)) / radius;
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
  const dim3 block(32, 8), grid((nx - 2 * radius + 31) / 32, (ny - 2 * radius + 7) / 8);
  const float gamma_max = 12 * c_max / (width * g.h);
  const long source = long(nz - 2 - nz / 20) * nx * ny + long(ny / 2) * nx + nx / 2;
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::printf("{\"grid\": [%d, %d, %d], \"steps\": %d, \"repeats\": %d, \"radius\": %d", nx, ny, nz, steps, repeats,
              radius);
  for (const Case kind : cases) {
    // The heat's launch reads dt2 as alpha dt / 1 (alpha 1, dt at its limit h^2 / (6 R)).
    Grid run = g;
    if (kind == Case::heat) run.dt = std::sqrt(g.h * g.h / (6.0f * radius * 2));
    std::vector<float> seconds;
    for (int r = 0; r < repeats + 1; ++r) {  // the first: warm-up
      CHECK(cudaMemset(u, 0, n * sizeof(float)));
      CHECK(cudaMemset(v, 0, n * sizeof(float)));
      CHECK(cudaEventRecord(start));
      float *now = u, *other = v;
      for (int s = 0; s < steps; ++s) {
        if (radius == 1) launch<1>(kind, grid, block, now, other, c_of_z, run, gamma_max);
        else launch<4>(kind, grid, block, now, other, c_of_z, run, gamma_max);
        if (kind == Case::shot) {
          const float t = s * g.dt - 1.0f / 15, a = float(M_PI) * 15 * t;
          add_source<<<1, 8>>>(other, source, 1, nx, long(nx) * ny, (1 - 2 * a * a) * std::exp(-a * a) * g.dt * g.dt);
          if (s % 2 == 0) sample<<<1, 128>>>(other, points, traces, receivers, s / 2);
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
    const char* name = kind == Case::heat ? "heat" : kind == Case::plain ? "plain" : "shot";
    std::printf(", \"%s\": {\"seconds_per_step\": %.6g, \"gcells_per_second\": %.2f}", name, median, n / median / 1e9);
  }
  std::printf("}\n");
  return 0;
}
