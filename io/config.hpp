#pragma once
// The typed, validated configuration. YAML goes in through load_config();
// everything downstream reads this struct, never YAML.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace heatwave {

enum class Equation { heat, wave };
enum class Precision { float32, float64 };
enum class BoundaryType { dirichlet, neumann, periodic };
enum class InitialType { sine, cosine, gaussian, constant, random, file };

const char* to_string(Equation);
const char* to_string(Precision);
const char* to_string(BoundaryType);
const char* to_string(InitialType);

inline constexpr int max_dims = 3;
inline constexpr const char* axis_names[max_dims] = {"x", "y", "z"};

// One face of the domain. For dirichlet `value` is u on the face; for neumann
// it is the outward normal derivative du/dn on the face.
struct BoundaryFace {
  BoundaryType type = BoundaryType::dirichlet;
  double value = 0.0;
};

struct InitialCondition {
  InitialType type = InitialType::sine;
  double amplitude = 1.0;
  std::array<int, max_dims> modes{1, 1, 1};              // sine / cosine
  std::array<double, max_dims> center{0.5, 0.5, 0.5};    // gaussian (absolute coordinates)
  double width = 0.1;                                    // gaussian sigma
  double value = 0.0;                                    // constant
  std::uint64_t seed = 1;                                // random: uniform in [-amplitude, amplitude]
  std::string path = "";                                 // file: HDF5 file (relative to the working directory)
  std::string dataset = "u";                             // file: dataset of the global shape (z, y, x order)
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
  std::vector<std::string> fields{"u"};  // u, and u_previous for the wave equation
  std::string dir = "output";
};

// backend: cuda-cluster's launch plan (kernels/cluster_plan.hpp). By default it
// is tuned once per GPU model and case and cached; any field given here fixes
// that part of the plan (and turns the tuning off).
struct ClusterSettings {
  bool autotune = true;             // time candidate plans on first use, cache the fastest
  std::string cache = "";           // plan cache file ("": $HEATWAVE_CACHE_DIR, else ~/.cache/heatwave, /cluster-plans.json)
  std::array<int, 2> shape{0, 0};   // blocks per cluster along x and y (0: tuned)
  std::array<int, 3> tile{0, 0, 0}; // points per block along x, y (and z: 3D) (0: tuned)
  int k = 0;                        // time steps per launch (0: tuned)
  int threads_y = 0;                // thread rows per block, a power of 2 (0: tuned)
  std::string mode = "";            // streaming | resident (2D: the domain stays on chip); "": tuned

  bool overridden() const {
    return shape[0] || shape[1] || tile[0] || tile[1] || tile[2] || k || threads_y || !mode.empty();
  }
};

struct Config {
  std::string source;  // file the config came from, for messages

  Equation equation = Equation::heat;
  Precision precision = Precision::float64;
  int dims = 2;
  std::array<long, max_dims> points{1, 1, 1};
  std::array<double, max_dims> length{1.0, 1.0, 1.0};
  int radius = 1;      // stencil radius: 1 (2nd order) or 2 (4th order)
  double alpha = 1.0;  // heat diffusivity
  double c = 1.0;      // wave speed

  // Time: exactly one of steps / t_end; dt explicit or automatic.
  std::optional<double> dt;  // empty: auto
  double dt_safety = 0.9;    // fraction of the stability limit used by dt: auto
  std::optional<long> steps;
  std::optional<double> t_end;

  std::array<std::array<BoundaryFace, 2>, max_dims> boundary{};  // [axis][low, high]
  InitialCondition initial;
  std::optional<InitialCondition> velocity;  // wave only; zero when absent

  std::string backend = "auto";   // auto | host | cuda | cuda-cluster
  int threads = 0;                // host OpenMP threads, 0: OpenMP's default
  int exchange_every = 1;         // steps between halo exchanges (halo depth = exchange_every * radius)
  std::array<int, max_dims> decomposition{0, 0, 0};  // ranks per axis, 0: MPI_Dims_create chooses
  bool overlap = true;            // halo exchange in flight while the interior computes (false: exchange, then compute)
  std::string halo_transport = "auto";  // auto | nccl | mpi-cuda-aware | mpi-host (how halos move between ranks)
  ClusterSettings cluster;        // cuda-cluster launch plan

  long diagnostics_every = 100;   // steps; 0 disables (a final check always runs)
  double progress_seconds = 2.0;  // wall seconds between progress lines
  std::string metrics_file = "heatwave-metrics.json";
  CheckpointSettings checkpoint;
  OutputSettings output;
};

// Parse and validate. `source` names the text in messages.
// Throws heatwave::Error with a distinct ExitCode for each kind of problem.
Config load_config_file(const std::string& path);
Config load_config_text(const std::string& text, const std::string& source);

// The built-in quickstart case (configs/quickstart.yaml, embedded at build time).
Config default_config();

// The resolved config (every default filled in) as YAML: logged, hashed, and
// stored with every output so a run can be reproduced from its files.
std::string to_yaml(const Config&);
std::string config_hash(const Config&);  // FNV-1a 64 of the case's resolved YAML, hex (run settings left out)

}  // namespace heatwave
