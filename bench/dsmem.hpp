#pragma once
// The DSMEM microbenchmark (bench/dsmem_kernels.cu, driven by
// bench/dsmem_bench.cpp): what reading a peer block's shared memory and
// synchronising a cluster cost on this GPU, against the local equivalents,
// so that a cluster design is chosen from numbers (docs/performance.md).
#include <string>
#include <vector>

namespace heatwave::bench {

// One measurement: `what` at cluster size `cluster` (1: no cluster), a value
// in `unit`, the median of the repeats.
struct DsmemResult {
  std::string what;
  int cluster = 1;
  double value = 0;
  std::string unit;
  std::string note;
};

// Runs every measurement on the current device; `repeats` timed runs each
// (after a warm-up), the median kept.
std::vector<DsmemResult> run_dsmem_bench(int repeats);

}  // namespace heatwave::bench
