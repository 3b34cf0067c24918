// bench/streaming_2d: issue 36's 2D register-streaming design measured on
// its own (streaming_2d.cu says what it measures and how to run it). What
// its units share: the timing, a configuration's result, and the runners,
// each defined and instantiated for the configurations main() runs in the
// unit of its kernels (streaming_2d_special.cu: the special kernel, heat r 1
// with Dirichlet faces, its clusters and the resident prototype;
// streaming_2d_general.cu: the general kernel).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cuda_check.hpp"

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

// The special kernel's launches (extra: small kernels queued after each).
template <class Real, int K, int C, int NT, int Blocks = 1, int CS = 1>
Result run(int nx, int ny, int steps, int repeats, int segments, int extra = 0);
// The resident prototype: one cooperative launch (Cache: the kept regions on chip).
template <class Real, int K, int C, int NT, bool Cache>
Result run_resident(int nx, int ny, int steps, int repeats, int segments);
// The general kernel (radius, the wave, faces of every kind).
template <class Real, int R, bool Wave, int K, int C, int NT, int Blocks = 1, bool Faces = true, bool Prefill = false>
Result run_general(int nx, int ny, int steps, int repeats, int segments);
