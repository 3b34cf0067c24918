#pragma once
// How a run goes, as opposed to what it solves (Problem): which backend and
// halo transport, the decomposition, the cuda-cluster plan, diagnostics,
// progress, checkpoints and outputs. The config's run-side sections; the
// backend and transport names live here once, for the config, the command
// line, the validation and bench suites alike.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/numerics.hpp"

namespace heatwave {

enum class BackendKind { host, cuda, cuda_cluster };
inline constexpr std::array<std::pair<BackendKind, const char*>, 3> backend_names{
    {{BackendKind::host, "host"}, {BackendKind::cuda, "cuda"}, {BackendKind::cuda_cluster, "cuda-cluster"}}};

enum class HaloTransportKind { mpi_host, mpi_cuda_aware, nccl };
inline constexpr std::array<std::pair<HaloTransportKind, const char*>, 3> transport_names{
    {{HaloTransportKind::mpi_host, "mpi-host"},
     {HaloTransportKind::mpi_cuda_aware, "mpi-cuda-aware"},
     {HaloTransportKind::nccl, "nccl"}}};

// The choices a config or command line offers: "auto" and every name.
template <class Kind, std::size_t N>
std::vector<std::string> choices_with_auto(const std::array<std::pair<Kind, const char*>, N>& names) {
  std::vector<std::string> out{"auto"};
  for (const auto& entry : names) out.emplace_back(entry.second);
  return out;
}
inline const char* to_string(BackendKind kind) { return name_of(backend_names, kind); }
inline const char* to_string(HaloTransportKind kind) { return name_of(transport_names, kind); }

// How ranks share the grid and move halos.
struct ParallelSettings {
  // Steps between halo exchanges (halo depth = exchange_every * radius). Empty:
  // auto, the backend's choice (Backend::preferred_exchange_every: the cuda-cluster plan's k).
  std::optional<int> exchange_every;
  std::array<int, max_dims> decomposition{0, 0, 0};  // ranks per axis, 0: MPI_Dims_create chooses
  // Halo exchange in flight while the interior of a chunk's first step computes
  // (false: exchange, then compute). Empty: auto, on unless the backend blocks
  // steps in time (cuda-cluster), whose first step would then run one step a launch.
  std::optional<bool> overlap;
  std::optional<HaloTransportKind> halo_transport;  // empty: auto (nccl, else CUDA-aware MPI, else mpi-host)
};

// backend: cuda-cluster's launch plan (kernels/cluster/plan.hpp). By default it
// is tuned once per GPU model and case and cached; any field given here fixes
// that part of the plan (and turns the tuning off).
struct ClusterSettings {
  bool autotune = true;    // time candidate plans on first use, cache the fastest
  std::string cache = "";  // plan cache file ("": $HEATWAVE_CACHE_DIR, else ~/.cache/heatwave, /cluster-plans.json)
  std::array<int, 2> shape{0, 0};    // blocks per cluster along x and y (0: tuned)
  std::array<int, 3> tile{0, 0, 0};  // points per block along x, y (and z: 3D) (0: tuned)
  int k = 0;                         // time steps per launch (0: tuned)
  int threads_y = 0;                 // thread rows per block, a power of 2 (0: tuned)
  std::string mode = "";  // streaming | resident (2D: the domain stays on chip) | deep (3D) | columns (2D); "": tuned

  bool overridden() const {
    return shape[0] || shape[1] || tile[0] || tile[1] || tile[2] || k || threads_y || !mode.empty();
  }
};

// Checkpoints for restart: every `every` steps and/or every `every_seconds`
// wall seconds (0: off), the last `keep` kept. A stop signal always writes one.
struct CheckpointSettings {
  long every = 0;
  double every_seconds = 0;
  int keep = 3;
  std::string dir = "checkpoints";
};

// Field outputs for visualisation: HDF5 every `every` steps (0: off) plus an XDMF time series.
struct OutputSettings {
  long every = 0;
  std::vector<std::string> fields{"u"};  // the equation's level names (u, and u_previous for the wave)
  std::string dir = "output";
};

// Receivers: the field sampled at points (multilinear interpolation) every
// `every` steps, from step 0, into an HDF5 file of traces written as the run
// goes. `lines` are `count` points evenly spaced from `from` to `to`, after
// the `points`, in order.
struct ReceiverLine {
  std::array<double, max_dims> from{0, 0, 0}, to{0, 0, 0};
  int count = 2;
};
struct ReceiverSettings {
  long every = 1;
  std::string file = "receivers.h5";
  std::string field = "u";  // a level of the equation: u (or u_previous)
  std::vector<std::array<double, max_dims>> points;
  std::vector<ReceiverLine> lines;

  bool any() const { return !points.empty() || !lines.empty(); }
  std::size_t count() const {
    std::size_t n = points.size();
    for (const ReceiverLine& line : lines) n += static_cast<std::size_t>(line.count);
    return n;
  }
  // Every receiver's position, points first, then each line's points.
  std::vector<std::array<double, max_dims>> positions() const {
    std::vector<std::array<double, max_dims>> out = points;
    for (const ReceiverLine& line : lines)
      for (int i = 0; i < line.count; ++i) {
        const double f = line.count == 1 ? 0.0 : static_cast<double>(i) / (line.count - 1);
        std::array<double, max_dims> x{0, 0, 0};
        for (int a = 0; a < max_dims; ++a) x[a] = line.from[a] + f * (line.to[a] - line.from[a]);
        out.push_back(x);
      }
    return out;
  }
};

struct RunSettings {
  std::optional<BackendKind> backend;  // empty: auto (a GPU backend where a device is visible, else host)
  int threads = 0;                     // host OpenMP threads, 0: OpenMP's default
  ParallelSettings parallel;
  ClusterSettings cluster;        // cuda-cluster launch plan
  long diagnostics_every = 100;   // steps; 0 disables (a final check always runs)
  double progress_seconds = 2.0;  // wall seconds between progress lines
  std::string metrics_file = "heatwave-metrics.json";
  CheckpointSettings checkpoint;
  OutputSettings output;
  ReceiverSettings receivers;
};

// "auto" or the backend's name.
inline std::string backend_choice_name(const std::optional<BackendKind>& kind) {
  return kind ? to_string(*kind) : "auto";
}

}  // namespace heatwave
