// Issue 36's first step: the 2D register-streaming design measured on its
// own before it becomes a cluster-kernel family (the kernels in
// streaming_2d_special.cu and streaming_2d_general.cu; this unit runs them). Heat 2D, 5-point star,
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
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "streaming_2d.cuh"

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
