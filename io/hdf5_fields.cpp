// write_fields: the files of global arrays (checkpoints, field outputs),
// written collectively with parallel HDF5 or rank by rank with serial HDF5.
#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <type_traits>
#include <variant>

#include "io/collective.hpp"
#include "io/errors.hpp"
#include "io/hdf5.hpp"
#include "io/hdf5_detail.hpp"

#ifndef HEATWAVE_HDF5_PARALLEL
#define HEATWAVE_HDF5_PARALLEL 0
#endif
#if HEATWAVE_HDF5_PARALLEL && !defined(H5_HAVE_PARALLEL)
#error "HEATWAVE_HDF5_PARALLEL needs a parallel HDF5 library (H5_HAVE_PARALLEL)"
#endif

namespace heatwave::hdf5 {

using namespace detail;

bool collective_writes() { return HEATWAVE_HDF5_PARALLEL; }

namespace {

template <class Real>
hid_t file_type() {
  return std::is_same_v<Real, float> ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
}

// Chunks of at most ~1 MiB, made by halving the slowest axes first so that
// x rows stay whole: Fletcher32 checks each chunk, and a damaged byte costs one chunk.
std::vector<hsize_t> chunk_shape(const std::vector<std::uint64_t>& global, std::size_t element_size) {
  std::vector<hsize_t> chunk = hsizes(global);
  auto bytes = [&] {
    hsize_t n = element_size;
    for (hsize_t c : chunk) n *= c;
    return n;
  };
  for (std::size_t a = 0; a < chunk.size(); ++a)
    while (chunk[a] > 1 && bytes() > (hsize_t{1} << 20)) chunk[a] = (chunk[a] + 1) / 2;
  return chunk;
}

// Attributes and (empty) datasets: the file's layout, the same from every rank.
template <class Real>
void create_layout(hid_t file, const Block& block, const std::vector<Attribute>& attributes,
                   const std::vector<FieldView<Real>>& fields, const Context& where) {
  for (const Attribute& a : attributes) write_attribute(file, a, where);
  const std::vector<hsize_t> dims = hsizes(block.global);
  const std::vector<hsize_t> chunk = chunk_shape(block.global, sizeof(Real));
  for (const auto& field : fields) {
    const Context at = where.on(field.name);
    Id space(at(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), "H5Screate_simple"), H5Sclose);
    Id properties(at(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"), H5Pclose);
    at(H5Pset_chunk(properties, static_cast<int>(chunk.size()), chunk.data()), "H5Pset_chunk");
    at(H5Pset_fletcher32(properties), "H5Pset_fletcher32");
    Id dataset(at(H5Dcreate2(file, field.name.c_str(), file_type<Real>(), space, H5P_DEFAULT, properties, H5P_DEFAULT),
                  "H5Dcreate2"),
               H5Dclose);
  }
}

// Writes this rank's block of every field; `transfer` says how (collective MPI-IO or plain).
template <class Real>
void write_blocks(hid_t file, const Block& block, const std::vector<FieldView<Real>>& fields, hid_t transfer,
                  const Context& where) {
  for (const auto& field : fields) {
    const Context at = where.on(field.name);
    Id dataset(at(H5Dopen2(file, field.name.c_str(), H5P_DEFAULT), "H5Dopen2"), H5Dclose);
    Id file_space = select_block(dataset, block, at);
    Id memory = memory_space(block, at);
    at(H5Dwrite(dataset, memory_type<Real>(), memory, file_space, transfer, field.data), "H5Dwrite");
  }
}

// What write_fields will put on disk, with room for the metadata.
template <class Real>
std::uint64_t file_bytes(const Block& block, const std::vector<Attribute>& attributes,
                         const std::vector<FieldView<Real>>& fields) {
  std::uint64_t points = 1;
  for (std::uint64_t n : block.global) points *= n;
  std::uint64_t bytes = points * sizeof(Real) * fields.size();
  for (const Attribute& a : attributes)
    if (const auto* text = std::get_if<std::string>(&a.value)) bytes += text->size();
  return bytes + bytes / 64 + (std::uint64_t(1) << 20);
}

}  // namespace

template <class Real>
void write_fields(const std::string& path, MPI_Comm comm, const Block& block, const std::vector<Attribute>& attributes,
                  const std::vector<FieldView<Real>>& fields) {
  silence_automatic_error_printing();
  const std::string temporary = path + ".tmp";
  const Context where{temporary, "", ExitCode::io_error};
  int rank = 0, size = 1;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  std::optional<Error> failure;
  auto attempt = [&](auto&& work) {
    if (failure) return;
    try {
      work();
    } catch (const Error& e) {
      failure = e;
    }
  };
  on_every_rank(comm, [&] {
    if (rank == 0) check_space(temporary, file_bytes(block, attributes, fields));
  });
  if (HEATWAVE_HDF5_PARALLEL && size > 1) {
#if HEATWAVE_HDF5_PARALLEL
    // Parallel HDF5: every rank takes part in every call; the field data moves in
    // collective MPI-IO writes. Failures here (disk full, permissions) strike all ranks alike.
    attempt([&] {
      Id access(where(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"), H5Pclose);
      where(H5Pset_fapl_mpio(access, comm, MPI_INFO_NULL), "H5Pset_fapl_mpio");
      Id file(where(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access), "H5Fcreate"), H5Fclose);
      create_layout(file, block, attributes, fields, where);
      Id transfer(where(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate"), H5Pclose);
      where(H5Pset_dxpl_mpio(transfer, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
      write_blocks(file, block, fields, transfer, where);
      where(H5Fflush(file, H5F_SCOPE_GLOBAL), "H5Fflush");
      file.close(where, "H5Fclose");
    });
#endif
  } else {
    // One rank, or serial HDF5: POSIX writes. Rank 0 lays the file out, then the
    // ranks write their blocks in rank order. (One rank never goes through
    // MPI-IO: a failed MPI-IO file left open crashes MPI_Finalize.)
    if (rank == 0)
      attempt([&] {
        Id file(where(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "H5Fcreate"), H5Fclose);
        create_layout(file, block, attributes, fields, where);
        file.close(where, "H5Fclose");
      });
    if (size > 1) throw_if_any_rank_failed(comm, failure);
    for (int turn = 0; turn < size && !failure; ++turn) {
      if (turn == rank)
        attempt([&] {
          Id file(where(H5Fopen(temporary.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), "H5Fopen"), H5Fclose);
          write_blocks(file, block, fields, H5P_DEFAULT, where);
          where(H5Fflush(file, H5F_SCOPE_GLOBAL), "H5Fflush");
          file.close(where, "H5Fclose");
        });
      if (size > 1)
        check_mpi(MPI_Barrier(comm), "MPI_Barrier");  // the token: the next rank opens the file once this one closed it
    }
  }
  // A write that failed anywhere leaves no partial file behind (a full disk
  // gets its space back); the files already there are untouched.
  int failed = failure ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  if (failed && rank == 0) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
  }
  throw_if_any_rank_failed(comm, failure);
  on_every_rank(comm, [&] {
    if (rank != 0) return;
    std::error_code error;
    std::filesystem::rename(temporary, path, error);
    if (error) throw Error(ExitCode::io_error, "rename " + temporary + " -> " + path + " failed: " + error.message());
  });
}

template void write_fields<float>(const std::string&, MPI_Comm, const Block&, const std::vector<Attribute>&,
                                  const std::vector<FieldView<float>>&);
template void write_fields<double>(const std::string&, MPI_Comm, const Block&, const std::vector<Attribute>&,
                                   const std::vector<FieldView<double>>&);

}  // namespace heatwave::hdf5
