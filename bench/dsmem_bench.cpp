// heatwave_dsmem_bench: what distributed shared memory (DSMEM) and cluster
// barriers cost on this GPU (bench/dsmem_kernels.cu), as a table on stdout
// and JSON for docs/performance.md.
//   heatwave_dsmem_bench [--out dsmem.json] [--repeats 7]
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/dsmem.hpp"
#include "io/errors.hpp"
#include "kernels/cuda/device.hpp"

int main(int argc, char** argv) {
  CLI::App app{"heatwave_dsmem_bench: DSMEM latency, bandwidth and cluster barrier costs"};
  std::string out = "dsmem.json";
  int repeats = 7;
  app.add_option("--out", out, "JSON results")->capture_default_str();
  app.add_option("--repeats", repeats, "timed runs a measurement (the median is kept)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    const auto device = heatwave::cuda::current_device();
    const auto results = heatwave::bench::run_dsmem_bench(repeats);
    nlohmann::json j{{"device", device.name}, {"repeats", repeats}, {"results", nlohmann::json::array()}};
    std::printf("%-52s %7s %12s  %s\n", "measurement", "cluster", "value", "unit");
    for (const auto& r : results) {
      std::printf("%-52s %7d %12.4g  %s%s%s\n", r.what.c_str(), r.cluster, r.value, r.unit.c_str(),
                  r.note.empty() ? "" : "; ", r.note.c_str());
      j["results"].push_back(
          {{"what", r.what}, {"cluster", r.cluster}, {"value", r.value}, {"unit", r.unit}, {"note", r.note}});
    }
    std::ofstream(out) << j.dump(1) << "\n";
    std::printf("written: %s\n", out.c_str());
  } catch (const heatwave::Error& e) {
    std::fprintf(stderr, "heatwave_dsmem_bench: error: %s\n", e.what());
    return static_cast<int>(e.code());
  }
  return 0;
}
