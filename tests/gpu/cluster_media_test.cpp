// The cuda-cluster backend against the host backend with what varies: the
// heat's alpha and the waves' c and gamma (layers, files, absorbing faces),
// sources added and receivers recorded inside the pipeline, in every family
// that takes them; bitwise equal fields and samples.
#include "build_info.hpp"
#include "cluster_support.hpp"
#include "kernels/cuda/cuda_backend.hpp"
#include "solver/receivers.hpp"

namespace heatwave {
namespace {

using namespace test;

// The heat's alpha varying in 2D: layers across x (pairs that differ along
// a row) and across y (a row's points share theirs), from the table by the
// layers' coordinate; a file of two materials (the pair tiles loaded with
// the field tile); streaming, clustered and resident plans, every boundary set.
TEST(GpuCluster, HeatMedia2D) {
  for (const char* axis : {"x", "y"}) {
    const std::string media = alpha_layers(axis);
    for (const char* plan : {static_cast<const char*>(nullptr), "1,1,32,8,0,4,2", "1,2,32,8,0,3,1", "1,4,16,4,0,1,1",
                             "1,1,32,16,0,8,8", "resident,24,12,2", "resident,60,24,4"})
      for (int r : radii) {
        check_cluster<float>("heat", r, "[37, 29]", 7, 3, plan, media);
        check_cluster<double>("heat", r, "[300, 257]", 5, 2, plan, media);
      }
  }
  const std::string small = alpha_file({37, 29}), large = alpha_file({300, 257});
  for (const char* plan : {static_cast<const char*>(nullptr), "1,2,32,8,0,3,1", "resident,24,12,2"})
    for (int r : radii) {
      check_cluster<float>("heat", r, "[37, 29]", 7, 3, plan, small);
      check_cluster<double>("heat", r, "[300, 257]", 5, 2, plan, large);
    }
}

// The heat's alpha varying in 3D (Form::flux: the pair coefficients at a
// point from the tables along the layers' axis, or a file's alpha by their
// harmonic means): layers along x (pairs that differ within a pack), y and z
// (a pack's points share theirs: the steady path), and a file of two
// materials with a rough interface; one block and clusters of blocks, deep
// pipelines, every boundary set.
TEST(GpuCluster, HeatMedia3D) {
  const char* media_plans[] = {nullptr, "1,1,8,8,8,3,1", "2,2,8,8,8,3,1", "2,1,16,8,5,2,1", "1,1,8,16,4,1,1"};
  for (const char* axis : {"x", "y", "z"}) {
    const std::string media = alpha_layers(axis);
    for (const char* plan : media_plans)
      for (int r : radii) {
        check_cluster<float, 3>("heat", r, "[19, 13, 11]", 7, 2, plan, media);
        check_cluster<double, 3>("heat", r, "[37, 21, 26]", 5, 2, plan, media);
      }
    check_cluster<float, 3>("heat", 1, "[23, 18, 30]", 7, 2, "1,1,16,12,9,4,1", media);  // k = 4
  }
  const std::string small = alpha_file({19, 13, 11}), large = alpha_file({37, 21, 26});
  for (const char* plan : media_plans)
    for (int r : radii) {
      check_cluster<float, 3>("heat", r, "[19, 13, 11]", 7, 2, plan, small);
      check_cluster<double, 3>("heat", r, "[37, 21, 26]", 5, 2, plan, large);
    }
  // (The deep family's media: DeepMediaAndEvents3D.)
}

// The waves' coefficients varying in space (an update made at each point:
// Form::point): c in layers across x (updates that differ along a row) and
// across y, the damped wave's gamma in layers too, and absorbing faces
// (profiles along x and y, calm packs between them); streaming, clustered
// and resident plans.
TEST(GpuCluster, WaveMedia2D) {
  const char* media_plans[] = {nullptr, "1,1,32,8,0,4,2", "1,2,32,8,0,3,1", "1,4,16,4,0,1,1", "1,1,32,16,0,8,8",
                               "resident,24,12,2", "resident,60,24,4"};
  for (const char* axis : {"x", "y"}) {
    const std::string c = wave_layers(axis, false), damped = wave_layers(axis, true);
    for (const char* plan : media_plans)
      for (int r : radii) {
        check_cluster<float>("wave", r, "[37, 29]", 7, 3, plan, c);
        check_cluster<double>("wave", r, "[300, 257]", 5, 2, plan, c);
        check_cluster<double>("damped_wave", r, "[37, 29]", 7, 3, plan, damped);
      }
  }
  const std::vector<std::string> absorbing = {
      "{default: {type: absorbing, width: 6}, y_high: {type: neumann, value: 0.0}}",
      "{default: periodic, y_low: {type: absorbing, width: 5}, y_high: {type: absorbing, width: 7}}",
  };
  for (const char* plan : media_plans)
    for (int r : radii) {
      check_cluster<float>("wave", r, "[37, 29]", 7, 3, plan, "", absorbing);
      check_cluster<double>("damped_wave", r, "[300, 257]", 5, 2, plan, "", absorbing);
    }
}

// The waves' coefficients in 3D (Form::point: a thread's pack column, its
// updates plane by plane from the classes' table): c in layers along x
// (updates that differ within a pack) and along z, the damped wave's gamma
// in layers, and absorbing faces (profiles along x, y and z; the seismic
// shot's faces: a free surface at z_high); one block and clusters of blocks,
// deep pipelines; and more x classes than the table takes (each point's
// update made from the coefficient views).
TEST(GpuCluster, WaveMedia3D) {
  const char* media_plans[] = {nullptr, "1,1,8,8,8,3,1", "2,2,8,8,8,3,1", "2,1,16,8,5,2,1", "1,1,8,16,4,1,1"};
  for (const char* axis : {"x", "z"}) {
    const std::string c = wave_layers(axis, false), damped = wave_layers(axis, true);
    for (const char* plan : media_plans)
      for (int r : radii) {
        check_cluster<float, 3>("wave", r, "[19, 13, 11]", 7, 2, plan, c);
        check_cluster<double, 3>("damped_wave", r, "[37, 21, 26]", 5, 2, plan, damped);
      }
    check_cluster<float, 3>("wave", 1, "[23, 18, 30]", 7, 2, "1,1,16,12,9,4,1", c);  // k = 4
  }
  const std::vector<std::string> absorbing = {
      "{default: {type: absorbing, width: 3}, z_high: {type: neumann, value: 0.0}}",
      "{default: periodic, x_low: {type: absorbing, width: 5}, x_high: {type: absorbing, width: 3}}",
  };
  for (const char* plan : media_plans)
    for (int r : radii) {
      check_cluster<float, 3>("wave", r, "[19, 13, 11]", 7, 2, plan, "", absorbing);
      check_cluster<double, 3>("damped_wave", r, "[37, 21, 26]", 5, 2, plan, "", absorbing);
    }
  // More x classes than the table takes (a layer of c at nearly every x):
  // each point's update made from the coefficient views.
  std::string interfaces, values = "1.0";
  for (int i = 1; i < 280; ++i) {
    interfaces += fmt::format("{}{}", i > 1 ? ", " : "", (i + 0.5) / 300.0);
    values += fmt::format(", {}", 1.0 + 0.001 * i);
  }
  const std::string many = fmt::format(
      "material: {{c: {{type: layers, axis: x, interfaces: [{}], values: [{}]}}}}\n", interfaces, values);
  for (const char* plan : {"1,1,32,8,8,3,1", "2,1,32,8,8,2,1"}) {
    check_cluster<float, 3>("wave", 1, "[301, 9, 10]", 5, 2, plan, many);
    check_cluster<float, 3>("damped_wave", 2, "[301, 9, 10]", 5, 2, plan, many);
  }
  // (The deep family's media: DeepMediaAndEvents3D.)
}

TEST(GpuCluster, Sources) {
  for (const char* eq : {"heat", "wave", "damped_wave"})
    for (int r : radii) {
      for (const char* plan : {static_cast<const char*>(nullptr), "1,1,32,8,0,4,2", "1,2,32,8,0,3,1", "1,4,16,4,0,1,1",
                               "1,1,32,16,0,8,8", "resident,24,12,2"}) {
        check_cluster<float>(eq, r, "[37, 29]", 7, 3, plan, point_sources(eq, 2, "float32", r, "[37, 29]"));
        check_cluster<double>(eq, r, "[300, 257]", 5, 3, plan, point_sources(eq, 2, "float64", r, "[300, 257]"));
      }
      for (const char* plan : {static_cast<const char*>(nullptr), "1,1,8,8,8,3,1", "2,2,8,8,8,3,1", "2,1,16,8,5,2,1"}) {
        check_cluster<float, 3>(eq, r, "[19, 13, 11]", 7, 3, plan, point_sources(eq, 3, "float32", r, "[19, 13, 11]"));
        check_cluster<double, 3>(eq, r, "[37, 21, 26]", 5, 3, plan,
                                 point_sources(eq, 3, "float64", r, "[37, 21, 26]"));
      }
    }
  // The seismic shot's shape: layers, absorbing faces and a free surface, a Ricker source.
  const std::string shot =
      "material: {c: {type: layers, axis: z, interfaces: [0.5, 0.85], values: [3.0, 2.2, 1.5]}}\n" +
      point_sources("wave", 3, "float32", 1, "[40, 33, 28]");
  for (const char* plan :
       {static_cast<const char*>(nullptr), "1,1,16,12,9,4,1", "2,2,8,8,8,3,1"})
    check_cluster<float, 3>("wave", 1, "[40, 33, 28]", 8, 3, plan, shot,
                            {"{default: {type: absorbing, width: 6}, z_high: {type: neumann, value: 0.0}}"});
}

// `gpu` records `level` at `points` every `every` steps through 3 chunks of
// 7 steps (launches of up to its plan's k); each chunk's samples are the
// ones `reference` gathers between single steps, bit for bit.
template <int D, class Real>
void expect_recorded_as_gathered(const Problem& p, const LocalDomain<D>& domain, Backend<D, Real>& reference,
                                 Backend<D, Real>& gpu, const std::vector<Index<D>>& points, long every, Level level,
                                 const std::string& what, unsigned seed) {
  constexpr int steps = 7, chunks = 3;
  const std::size_t n = domain.layout.owned_box().size();
  test::start_from_same_random_fields<D, Real>(p, n, seed, {&reference, &gpu});
  ASSERT_TRUE(gpu.record_samples(level, points, every)) << what;
  std::vector<Real> expected, value(points.size());
  std::vector<long> expected_steps;
  for (int c = 0; c < chunks; ++c) {
    for (int m = 0; m < steps; ++m) {
      reference.advance(1);
      if (reference.step() % every) continue;
      reference.gather(level, points, value.data());
      expected.insert(expected.end(), value.begin(), value.end());
      expected_steps.push_back(reference.step());
    }
    gpu.advance(steps);
    std::vector<long> got_steps;
    std::vector<Real> got;
    gpu.take_samples(got_steps, got);
    EXPECT_EQ(got_steps, expected_steps) << what << " chunk " << c;
    ASSERT_EQ(got.size(), expected.size()) << what << " chunk " << c;
    long differ = 0;
    std::string first;
    for (std::size_t k = 0; k < got.size(); ++k) {
      if (std::memcmp(&got[k], &expected[k], sizeof(Real)) == 0) continue;
      if (differ++ == 0) {
        const Index<D>& i = points[k % points.size()];
        first = fmt::format(", first at step {} point ({}, {}, {}): {} here, {} on the cuda backend",
                            got_steps[k / points.size()], i[0], i[1], D == 3 ? i[D - 1] : 0, double(got[k]),
                            double(expected[k]));
      }
    }
    EXPECT_EQ(differ, 0) << what << " chunk " << c << ": " << differ << " of " << got.size() << " samples differ"
                         << first;
    expected.clear(), expected_steps.clear();
  }
}

// Receivers recorded inside the pipeline (Backend::record_samples): the
// cluster backend records a level at a set of points at every `every` steps
// as its launches make them; the values equal the cuda backend's, gathered
// step by step, bit for bit (the cuda backend: its fields are the host's,
// and it holds Dirichlet face points at g after every step, where the host
// sets them as it sweeps the next; the random v0 of these tests differs from
// g there). Points at faces, corners, tile edges and inside; u^n and
// u^{n-1}; every 1 and 3; chunks of 7 steps in launches of up to k.
template <class Real, int D>
void check_recorded(const char* eq, int radius, const std::string& grid, const char* plan, long every, Level level,
                    const std::string& extra, const std::string& boundary) {
  const PlanOverride override_plan(plan, radius);
  const char* precision = std::is_same_v<Real, float> ? "float32" : "float64";
  const std::string what = fmt::format("{} {}D {} r{} {} plan {} every {} level {}", eq, D, precision, radius, grid,
                                       override_plan.text(), every, int(level));
  if (!test::plan_built(override_plan.fields, D, radius, what)) return;
  const Problem p = test::gpu_case(eq, D, precision, radius, boundary, grid, "{type: constant, value: 0}", extra);
  Decomposition decomposition(p, {}, radius, MPI_COMM_SELF);
  const LocalDomain<D> domain = decomposition.template local_domain<D>();
  auto reference = cuda::make_cuda_backend<D, Real>(p, domain);  // the reference, one step a launch
  auto chosen = test::cluster_backend<D, Real>(p, domain);
  auto& gpu = chosen.backend;
  ASSERT_EQ(gpu->name(), "cuda-cluster") << what << ": " << chosen.reason;
  // Owned points: every corner, points next to faces, and a random spread.
  std::vector<Index<D>> points;
  std::mt19937 gen(7);
  for (int c = 0; c < (1 << D); ++c) {
    Index<D> i{};
    for (int a = 0; a < D; ++a) i[a] = (c >> a & 1) ? domain.layout.owned[a] - 1 : 0;
    points.push_back(i);
  }
  for (int k = 0; k < 60; ++k) {
    Index<D> i{};
    for (int a = 0; a < D; ++a) i[a] = static_cast<long>(gen() % domain.layout.owned[a]);
    if (k % 5 == 0) i[0] = 1;  // next to a face
    points.push_back(i);
  }
  expect_recorded_as_gathered<D, Real>(p, domain, *reference, *gpu, points, every, level, what, 17 + radius);
}

TEST(GpuCluster, RecordsReceivers) {
  auto shot = [](int dims) {
    return fmt::format(
        "material: {{c: {{type: layers, axis: y, interfaces: [0.5], values: [1.0, 0.6]}}}}\n"
        "sources: [{{type: point, position: {}, amplitude: 1.0, time: {{type: ricker, frequency: 3.0}}}}]\n",
        dims == 2 ? "[0.4, 0.33]" : "[0.4, 0.33, 0.5]");
  };
  const std::string faces = "{default: {type: absorbing, width: 4}, y_high: {type: neumann, value: 0.0}}";
  for (long every : {1L, 3L})
    for (Level level : {Level::current, Level::previous}) {
      for (const char* plan : {"1,1,32,8,0,4,2", "1,2,32,8,0,3,1", "1,1,32,16,0,8,8", "resident,24,12,2"}) {
        check_recorded<float, 2>("wave", 1, "[37, 29]", plan, every, level, shot(2), faces);
        check_recorded<double, 2>("damped_wave", 2, "[300, 257]", plan, every, level, shot(2), "dirichlet");
      }
      for (const char* plan : {"1,1,8,8,8,3,1", "2,2,8,8,8,3,1", "1,1,16,12,9,4,1", "2,1,16,8,5,2,1"}) {
        check_recorded<float, 3>("wave", 1, "[23, 18, 30]", plan, every, level, shot(3), faces);
        check_recorded<double, 3>("wave", 1, "[19, 13, 11]", plan, every, level, "", "periodic");
      }
    }
  for (const char* plan : {"1,1,32,8,0,4,2", "resident,24,12,2"})
    check_recorded<float, 2>("heat", 2, "[37, 29]", plan, 2, Level::current, "", "neumann");
  check_recorded<float, 3>("heat", 2, "[19, 13, 11]", "2,1,16,8,5,2,1", 2, Level::current, "", "neumann");
  // Radius 3 and 4: deeper halos and rings around the same points.
  for (int r : {3, 4}) {
    for (const char* plan : {"1,2,32,8,0,3,1", "resident,24,12,2"})
      check_recorded<double, 2>("wave", r, "[37, 29]", plan, 3, Level::previous, shot(2), faces);
    for (const char* plan : {"1,1,16,12,9,2,1", "2,2,8,8,8,2,1"})
      check_recorded<float, 3>("damped_wave", r, "[23, 18, 30]", plan, 1, Level::current, shot(3), faces);
  }
}

// Receivers in the columns family's sweep (2D): its most levels (a chunk of
// 7 steps in launches of the compiled counts below), k 3 in short segments,
// one step a launch; alone and with point sources (the heat's alpha in
// layers); Dirichlet x faces (whose threads compute their columns, while
// every level holds g there), periodic and Neumann ones.
TEST(GpuCluster, ColumnsRecordReceivers) {
  const std::vector<std::string> faces = {test::boundary_sets[0], test::boundary_sets[3], test::boundary_sets[5]};
  for (int r : radii)
    for (const char* eq : {"heat", "wave", "damped_wave"}) {
      const bool heat = std::strcmp(eq, "heat") == 0;
      for (const bool fp64 : {false, true}) {
        // The heat in layers (the flux form), the waves uniform: the widest block, the most levels.
        const cuda::ColumnsShape shape = cuda::columns_shape(r, heat ? 1 : 2, fp64, heat);
        const int most = shape.max_levels;
        const std::string plans[] = {fmt::format("columns,{},0,{}", shape.threads, most),
                                     fmt::format("columns,64,9,{}", std::min(3, most)), "columns,96,0,1"};
        const std::string grid = fp64 ? "[300, 257]" : "[37, 29]";
        // Receivers alone first: only their launches run the kernels with events.
        const std::string medium = heat ? alpha_layers("y") : std::string();
        const std::string extras[] = {medium, medium + point_sources(eq, 2, fp64 ? "float64" : "float32", r, grid)};
        for (const std::string& plan : plans)
          for (const std::string& extra : extras)
            for (const std::string& bc : faces)
              for (const auto& [every, level] :
                   heat ? std::vector<std::pair<long, Level>>{{2, Level::current}}
                        : std::vector<std::pair<long, Level>>{{1, Level::current}, {3, Level::previous}}) {
                if (fp64)
                  check_recorded<double, 2>(eq, r, grid, plan.c_str(), every, level, extra, bc);
                else
                  check_recorded<float, 2>(eq, r, grid, plan.c_str(), every, level, extra, bc);
              }
      }
    }
}

// The autotune times its plans recording the run's receivers (their cost
// differs between plans; a shot's run took a plan timed without them), and
// the cache keeps that plan apart from the one tuned without receivers.
// Nothing of the timings' recording stays: the run's samples, recorded after
// the autotune, are the cuda backend's, bit for bit.
TEST(GpuCluster, AutotuneTimesTheRunsReceivers) {
  const PlanOverride no_override(nullptr);
  const std::string cache = std::string(std::getenv("HEATWAVE_CACHE_DIR")) + "/plans-receivers-test.json";
  std::remove(cache.c_str());
  const std::string shot =
      "equation: wave\nprecision: float32\ngrid: {points: [2048, 1025], length: [2.0, 1.0]}\n"
      "time: {dt: auto, steps: 1}\ninitial: {type: random}\n"
      "material: {c: {type: layers, axis: y, interfaces: [0.5], values: [1.0, 0.6]}}\n"
      "boundary: {default: {type: absorbing, width: 8}, y_high: {type: neumann, value: 0.0}}\n"
      "sources: [{type: point, position: [1.0, 0.9], amplitude: 1.0, time: {type: ricker, frequency: 6.0}}]\n"
      "cluster: {cache: " +
      cache + "}\n";
  const std::string receivers =
      "receivers: {every: 3, file: unused.h5, lines: [{from: [0.05, 0.95], to: [1.95, 0.95], count: 19}]}\n";
  struct Made {
    Problem p;
    RunSettings run;
    ChosenBackend<2, float> chosen;
  };
  auto make = [&](const std::string& more) {
    const Config config = load_config_text(shot + more, "<gpu test>");
    Made m{Problem::from(config), config.run, {}};
    m.run.backend = BackendKind::cuda_cluster;
    Decomposition decomposition(m.p, {}, 1, MPI_COMM_SELF);
    m.chosen = make_backend<2, float>(m.p, m.run, decomposition.local_domain<2>(), MPI_COMM_SELF);
    EXPECT_EQ(m.chosen.backend->name(), "cuda-cluster") << m.chosen.reason;
    return m;
  };
  Made tuned = make(receivers);
  const std::string& reason = tuned.chosen.reason;
  // 19 receivers, 4 points each, all on this rank.
  const std::string says = "timed recording the run's receivers: 76 points every 3 steps, ";
  const std::size_t at = reason.find(says);
  ASSERT_NE(at, std::string::npos) << reason;
  EXPECT_GT(std::atol(reason.c_str() + at + says.size()), 0) << reason;  // the samples the timings took
  EXPECT_NE(make(receivers).chosen.reason.find("cached in " + cache), std::string::npos);
  // Without receivers: another key, tuned again.
  const std::string plain = make("").chosen.reason;
  EXPECT_NE(plain.find("autotuned: fastest of"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("timed recording"), std::string::npos) << plain;

  Decomposition decomposition(tuned.p, {}, 1, MPI_COMM_SELF);
  const LocalDomain<2> domain = decomposition.local_domain<2>();
  const SampleRequest<2> request = receiver_request(tuned.run.receivers, tuned.p, domain);
  ASSERT_EQ(request.points.size(), 76u);
  auto reference = cuda::make_cuda_backend<2, float>(tuned.p, domain);
  expect_recorded_as_gathered<2, float>(tuned.p, domain, *reference, *tuned.chosen.backend, request.points,
                                        request.every, request.level, "after the autotune: " + reason, 5);
}

// The columns family with what varies: the heat's alpha in layers across x
// (a column's pairs) and across y (a row's), point sources (the general path
// in the iterations that reach their rows; near a corner, where their points
// wrap on periodic axes and x ghosts mirror them), and both; the most
// levels with a launch of one step after them, k 3 (launches of 2 and 1) in
// short segments, and one step a launch.
TEST(GpuCluster, ColumnsMediaAndSources2D) {
  for (int r : radii)
    for (const bool fp64 : {false, true})
      for (const char* eq : {"heat", "wave", "damped_wave"}) {
        const bool heat = std::strcmp(eq, "heat") == 0;
        const cuda::ColumnsShape shape = cuda::columns_shape(r, heat ? 1 : 2, fp64, false);  // (its sources' case)
        const int most = shape.max_levels;
        const std::string plans[] = {fmt::format("columns,{},0,{}", shape.threads, most),
                                     fmt::format("columns,64,9,{}", std::min(3, most)), "columns,96,0,1"};
        const char* precision = fp64 ? "float64" : "float32";
        const std::string grid = fp64 ? "[300, 257]" : "[37, 29]";
        std::vector<std::string> cases = {point_sources(eq, 2, precision, r, grid)};
        if (heat)
          for (const char* axis : {"x", "y"})
            cases.push_back(alpha_layers(axis)), cases.push_back(alpha_layers(axis) + cases[0]);
        for (const std::string& plan : plans)
          for (const std::string& extra : cases)
            if (fp64)
              check_cluster<double>(eq, r, grid, most + 1, 2, plan.c_str(), extra);
            else
              check_cluster<float>(eq, r, grid, most + 1, 3, plan.c_str(), extra);
      }
}

// The waves' media in the columns family (Form::point, each x class's
// updates by row): c in layers across x (a column's own update) and across y (a
// row's), the damped wave's gamma in layers too, and absorbing faces
// (profiles along x and y with a free surface; along y with x periodic),
// each alone and with point sources; the most levels with a launch of one
// step after them, k 3 in short segments, one step a launch. Then a shot
// (c in layers, a point source, absorbing faces) recorded by receivers in
// the sweep. (A file's c, which the family refuses: FallsBackWithAReason.)
TEST(GpuCluster, ColumnsWaveMedia2D) {
  const std::vector<std::string> absorbing = {
      "{default: {type: absorbing, width: 6}, y_high: {type: neumann, value: 0.0}}",
      "{default: periodic, y_low: {type: absorbing, width: 5}, y_high: {type: absorbing, width: 7}}",
  };
  const std::string shot =
      "material: {c: {type: layers, axis: y, interfaces: [0.5], values: [1.0, 0.6]}}\n"
      "sources: [{type: point, position: [0.4, 0.33], amplitude: 1.0, time: {type: ricker, frequency: 3.0}}]\n";
  for (int r : radii)
    for (const bool fp64 : {false, true})
      for (const char* eq : {"wave", "damped_wave"}) {
        const bool damped = std::strcmp(eq, "damped_wave") == 0;
        const cuda::ColumnsShape shape = cuda::columns_shape(r, 2, fp64, true);  // Form::point
        const int most = shape.max_levels;
        const std::string plans[] = {fmt::format("columns,{},0,{}", shape.threads, most),
                                     fmt::format("columns,64,9,{}", std::min(3, most)), "columns,96,0,1"};
        const char* precision = fp64 ? "float64" : "float32";
        const std::string grid = fp64 ? "[300, 257]" : "[37, 29]";
        const std::string sources = point_sources(eq, 2, precision, r, grid);
        auto check = [&](const std::string& plan, const std::string& extra, const std::vector<std::string>& faces) {
          if (fp64)
            check_cluster<double>(eq, r, grid, most + 1, 2, plan.c_str(), extra, faces);
          else
            check_cluster<float>(eq, r, grid, most + 1, 3, plan.c_str(), extra, faces);
        };
        for (const std::string& plan : plans) {
          check(plan, wave_layers("x", damped), test::boundary_sets);
          check(plan, wave_layers("y", damped) + sources, test::boundary_sets);
          check(plan, "", absorbing);
          check(plan, sources, absorbing);
        }
        for (const std::string& plan : {plans[0], plans[1]})
          for (const auto& [every, level] :
               std::vector<std::pair<long, Level>>{{1, Level::current}, {3, Level::previous}}) {
            if (fp64)
              check_recorded<double, 2>(eq, r, grid, plan.c_str(), every, level, shot, absorbing[0]);
            else
              check_recorded<float, 2>(eq, r, grid, plan.c_str(), every, level, shot, absorbing[0]);
          }
      }
}

// The deep family with media and events (issue 72), bitwise the host's (its
// receivers: the cuda backend's, gathered step by step): the waves' c in
// layers along x (a class a thread) and along z (a class a level), the
// damped wave's gamma, absorbing faces (profiles along every axis; the
// seismic shot's, with a free surface), point sources of the heat and the
// waves, the shot's shape, and receivers recorded in the sweep (u^n and
// u^{n-1}, every 1 and 3); at the compiled k and at 1, on grids that do not
// divide the tiles (the last tile moved back).
TEST(GpuCluster, DeepMediaAndEvents3D) {
  if (!build::cluster_3d_deep) GTEST_SKIP() << "this build leaves the deep family out (HEATWAVE_CLUSTER_3D_DEEP)";
  const cuda::DeepShape wave = cuda::deep_shape(1, false, 2), heat = cuda::deep_shape(1, false, 1);
  const std::string large = "[150, 70, 21]", small = "[66, 32, 9]";
  const std::vector<std::string> absorbing = {
      "{default: {type: absorbing, width: 3}, z_high: {type: neumann, value: 0.0}}",
      "{default: periodic, x_low: {type: absorbing, width: 5}, x_high: {type: absorbing, width: 3}}",
      "{default: dirichlet, y_low: {type: absorbing, width: 4}, y_high: {type: absorbing, width: 6}}",
  };
  const std::string shot =
      "material: {c: {type: layers, axis: z, interfaces: [0.5, 0.85], values: [3.0, 2.2, 1.5]}}\n" +
      point_sources("wave", 3, "float32", 1, large);
  const std::string shot_faces = "{default: {type: absorbing, width: 6}, z_high: {type: neumann, value: 0.0}}";
  for (int k : {wave.k, 1}) {
    const std::string plan = fmt::format("deep,{},{},{}", wave.tile_x, wave.tile_y, k);
    for (const char* axis : {"x", "z"}) {
      check_cluster<float, 3>("wave", 1, large, wave.k + 2, 1, plan.c_str(), wave_layers(axis, false));
      check_cluster<float, 3>("damped_wave", 1, small, 3, 2, plan.c_str(), wave_layers(axis, true));
    }
    check_cluster<float, 3>("wave", 1, large, wave.k + 2, 1, plan.c_str(), "", absorbing);
    check_cluster<float, 3>("damped_wave", 1, small, 3, 2, plan.c_str(), "", absorbing);
    for (const char* eq : {"wave", "damped_wave"})
      check_cluster<float, 3>(eq, 1, large, 7, 3, plan.c_str(), point_sources(eq, 3, "float32", 1, large));
    check_cluster<float, 3>("wave", 1, large, 8, 3, plan.c_str(), shot, {shot_faces});
    for (long every : {1L, 3L})
      for (Level level : {Level::current, Level::previous})
        check_recorded<float, 3>("wave", 1, large, plan.c_str(), every, level, shot, shot_faces);
    check_recorded<float, 3>("wave", 1, small, plan.c_str(), 3, Level::previous, "", "periodic");  // uniform
  }
  for (int k : {heat.k, 1}) {
    const std::string plan = fmt::format("deep,{},{},{}", heat.tile_x, heat.tile_y, k);
    check_cluster<float, 3>("heat", 1, large, 7, 3, plan.c_str(), point_sources("heat", 3, "float32", 1, large));
    check_cluster<float, 3>("heat", 1, small, 3, 2, plan.c_str(), point_sources("heat", 3, "float32", 1, small));
    check_recorded<float, 3>("heat", 1, large, plan.c_str(), 2, Level::current,
                             point_sources("heat", 3, "float32", 1, large), "neumann");
  }
}

}  // namespace
}  // namespace heatwave
