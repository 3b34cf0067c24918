// Checkpoints and restarts: bitwise identical continuation (heat and wave, 2D
// and 3D, media and sources from files), refusal of incompatible and damaged
// checkpoints and of changed media files, initial fields read from HDF5, and
// (under mpirun -n 2) restarts on another rank count.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <variant>

#include "io/collective.hpp"
#include "io/errors.hpp"
#include "io/hdf5.hpp"
#include "support.hpp"

namespace heatwave {
namespace {

namespace fs = std::filesystem;

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// A fresh directory for this test, the same path on every rank.
std::string fresh_dir(const std::string& name) {
  const std::string dir = (fs::path(::testing::TempDir()) / ("heatwave_" + name)).string();
  if (world_rank() == 0) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  return dir;
}

// Random fields (every bit matters), a Dirichlet value, a periodic axis and
// deep halos: everything a restart could get wrong.
std::string restart_case(const std::string& equation, int dims, const std::string& dir,
                         const char* precision = "float64", const std::string& points = "") {
  const std::string grid = !points.empty() ? points : dims == 2 ? "[23, 17]" : "[13, 11, 9]";
  std::string yaml =
      "equation: " + equation + "\nprecision: " + precision + "\ngrid: {points: " + grid +
      "}\ntime: {dt: auto, steps: 40}\nboundary: {default: {type: dirichlet, value: 0.25}, x_low: periodic, "
      "x_high: periodic}\ninitial: {type: random, seed: 5}\nbackend: host\nparallel: {exchange_every: 2}\n"
      "checkpoint: {dir: " +
      dir + ", keep: 2}\n";
  if (equation == "wave") yaml += "velocity: {type: random, seed: 9, amplitude: 0.5}\n";
  return yaml;
}

std::vector<Level> levels_of(const Problem& p) {
  if (p.levels() == 2) return {Level::current, Level::previous};
  return {Level::current};
}

using test::differing_values;

// N steps straight vs N/2, checkpoint, restart in a new Simulation, N/2.
template <int D, class Real>
void check_bitwise_restart(const std::string& equation) {
  const char* precision = std::is_same_v<Real, float> ? "float32" : "float64";
  const std::string dir = fresh_dir("restart_" + equation + std::to_string(D) + precision);
  const Config c = test::config_from(restart_case(equation, D, dir, precision));
  const Problem p = Problem::from(c);
  const long n = p.steps;
  Simulation<D, Real> straight(c), first(c);
  straight.advance(n);
  first.advance(n / 2);
  const std::string path = first.write_checkpoint();
  EXPECT_EQ(path, (fs::path(dir) / "checkpoint_000000020.h5").string());
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  Simulation<D, Real> second(c);
  EXPECT_EQ(second.restart("latest"), path);
  EXPECT_EQ(second.step(), n / 2);
  second.advance(n - n / 2);
  Simulation<D, Real> initial(c);
  for (Level level : levels_of(p)) {
    const auto expected = straight.gather(level);
    EXPECT_EQ(differing_values(expected, second.gather(level)), 0) << equation << " " << D << "D level " << int(level);
    EXPECT_GT(differing_values(expected, initial.gather(level)), static_cast<long>(expected.size() / 2))
        << "the run must change the field for the comparison to mean anything";
  }
}

TEST(IntegrationRestart, HeatTwoDimensionsIsBitwiseIdentical) { check_bitwise_restart<2, double>("heat"); }
TEST(IntegrationRestart, HeatThreeDimensionsIsBitwiseIdentical) { check_bitwise_restart<3, double>("heat"); }
TEST(IntegrationRestart, WaveTwoDimensionsIsBitwiseIdentical) { check_bitwise_restart<2, double>("wave"); }
TEST(IntegrationRestart, WaveThreeDimensionsIsBitwiseIdentical) { check_bitwise_restart<3, double>("wave"); }
TEST(IntegrationRestart, WaveFloat32IsBitwiseIdentical) { check_bitwise_restart<2, float>("wave"); }

// The error a restart of `yaml` from `checkpoint` raises.
template <int D, class Real>
Error restart_failure(const std::string& yaml, const std::string& checkpoint) {
  try {
    Simulation<D, Real> sim(test::config_from(yaml));
    sim.restart(checkpoint);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "restart from " << checkpoint << " was accepted";
  return Error(ExitCode::ok, "");
}

void expect_message(const Error& e, ExitCode code, std::initializer_list<std::string> fragments) {
  EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(code)) << e.what();
  for (const auto& f : fragments)
    EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << "'" << f << "' not in: " << e.what();
}

std::string heat_checkpoint(const std::string& dir) {
  Simulation<2, double> sim(test::config_from(restart_case("heat", 2, dir)));
  sim.advance(4);
  return sim.write_checkpoint();
}

TEST(IntegrationRestart, IncompatibleConfigIsRefusedNamingTheSetting) {
  const std::string dir = fresh_dir("incompatible");
  const std::string path = heat_checkpoint(dir);
  expect_message(restart_failure<2, double>(restart_case("heat", 2, dir, "float64", "[23, 18]"), path),
                 ExitCode::incompatible_checkpoint,
                 {path, "'grid.points' is [23, 17] in the checkpoint but [23, 18] in the config"});
  expect_message(restart_failure<2, double>(restart_case("wave", 2, dir), path), ExitCode::incompatible_checkpoint,
                 {"'equation' is heat in the checkpoint but wave in the config"});
  expect_message(restart_failure<2, float>(restart_case("heat", 2, dir, "float32"), path),
                 ExitCode::incompatible_checkpoint,
                 {"'precision' is float64 in the checkpoint but float32 in the config"});
  expect_message(restart_failure<3, double>(restart_case("heat", 3, dir), path), ExitCode::incompatible_checkpoint,
                 {"'dims' is 2 in the checkpoint but 3 in the config"});
  expect_message(restart_failure<2, double>(restart_case("heat", 2, dir) + "stencil: {radius: 2}\n", path),
                 ExitCode::incompatible_checkpoint, {"'stencil.radius' is 1 in the checkpoint but 2 in the config"});
  expect_message(restart_failure<2, double>(restart_case("heat", 2, dir + "/none"), "latest"), ExitCode::file_not_found,
                 {"no complete checkpoint", dir + "/none"});
}

TEST(IntegrationRestart, TruncatedFileIsRefused) {
  const std::string dir = fresh_dir("truncated");
  const std::string path = heat_checkpoint(dir);
  fs::resize_file(path, fs::file_size(path) / 2);
  expect_message(restart_failure<2, double>(restart_case("heat", 2, dir), path), ExitCode::corrupt_file,
                 {"H5Fopen", path});
}

TEST(IntegrationRestart, FlippedBytesInADatasetAreRefused) {
  const std::string dir = fresh_dir("flipped");
  const std::string path = heat_checkpoint(dir);
  // Where the data of u's (single) chunk lies in the file.
  haddr_t address = 0;
  hsize_t bytes = 0;
  {
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    const hid_t dataset = H5Dopen2(file, "u", H5P_DEFAULT);
    ASSERT_GE(dataset, 0);
    const hsize_t origin[2] = {0, 0};
    unsigned mask = 0;
    ASSERT_GE(H5Dget_chunk_info_by_coord(dataset, origin, &mask, &address, &bytes), 0);
    ASSERT_GE(H5Dclose(dataset), 0);
    ASSERT_GE(H5Fclose(file), 0);
  }
  ASSERT_EQ(bytes, 23u * 17u * 8u + 4u) << "one chunk: the field and its Fletcher32 checksum";
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(address + bytes / 2));
  char pair[2];
  f.read(pair, 2);
  pair[0] = static_cast<char>(~pair[0]), pair[1] = static_cast<char>(pair[1] ^ 0x10);
  f.seekp(static_cast<std::streamoff>(address + bytes / 2));
  f.write(pair, 2);
  f.close();
  expect_message(restart_failure<2, double>(restart_case("heat", 2, dir), path), ExitCode::corrupt_file,
                 {"H5Dread failed on " + path + ", 'u'", "Fletcher32"});
}

// Media and sources read from files: alpha and q on the restart case's grid
// (dataset shape [17, 23]), written by rank 0; values exact in float32.
std::vector<double> media_alpha() {
  std::vector<double> v(17 * 23);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.5 + 0.125 * static_cast<double>(i % 7);
  return v;
}
std::vector<double> media_q() {
  std::vector<double> v(17 * 23);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.25 * static_cast<double>(i % 11) - 1.0;
  return v;
}

template <class Real = double>
void write_media_file(const std::string& path, const std::string& dataset, const std::vector<double>& values) {
  if (world_rank() == 0) {
    const std::vector<Real> data(values.begin(), values.end());
    hdf5::write_fields<Real>(path, MPI_COMM_SELF, {{17, 23}, {0, 0}, {17, 23}}, {}, {{dataset, data.data()}});
  }
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

std::string media_case(const std::string& dir) {
  write_media_file(dir + "/alpha.h5", "conductivity", media_alpha());
  write_media_file(dir + "/q.h5", "heating", media_q());
  return restart_case("heat", 2, dir) + "material: {alpha: {type: file, path: " + dir +
         "/alpha.h5, dataset: conductivity}}\nsources: [{type: field, path: " + dir +
         "/q.h5, dataset: heating, time: {type: sine, frequency: 20}}]\n";
}

// A heat run whose alpha and source come from files continues bit for bit,
// and the checkpoint records the files' content hashes.
TEST(IntegrationRestart, MediaFromFilesAreBitwiseIdentical) {
  const std::string dir = fresh_dir("media_restart");
  const Config c = test::config_from(media_case(dir));
  const long n = Problem::from(c).steps;
  Simulation<2, double> straight(c), first(c);
  straight.advance(n);
  first.advance(n / 2);
  const std::string path = first.write_checkpoint();
  const auto media = hdf5::Reader(path).attribute("media_hashes");
  ASSERT_TRUE(std::holds_alternative<std::string>(media));
  for (const std::string& line :
       {"material.alpha " + dir + "/alpha.h5#conductivity ", "sources[0] " + dir + "/q.h5#heating "})
    EXPECT_NE(std::get<std::string>(media).find(line), std::string::npos) << line << " not in:\n"
                                                                          << std::get<std::string>(media);
  // The same values written again (as float32: other bytes) are not a change.
  write_media_file<float>(dir + "/alpha.h5", "conductivity", media_alpha());
  Simulation<2, double> second(c);
  EXPECT_EQ(second.restart(path), path);
  second.advance(n - n / 2);
  const auto expected = straight.gather(Level::current);
  EXPECT_EQ(differing_values(expected, second.gather(Level::current)), 0);
  const Config constant = test::config_from(restart_case("heat", 2, dir));
  EXPECT_GT(differing_values(expected, test::run_field<2, double>(constant)), static_cast<long>(expected.size() / 2))
      << "the media and the source must change the answer for the comparison to mean anything";
}

// One value changed in a medium's or a source's file since the checkpoint:
// the restart is refused naming the key, the file and the dataset; so is a
// checkpoint that records no hashes (written before they were recorded).
TEST(IntegrationRestart, ChangedMediaFilesAreRefused) {
  const std::string dir = fresh_dir("media_changed");
  const std::string yaml = media_case(dir);
  std::string path;
  {
    Simulation<2, double> sim(test::config_from(yaml));
    sim.advance(4);
    path = sim.write_checkpoint();
  }
  std::vector<double> alpha = media_alpha();
  alpha[100] += 0.125;
  write_media_file(dir + "/alpha.h5", "conductivity", alpha);
  expect_message(restart_failure<2, double>(yaml, path), ExitCode::incompatible_checkpoint,
                 {path, "'material.alpha' = " + dir + "/alpha.h5, dataset 'conductivity'", "other values"});
  write_media_file(dir + "/alpha.h5", "conductivity", media_alpha());
  std::vector<double> q = media_q();
  q[0] = 2.0;
  write_media_file(dir + "/q.h5", "heating", q);
  expect_message(restart_failure<2, double>(yaml, path), ExitCode::incompatible_checkpoint,
                 {path, "'sources[0]' = " + dir + "/q.h5, dataset 'heating'", "other values"});
  write_media_file(dir + "/q.h5", "heating", media_q());
  Simulation<2, double> restored(test::config_from(yaml));
  EXPECT_EQ(restored.restart(path), path) << "the files are back as they were";

  const std::string plain = heat_checkpoint(dir);  // no media files: no hashes, as before they were recorded
  EXPECT_FALSE(hdf5::Reader(plain).has_attribute("media_hashes"));
  expect_message(restart_failure<2, double>(yaml, plain), ExitCode::incompatible_checkpoint,
                 {plain, "records no content hash", "'material.alpha' = " + dir + "/alpha.h5, dataset 'conductivity'"});
}

// A known field written to HDF5, then read as the initial condition.
std::vector<double> ramp(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 0.001 * static_cast<double>(i) - 0.3;
  return v;
}

TEST(IntegrationInitialFile, ReadsTheFieldAndRejectsAWrongShape) {
  const std::string dir = fresh_dir("initial_file");
  const std::string file = dir + "/u0.h5";
  const std::vector<double> u0 = ramp(7 * 9 * 11);
  // x fastest: the dataset shape is [z, y, x] = [7, 9, 11].
  hdf5::write_fields<double>(file, MPI_COMM_SELF, {{7, 9, 11}, {0, 0, 0}, {7, 9, 11}}, {}, {{"start", u0.data()}});
  const std::string yaml =
      "equation: wave\ngrid: {points: [11, 9, 7]}\ntime: {dt: auto, steps: 4}\nboundary: neumann\n"
      "initial: {type: file, path: " +
      file + ", dataset: start}\nbackend: host\n";
  Simulation<3, double> sim(test::config_from(yaml));
  EXPECT_EQ(differing_values(sim.gather(Level::current), u0), 0);

  std::string wrong = yaml;
  wrong.replace(wrong.find("[11, 9, 7]"), 10, "[9, 11, 7]");
  try {
    Simulation<3, double> bad(test::config_from(wrong));
    ADD_FAILURE() << "a wrong shape was accepted";
  } catch (const Error& e) {
    expect_message(e, ExitCode::invalid_value, {"'initial.path'", file, "'start'", "shape [7, 9, 11]", "needs [7, 11, 9]"});
  }
}

// The first `ranks` ranks of MPI_COMM_WORLD (MPI_COMM_NULL on the others).
MPI_Comm first_ranks(int ranks) {
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(MPI_COMM_WORLD, world_rank() < ranks ? 0 : MPI_UNDEFINED, world_rank(), &comm),
            "MPI_Comm_split");
  return comm;
}

// A checkpoint written halfway on `writers` ranks continues on `readers`
// ranks, bit for bit equal to one rank's uninterrupted run.
void check_restart_across(const std::string& equation, int writers, int readers) {
  const std::string dir =
      fresh_dir("mpi_restart_" + equation + std::to_string(writers) + "_" + std::to_string(readers));
  const Config c = test::config_from(restart_case(equation, 2, dir));
  const Problem p = Problem::from(c);
  std::vector<std::vector<double>> expected;
  if (world_rank() == 0) {
    Simulation<2, double> straight(c, MPI_COMM_SELF);
    straight.advance(p.steps);
    for (Level level : levels_of(p)) expected.push_back(straight.gather(level));
  }
  if (MPI_Comm comm = first_ranks(writers); comm != MPI_COMM_NULL) {
    {
      Simulation<2, double> first(c, comm);
      first.advance(p.steps / 2);
      first.write_checkpoint();
    }
    check_mpi(MPI_Comm_free(&comm), "MPI_Comm_free");
  }
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  if (MPI_Comm comm = first_ranks(readers); comm != MPI_COMM_NULL) {
    {
      Simulation<2, double> second(c, comm);
      second.restart("latest");
      EXPECT_EQ(second.step(), p.steps / 2);
      second.advance(p.steps - second.step());
      for (Level level : levels_of(p)) {
        const auto u = second.gather(level);
        if (world_rank() == 0) {
          EXPECT_EQ(differing_values(expected[static_cast<std::size_t>(level)], u), 0)
              << equation << " " << writers << " -> " << readers << " ranks";
        }
      }
    }
    check_mpi(MPI_Comm_free(&comm), "MPI_Comm_free");
  }
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

// Under mpirun -n 2: 1 -> 2 and 2 -> 1 ranks; under mpirun -n 4: 3 -> 4 and 1 -> 3.
TEST(MpiRestart, ContinuesOnAnotherRankCount) {
  int size = 1;
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  if (size != 2 && size != 4) GTEST_SKIP() << "needs mpirun -n 2 or -n 4";
  const std::vector<std::pair<int, int>> moves =
      size == 2 ? std::vector<std::pair<int, int>>{{1, 2}, {2, 1}} : std::vector<std::pair<int, int>>{{3, 4}, {1, 3}};
  for (const std::string equation : {"heat", "wave"})
    for (const auto& [writers, readers] : moves) check_restart_across(equation, writers, readers);
}

}  // namespace
}  // namespace heatwave
