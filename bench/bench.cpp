#include "bench/bench.hpp"

#include <unistd.h>

#ifdef __SSE2__
#include <immintrin.h>
#endif

#include <omp.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <chrono>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <system_error>
#include <vector>

#include "build_info.hpp"
#include "io/config.hpp"
#include "io/errors.hpp"
#include "io/hdf5.hpp"
#include "io/startup_progress.hpp"
#include "io/yaml_file.hpp"
#include "io/yaml_section.hpp"
#include "kernels/cluster/plan.hpp"
#include "solver/simulation.hpp"
#ifdef HEATWAVE_HAVE_CUDA
#include "kernels/cuda/device.hpp"
#endif

namespace heatwave::bench {

namespace {

struct Suite {
  int repeats = 7, warmup_steps = 10, steps = 40;
  std::size_t copy_bytes = std::size_t(1) << 31;
  std::vector<Config> cases;
};

const char* default_suite = R"(repeats: 5
warmup_steps: 5
steps: 20
copy_bytes: 268435456
cases:
  - backend: [auto]
    equation: [heat, wave]
    precision: [float32, float64]
    radius: [1]
    grid: [[2048, 2048], [128, 128, 128]]
)";

constexpr const char* media_kinds[] = {"constant", "layers",    "file", "absorbing",
                                       "source",   "receivers", "shot", "sink"};

// A file of two materials for the `file` media: 2 in a disk of radius L/4 at
// the centre, 1 elsewhere (in a temporary folder, made once a grid).
std::string two_materials_file(const std::vector<long>& grid) {
  std::string name = "heatwave-bench-materials";
  for (long n : grid) name += "-" + std::to_string(n);
  const std::string path = (std::filesystem::temp_directory_path() / (name + ".h5")).string();
  if (std::filesystem::exists(path)) return path;
  const int dims = static_cast<int>(grid.size());
  hdf5::Block block;
  for (int a = dims - 1; a >= 0; --a) block.global.push_back(static_cast<std::uint64_t>(grid[a]));
  block.offset.assign(dims, 0), block.count = block.global;
  std::size_t n = 1;
  for (long g : grid) n *= static_cast<std::size_t>(g);
  std::vector<double> values(n);
  for (std::size_t k = 0; k < n; ++k) {
    double r2 = 0;
    std::size_t rest = k;
    for (int a = 0; a < dims; ++a) {
      const double x = static_cast<double>(rest % grid[a]) / static_cast<double>(grid[a] - 1) - 0.5;
      rest /= grid[a], r2 += x * x;
    }
    values[k] = r2 < 1.0 / 16 ? 2.0 : 1.0;
  }
  hdf5::write_fields<double>(path, MPI_COMM_SELF, block, {}, {{"material", values.data()}});
  return path;
}

// Where a case's receivers write (one file a process, removed after each case).
std::string receivers_file() {
  return (std::filesystem::temp_directory_path() / ("heatwave-bench-receivers-" + std::to_string(getpid()) + ".h5"))
      .string();
}

// A benchmark case: homogeneous Dirichlet, fresh random data, dt: auto.
// media: constant; layers (the equation's first coefficient in two layers
// along y); file (the first coefficient from a file of two materials, a
// disk in a field); absorbing (the wave equations: every face absorbing, 24
// points wide); source (a Ricker point source near the top face); receivers
// (91 on a line along x on the top face, every 2 steps, written to a file in
// the temporary folder that the case removes); shot (the wave equations: c
// in three layers along the last axis, absorbing faces but a free surface on
// top, the source under it, the receivers on it: the seismic example's shape);
// sink (the heat: alpha in two layers along y, 9 times apart, a Gaussian
// source 0.02 L wide at the bottom face's centre, insulated faces but a
// Dirichlet top: the heat-sink example's shape).
Config case_config(const std::string& backend, const std::string& equation, const std::string& precision, int radius,
                   const std::vector<long>& grid, const std::string& media, int seed) {
  std::string points;
  for (long n : grid) points += (points.empty() ? "" : ", ") + std::to_string(n);
  const auto kind = equation_named(equation);
  const char* key = kind ? info(*kind).coefficients[0].key : "alpha";
  std::string extra, boundary = "boundary: dirichlet\n";
  if (media == "layers")
    extra = fmt::format("material: {{{}: {{type: layers, axis: y, interfaces: [0.5], values: [1.0, 0.5]}}}}\n", key);
  if (media == "file")
    extra = fmt::format("material: {{{}: {{type: file, path: {}, dataset: material}}}}\n", key,
                        two_materials_file(grid));
  if (media == "absorbing")  // every face absorbing, the medium constant
    boundary = "boundary: {default: {type: absorbing, width: 24}}\n";
  if (media == "source" || media == "shot") {  // a Ricker point source near the top
    const std::string top = grid.size() == 3 ? "0.5, 0.5, 0.95" : "0.5, 0.95";
    extra = fmt::format(
        "sources: [{{type: point, position: [{}], amplitude: 1.0, time: {{type: ricker, frequency: 15.0}}}}]\n", top);
  }
  if (media == "receivers" || media == "shot") {  // the example's line: along x on the top face
    const bool three = grid.size() == 3;
    const std::string from = three ? "0.05, 0.5, 1.0" : "0.05, 1.0", to = three ? "0.95, 0.5, 1.0" : "0.95, 1.0";
    extra += fmt::format("receivers: {{every: 2, file: {}, lines: [{{from: [{}], to: [{}], count: 91}}]}}\n",
                         receivers_file(), from, to);
  }
  if (media == "shot") {
    const char axis = "xyz"[grid.size() - 1];
    extra += fmt::format(
        "material: {{c: {{type: layers, axis: {}, interfaces: [0.5, 0.85], values: [3.0, 2.2, 1.5]}}}}\n", axis);
    boundary = fmt::format("boundary: {{default: {{type: absorbing, width: 24}}, {}_high: {{type: neumann, value: 0.0}}}}\n",
                           axis);
  }
  if (media == "sink") {
    const bool three = grid.size() == 3;
    extra = fmt::format(
        "material: {{alpha: {{type: layers, axis: y, interfaces: [0.375], values: [0.11, 1.0]}}}}\n"
        "sources: [{{type: gaussian, center: [{}], width: 0.02, amplitude: 50.0}}]\n",
        three ? "0.5, 0.0, 0.5" : "0.5, 0.0");
    boundary = "boundary: {default: {type: neumann, value: 0.0}, y_high: {type: dirichlet, value: 0.0}}\n";
  }
  return load_config_text(fmt::format("equation: {}\nprecision: {}\ngrid: {{points: [{}]}}\nstencil: {{radius: {}}}\n"
                                      "time: {{dt: auto, steps: 1}}\n{}"
                                      "initial: {{type: random, seed: {}}}\nbackend: {}\n{}",
                                      equation, precision, points, radius, boundary, seed, backend, extra),
                          "<bench case>");
}

// The media a case row names.
std::string media_name(const Config& c) {
  if (!c.sources.empty() && c.sources[0].type == SourceType::gaussian) return "sink";
  if (!c.sources.empty()) return c.material.empty() ? "source" : "shot";
  if (c.run.receivers.any()) return "receivers";
  if (c.material.empty()) return c.boundary[0][0].absorbing > 0 ? "absorbing" : "constant";
  return c.material.begin()->second.type == MediumType::file ? "file" : "layers";
}

Suite load_suite(const std::string& text, const std::string& source) {
  const YAML::Node root = yaml::parse_document(text, source);
  yaml::Section top(root, "", source, {"repeats", "warmup_steps", "steps", "copy_bytes", "cases"});
  Suite s;
  s.repeats = top.get<int>("repeats", s.repeats);
  s.warmup_steps = top.get<int>("warmup_steps", s.warmup_steps);
  s.steps = top.get<int>("steps", s.steps);
  s.copy_bytes = static_cast<std::size_t>(top.get<long>("copy_bytes", static_cast<long>(s.copy_bytes)));
  if (s.repeats < 1) top.invalid("repeats", "must be >= 1");
  if (s.steps < 1) top.invalid("steps", "must be >= 1");
  if (s.warmup_steps < 0) top.invalid("warmup_steps", "must be >= 0");
  YAML::Node cases = top.raw("cases");
  if (!cases.IsSequence() || cases.size() == 0) top.invalid("cases", "must be a non-empty list of case matrices");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    yaml::Section c(cases[i], "cases[" + std::to_string(i) + "]", source,
                    {"backend", "equation", "precision", "radius", "grid", "cluster", "media"});
    const auto backends = c.list<std::string>("backend");
    const auto equations = c.list<std::string>("equation");
    const auto precisions = c.list<std::string>("precision");
    const auto radii = c.list<int>("radius");
    YAML::Node grids = c.raw("grid");
    if (!grids.IsSequence()) c.invalid("grid", "must be a list of grids, e.g. [[1024, 1024], [128, 128, 128]]");
    std::vector<std::vector<long>> grid_list;
    for (std::size_t g = 0; g < grids.size(); ++g) {
      std::vector<long> points(grids[g].IsSequence() ? grids[g].size() : 0);
      bool integers = grids[g].IsSequence();
      for (std::size_t a = 0; integers && a < points.size(); ++a)
        integers = grids[g][a].IsScalar() && YAML::convert<long>::decode(grids[g][a], points[a]);
      if (!integers)
        c.invalid("grid", "entry " + std::to_string(g) + " is not a list of integers", ExitCode::wrong_type);
      grid_list.push_back(points);
    }
    // cuda-cluster launch plans ("cx,cy,tile_x,tile_y,tile_z,k,threads_y"; auto:
    // tuned or cached): one case each, for ablations.
    std::vector<std::string> media{"constant"};
    if (c.has("media")) media = c.list<std::string>("media");
    for (const auto& m : media)
      if (std::find(std::begin(media_kinds), std::end(media_kinds), m) == std::end(media_kinds))
        c.invalid("media", "entries must be constant, layers, file, absorbing, source, receivers, shot or sink, not '" +
                               m + "'");
    for (const auto& e : equations) {
      for (const char* wave_only : {"shot", "absorbing"})
        if (std::find(media.begin(), media.end(), wave_only) != media.end() && e == "heat")
          c.invalid("media", std::string("'") + wave_only +
                                 "' is for the wave equations (c, absorbing faces), not the heat equation");
      if (std::find(media.begin(), media.end(), "sink") != media.end() && e != "heat")
        c.invalid("media", "'sink' is for the heat equation (alpha in layers), not the " + e + " equation");
    }
    std::vector<std::string> plans{"auto"};
    if (c.has("cluster")) plans = c.list<std::string>("cluster");
    std::vector<std::optional<cuda::ClusterPlan>> parsed;
    for (const auto& plan : plans) {
      try {
        parsed.push_back(plan == "auto" ? std::nullopt : std::optional(cuda::ClusterPlan::parse(plan)));
      } catch (const Error& e) {
        c.invalid("cluster", std::string(e.what()) + " (or auto)");
      }
    }
    for (const auto& b : backends)
      for (const auto& e : equations)
        for (const auto& p : precisions)
          for (int r : radii)
            for (const auto& points : grid_list)
              for (const auto& m : media)
                for (const auto& plan : parsed) {  // a new seed per case: fresh random data
                  Config config = case_config(b, e, p, r, points, m, static_cast<int>(s.cases.size()) + 1);
                  if (plan) config.run.cluster = cuda::fixed_settings(*plan);
                  s.cases.push_back(config);
                }
  }
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The host's roofline: the faster of two parallel copies, bytes read +
// written. A plain store first reads the line it writes (write-allocate), so
// a stencil that reads its output's old values (the wave's u^{n-1}) moves no
// more than a plain copy does and can "beat" it; the streaming copy writes
// past the caches (non-temporal stores) and moves only the bytes counted.
struct HostCopy {
  double plain = 0, streaming = 0;
  double best() const { return std::max(plain, streaming); }
};

HostCopy host_copy_bandwidth(std::size_t bytes, int repeats) {
  const std::size_t n = bytes / sizeof(double) / 8 * 8;
  auto allocate = [&] {
    return std::unique_ptr<double[], decltype(&std::free)>(
        static_cast<double*>(std::aligned_alloc(64, n * sizeof(double))), &std::free);
  };
  const auto a = allocate(), b = allocate();
  if (!a || !b) throw Error(ExitCode::internal, "cannot allocate the host copy's arrays");
  double* src = a.get();
  double* dst = b.get();
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<double>(i), dst[i] = 0;  // first touch where it is used
  auto time = [&](auto&& copy) {
    std::vector<double> seconds;
    for (int r = 0; r < repeats + 1; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      copy();
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (r > 0) seconds.push_back(t);
    }
    if (dst[n - 1] != src[n - 1]) throw Error(ExitCode::internal, "the host copy did not copy");
    return 2.0 * n * sizeof(double) / median(seconds);
  };
  HostCopy c;
  c.plain = time([&] {
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) dst[i] = src[i];
  });
#ifdef __SSE2__
  c.streaming = time([&] {
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; i += 8)  // a cache line a trip: 64-byte aligned
      for (std::size_t j = 0; j < 8; j += 2) _mm_stream_pd(dst + i + j, _mm_load_pd(src + i + j));
    _mm_sfence();
  });
#endif
  return c;
}

struct Row {
  Config config;
  std::string backend, reason, plan;
  double seconds_per_step = 0, spread = 0, cells_per_second = 0, bytes_per_update = 0, bandwidth = 0, roofline = 0;
};

template <int D, class Real>
Row time_case(const Config& c, const Suite& s) {
  Config run = c;
  run.steps = s.warmup_steps + static_cast<long>(s.repeats) * s.steps;
  startup_begin();
  Simulation<D, Real> sim(run);
  const Problem& p = sim.problem();
  sim.advance_with_receivers(s.warmup_steps);
  std::vector<double> seconds;
  for (int r = 0; r < s.repeats; ++r) {
    sim.backend().start_timer();
    sim.advance_with_receivers(s.steps);
    seconds.push_back(sim.backend().stop_timer() / s.steps);
  }
  const FieldSummary f = sim.diagnose();
  if (f.non_finite > 0) throw Error(ExitCode::non_finite, "benchmark case produced NaN/Inf: results are invalid");
  Row row;
  row.config = c;
  row.backend = sim.backend().name();
  row.reason = sim.backend_reason();
  row.plan = sim.backend().plan();
  row.seconds_per_step = median(seconds);
  std::sort(seconds.begin(), seconds.end());
  row.spread = (seconds.back() - seconds.front()) / row.seconds_per_step;
  row.cells_per_second = p.global_points() / row.seconds_per_step;
  row.bytes_per_update = p.bytes_per_update();
  row.bandwidth = row.cells_per_second * row.bytes_per_update;
  return row;
}

Row time_any(const Config& c, const Suite& s) {
  return with_dims_and_precision(c.dims, c.precision == Precision::float32,
                                 [&]<int D, class Real>() { return time_case<D, Real>(c, s); });
}

}  // namespace

int run(const Options& o) {
  std::string text = default_suite, source = "<built-in bench suite>";
  if (!o.suite.empty()) text = yaml::read_input_file(o.suite, "benchmark suite"), source = o.suite;
  const Suite suite = load_suite(text, source);

  nlohmann::json out;
  out["heatwave_version"] = build::version;
  out["git_commit"] = build::git_commit;
  out["suite"] = source;
  out["repeats"] = suite.repeats;
  out["steps_per_repeat"] = suite.steps;
  double device_copy = 0;
  std::string device_name;
#ifdef HEATWAVE_HAVE_CUDA
  if (!cuda::devices().empty()) {
    device_name = cuda::select_device(0).name;
    device_copy = cuda::copy_bandwidth(suite.copy_bytes, 20);
    spdlog::info("roofline: {} device-to-device copy {:.1f} GB/s (read + write, median of 20, {:.2f} GiB)", device_name,
                 device_copy / 1e9, suite.copy_bytes / double(1 << 30));
    out["device"] = device_name;
    out["device_copy_bytes_per_second"] = device_copy;
  }
#endif
  const HostCopy copies = host_copy_bandwidth(std::min<std::size_t>(suite.copy_bytes, std::size_t(1) << 29), 5);
  const double host_copy = copies.best();
  spdlog::info("roofline: host parallel copy {:.1f} GB/s with {} threads (plain stores {:.1f} GB/s, streaming stores "
               "{:.1f} GB/s; read + write, median of 5)",
               host_copy / 1e9, omp_get_max_threads(), copies.plain / 1e9, copies.streaming / 1e9);
  out["host_copy_bytes_per_second"] = host_copy;
  out["host_copy_plain_bytes_per_second"] = copies.plain;
  out["host_copy_streaming_bytes_per_second"] = copies.streaming;
  out["host_threads"] = omp_get_max_threads();

#ifdef HEATWAVE_HAVE_CUDA
  const char* no_gpu = "no CUDA device is visible";
#else
  const char* no_gpu = "this build has no CUDA backend";
#endif
  std::vector<Row> rows;
  long skipped = 0;
  for (const Config& c : suite.cases) {
    if (c.run.backend && *c.run.backend != BackendKind::host && device_copy == 0) {
      spdlog::warn("skipping a {} case: {}", to_string(*c.run.backend), no_gpu);
      out["skipped"].push_back({{"backend", to_string(*c.run.backend)}, {"reason", no_gpu}});
      ++skipped;
      continue;
    }
    std::error_code ignored;  // a case's receivers file is the bench's own: none before it, none left after
    if (c.run.receivers.any()) std::filesystem::remove(c.run.receivers.file, ignored);
    Row row = time_any(c, suite);
    if (c.run.receivers.any()) std::filesystem::remove(c.run.receivers.file, ignored);
    row.roofline = row.backend == "host" ? host_copy : device_copy;
    spdlog::info("{} {} {}D {} r{} {}: {:.2f} Gcells/s, {:.0f} GB/s, {:.1f}% of roofline", row.backend,
                 to_string(c.equation), c.dims, to_string(c.precision), c.radius,
                 fmt::join(std::vector<long>(c.points.begin(), c.points.begin() + c.dims), "x"),
                 row.cells_per_second / 1e9, row.bandwidth / 1e9, 100 * row.bandwidth / row.roofline);
    rows.push_back(row);
  }

  // A suite that measured nothing fails, and leaves an earlier JSON alone.
  if (rows.empty())
    throw Error(ExitCode::cuda_error,
                fmt::format("{}: all {} case(s) need a GPU backend and {}: nothing was measured (run it where "
                            "`heatwave info` lists a device, or ask for backend: host)",
                            source, skipped, no_gpu));
  if (skipped > 0) spdlog::warn("{} of {} case(s) skipped: {}", skipped, suite.cases.size(), no_gpu);
  std::printf(
      "\n| backend | equation | dims | precision | radius | grid | media | Gcells/s | GB/s | %% roofline | spread | "
      "plan "
      "|\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const Row& r : rows) {
    const Config& c = r.config;
    std::string grid;
    for (int a = 0; a < c.dims; ++a) grid += (a ? "x" : "") + std::to_string(c.points[a]);
    const std::string media = media_name(c);
    std::printf("| %s | %s | %dD | %s | %d | %s | %s | %.2f | %.0f | %.1f | %.1f%% | %s |\n", r.backend.c_str(),
                to_string(c.equation), c.dims, to_string(c.precision), c.radius, grid.c_str(), media.c_str(),
                r.cells_per_second / 1e9, r.bandwidth / 1e9, 100 * r.bandwidth / r.roofline, 100 * r.spread,
                r.plan.c_str());
    out["cases"].push_back({{"backend", r.backend},
                            {"equation", to_string(c.equation)},
                            {"dims", c.dims},
                            {"precision", to_string(c.precision)},
                            {"radius", c.radius},
                            {"grid", std::vector<long>(c.points.begin(), c.points.begin() + c.dims)},
                            {"media", media},
                            {"seconds_per_step", r.seconds_per_step},
                            {"cells_per_second", r.cells_per_second},
                            {"bytes_per_update", r.bytes_per_update},
                            {"bytes_per_second", r.bandwidth},
                            {"roofline_bytes_per_second", r.roofline},
                            {"fraction_of_roofline", r.bandwidth / r.roofline},
                            {"repeat_spread", r.spread},
                            {"backend_reason", r.reason},
                            {"cluster_plan", r.plan}});
  }
  std::ofstream json(o.json);
  json << out.dump(2) << "\n";
  if (!json) throw Error(ExitCode::io_error, o.json + ": cannot write the benchmark JSON");
  spdlog::info("benchmark results written to {}", o.json);
  return 0;
}

}  // namespace heatwave::bench
