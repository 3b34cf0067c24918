#include "kernels/cluster/plan.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <queue>
#include <system_error>
#include <utility>

#include "build_info.hpp"
#include "io/errors.hpp"
#include "core/equations/equations.hpp"
#include "solver/media.hpp"

namespace heatwave::cuda {

std::string ClusterPlan::text() const {
  if (baseline()) return "the baseline step kernel";
  if (resident)
    return "resident, tile " + std::to_string(tile_x) + "x" + std::to_string(tile_y) + ", " +
           std::to_string(threads_y) + " thread rows";
  if (columns)
    return "columns, " + std::to_string(tile_x) + " threads, " +
           (tile_y > 0 ? "segments of " + std::to_string(tile_y) + " rows" : "segments sized to the GPU") + ", k " +
           std::to_string(k);
  if (deep) return "deep, tile " + std::to_string(tile_x) + "x" + std::to_string(tile_y) + ", k " + std::to_string(k);
  std::string tile =
      std::to_string(tile_x) + "x" + std::to_string(tile_y) + (tile_z > 0 ? "x" + std::to_string(tile_z) : "");
  return "cluster " + std::to_string(cluster_x) + "x" + std::to_string(cluster_y) + ", tile " + tile + ", k " +
         std::to_string(k) +
         (tile_z > 0 ? "" : ", " + std::to_string(threads_y) + " thread rows");  // 3D: a thread a pack
}

std::string ClusterPlan::fields() const {
  if (baseline()) return "baseline";
  char buffer[96];
  if (resident) {
    std::snprintf(buffer, sizeof buffer, "resident,%d,%d,%d", tile_x, tile_y, threads_y);
    return buffer;
  }
  if (deep || columns) {
    std::snprintf(buffer, sizeof buffer, "%s,%d,%d,%d", deep ? "deep" : "columns", tile_x, tile_y, k);
    return buffer;
  }
  std::snprintf(buffer, sizeof buffer, "%d,%d,%d,%d,%d,%d,%d", cluster_x, cluster_y, tile_x, tile_y, tile_z, k,
                threads_y);
  return buffer;
}

ClusterPlan ClusterPlan::parse(const std::string& s) {
  if (s == "baseline") return baseline_plan();
  ClusterPlan p;
  char tail = 0;
  if (s.rfind("resident,", 0) == 0) {
    p.resident = true, p.k = 0;
    if (std::sscanf(s.c_str(), "resident,%d,%d,%d%c", &p.tile_x, &p.tile_y, &p.threads_y, &tail) != 3)
      throw Error(ExitCode::invalid_value, "cluster plan '" + s + "': expected \"resident,tile_x,tile_y,threads_y\"");
    return p;
  }
  if (s.rfind("deep,", 0) == 0) {
    p.deep = true, p.threads_y = 0;
    if (std::sscanf(s.c_str(), "deep,%d,%d,%d%c", &p.tile_x, &p.tile_y, &p.k, &tail) != 3)
      throw Error(ExitCode::invalid_value, "cluster plan '" + s + "': expected \"deep,tile_x,tile_y,k\"");
    return p;
  }
  if (s.rfind("columns,", 0) == 0) {
    p.columns = true, p.threads_y = 0;
    if (std::sscanf(s.c_str(), "columns,%d,%d,%d%c", &p.tile_x, &p.tile_y, &p.k, &tail) != 3)
      throw Error(ExitCode::invalid_value, "cluster plan '" + s + "': expected \"columns,threads,rows,k\"");
    return p;
  }
  if (std::sscanf(s.c_str(), "%d,%d,%d,%d,%d,%d,%d%c", &p.cluster_x, &p.cluster_y, &p.tile_x, &p.tile_y, &p.tile_z,
                  &p.k, &p.threads_y, &tail) != 7)
    throw Error(ExitCode::invalid_value,
                "cluster plan '" + s + "': expected \"cluster_x,cluster_y,tile_x,tile_y,tile_z,k,threads_y\"");
  return p;
}

bool cluster_plan_from_environment() { return std::getenv("HEATWAVE_CLUSTER_PLAN") != nullptr; }

namespace {

// Shared rows are `width` points wide: the tile and k*r on each side.
ClusterPlan plan_2d(int cluster_y, int width, int tile_y, int k, int radius, int threads_y) {
  ClusterPlan p;
  p.cluster_y = cluster_y, p.tile_x = width - 2 * k * radius, p.tile_y = tile_y, p.k = k, p.threads_y = threads_y;
  return p;
}

ClusterPlan plan_resident(int tile_x, int tile_y, int threads_y) {
  ClusterPlan p;
  p.tile_x = tile_x, p.tile_y = tile_y, p.k = 0, p.threads_y = threads_y, p.resident = true;
  return p;
}

// 3D: a tile_x x tile_y column streamed along z in slabs of tile_z planes, a
// thread a pack of the shared plane (the tile and k*r on each side).
ClusterPlan plan_3d(int tile_x, int tile_y, int tile_z, int k) {
  ClusterPlan p;
  p.tile_x = tile_x, p.tile_y = tile_y, p.tile_z = tile_z, p.k = k, p.threads_y = 1;
  return p;
}

// 3D deep: one persistent block a tile_x x tile_y column, k levels (kernel_3d_deep.cuh).
ClusterPlan plan_deep(int tile_x, int tile_y, int k) {
  ClusterPlan p;
  p.tile_x = tile_x, p.tile_y = tile_y, p.k = k, p.threads_y = 0, p.deep = true;
  return p;
}

// 2D columns: blocks of `threads` columns streaming segments of `rows` rows (0: sized to the GPU:
// ColumnsKernel2DObject).
ClusterPlan plan_columns(int threads, int rows, int k) {
  ClusterPlan p;
  p.tile_x = threads, p.tile_y = rows, p.k = k, p.threads_y = 0, p.columns = true;
  return p;
}

}  // namespace

int shared_halo_left(int halo, int pack) { return (halo + pack - 1) / pack * pack; }
int shared_width(int halo, int tile_x, int pack) {
  return shared_halo_left(shared_halo_left(halo, pack) + tile_x + halo, pack);
}

namespace {
// Threads a 3D block of the plan has: a pack of the shared plane each
// (kernel_3d_pipeline.cuh: at most 512).
int threads_3d(const ClusterPlan& p, int radius, int pack) {
  return shared_width(p.k * radius, p.tile_x, pack) / pack * (p.tile_y + 2 * p.k * radius);
}
}  // namespace

std::string unbuilt_plan(const ClusterPlan& plan, int dims, int radius) {
  if (dims != 3 || plan.baseline()) return "";
  const std::string left_out = " (left out of the default build: docs/performance.md, \"What the build leaves out\")";
  if (plan.deep)
    return build::cluster_3d_deep
               ? ""
               : "this build has no deep plans' kernels: configure with -DHEATWAVE_CLUSTER_3D_DEEP=ON" + left_out;
  if (plan.blocks() > 1 && !build::cluster_3d_dsmem)
    return "this build has no 3D kernels for clusters of several blocks: configure with "
           "-DHEATWAVE_CLUSTER_3D_DSMEM=ON" + left_out;
  if (radius > max_radius_3d)
    return "this build has no 3D cluster kernels past radius " + std::to_string(max_radius_3d) +
           " (the one-step kernel runs these cases): configure with -DHEATWAVE_CLUSTER_3D_HIGH_RADIUS=ON" + left_out;
  return "";
}

std::string unbuilt_case(const Problem& problem) {
  if (problem.dims != 3 || problem.radius <= max_radius_3d) return "";
  ClusterPlan pipeline;  // any plan of the pipeline
  pipeline.tile_x = pipeline.tile_y = 2 * problem.radius, pipeline.tile_z = 1;
  return unbuilt_plan(pipeline, 3, problem.radius);
}

ClusterPlan default_cluster_plan(const Problem& problem) {
  if (const char* env = std::getenv("HEATWAVE_CLUSTER_PLAN")) return ClusterPlan::parse(env);
  const int R = problem.radius;
  const bool f64 = problem.precision == Precision::float64;
  if (problem.dims == 3 && R > max_radius_3d) return ClusterPlan::baseline_plan();  // no kernels built
  if (problem.dims == 3) {
    // H100, 512^3 (docs/performance.md): 250-400 threads a block, two an SM.
    const bool two_levels = problem.levels() == 2;
    if (R == 1) {
      if (f64) return two_levels ? plan_3d(24, 24, 64, 2) : plan_3d(32, 24, 64, 2);
      return two_levels ? plan_3d(24, 24, 64, 3) : plan_3d(32, 32, 64, 4);
    }
    if (R == 2) return f64 ? plan_3d(16, 24, 64, 2) : plan_3d(32, 32, 64, 2);
    // Radius 3 and 4, k 2: the largest tiles whose rings fit a block's
    // shared memory (the wave's two level-0 rings of 2r+3 planes).
    if (f64) return plan_3d(16, two_levels && R == 4 ? 8 : 16, 64, 2);
    return plan_3d(two_levels ? 24 : 32, 24, 64, 2);
  }
  const int k = R == 1 ? 8 : 4;
  if (cluster_flux_tiles(problem)) {
    // The 2r pair tiles of the flux coefficient beside the two levels
    // (docs/performance.md, "Media and sources"): shorter tiles, a starting
    // point that keeps two blocks an SM (fp32 r1: 4 planes of 128 x 48, 98
    // KiB). The autotune's pick on the H100 for fp32 r1 was 112x40 at one.
    if (f64) return plan_2d(1, 128, 16, k, R, 4);
    return R == 1 ? plan_2d(1, 128, 32, k, R, 8) : plan_2d(1, 128, 16, k, R, 4);
  }
  // H100, 16384^2 (docs/performance.md): 128 points wide and as many rows as
  // leave whole blocks an SM: fp32 56 rows, 8 thread rows (three 73 KiB
  // blocks), fp64 40 rows, 4 thread rows (two 115 KiB blocks); no DSMEM
  // (cluster size 1 was the fastest).
  return f64 ? plan_2d(1, 128, 40, k, R, 4) : plan_2d(1, 128, 56, k, R, 8);
}

int columns_segments(const ColumnsLaunch& launch, double event_cost, const ColumnsEventRows& event_rows) {
  const auto [strips, first_row, rows, reach, steps, chunk, slots] = launch;
  int best = 1;
  double best_time = 0;
  for (int s = 1; s <= std::min(rows, 256); ++s) {
    const int segment_rows = (rows + s - 1) / s, segments = (rows + segment_rows - 1) / segment_rows;
    const double block = segment_rows + reach + steps * chunk;  // a block's time without events
    double time = 0;
    if (!event_rows) {  // waves of blocks alike
      time = static_cast<double>((static_cast<long>(strips) * s + slots - 1) / slots) * block;
    } else {
      std::priority_queue<double, std::vector<double>, std::greater<>> free_at;  // each slot's
      for (int k = 0; k < slots; ++k) free_at.push(0);
      for (int g = 0; g < segments; ++g) {
        const int y0 = first_row + g * segment_rows, ys = y0 - reach;
        const int chunks = (std::min(first_row + rows, y0 + segment_rows) - ys + chunk - 1) / chunk;
        for (int b = 0; b < strips; ++b) {
          // The sweep's iterations i whose rows [ys + (i - steps) chunk, ys + i chunk) reach the events'.
          int lo = 0, hi = -1;
          event_rows(b, ys, ys + (chunks + steps) * chunk, lo, hi);
          double cost = block;
          if (lo <= hi) {
            const int from = (lo - ys) / chunk + 1, to = std::min(chunks + steps - 1, steps + (hi - ys) / chunk);
            cost += (event_cost - 1) * chunk * std::max(0, to - from + 1);
          }
          const double start = free_at.top();
          free_at.pop();
          free_at.push(start + cost);
          time = std::max(time, start + cost);
        }
      }
    }
    if (s == 1 || time < best_time) best = s, best_time = time;
  }
  return best;
}

// Heat r 1 takes 8 of its 12 levels (H100: fp64 768-803 Gcells/s against
// 539-558 at 12, where 178 registers hold one block an SM; fp32 994-1154
// against 983-1062). (problem.varies(): a coefficient in `material`,
// absorbing faces' gamma among them, which is where the kernels take the
// flux or the point form: the kernel object asks its form, flux_ ||
// pointwise_, for the same shape.)
ClusterPlan default_columns_plan(const Problem& problem) {
  const ColumnsShape shape =
      columns_shape(problem.radius, problem.levels(), problem.precision == Precision::float64, problem.varies());
  return plan_columns(shape.threads, 0, problem.levels() == 1 && problem.radius == 1 ? 8 : shape.max_levels);
}

ClusterPlan with_overrides(ClusterPlan p, const ClusterSettings& s) {
  if (s.mode == "resident")
    p.resident = true, p.deep = p.columns = false, p.cluster_x = p.cluster_y = 1, p.tile_z = 0, p.k = 0;
  if (s.mode == "streaming") p.resident = p.deep = p.columns = false;
  if (s.mode == "deep" && !p.deep) p = plan_deep(p.tile_x, p.tile_y, p.k);
  if (s.mode == "columns" && !p.columns)  // (a tile below sets other threads)
    p = plan_columns(columns_threads, 0, p.k);
  if (s.shape[0]) p.cluster_x = s.shape[0], p.cluster_y = s.shape[1];
  if (s.tile[0]) p.tile_x = s.tile[0], p.tile_y = s.tile[1], p.tile_z = s.tile[2];
  if (s.k) p.k = s.k;
  if (s.threads_y) p.threads_y = s.threads_y;
  if (p.deep || p.columns) p.cluster_x = p.cluster_y = 1, p.tile_z = 0, p.threads_y = 0;  // no clusters yet
  return p;
}

ClusterPlan config_plan(const Problem& problem, const ClusterSettings& settings) {
  return with_overrides(settings.mode == "columns" ? default_columns_plan(problem) : default_cluster_plan(problem),
                        settings);
}

ClusterSettings fixed_settings(const ClusterPlan& p) {
  ClusterSettings s;
  s.shape = {p.cluster_x, p.cluster_y};
  s.tile = {p.tile_x, p.tile_y, p.tile_z};
  s.k = p.k;
  s.threads_y = p.threads_y;
  s.mode = p.resident ? "resident" : p.deep ? "deep" : p.columns ? "columns" : "streaming";
  return s;
}

std::vector<ClusterPlan> cluster_plan_candidates(const Problem& problem) {
  const int R = problem.radius;
  const bool f64 = problem.precision == Precision::float64;
  const int k = R == 1 ? 8 : 4;
  std::vector<ClusterPlan> out;
  if (!unbuilt_case(problem).empty()) return out;
  // Plans whose kernels this build has (unbuilt_plan), each once.
  auto add = [&](const ClusterPlan& p) {
    if (p.baseline() || !unbuilt_plan(p, problem.dims, R).empty()) return;
    for (const auto& q : out)
      if (q == p) return;
    out.push_back(p);
  };
  add(default_cluster_plan(problem));
  if (problem.dims == 3) {
    const int pack = f64 ? 2 : 4;
    std::vector<std::pair<int, int>> tiles{{32, 32}, {32, 24}, {24, 24}, {56, 24}, {16, 32}, {64, 16}};
    if (R >= 3)  // the cone of r 3-4 leaves smaller tiles, and one step a launch (z streamed through shared memory)
      tiles.insert(tiles.end(), {{32, 16}, {24, 16}, {16, 16}, {32, 8}, {16, 8}});
    for (auto [tx, ty] : tiles)
      for (int k = R >= 3 ? 1 : 2; k <= max_levels_3d(R); ++k) {
        const ClusterPlan p = plan_3d(tx, ty, 64, k);
        if (threads_3d(p, R, pack) <= 512) add(p);
      }
    if (!out.empty()) {  // around the built-in plan
      const ClusterPlan d = out.front();
      add(plan_3d(d.tile_x, d.tile_y, 128, d.k));
      add(plan_3d(d.tile_x, d.tile_y, 32, d.k));
      // Clusters over x-y: the peers' plane edges through DSMEM instead of the redundant halo.
      for (auto [cx, cy] : {std::pair{2, 1}, {1, 2}, {2, 2}}) {
        ClusterPlan c = d;
        c.cluster_x = cx, c.cluster_y = cy;
        add(c);
      }
    }
    // The deep family at its compiled shape and k (its kernels: that k, and 1
    // for a remainder). The kernel object refuses the cases it does not take (a
    // coefficient from a file, the heat's flux form, media and sources beyond fp32
    // r 1, ranks split along x or y, more tiles than fit at once).
    if (deep_built(R, problem.levels())) {
      const DeepShape shape = deep_shape(R, f64, problem.levels());
      add(plan_deep(shape.tile_x, shape.tile_y, shape.k));
    }
    return out;
  }
  // The columns family (the kernel object refuses a file's alpha and the
  // waves' media): its built-in plan, the most levels compiled, and two
  // thirds of them.
  const ClusterPlan columns = default_columns_plan(problem);
  const int most = columns_shape(R, problem.levels(), f64, problem.varies()).max_levels;
  add(columns);
  add(plan_columns(columns.tile_x, 0, most));
  add(plan_columns(columns.tile_x, 0, std::max(1, most * 2 / 3)));
  if (cluster_flux_tiles(problem)) {
    for (int tile_y : {16, 24, 32, 40})
      for (int threads_y : {4, 8}) add(plan_2d(1, 128, tile_y, k, R, threads_y));
    add(plan_2d(1, 128, 32, k / 2, R, 8));
    add(plan_2d(2, 128, 32, k, R, 8));
    for (int tile_y : {16, 32}) add(plan_resident(f64 ? 60 : 120, tile_y, 4));
    return out;
  }
  // Resident tiles: 120 (fp32) or 60 (fp64) points and the halo fill 128 of
  // a row of 16-byte packs; the ones whose tiles do not all fit on chip are
  // refused by the kernel and skipped.
  for (int tile_y : {16, 32, 64})
    for (int threads_y : {4, 8}) add(plan_resident(f64 ? 60 : 120, tile_y, threads_y));
  if (f64) {
    for (int tile_y : {32, 40, 64}) add(plan_2d(1, 128, tile_y, k, R, 4)), add(plan_2d(1, 128, tile_y, k, R, 8));
    add(plan_2d(1, 64, 64, k, R, 8));
    add(plan_2d(2, 128, 32, k, R, 4));
    add(plan_2d(1, 128, 32, k / 2, R, 4));
  } else {
    for (int tile_y : {56, 64, 88}) add(plan_2d(1, 128, tile_y, k, R, 8)), add(plan_2d(2, 128, tile_y, k, R, 8));
    add(plan_2d(1, 256, 40, k, R, 4));
    add(plan_2d(1, 128, 88, k / 2, R, 8));
    add(plan_2d(1, 128, 32, k, R, 4));
    add(plan_2d(4, 128, 64, k, R, 8));
  }
  return out;
}

ClusterPlanCache::ClusterPlanCache(std::string path) : path_(std::move(path)) {
  if (!path_.empty()) return;
  std::string dir;
  if (const char* d = std::getenv("HEATWAVE_CACHE_DIR"))
    dir = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"))
    dir = std::string(x) + "/heatwave";
  else if (const char* h = std::getenv("HOME"))
    dir = std::string(h) + "/.cache/heatwave";
  else
    dir = ".heatwave-cache";
  path_ = dir + "/cluster-plans.json";
}

std::string ClusterPlanCache::key(const std::string& device, const Problem& problem, const std::vector<long>& owned,
                                  bool exchanged, std::size_t sampled_points, long every) {
  std::string size;
  for (long n : owned) size += (size.empty() ? "" : "x") + std::to_string(n);
  const std::string receivers = every > 0 && sampled_points > 0
                                    ? "|receivers:" + std::to_string(sampled_points) + "/" + std::to_string(every)
                                    : "";
  // The build: another's kernels may rank the plans otherwise (an upgrade tunes again).
  return device + "|build " + build::git_commit + "|" + to_string(problem.equation) + "|" +
         std::to_string(problem.dims) + "D|" + to_string(problem.precision) + "|r" + std::to_string(problem.radius) +
         "|" + size + (exchanged ? "|mpi" : "") + media_key(problem) + receivers;
}

std::string ClusterPlanCache::media_key(const Problem& problem) {
  // What sets the kernels' form and its cost: each coefficient's medium
  // (layers by axis: the pairs a pack shares differ), absorbing faces and
  // sources (kernels of their own in the columns family).
  std::string key;
  for (const auto& [name, medium] : problem.material) {
    key += "|" + name + ":" + to_string(medium.type);
    if (medium.type == MediumType::layers) key += "xyz"[medium.axis];
  }
  if (has_absorbing_faces(problem)) key += "|absorbing";
  return problem.sources.empty() ? key : key + "|sources";
}

bool cluster_flux_tiles(const Problem& problem) {
  return problem.dims == 2 && with_equation(problem.equation, [&]<class Eq>() {
           return flux_varies<Eq>(problem) && problem.material.at(Eq::flux_coefficient).type == MediumType::file;
         });
}

int cluster_extra_fields(const Problem& problem) {
  return (problem.levels() == 2 ? 2 : 0) + (cluster_flux_tiles(problem) ? problem.dims * problem.radius : 0);
}

std::string cluster_gap(const Problem& problem) {
  for (const Source& source : problem.sources)
    if (source.type == SourceType::field)
      return "the cluster kernels add point and Gaussian sources inside their pipeline, not a field source (every "
             "point a source's)";
  if (problem.sources.size() > static_cast<std::size_t>(max_cluster_source_boxes))
    return "the cluster kernels add at most " + std::to_string(max_cluster_source_boxes) + " sources";
  // The waves' coefficients: updates point by point; the heat's alpha: pair
  // tiles in 2D, its pairs' tables or file in 3D.
  return "";
}

namespace {
nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nlohmann::json::object();
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    return j.is_object() ? j : nlohmann::json::object();
  } catch (const nlohmann::json::exception& e) {
    spdlog::warn("cluster plan cache {}: unreadable ({}); it will be rewritten", path, e.what());
    return nlohmann::json::object();
  }
}
}  // namespace

std::optional<ClusterPlan> ClusterPlanCache::find(const std::string& key) const {
  const nlohmann::json j = read_json(path_);
  if (!j.contains("plans") || !j["plans"].contains(key)) return std::nullopt;
  try {
    return ClusterPlan::parse(j["plans"][key].at("plan").get<std::string>());
  } catch (const std::exception& e) {
    spdlog::warn("cluster plan cache {}: entry '{}' is not a plan ({}); tuning again", path_, key, e.what());
    return std::nullopt;
  }
}

void ClusterPlanCache::store(const std::string& key, const ClusterPlan& plan, double seconds_per_step) const {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path file(path_);
  if (file.has_parent_path()) fs::create_directories(file.parent_path(), ec);
  nlohmann::json j = read_json(path_);
  j["format"] = "heatwave cluster plans 1";
  j["plans"][key] = {{"plan", plan.fields()}, {"text", plan.text()}, {"seconds_per_step", seconds_per_step}};
  const std::string temporary = path_ + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary);
    out << j.dump(2) << "\n";
    if (!out) {
      spdlog::warn("cluster plan cache {}: cannot write ({}); the plan is not kept", path_, temporary);
      fs::remove(temporary, ec);
      return;
    }
  }
  fs::rename(temporary, file, ec);
  if (ec) {
    spdlog::warn("cluster plan cache {}: cannot rename into place ({}); the plan is not kept", path_, ec.message());
    fs::remove(temporary, ec);
  }
}

}  // namespace heatwave::cuda
