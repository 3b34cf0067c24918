// The HDF5 writer on its own, run under mpirun -n 2 in both builds: parallel
// HDF5 (collective writes) in heatwave_tests, serial HDF5 (ranks in turn) in
// heatwave_hdf5_serial_tests. Each rank's block must land in its place.
// UnitTraces: receivers files written in place, and a failed write that
// loses nothing written before (one process).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "io/collective.hpp"
#include "io/hdf5.hpp"

namespace heatwave {
namespace {

TEST(MpiHdf5, BlocksOfEveryRankLandInTheGlobalArray) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // A [5, 4*size, 3] array split along its middle axis; value = global linear index.
  const std::uint64_t nz = 5, ny = 4 * static_cast<std::uint64_t>(size), nx = 3;
  const hdf5::Block block{{nz, ny, nx}, {0, 4 * static_cast<std::uint64_t>(rank), 0}, {nz, 4, nx}};
  std::vector<double> mine;
  for (std::uint64_t z = 0; z < nz; ++z)
    for (std::uint64_t y = block.offset[1]; y < block.offset[1] + 4; ++y)
      for (std::uint64_t x = 0; x < nx; ++x) mine.push_back(static_cast<double>((z * ny + y) * nx + x));
  std::vector<double> twice(mine);
  for (double& v : twice) v *= 2;
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) /
       (std::string("heatwave_blocks_") + (hdf5::collective_writes() ? "collective" : "in_turn") + ".h5"))
          .string();
  hdf5::write_fields<double>(
      path, MPI_COMM_WORLD, block,
      {{"step", 7LL}, {"label", std::string("blocks")}, {"points", std::vector<long long>{3, 4, 5}}},
      {{"u", mine.data()}, {"u_previous", twice.data()}});
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  const hdf5::Reader reader(path);  // every rank reads the whole array
  const hdf5::Block whole{{nz, ny, nx}, {0, 0, 0}, {nz, ny, nx}};
  std::vector<double> u(nz * ny * nx), previous(u.size());
  reader.read("u", whole, u.data());
  reader.read("u_previous", whole, previous.data());
  for (std::size_t i = 0; i < u.size(); ++i) {
    ASSERT_EQ(u[i], static_cast<double>(i)) << "at " << i;
    ASSERT_EQ(previous[i], 2.0 * static_cast<double>(i)) << "at " << i;
  }
  EXPECT_EQ(reader.attribute("step"), hdf5::AttributeValue(7LL));
  EXPECT_EQ(reader.attribute("label"), hdf5::AttributeValue(std::string("blocks")));
  EXPECT_EQ(reader.attribute("points"), hdf5::AttributeValue(std::vector<long long>{3, 4, 5}));
  EXPECT_EQ(reader.dataset_names(), (std::vector<std::string>{"u", "u_previous"}));
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

// A receivers file of `receivers` x `capacity` in a fresh directory, and samples to append.
struct TraceCase {
  std::string path;
  std::size_t receivers = 64;
  std::vector<double> positions;
  TraceCase(const std::string& name, std::uint64_t capacity) {
    const auto dir = std::filesystem::temp_directory_path() / ("heatwave_traces_" + name);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    path = (dir / "r.h5").string();
    for (std::size_t r = 0; r < receivers; ++r) positions.insert(positions.end(), {0.01 * r, 0.5});
    hdf5::create_traces(path, positions, receivers, 2, capacity, {{"every", 1LL}, {"field", std::string("u")}});
  }
  // Samples first to first + count: [sample][receiver], value = step + receiver / 1000.
  void append(hdf5::TraceWriter& writer, long long first, long long count) const {
    std::vector<double> values, times;
    std::vector<long long> steps;
    for (long long s = first; s < first + count; ++s) {
      for (std::size_t r = 0; r < receivers; ++r) values.push_back(s + r / 1000.0);
      times.push_back(0.5 * s), steps.push_back(s);
    }
    writer.append(values, times, steps);
  }
  void expect_samples(long long count) const {
    const hdf5::Traces t = hdf5::read_traces(path);
    ASSERT_EQ(t.samples, static_cast<std::size_t>(count));
    ASSERT_EQ(t.receivers, receivers);
    EXPECT_EQ(t.positions, positions);
    for (long long s = 0; s < count; ++s) {
      EXPECT_EQ(t.step[s], s);
      EXPECT_EQ(t.time[s], 0.5 * s);
      for (std::size_t r = 0; r < receivers; ++r) ASSERT_EQ(t.traces[s * receivers + r], s + r / 1000.0);
    }
  }
};

TEST(UnitTraces, AppendsInPlaceAndTheFileIsTheData) {
  const TraceCase c("append", 2000);
  hdf5::TraceWriter writer(c.path);
  EXPECT_EQ(writer.capacity(), 2000u);
  c.append(writer, 0, 4);
  c.append(writer, 4, 300);
  c.expect_samples(304);
  // Traces, times, steps, positions and the count, plus a few KiB of HDF5's own.
  const auto size = std::filesystem::file_size(c.path);
  const std::uint64_t data = 8 * (2000 * (c.receivers + 2) + c.receivers * 2 + 1);
  EXPECT_GE(size, data);
  EXPECT_LT(size, data + 16384);
  hdf5::TraceWriter(c.path).truncate(100);
  c.expect_samples(100);
  EXPECT_THROW(c.append(writer, 304, 1800), Error);  // past the room for 2000
}

TEST(UnitTraces, AFailedWriteKeepsEverySampleWrittenBefore) {
  const TraceCase c("efbig", 2000);
  hdf5::TraceWriter writer(c.path);
  c.append(writer, 0, 10);
  // A file-size limit below where the next samples go: their write fails with EFBIG.
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  rlimit limit = old;
  limit.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  std::string message;
  try {
    c.append(writer, 10, 10);
  } catch (const Error& e) {
    message = e.what();
    EXPECT_EQ(e.code(), ExitCode::io_error);
  }
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  EXPECT_NE(message.find("File too large"), std::string::npos) << message;
  EXPECT_NE(message.find("keeps its 10 samples"), std::string::npos) << message;
  c.expect_samples(10);  // the file opens, and holds the first 10 as written
  hdf5::TraceWriter again(c.path);
  c.append(again, 10, 5);  // and goes on from there
  c.expect_samples(15);
}

}  // namespace
}  // namespace heatwave
