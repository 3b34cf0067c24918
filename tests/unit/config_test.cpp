// Bad input: each kind gets its own exit code and a message naming the file,
// the line, the key and the value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "build_info.hpp"
#include "io/config.hpp"
#include "io/errors.hpp"
#include "kernels/cluster/plan.hpp"
#include "solver/memory_check.hpp"
#include "solver/problem.hpp"
#include "solver/simulation.hpp"

namespace heatwave {
namespace {

const std::string good = R"(equation: heat
precision: float64
grid:
  points: [32, 24]
  length: 1.0
alpha: 1.0
time:
  dt: auto
  steps: 10
boundary: dirichlet
initial: {type: sine, modes: [1, 1]}
)";

// Loads (and builds the Problem from) `yaml`; returns the error it raises.
Error failure(const std::string& yaml) {
  try {
    Problem::from(load_config_text(yaml, "case.yaml"));
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected an error for:\n" << yaml;
  return Error(ExitCode::ok, "");
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

void expect_error(const std::string& yaml, ExitCode code, std::initializer_list<const char*> fragments) {
  const Error e = failure(yaml);
  EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(code)) << e.what();
  for (const char* f : fragments)
    EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << "'" << f << "' not in: " << e.what();
}

TEST(UnitConfig, GoodConfigLoadsWithDefaults) {
  const Config c = load_config_text(good, "case.yaml");
  EXPECT_EQ(c.dims, 2);
  EXPECT_EQ(c.points[0], 32);
  EXPECT_EQ(c.points[1], 24);
  EXPECT_EQ(c.radius, 1);
  EXPECT_FALSE(c.dt.has_value());
  EXPECT_EQ(*c.steps, 10);
  EXPECT_EQ(c.boundary[1][1].type, BoundaryType::dirichlet);
  // The resolved config re-reads to itself.
  EXPECT_EQ(to_yaml(load_config_text(to_yaml(c), "resolved.yaml")), to_yaml(c));
  EXPECT_EQ(config_hash(c), config_hash(load_config_text(to_yaml(c), "resolved.yaml")));
}

TEST(UnitConfig, MissingFile) {
  try {
    load_config_file("/nonexistent/case.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::file_not_found);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/case.yaml"), std::string::npos);
  }
}

TEST(UnitConfig, YamlSyntaxErrorGivesLineAndColumn) {
  expect_error("equation: heat\ngrid:\n  points: [32, 24\n", ExitCode::yaml_syntax,
               {"case.yaml:", "YAML syntax error"});
  const Error e = failure("equation: heat\ngrid: {points: [1, 2]\n  length: : 3\n");
  EXPECT_NE(std::string(e.what()).find("case.yaml:3:"), std::string::npos) << e.what();
}

TEST(UnitConfig, UnknownKeySuggestsTheNearest) {
  expect_error(replace(good, "alpha:", "alpah:"), ExitCode::unknown_key,
               {"case.yaml:6:1", "'alpah'", "did you mean 'alpha'"});
  expect_error(replace(good, "  steps: 10", "  stepz: 10"), ExitCode::unknown_key, {"'time.stepz'", "'steps'"});
  expect_error(good + "colour: blue\n", ExitCode::unknown_key, {"'colour'", "valid keys here"});
}

TEST(UnitConfig, WrongType) {
  expect_error(replace(good, "[32, 24]", "[32, abc]"), ExitCode::wrong_type, {"'grid.points[1]'", "integer", "'abc'"});
  expect_error(replace(good, "alpha: 1.0", "alpha: fast"), ExitCode::wrong_type, {"'alpha'", "a number", "'fast'"});
  expect_error(replace(good, "[32, 24]", "32"), ExitCode::wrong_type, {"'grid.points'", "list"});
  expect_error(replace(good, "steps: 10", "steps: 2.5"), ExitCode::wrong_type, {"'time.steps'", "'2.5'"});
}

TEST(UnitConfig, NonPositiveSizesAndValues) {
  expect_error(replace(good, "[32, 24]", "[32, 0]"), ExitCode::invalid_value, {"'grid.points'", "axis y", "> 0"});
  expect_error(replace(good, "[32, 24]", "[-4, 24]"), ExitCode::invalid_value, {"-4", "axis x"});
  expect_error(replace(good, "length: 1.0", "length: -1"), ExitCode::invalid_value, {"'grid.length'"});
  expect_error(replace(good, "alpha: 1.0", "alpha: 0"), ExitCode::invalid_value, {"'alpha'", "> 0"});
  expect_error(replace(good, "steps: 10", "steps: 0"), ExitCode::invalid_value, {"'time.steps'"});
  expect_error(replace(good, "equation: heat", "equation: maxwell"), ExitCode::invalid_value,
               {"'maxwell'", "heat, wave"});
  expect_error(replace(good, "  steps: 10", "  steps: 10\n  t_end: 1.0"), ExitCode::invalid_value, {"exactly one"});
}

TEST(UnitConfig, GridTooSmallForTheStencil) {
  expect_error(replace(good, "[32, 24]", "[32, 2]"), ExitCode::grid_too_small, {"axis y", "radius 1", "at least 3"});
  expect_error(replace(replace(good, "[32, 24]", "[4, 24]"), "alpha: 1.0", "stencil: {radius: 2}\nalpha: 1.0"),
               ExitCode::grid_too_small, {"axis x", "radius 2", "at least 5"});
  expect_error(replace(replace(good, "[32, 24]", "[32, 8]"), "alpha: 1.0", "stencil: {radius: 4}\nalpha: 1.0"),
               ExitCode::grid_too_small, {"axis y", "radius 4", "at least 9"});
}

// Radius 1 to 4 (orders 2 to 8) run; another is refused, naming the choices.
TEST(UnitConfig, StencilRadiusOneToFour) {
  for (int radius = 1; radius <= 4; ++radius)
    EXPECT_EQ(
        load_config_text(replace(good, "alpha: 1.0", "stencil: {radius: " + std::to_string(radius) + "}\nalpha: 1.0"),
                         "case.yaml")
            .radius,
        radius);
  for (const char* radius : {"0", "5"})
    expect_error(replace(good, "alpha: 1.0", std::string("stencil: {radius: ") + radius + "}\nalpha: 1.0"),
                 ExitCode::invalid_value, {"'stencil.radius'", radius, "1, 2, 3 or 4", "order 2, 4, 6 or 8"});
}

TEST(UnitConfig, PeriodicOnOneFaceOnly) {
  expect_error(replace(good, "boundary: dirichlet", "boundary: {x_low: periodic}"), ExitCode::periodic_mismatch,
               {"boundary.x_low", "periodic", "boundary.x_high", "both faces"});
}

TEST(UnitConfig, DtPastTheStabilityLimitPrintsTheLimit) {
  // h = 1/31 and 1/23: alpha*dt*sum(1/h^2) <= 1/2 gives dt <= 1/(2*(961+529)) = 3.3557e-4.
  expect_error(replace(good, "dt: auto", "dt: 4e-4"), ExitCode::unstable,
               {"'time.dt' = 0.0004", "stability limit", "1/2", "dt <= 0.00033557"});
}

TEST(UnitConfig, TEndNotAWholeNumberOfStepsIsRefusedWithAFix) {
  expect_error(replace(replace(good, "dt: auto", "dt: 3e-4"), "steps: 10", "t_end: 0.001"), ExitCode::t_end_mismatch,
               {"'time.t_end' = 0.001", "3.33333 steps", "dt = t_end/4 = 0.00025", "steps: 4"});
}

TEST(UnitConfig, CoefficientOfTheOtherEquationIsRefused) {
  expect_error(replace(good, "equation: heat", "equation: wave"), ExitCode::invalid_value, {"'alpha'", "'c'"});
}

TEST(UnitConfig, CheckpointAndOutputSettings) {
  const Config c = load_config_text(good +
                                        "checkpoint: {every: 50, every_seconds: 600, keep: 2, dir: ck}\n"
                                        "output: {every: 10, fields: [u], dir: out}\n",
                                    "case.yaml");
  EXPECT_EQ(c.run.checkpoint.every, 50);
  EXPECT_EQ(c.run.checkpoint.every_seconds, 600.0);
  EXPECT_EQ(c.run.checkpoint.keep, 2);
  EXPECT_EQ(c.run.checkpoint.dir, "ck");
  EXPECT_EQ(c.run.output.every, 10);
  EXPECT_EQ(c.run.output.fields, std::vector<std::string>{"u"});
  EXPECT_EQ(c.run.output.dir, "out");
  EXPECT_EQ(to_yaml(load_config_text(to_yaml(c), "resolved.yaml")), to_yaml(c));
  // Where and how often files are written is not part of the case.
  EXPECT_EQ(config_hash(c), config_hash(load_config_text(good, "case.yaml")));

  expect_error(good + "checkpoint: {evry: 5}\n", ExitCode::unknown_key, {"'checkpoint.evry'", "did you mean 'every'"});
  expect_error(good + "checkpoint: {every: often}\n", ExitCode::wrong_type,
               {"'checkpoint.every'", "integer", "'often'"});
  expect_error(good + "checkpoint: {every: -1}\n", ExitCode::invalid_value, {"'checkpoint.every'", ">= 0"});
  expect_error(good + "checkpoint: {every_seconds: -5}\n", ExitCode::invalid_value, {"'checkpoint.every_seconds'"});
  expect_error(good + "checkpoint: {keep: 0}\n", ExitCode::invalid_value, {"'checkpoint.keep'", ">= 1"});
  expect_error(good + "checkpoint: {dir: ''}\n", ExitCode::invalid_value, {"'checkpoint.dir'"});
  expect_error(good + "output: {every: 10, fields: [u, v]}\n", ExitCode::invalid_value,
               {"'output.fields'", "'v'", "heat equation (fields: u)"});
  expect_error(good + "output: {fields: [u_previous]}\n", ExitCode::invalid_value, {"'u_previous'", "heat"});
  expect_error(good + "output: {fields: [u, u]}\n", ExitCode::invalid_value, {"'u' twice"});
  expect_error(good + "output: {fields: u}\n", ExitCode::wrong_type, {"'output.fields'", "expects a list"});
}

TEST(UnitConfig, ParallelSettings) {
  const Config c = load_config_text(
      good + "parallel: {exchange_every: 3, overlap: false, decomposition: [2, 0], halo_transport: nccl}\n",
      "case.yaml");
  EXPECT_EQ(c.run.parallel.exchange_every, 3);
  // auto (the default, or said): the backend's choice, resolved when the run starts.
  EXPECT_FALSE(load_config_text(good, "case.yaml").run.parallel.exchange_every.has_value());
  EXPECT_FALSE(load_config_text(good + "parallel: {exchange_every: auto}\n", "case.yaml")
                   .run.parallel.exchange_every.has_value());
  EXPECT_EQ(c.run.parallel.overlap, false);
  EXPECT_EQ(c.run.parallel.halo_transport, HaloTransportKind::nccl);
  EXPECT_EQ(load_config_text(good, "case.yaml").run.parallel.halo_transport, std::nullopt);  // auto
  for (const auto& [kind, transport] : transport_names)
    EXPECT_EQ(load_config_text(good + "parallel: {halo_transport: " + transport + "}\n", "case.yaml")
                  .run.parallel.halo_transport,
              kind);
  EXPECT_EQ(c.run.parallel.decomposition[0], 2);
  EXPECT_EQ(c.run.parallel.decomposition[1], 0);
  EXPECT_FALSE(load_config_text(good, "case.yaml").run.parallel.overlap.has_value());  // auto
  EXPECT_EQ(to_yaml(load_config_text(to_yaml(c), "resolved.yaml")), to_yaml(c));
  // How the ranks split the work and talk is not part of the case.
  EXPECT_EQ(config_hash(c), config_hash(load_config_text(good, "case.yaml")));

  expect_error(good + "parallel: {overlap: sometimes}\n", ExitCode::wrong_type,
               {"'parallel.overlap'", "true or false", "'sometimes'"});
  expect_error(good + "parallel: {exchange_every: 0}\n", ExitCode::invalid_value,
               {"'parallel.exchange_every'", ">= 1 (or auto"});
  expect_error(good + "parallel: {exchange_every: often}\n", ExitCode::wrong_type, {"'parallel.exchange_every'"});
  expect_error(good + "parallel: {decomposition: [2]}\n", ExitCode::invalid_value,
               {"'parallel.decomposition'", "one rank count per axis"});
  expect_error(good + "parallel: {halo_transport: ucx}\n", ExitCode::invalid_value,
               {"'parallel.halo_transport'", "'ucx'", "auto", "nccl", "mpi-cuda-aware", "mpi-host"});
  expect_error(good + "parallel: {halo_transport: [nccl]}\n", ExitCode::wrong_type, {"'parallel.halo_transport'"});
}

TEST(UnitConfig, ClusterPlanSettings) {
  const Config c = load_config_text(
      good + "cluster: {shape: [1, 4], tile: [112, 88], k: 8, threads_y: 8, cache: plans.json}\n", "case.yaml");
  EXPECT_EQ(c.run.cluster.shape[1], 4);
  EXPECT_EQ(c.run.cluster.tile[0], 112);
  EXPECT_EQ(c.run.cluster.tile[1], 88);
  EXPECT_EQ(c.run.cluster.k, 8);
  EXPECT_EQ(c.run.cluster.threads_y, 8);
  EXPECT_EQ(c.run.cluster.cache, "plans.json");
  EXPECT_TRUE(c.run.cluster.overridden());
  const Config d = load_config_text(good, "case.yaml");
  EXPECT_TRUE(d.run.cluster.autotune);
  EXPECT_FALSE(d.run.cluster.overridden());
  EXPECT_FALSE(load_config_text(good + "cluster: {autotune: false}\n", "case.yaml").run.cluster.autotune);
  EXPECT_EQ(to_yaml(load_config_text(to_yaml(c), "resolved.yaml")), to_yaml(c));
  EXPECT_EQ(to_yaml(load_config_text(to_yaml(d), "resolved.yaml")), to_yaml(d));
  // A launch plan is how the case runs, not what it is.
  EXPECT_EQ(config_hash(c), config_hash(d));

  expect_error(good + "cluster: {shape: [2, 4]}\n", ExitCode::invalid_value, {"'cluster.shape'", "[1, n]"});
  expect_error(good + "cluster: {shape: [1, 32]}\n", ExitCode::invalid_value, {"'cluster.shape'", "at most 16"});
  expect_error(good + "cluster: {tile: [112]}\n", ExitCode::invalid_value, {"'cluster.tile'", "one size per axis (2)"});
  expect_error(good + "cluster: {tile: [1, 64]}\n", ExitCode::invalid_value,
               {"'cluster.tile'", ">= 2 * stencil radius"});
  expect_error(good + "cluster: {k: 0}\n", ExitCode::invalid_value, {"'cluster.k'", "1..64"});
  expect_error(good + "cluster: {threads_y: 6}\n", ExitCode::invalid_value, {"'cluster.threads_y'", "power of 2"});
  expect_error(good + "cluster: {autotune: maybe}\n", ExitCode::wrong_type, {"'cluster.autotune'"});
  expect_error(good + "cluster: {tiles: [64, 64]}\n", ExitCode::unknown_key,
               {"'cluster.tiles'", "did you mean 'tile'"});
  expect_error(good + "cluster: {mode: persistent}\n", ExitCode::invalid_value, {"'cluster.mode'", "resident"});
}

// The autotune's candidates stay inside what the kernels accept (2D: cluster
// sizes up to 16, resident tiles; 3D: a thread a pack, k up to 4 at r 1 and
// 3 at r 2, clusters of up to 8), start from the built-in plan, and each
// survives the plan cache's round trip.
TEST(UnitConfig, ClusterPlanCandidates) {
  for (int dims : {2, 3})
    for (int radius : {1, 2})
      for (const char* precision : {"float32", "float64"}) {
        const std::string points = dims == 2 ? "[256, 256]" : "[64, 64, 64]";
        const Problem p = Problem::from(load_config_text("equation: wave\nprecision: " + std::string(precision) +
                                                             "\ngrid: {points: " + points +
                                                             "}\nstencil: {radius: " + std::to_string(radius) +
                                                             "}\ntime: {dt: auto, steps: 1}\ninitial: {type: random}\n",
                                                         "case.yaml"));
        const auto plans = cuda::cluster_plan_candidates(p);
        ASSERT_FALSE(plans.empty());
        EXPECT_EQ(plans.front(), cuda::default_cluster_plan(p));
        bool resident = false, deep = false, columns = false;
        for (const auto& plan : plans) {
          const std::string what =
              plan.fields() + " (" + std::to_string(dims) + "D r" + std::to_string(radius) + " " + precision + ")";
          EXPECT_EQ(cuda::ClusterPlan::parse(plan.fields()), plan) << what;
          EXPECT_GE(plan.tile_x, 2 * radius) << what;
          if (!plan.columns) {
            EXPECT_GE(plan.tile_y, 2 * radius) << what;  // columns: 0, segments sized to the GPU
          }
          resident = resident || plan.resident;
          deep = deep || plan.deep;
          columns = columns || plan.columns;
          if (plan.columns) {  // 2D: a block of threads a column each, k within the levels compiled
            EXPECT_EQ(dims, 2) << what;
            EXPECT_EQ(plan.blocks(), 1) << what;
            EXPECT_GE(plan.k, 1) << what;
            const cuda::ColumnsShape shape =
                cuda::columns_shape(radius, 2, std::strcmp(precision, "float64") == 0, false);
            EXPECT_LE(plan.k, shape.max_levels) << what;  // the wave: two levels, uniform
            EXPECT_EQ(plan.tile_x, shape.threads) << what;
            EXPECT_GT(plan.tile_x - 2 * plan.k * radius, 32) << what;
          } else if (plan.deep) {  // 3D: one block a tile, no slabs, no clusters
            EXPECT_EQ(dims, 3) << what;
            EXPECT_EQ(plan.blocks(), 1) << what;
            EXPECT_EQ(plan.tile_z, 0) << what;
            EXPECT_GE(plan.k, 2) << what;
            EXPECT_EQ(plan.k, cuda::deep_shape(radius, std::strcmp(precision, "float64") == 0, 2).k) << what;
          } else if (dims == 3) {
            EXPECT_FALSE(plan.resident) << what;
            EXPECT_EQ(plan.threads_y, 1) << what;
            EXPECT_GE(plan.k, 1) << what;
            EXPECT_LE(plan.k, radius == 1 ? 4 : 3) << what;
            EXPECT_LE(plan.blocks(), 8) << what;
            EXPECT_GE(plan.tile_z, 1) << what;
          } else {
            EXPECT_EQ(plan.cluster_x, 1) << what;
            EXPECT_LE(plan.blocks(), 16) << what;
            EXPECT_TRUE(plan.resident || plan.k >= 1) << what;
          }
        }
        EXPECT_EQ(resident, dims == 2);
        EXPECT_EQ(deep, dims == 3 && build::cluster_3d_deep && cuda::deep_built(radius, 2));  // the wave's levels
        EXPECT_EQ(columns, dims == 2);
      }
}

// The columns launches' segment counts: without events, waves of blocks
// alike (heat fp32 k 12 at 16384^2: 71 strips on 264 slots take 11
// segments); with the sink's Gaussian (its box over x [2672, 5680) and rows
// [0, 1504) of 8352^2, k 8 in strips of 368 columns on 132 slots), the
// blocks at its rows weighed: 1 leaves the count as without, 2 and 3 take
// the counts the H200 timed (16 and 14 segments: 449 and 503 Gcells/s).
TEST(UnitConfig, ColumnsSegmentsWeighTheSourcesBlocks) {
  EXPECT_EQ(cuda::columns_segments({71, 0, 16384, 12, 12, 4, 264}, 3.0, {}), 11);
  const cuda::ColumnsLaunch sink{23, 0, 8352, 8, 8, 8, 132};
  auto gaussian = [](int strip, int from, int to, int& lo, int& hi) {
    const int first = strip * 368 - 8, last = first + 384;  // the columns its threads compute
    lo = 1, hi = 0;
    if (last > 2672 && first < 5680) lo = std::max(from, 0), hi = std::min(to, 1504) - 1;
  };
  EXPECT_EQ(cuda::columns_segments(sink, 3.0, {}), 11);
  EXPECT_EQ(cuda::columns_segments(sink, 1.0, gaussian), 11);
  EXPECT_EQ(cuda::columns_segments(sink, 2.0, gaussian), 16);
  EXPECT_EQ(cuda::columns_segments(sink, 3.0, gaussian), 14);
}

// The plan cache's key tells apart what changes the best plan: a medium's
// type (layers by their axis), absorbing faces, sources and receivers, not
// only whether a coefficient varies.
TEST(UnitConfig, ClusterPlanKeyNamesTheMedia) {
  const std::string base =
      "equation: wave\ngrid: {points: [64, 64, 64]}\ntime: {dt: auto, steps: 1}\ninitial: {type: random}\n";
  auto key = [&](const std::string& more) {
    return cuda::ClusterPlanCache::key("H100", Problem::from(load_config_text(base + more, "case.yaml")), {64, 64, 64},
                                       false);
  };
  const std::string plain = key(""),
                    layers_y =
                        key("material: {c: {type: layers, axis: y, interfaces: [0.5], "
                            "values: [1.0, 0.5]}}\n"),
                    layers_z = key("material: {c: {type: layers, axis: z, interfaces: [0.5], values: [1.0, 0.5]}}\n"),
                    absorbing = key("boundary: {default: {type: absorbing, width: 4}}\n"),
                    sources = key("sources: [{type: point, position: [0.5, 0.5, 0.5], amplitude: 1.0}]\n");
  // (The build's commit after the device: another build tunes again.)
  const std::string device = std::string("H100|build ") + build::git_commit + "|";
  EXPECT_EQ(plain, device + "wave|3D|float64|r1|64x64x64");
  EXPECT_EQ(layers_y, plain + "|c:layersy");
  EXPECT_EQ(layers_z, plain + "|c:layersz");
  EXPECT_EQ(absorbing, device + "damped_wave|3D|float64|r1|64x64x64|gamma:constant|absorbing");  // absorbing: damped
  EXPECT_EQ(sources, plain + "|sources");
  // Receivers: the points this rank records and how often (their cost
  // differs between plans); none recorded, nothing added.
  const Problem p = Problem::from(load_config_text(base, "case.yaml"));
  EXPECT_EQ(cuda::ClusterPlanCache::key("H100", p, {64, 64, 64}, false, 364, 2), plain + "|receivers:364/2");
  EXPECT_EQ(cuda::ClusterPlanCache::key("H100", p, {64, 64, 64}, false, 0, 2), plain);
}

// The cluster kernels add point and Gaussian sources inside their pipeline
// (boxes of points, at most max_cluster_source_boxes a rank); a field
// source, and more sources than that, run on the cuda backend, which says why.
TEST(UnitConfig, ClusterKernelsTakePointAndGaussianSources) {
  auto gap = [](const std::string& sources) {
    return cuda::cluster_gap(Problem::from(load_config_text(
        "equation: heat\ngrid: {points: [64, 64]}\ntime: {dt: auto, steps: 1}\ninitial: {type: random}\n"
        "sources:\n" +
            sources,
        "case.yaml")));
  };
  EXPECT_EQ(gap("  - {type: point, position: [0.5, 0.5], amplitude: 1.0}\n"
                "  - {type: gaussian, center: [0.2, 0.7], width: 0.05, amplitude: 2.0}\n"),
            "");
  Problem field = Problem::from(
      load_config_text("equation: heat\ngrid: {points: [64, 64]}\ntime: {dt: auto, steps: 1}\ninitial: {type: random}\n"
                       "sources: [{type: point, position: [0.5, 0.5], amplitude: 1.0}]\n",
                       "case.yaml"));
  field.sources[0].type = SourceType::field;  // (a field's file must exist to load)
  EXPECT_NE(cuda::cluster_gap(field).find("not a field source"), std::string::npos);
  std::string many;
  for (int k = 0; k <= cuda::max_cluster_source_boxes; ++k)
    many += "  - {type: point, position: [0.5, 0.5], amplitude: 1.0}\n";
  EXPECT_NE(gap(many).find("at most 32 sources"), std::string::npos) << gap(many);
}

// What cuda-cluster holds beyond the cuda backend (the registry's memory
// check counts it, and backend auto falls back where it does not fit): a
// two-level equation's out-of-place outputs, and in 2D a heat's alpha from a
// file as D * radius pair fields. Layers and constants take none.
TEST(UnitConfig, ClusterBackendsExtraFields) {
  auto problem = [](const std::string& equation, const std::string& more = "") {
    return Problem::from(load_config_text("equation: " + equation +
                                              "\ngrid: {points: [64, 64]}\ntime: {dt: auto, steps: 1}\n"
                                              "initial: {type: random}\n" +
                                              more,
                                          "case.yaml"));
  };
  EXPECT_EQ(cuda::cluster_extra_fields(problem("heat")), 0);
  EXPECT_EQ(cuda::cluster_extra_fields(problem("wave")), 2);
  EXPECT_EQ(cuda::cluster_extra_fields(problem("damped_wave")), 2);
  const std::string layers =
      "material: {alpha: {type: layers, axis: y, interfaces: [0.5], values: [1.0, 0.3]}}\nstencil: {radius: 2}\n";
  Problem heat = problem("heat", layers);
  EXPECT_EQ(cuda::cluster_extra_fields(heat), 0);
  heat.material.at("alpha").type = MediumType::file;  // (a file must exist to load)
  EXPECT_EQ(cuda::cluster_extra_fields(heat), 2 * 2);
  heat.dims = 3;  // 3D reads the file's pairs through a table
  EXPECT_EQ(cuda::cluster_extra_fields(heat), 0);
}

// The memory check's words: a run refused says what to do; backend auto,
// which goes on with the cuda backend where cuda-cluster's extra fields do
// not fit, quotes the shortfall alone.
TEST(UnitConfig, MemoryShortfallWords) {
  const std::size_t gib = std::size_t{1} << 30;
  EXPECT_EQ(memory_shortfall(3 * gib, 3 * gib, "GPU 0", "case.yaml"), "");
  EXPECT_EQ(memory_shortfall(107 * gib, 79 * gib, "GPU 0", "case.yaml"),
            "case.yaml needs 107 GiB, 79 GiB available (GPU 0)");
  auto refused = [&](bool advise) {
    try {
      require_memory(5 * gib / 2, gib, "host", "case.yaml", advise ? memory_advice : "");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::invalid_value);
      return std::string(e.what());
    }
    return std::string("not refused");
  };
  EXPECT_EQ(refused(true),
            "case.yaml needs 2.5 GiB, 1 GiB available (host): use a smaller grid, more ranks or a machine with more "
            "memory");
  EXPECT_EQ(refused(false), "case.yaml needs 2.5 GiB, 1 GiB available (host)");
  EXPECT_NO_THROW(require_memory(gib, gib, "host", "case.yaml"));
}

// A resident plan: the config asks for it, and its text, fields and parse agree.
TEST(UnitConfig, ResidentClusterPlan) {
  const Config c = load_config_text(good + "cluster: {mode: resident, tile: [120, 32]}\n", "case.yaml");
  EXPECT_EQ(c.run.cluster.mode, "resident");
  EXPECT_TRUE(c.run.cluster.overridden());
  EXPECT_EQ(to_yaml(load_config_text(to_yaml(c), "resolved.yaml")), to_yaml(c));
  const cuda::ClusterPlan p = cuda::with_overrides(cuda::default_cluster_plan(Problem::from(c)), c.run.cluster);
  EXPECT_TRUE(p.resident);
  EXPECT_EQ(p.tile_x, 120);
  EXPECT_EQ(p.tile_y, 32);
  const std::string rows = std::to_string(cuda::default_cluster_plan(Problem::from(c)).threads_y);  // kept
  EXPECT_EQ(p.text(), "resident, tile 120x32, " + rows + " thread rows");
  EXPECT_EQ(p.fields(), "resident,120,32," + rows);
  EXPECT_EQ(cuda::ClusterPlan::parse(p.fields()), p);
  EXPECT_EQ(cuda::with_overrides(cuda::ClusterPlan{}, cuda::fixed_settings(p)), p);
  EXPECT_FALSE(cuda::ClusterPlan::parse("1,1,112,88,0,8,8").resident);
  EXPECT_THROW(cuda::ClusterPlan::parse("resident,120,32"), Error);
  const std::string three_d =
      "equation: heat\ngrid: {points: [16, 16, 16]}\ntime: {dt: auto, steps: 1}\ninitial: {type: random}\n";
  expect_error(three_d + "cluster: {mode: resident}\n", ExitCode::invalid_value, {"'cluster.mode'", "2D only"});
  expect_error(three_d + "cluster: {shape: [4, 4]}\n", ExitCode::invalid_value,
               {"'cluster.shape'", "at most 8 blocks"});
  if (build::cluster_3d_dsmem)
    EXPECT_EQ(load_config_text(three_d + "cluster: {shape: [2, 4]}\n", "case.yaml").run.cluster.shape[0], 2);
}

// The 3D families the default build leaves out (HEATWAVE_CLUSTER_3D_DSMEM,
// _HIGH_RADIUS, _DEEP): without them a config that forces one of their
// plans is refused naming the option (exit 7), the autotune is offered none
// of them, and a 3D case past radius 2 runs the one-step kernel (no
// candidates, the baseline built in); with them, all of it is there.
TEST(UnitConfig, LeftOutClusterFamilies) {
  const std::string three_d =
      "equation: wave\ngrid: {points: [64, 64, 64]}\ntime: {dt: auto, steps: 1}\ninitial: {type: random}\n";
  const std::string radius_3 = three_d + "stencil: {radius: 3}\n";
  auto loads_or_names = [](bool built, const std::string& yaml, const char* key, const char* option) {
    if (built)
      EXPECT_NO_THROW(load_config_text(yaml, "case.yaml")) << yaml;
    else
      expect_error(yaml, ExitCode::invalid_value, {key, option, "which this build leaves out"});
  };
  loads_or_names(build::cluster_3d_deep, three_d + "cluster: {mode: deep, tile: [64, 32], k: 6}\n", "'cluster.mode'",
                 "-DHEATWAVE_CLUSTER_3D_DEEP=ON");
  loads_or_names(build::cluster_3d_dsmem, three_d + "cluster: {shape: [2, 1]}\n", "'cluster.shape'",
                 "-DHEATWAVE_CLUSTER_3D_DSMEM=ON");
  loads_or_names(build::cluster_3d_high_radius, radius_3 + "cluster: {tile: [32, 16, 64], k: 2}\n", "'cluster.tile'",
                 "-DHEATWAVE_CLUSTER_3D_HIGH_RADIUS=ON");
  loads_or_names(build::cluster_3d_high_radius, radius_3 + "cluster: {k: 1}\n", "'cluster.k'",
                 "-DHEATWAVE_CLUSTER_3D_HIGH_RADIUS=ON");
  EXPECT_NO_THROW(load_config_text(radius_3 + "cluster: {autotune: false}\n", "case.yaml"));  // nothing forced
  EXPECT_NO_THROW(load_config_text(three_d + "cluster: {shape: [1, 1], k: 3}\n", "case.yaml"));

  // The plans: each family's refusal names its option, or is "" where built.
  auto names = [](bool built, const std::string& why, const char* option) {
    if (built)
      EXPECT_EQ(why, "");
    else
      EXPECT_NE(why.find(option), std::string::npos) << why;
  };
  names(build::cluster_3d_deep, cuda::unbuilt_plan(cuda::ClusterPlan::parse("deep,64,32,5"), 3, 1),
        "-DHEATWAVE_CLUSTER_3D_DEEP=ON");
  names(build::cluster_3d_dsmem, cuda::unbuilt_plan(cuda::ClusterPlan::parse("2,1,32,32,64,4,1"), 3, 1),
        "-DHEATWAVE_CLUSTER_3D_DSMEM=ON");
  names(build::cluster_3d_high_radius, cuda::unbuilt_plan(cuda::ClusterPlan::parse("1,1,32,24,64,2,1"), 3, 3),
        "-DHEATWAVE_CLUSTER_3D_HIGH_RADIUS=ON");
  EXPECT_EQ(cuda::unbuilt_plan(cuda::ClusterPlan::parse("1,1,32,24,64,2,1"), 3, 2), "");
  EXPECT_EQ(cuda::unbuilt_plan(cuda::ClusterPlan::parse("2,128,56,0,8,8,8"), 2, 4), "");  // 2D: all built

  // The autotune's candidates: only plans this build has.
  for (int radius : {1, 2, 3, 4}) {
    const Problem p = Problem::from(load_config_text(three_d + "stencil: {radius: " + std::to_string(radius) + "}\n",
                                                     "case.yaml"));
    const auto plans = cuda::cluster_plan_candidates(p);
    for (const auto& plan : plans) {
      EXPECT_EQ(cuda::unbuilt_plan(plan, 3, radius), "") << plan.fields();
      EXPECT_TRUE(build::cluster_3d_dsmem || plan.blocks() == 1) << plan.fields();
      EXPECT_TRUE(build::cluster_3d_deep || !plan.deep) << plan.fields();
    }
    const bool pipeline = radius <= build::cluster_3d_max_radius;
    EXPECT_EQ(cuda::default_cluster_plan(p).baseline(), !pipeline) << radius;
    EXPECT_EQ(plans.empty(), !pipeline && !(build::cluster_3d_deep && cuda::deep_built(radius, 2))) << radius;
  }
}

// A deep plan (3D): the config asks for it (in a build with the deep
// family: LeftOutClusterFamilies checks the refusal without), and its text,
// fields and parse agree.
TEST(UnitConfig, DeepClusterPlan) {
  const std::string three_d =
      "equation: heat\ngrid: {points: [16, 16, 16]}\ntime: {dt: auto, steps: 1}\ninitial: {type: random}\n";
  Config c = load_config_text(three_d, "case.yaml");
  c.run.cluster.mode = "deep", c.run.cluster.tile = {64, 32, 0}, c.run.cluster.k = 6;
  if (build::cluster_3d_deep) {
    c = load_config_text(three_d + "cluster: {mode: deep, tile: [64, 32], k: 6}\n", "case.yaml");
    EXPECT_EQ(c.run.cluster.mode, "deep");
    EXPECT_EQ(to_yaml(load_config_text(to_yaml(c), "resolved.yaml")), to_yaml(c));
  }
  const cuda::ClusterPlan p = cuda::with_overrides(cuda::default_cluster_plan(Problem::from(c)), c.run.cluster);
  EXPECT_TRUE(p.deep);
  EXPECT_FALSE(p.resident);
  EXPECT_EQ(p.text(), "deep, tile 64x32, k 6");
  EXPECT_EQ(p.fields(), "deep,64,32,6");
  EXPECT_EQ(cuda::ClusterPlan::parse(p.fields()), p);
  EXPECT_EQ(cuda::with_overrides(cuda::ClusterPlan{}, cuda::fixed_settings(p)).fields(), p.fields());
  EXPECT_THROW(cuda::ClusterPlan::parse("deep,64,32"), Error);
  expect_error(good + "cluster: {mode: deep}\n", ExitCode::invalid_value, {"'cluster.mode'", "3D only"});
  expect_error(three_d + "cluster: {mode: deep, tile: [64, 32, 8]}\n", ExitCode::invalid_value,
               {"'cluster.tile'", "2 sizes in deep mode"});
}

// The deep family's compiled shapes (kernel_shapes.hpp): a 256-thread
// block's tile, a column of at least r rows a thread, k of at least 2, and
// the planes and halo list within a block's 227 KiB of shared memory on the
// H100 and H200 (less the kernel's static ghost table) for every radius,
// precision and equation it is built for.
TEST(UnitConfig, DeepShapesFitABlock) {
  int built = 0;
  for (int r : {1, 2, 3, 4})
    for (int levels : {1, 2})
      for (bool fp64 : {false, true}) {
        if (!cuda::deep_built(r, levels)) continue;
        ++built;
        const cuda::DeepShape s = cuda::deep_shape(r, fp64, levels);
        const std::string what = "r" + std::to_string(r) + " levels " + std::to_string(levels) + (fp64 ? " fp64" : " fp32");
        EXPECT_EQ(s.tile_x * s.tile_y % cuda::deep_threads, 0) << what;
        EXPECT_EQ(cuda::deep_threads % s.tile_x, 0) << what;
        EXPECT_GE(cuda::deep_points(s.tile_x, s.tile_y), r) << what;
        EXPECT_GE(s.k, 2) << what;
        EXPECT_LE(cuda::deep_shared_bytes(r, levels, s.k, fp64 ? 8 : 4, s.tile_x, s.tile_y), 227 * 1024 - 256) << what;
      }
  EXPECT_EQ(built, 6);  // one level (the heat) at r 1-2, two (the waves) at r 1; fp32 and fp64
}

// The fp32 columns kernels that add sources compile at most 8 levels (at 12
// they spilled): a case with sources runs a plan's k of 12 as 8 and 4.
TEST(UnitConfig, ColumnsSourcesKernelsCompileEightLevels) {
  const cuda::ColumnsShape heat = cuda::columns_shape(1, 1, false, false);
  const cuda::ColumnsShape sourced = cuda::columns_events_shape(heat, cuda::ColumnEvents::sources, false);
  EXPECT_EQ(heat.max_levels, 12);
  EXPECT_TRUE(cuda::columns_levels_compiled(heat, 12));
  EXPECT_EQ(sourced.max_levels, 8);
  EXPECT_EQ(sourced.threads, heat.threads);
  EXPECT_FALSE(cuda::columns_levels_compiled(sourced, 12));
  for (int k : {8, 4, 2, 1}) EXPECT_TRUE(cuda::columns_levels_compiled(sourced, k)) << k;
  EXPECT_EQ(cuda::columns_events_shape(heat, cuda::ColumnEvents::receivers, false).max_levels, 12);  // no sources: 12
  const cuda::ColumnsShape r2 = cuda::columns_shape(2, 1, false, false), fp64 = cuda::columns_shape(1, 2, true, false);
  EXPECT_EQ(cuda::columns_events_shape(r2, cuda::ColumnEvents::sources, false).max_levels, 6);    // r 2: its 6
  EXPECT_EQ(cuda::columns_events_shape(fp64, cuda::ColumnEvents::sources, true).max_levels, 12);  // fp64: its 12
}

// A columns plan (2D): the config asks for it, from the case's built-in
// columns plan; its text, fields and parse agree.
TEST(UnitConfig, ColumnsClusterPlan) {
  const Config c = load_config_text(good + "cluster: {mode: columns, k: 9}\n", "case.yaml");
  EXPECT_EQ(c.run.cluster.mode, "columns");
  EXPECT_EQ(to_yaml(load_config_text(to_yaml(c), "resolved.yaml")), to_yaml(c));
  const Problem problem = Problem::from(c);
  EXPECT_EQ(cuda::default_columns_plan(problem).fields(), "columns,256,0,8");  // heat r 1: 8 of 12 compiled
  const cuda::ClusterPlan p = cuda::config_plan(problem, c.run.cluster);
  EXPECT_TRUE(p.columns);
  EXPECT_FALSE(p.deep || p.resident);
  EXPECT_EQ(p.text(), "columns, 256 threads, segments sized to the GPU, k 9");
  EXPECT_EQ(p.fields(), "columns,256,0,9");
  EXPECT_EQ(cuda::ClusterPlan::parse(p.fields()), p);
  EXPECT_EQ(cuda::with_overrides(cuda::ClusterPlan{}, cuda::fixed_settings(p)).fields(), p.fields());
  EXPECT_EQ(cuda::ClusterPlan::parse("columns,128,40,3").text(), "columns, 128 threads, segments of 40 rows, k 3");
  EXPECT_THROW(cuda::ClusterPlan::parse("columns,256,0"), Error);
  const std::string three_d =
      "equation: heat\ngrid: {points: [16, 16, 16]}\ntime: {dt: auto, steps: 1}\ninitial: {type: random}\n";
  expect_error(three_d + "cluster: {mode: columns}\n", ExitCode::invalid_value, {"'cluster.mode'", "2D only"});
}

// Whether a transport can run is known when the run starts: device-memory
// transports on the host backend are a clear error (as are nccl in a build
// without it and mpi-cuda-aware on an MPI without CUDA support: same path).
TEST(UnitConfig, HaloTransportMustSuitTheBackendAndTheBuild) {
  const std::string host = replace(good, "alpha: 1.0", "backend: host\nalpha: 1.0");
  auto start = [&](const std::string& transport) {
    Simulation<2, double>(load_config_text(host + "parallel: {halo_transport: " + transport + "}\n", "case.yaml"),
                          MPI_COMM_SELF);
  };
  for (const char* transport : {"nccl", "mpi-cuda-aware"}) {
    try {
      start(transport);
      ADD_FAILURE() << transport << " on the host backend was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::invalid_value);
      EXPECT_NE(std::string(e.what()).find("'parallel.halo_transport' = '" + std::string(transport) + "'"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("host backend"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(start("mpi-host"));
  EXPECT_NO_THROW(start("auto"));
  Simulation<2, double> sim(load_config_text(host, "case.yaml"), MPI_COMM_SELF);
  const RunMetrics m = sim.run();
  EXPECT_EQ(m.halo_transport, "mpi-host");
  EXPECT_EQ(m.halo_path, "none (no face exchanged)");  // one rank: the transport is chosen, nothing goes through it
}

TEST(UnitConfig, InitialFromFile) {
  const std::string file_case =
      replace(good, "{type: sine, modes: [1, 1]}", "{type: file, path: u0.h5, dataset: start}");
  const Config c = load_config_text(file_case, "case.yaml");
  EXPECT_EQ(c.initial.type, InitialType::file);
  EXPECT_EQ(c.initial.path, "u0.h5");
  EXPECT_EQ(c.initial.dataset, "start");
  EXPECT_EQ(to_yaml(load_config_text(to_yaml(c), "resolved.yaml")), to_yaml(c));
  EXPECT_EQ(load_config_text(replace(file_case, ", dataset: start", ""), "case.yaml").initial.dataset, "u");
  // The input file is part of the case.
  EXPECT_NE(config_hash(c), config_hash(load_config_text(replace(file_case, "u0.h5", "u1.h5"), "case.yaml")));
  expect_error(replace(good, "{type: sine, modes: [1, 1]}", "{type: file}"), ExitCode::invalid_value,
               {"'initial.path'", "required"});
  expect_error(replace(good, "{type: sine, modes: [1, 1]}", "{type: sine, path: u0.h5}"), ExitCode::invalid_value,
               {"'initial.path'", "only to 'type: file'"});
}

}  // namespace
}  // namespace heatwave
