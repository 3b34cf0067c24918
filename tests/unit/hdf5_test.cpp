// The HDF5 writer on its own, run under mpirun -n 2 in both builds: parallel
// HDF5 (collective writes) in heatwave_tests, serial HDF5 (ranks in turn) in
// heatwave_hdf5_serial_tests. Each rank's block must land in its place.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace heatwave
