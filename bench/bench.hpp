#pragma once
// `heatwave bench`: the roofline first (device-to-device copy on a GPU, a
// parallel copy on the host), then a matrix of cases timed where they run
// (CUDA events on a GPU), warm-up, median of repeats, fresh random data.
#include <string>

namespace heatwave::bench {

struct Options {
  std::string suite;  // YAML suite (empty: bench/standard.yaml embedded defaults)
  std::string json = "heatwave-bench.json";
};

// Prints the table and writes the JSON. Returns the process exit code.
int run(const Options& options);

}  // namespace heatwave::bench
