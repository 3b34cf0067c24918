#include "io/hdf5.hpp"

#include <hdf5.h>
#include <spdlog/fmt/fmt.h>

#include <fcntl.h>
#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <cerrno>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <type_traits>

#include "io/collective.hpp"
#include "io/errors.hpp"
#include "io/files.hpp"
#include "io/fnv.hpp"
#include "io/log.hpp"

#ifndef HEATWAVE_HDF5_PARALLEL
#define HEATWAVE_HDF5_PARALLEL 0
#endif
#if HEATWAVE_HDF5_PARALLEL && !defined(H5_HAVE_PARALLEL)
#error "HEATWAVE_HDF5_PARALLEL needs a parallel HDF5 library (H5_HAVE_PARALLEL)"
#endif
static_assert(sizeof(hid_t) == sizeof(std::int64_t), "Reader stores a hid_t as int64_t");

namespace heatwave::hdf5 {

bool collective_writes() { return HEATWAVE_HDF5_PARALLEL; }

namespace {

// Our messages carry the library's own words, so its automatic printing goes.
void silence_automatic_error_printing() {
  static const herr_t silenced = H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (silenced < 0) throw Error(ExitCode::io_error, "H5Eset_auto2 failed: cannot take over HDF5 error reporting");
}

// The HDF5 error stack of the failed call, outermost first, as one line.
std::string error_stack() {
  std::string text;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        auto& out = *static_cast<std::string*>(data);
        if (e->desc && *e->desc && out.find(e->desc) == std::string::npos)
          out += (out.empty() ? "" : "; ") + std::string(e->desc);
        return 0;
      },
      &text);
  H5Eclear2(H5E_DEFAULT);
  return text;
}

// Where calls happen, for messages, and which exit code a failure there gets.
struct Context {
  std::string file;
  std::string dataset;
  ExitCode code;

  Context on(const std::string& name) const { return {file, name, code}; }
  template <class T>
  T operator()(T result, const char* call) const {
    if (result < 0) fail(call);
    return result;
  }
  [[noreturn]] void fail(const std::string& call) const {
    std::string message = call + " failed on " + file;
    if (!dataset.empty()) message += ", '" + dataset + "'";
    if (const std::string stack = error_stack(); !stack.empty()) message += ": " + stack;
    throw Error(code, message);
  }
};

// An HDF5 identifier closed when it goes out of scope. Closing a file is
// checked by close(): that is where buffered data reaches the disk.
class Id {
 public:
  Id(hid_t id, herr_t (*closer)(hid_t)) : id_(id), closer_(closer) {}
  ~Id() {
    if (id_ >= 0) closer_(id_);
  }
  Id(Id&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = -1; }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  Id& operator=(Id&&) = delete;
  operator hid_t() const { return id_; }
  void close(const Context& where, const char* call) {
    const hid_t id = id_;
    id_ = -1;
    where(closer_(id), call);
  }

 private:
  hid_t id_;
  herr_t (*closer_)(hid_t);
};

template <class Real>
hid_t memory_type() {
  return std::is_same_v<Real, float> ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
}
template <class Real>
hid_t file_type() {
  return std::is_same_v<Real, float> ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
}

std::vector<hsize_t> hsizes(const std::vector<std::uint64_t>& values) {
  std::vector<hsize_t> out;
  out.reserve(values.size());
  for (std::uint64_t v : values) out.push_back(static_cast<hsize_t>(v));
  return out;
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

void write_attribute(hid_t location, const Attribute& attribute, const Context& where) {
  const Context at = where.on("attribute " + attribute.name);
  auto write = [&](hid_t file_t, hid_t memory_t, const void* data, hsize_t count, bool scalar) {
    Id space(at(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr), "H5Screate"), H5Sclose);
    Id attr(at(H5Acreate2(location, attribute.name.c_str(), file_t, space, H5P_DEFAULT, H5P_DEFAULT), "H5Acreate2"),
            H5Aclose);
    at(H5Awrite(attr, memory_t, data), "H5Awrite");
  };
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          Id type(at(H5Tcopy(H5T_C_S1), "H5Tcopy"), H5Tclose);
          at(H5Tset_size(type, std::max<std::size_t>(v.size(), 1)), "H5Tset_size");
          at(H5Tset_strpad(type, H5T_STR_NULLPAD), "H5Tset_strpad");
          write(type, type, v.c_str(), 1, true);
        } else if constexpr (std::is_same_v<T, long long>) {
          write(H5T_STD_I64LE, H5T_NATIVE_LLONG, &v, 1, true);
        } else if constexpr (std::is_same_v<T, double>) {
          write(H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v, 1, true);
        } else if constexpr (std::is_same_v<T, std::vector<long long>>) {
          write(H5T_STD_I64LE, H5T_NATIVE_LLONG, v.data(), v.size(), false);
        } else {
          write(H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v.data(), v.size(), false);
        }
      },
      attribute.value);
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

// The block as a hyperslab of a dataset's file space.
Id select_block(hid_t dataset, const Block& block, const Context& at) {
  Id space(at(H5Dget_space(dataset), "H5Dget_space"), H5Sclose);
  const std::vector<hsize_t> offset = hsizes(block.offset), count = hsizes(block.count);
  at(H5Sselect_hyperslab(space, H5S_SELECT_SET, offset.data(), nullptr, count.data(), nullptr), "H5Sselect_hyperslab");
  return space;
}
Id memory_space(const Block& block, const Context& at) {
  const std::vector<hsize_t> count = hsizes(block.count);
  return Id(at(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), "H5Screate_simple"), H5Sclose);
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

// Space for a file of `bytes` where `path` will be: a probe file of that
// size is allocated and removed before HDF5 writes anything. A full disk, a
// quota or a file-size limit refuses the probe with its errno, and the run
// stops with that message; HDF5 never holds a half-written file (a failed
// HDF5 close leaves the library in a state that crashes MPI_Finalize).
void check_space(const std::string& path, std::uint64_t bytes) {
  const std::string probe = path + ".space";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw Error(ExitCode::io_error, path + ": cannot create a file there: " + std::strerror(errno));
  int error = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (error == EOPNOTSUPP || error == EINVAL) {  // a file system without fallocate: write the zeros
    error = 0;
    const std::vector<char> zeros(std::size_t(1) << 20, 0);
    for (std::uint64_t done = 0; done < bytes && error == 0;) {
      const ssize_t n =
          ::write(fd, zeros.data(), static_cast<std::size_t>(std::min<std::uint64_t>(zeros.size(), bytes - done)));
      if (n < 0)
        error = errno;
      else
        done += static_cast<std::uint64_t>(n);
    }
  }
  ::close(fd);
  ::unlink(probe.c_str());
  if (error != 0)
    throw Error(ExitCode::io_error,
                fmt::format("{}: cannot write {:.1f} MiB there: {}", path, bytes / 1048576.0, std::strerror(error)));
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

namespace {
Context reading(const std::string& path) { return {path, "", ExitCode::corrupt_file}; }
}  // namespace

Reader::Reader(const std::string& path) : path_(path) {
  silence_automatic_error_printing();
  require_regular_file(path, "HDF5 file");
  file_ = reading(path)(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen");
}

Reader::~Reader() {
  if (file_ >= 0) H5Fclose(file_);
}

std::vector<std::string> Reader::attribute_names() const {
  std::vector<std::string> names;
  reading(path_)(H5Aiterate2(
                     file_, H5_INDEX_NAME, H5_ITER_INC, nullptr,
                     [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
                       static_cast<std::vector<std::string>*>(data)->push_back(name);
                       return 0;
                     },
                     &names),
                 "H5Aiterate2");
  return names;
}

bool Reader::has_attribute(const std::string& name) const {
  return reading(path_).on("attribute " + name)(H5Aexists(file_, name.c_str()), "H5Aexists") > 0;
}

AttributeValue Reader::attribute(const std::string& name) const {
  const Context at = reading(path_).on("attribute " + name);
  Id attr(at(H5Aopen(file_, name.c_str(), H5P_DEFAULT), "H5Aopen"), H5Aclose);
  Id type(at(H5Aget_type(attr), "H5Aget_type"), H5Tclose);
  Id space(at(H5Aget_space(attr), "H5Aget_space"), H5Sclose);
  const bool scalar = at(H5Sget_simple_extent_ndims(space), "H5Sget_simple_extent_ndims") == 0;
  const auto count = static_cast<std::size_t>(at(H5Sget_simple_extent_npoints(space), "H5Sget_simple_extent_npoints"));
  switch (at(H5Tget_class(type), "H5Tget_class")) {
    case H5T_STRING: {
      if (at(H5Tis_variable_str(type), "H5Tis_variable_str") > 0 || !scalar)
        throw Error(ExitCode::corrupt_file, path_ + ": attribute '" + name + "' is not a fixed-length string");
      const std::size_t size = H5Tget_size(type);
      if (size == 0) at.fail("H5Tget_size");
      std::string text(size, '\0');
      at(H5Aread(attr, type, text.data()), "H5Aread");
      text.erase(std::find(text.begin(), text.end(), '\0'), text.end());
      return text;
    }
    case H5T_INTEGER: {
      std::vector<long long> v(count);
      at(H5Aread(attr, H5T_NATIVE_LLONG, v.data()), "H5Aread");
      if (scalar) return v.at(0);
      return v;
    }
    case H5T_FLOAT: {
      std::vector<double> v(count);
      at(H5Aread(attr, H5T_NATIVE_DOUBLE, v.data()), "H5Aread");
      if (scalar) return v.at(0);
      return v;
    }
    default:
      throw Error(ExitCode::corrupt_file, path_ + ": attribute '" + name + "' has a type heatwave does not read");
  }
}

std::vector<std::string> Reader::dataset_names() const {
  std::vector<std::string> names;
  reading(path_)(H5Literate(
                     file_, H5_INDEX_NAME, H5_ITER_INC, nullptr,
                     [](hid_t group, const char* name, const H5L_info_t*, void* data) -> herr_t {
                       const hid_t object = H5Oopen(group, name, H5P_DEFAULT);
                       if (object < 0) return -1;  // fails H5Literate, which is checked
                       if (H5Iget_type(object) == H5I_DATASET)
                         static_cast<std::vector<std::string>*>(data)->push_back(name);
                       return H5Oclose(object);
                     },
                     &names),
                 "H5Literate");
  return names;
}

bool Reader::has_dataset(const std::string& name) const {
  return reading(path_).on(name)(H5Lexists(file_, name.c_str(), H5P_DEFAULT), "H5Lexists") > 0;
}

std::vector<std::uint64_t> Reader::shape(const std::string& dataset) const {
  const Context at = reading(path_).on(dataset);
  Id data(at(H5Dopen2(file_, dataset.c_str(), H5P_DEFAULT), "H5Dopen2"), H5Dclose);
  Id space(at(H5Dget_space(data), "H5Dget_space"), H5Sclose);
  std::vector<hsize_t> dims(
      static_cast<std::size_t>(at(H5Sget_simple_extent_ndims(space), "H5Sget_simple_extent_ndims")));
  at(H5Sget_simple_extent_dims(space, dims.data(), nullptr), "H5Sget_simple_extent_dims");
  return {dims.begin(), dims.end()};
}

std::uint64_t Reader::value_offset(const std::string& dataset) const {
  const Context at = reading(path_).on(dataset);
  Id data(at(H5Dopen2(file_, dataset.c_str(), H5P_DEFAULT), "H5Dopen2"), H5Dclose);
  const haddr_t offset = H5Dget_offset(data);
  if (offset == HADDR_UNDEF) throw Error(ExitCode::corrupt_file, path_ + ", '" + dataset + "': its values have no place in the file (not a contiguous, allocated dataset)");
  return static_cast<std::uint64_t>(offset);
}

template <class Real>
void Reader::read(const std::string& dataset, const Block& block, Real* out) const {
  const Context at = reading(path_).on(dataset);
  if (shape(dataset) != block.global)
    throw Error(ExitCode::invalid_value, path_ + ", '" + dataset + "': shape " +
                                             fmt::format("{}", fmt::join(shape(dataset), " x ")) + ", expected " +
                                             fmt::format("{}", fmt::join(block.global, " x ")));
  Id data(at(H5Dopen2(file_, dataset.c_str(), H5P_DEFAULT), "H5Dopen2"), H5Dclose);
  Id file_space = select_block(data, block, at);
  Id memory = memory_space(block, at);
  at(H5Dread(data, memory_type<Real>(), memory, file_space, H5P_DEFAULT, out), "H5Dread");
}

void Reader::for_each_slab(const std::string& dataset, std::uint64_t values,
                           const std::function<void(std::uint64_t, const std::vector<double>&)>& visit) const {
  const std::vector<std::uint64_t> global = shape(dataset);
  if (global.empty()) return;
  std::uint64_t plane = 1;  // values of one index of the slowest axis
  for (std::size_t a = 1; a < global.size(); ++a) plane *= global[a];
  const std::uint64_t slab = std::max<std::uint64_t>(1, values / std::max<std::uint64_t>(plane, 1));
  std::vector<double> slab_values;
  for (std::uint64_t first = 0; first < global[0]; first += slab) {
    Block block{global, std::vector<std::uint64_t>(global.size(), 0), global};
    block.offset[0] = first;
    block.count[0] = std::min(slab, global[0] - first);
    slab_values.resize(block.count[0] * plane);
    read(dataset, block, slab_values.data());
    visit(first * plane, slab_values);
  }
}

std::uint64_t Reader::verify(const std::string& dataset) const {
  std::uint64_t count = 0;
  for_each_slab(dataset, std::uint64_t(1) << 20, [&](std::uint64_t, const std::vector<double>& v) { count += v.size(); });
  return count;
}

template void Reader::read<float>(const std::string&, const Block&, float*) const;
template void Reader::read<double>(const std::string&, const Block&, double*) const;

std::string Reader::describe() const {
  std::ostringstream os;
  os << path_ << "\n";
  os << "attributes:\n";
  for (const std::string& name : attribute_names()) {
    os << "  " << name << " = ";
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            if (v.find('\n') == std::string::npos) {
              os << v;
            } else {  // the config text: indented below its name
              std::istringstream lines(v);
              for (std::string line; std::getline(lines, line);) os << "\n    " << line;
            }
          } else if constexpr (std::is_same_v<T, long long> || std::is_same_v<T, double>) {
            os << fmt::format("{}", v);
          } else {
            os << fmt::format("[{}]", fmt::join(v, ", "));
          }
        },
        attribute(name));
    os << "\n";
  }
  os << "datasets:\n";
  for (const std::string& name : dataset_names()) {
    const Context at = reading(path_).on(name);
    Id data(at(H5Dopen2(file_, name.c_str(), H5P_DEFAULT), "H5Dopen2"), H5Dclose);
    Id type(at(H5Dget_type(data), "H5Dget_type"), H5Tclose);
    Id properties(at(H5Dget_create_plist(data), "H5Dget_create_plist"), H5Pclose);
    const bool is_float = at(H5Tget_class(type), "H5Tget_class") == H5T_FLOAT;
    const std::size_t size = H5Tget_size(type);
    if (size == 0) at.fail("H5Tget_size");
    os << "  " << name << ": " << (is_float ? "float" : "non-float ") << 8 * size << " ["
       << fmt::format("{}", fmt::join(shape(name), ", ")) << "]";
    if (at(H5Pget_layout(properties), "H5Pget_layout") == H5D_CHUNKED) {
      std::vector<hsize_t> chunk(shape(name).size());
      at(H5Pget_chunk(properties, static_cast<int>(chunk.size()), chunk.data()), "H5Pget_chunk");
      os << ", chunks [" << fmt::format("{}", fmt::join(chunk, ", ")) << "]";
    }
    const int filters = at(H5Pget_nfilters(properties), "H5Pget_nfilters");
    for (int f = 0; f < filters; ++f) {
      unsigned flags = 0;
      std::size_t count = 0;
      char filter_name[64] = {};
      at(static_cast<int>(H5Pget_filter2(properties, static_cast<unsigned>(f), &flags, &count, nullptr,
                                         sizeof filter_name, filter_name, nullptr)),
         "H5Pget_filter2");
      os << ", " << filter_name;
    }
    os << "\n";
  }
  return os.str();
}

// ------------------------------------------------------------ summary ---

const DatasetSummary& summarize(const std::string& path, const std::string& dataset) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw Error(ExitCode::file_not_found, path + ": " + std::strerror(errno));
  const std::string key = path + "#" + dataset + "#" + std::to_string(info.st_size) + "#" +
                          std::to_string(info.st_mtim.tv_sec) + "." + std::to_string(info.st_mtim.tv_nsec);
  static std::map<std::string, DatasetSummary> done;
  if (const auto it = done.find(key); it != done.end()) return it->second;
  const Reader file(path);
  const std::vector<std::uint64_t> shape = file.shape(dataset);
  DatasetSummary s;
  s.min = std::numeric_limits<double>::infinity(), s.max = -s.min;
  Fnv1a hash;
  hash(shape.size());
  for (std::uint64_t n : shape) hash(n);
  std::uint64_t total = 1;
  for (std::uint64_t n : shape) total *= n;
  file.for_each_slab(dataset, std::uint64_t(1) << 17, [&](std::uint64_t first, const std::vector<double>& values) {
    for (std::size_t k = 0; k < values.size(); ++k) {
      const double v = values[k];
      const std::uint64_t at = first + k;
      hash(std::bit_cast<std::uint64_t>(v));
      if (!std::isfinite(v)) {
        if (!s.has_nonfinite) s.has_nonfinite = true, s.nonfinite = v, s.nonfinite_at = at;
        continue;
      }
      s.min = std::min(s.min, v), s.max = std::max(s.max, v);
      if (v <= 0 && !s.has_nonpositive) s.has_nonpositive = true, s.nonpositive = v, s.nonpositive_at = at;
      if (v < 0 && !s.has_negative) s.has_negative = true, s.negative = v, s.negative_at = at;
    }
    startup_progress(fmt::format("reading {} of {}: {:.0f}%", dataset, path,
                                 100.0 * static_cast<double>(first + values.size()) / static_cast<double>(total)));
  });
  s.hash = hash.hex();
  return done.emplace(key, s).first->second;
}

// ------------------------------------------------------------- traces ---

namespace {
Context writing(const std::string& path) { return {path, "", ExitCode::io_error}; }

const char* traces_format = "heatwave receivers 2";

// A contiguous dataset, allocated as the file is made; `fill` written there
// now (nullptr: nothing written, its blocks reserved by the caller).
void create_contiguous(hid_t file, const char* name, hid_t type, hid_t memory_t, const std::vector<hsize_t>& dims,
                       const void* fill, const Context& where) {
  const Context at = where.on(name);
  Id space(at(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), "H5Screate_simple"), H5Sclose);
  Id properties(at(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"), H5Pclose);
  at(H5Pset_layout(properties, H5D_CONTIGUOUS), "H5Pset_layout");
  at(H5Pset_alloc_time(properties, H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
  if (fill) {
    at(H5Pset_fill_value(properties, memory_t, fill), "H5Pset_fill_value");
    at(H5Pset_fill_time(properties, H5D_FILL_TIME_ALLOC), "H5Pset_fill_time");
  } else {
    at(H5Pset_fill_time(properties, H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
  }
  Id dataset(at(H5Dcreate2(file, name, type, space, H5P_DEFAULT, properties, H5P_DEFAULT), "H5Dcreate2"), H5Dclose);
}

// Writes a whole dataset.
void write_all(hid_t file, const char* name, hid_t memory_t, const void* data, const Context& where) {
  const Context at = where.on(name);
  Id dataset(at(H5Dopen2(file, name, H5P_DEFAULT), "H5Dopen2"), H5Dclose);
  at(H5Dwrite(dataset, memory_t, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "H5Dwrite");
}

struct TraceLayout {
  std::uint64_t receivers = 0, dims = 0, samples = 0, capacity = 0;
  int format = 2;
};

// A receivers file's layout; Error(corrupt_file) where its datasets are
// missing or do not agree.
TraceLayout trace_layout(const Reader& reader) {
  const std::string& path = reader.path();
  for (const char* name : {"positions", "traces", "time", "step"})
    if (!reader.has_dataset(name))
      throw Error(ExitCode::corrupt_file, path + ": no dataset '" + std::string(name) + "' (not a receivers file)");
  const auto positions = reader.shape("positions"), traces = reader.shape("traces");
  // Format 2: [capacity, receivers]; the earlier format 1 (no /samples): [receivers, samples], all of them the run's.
  const int format = reader.has_dataset("samples") ? 2 : 1;
  const std::size_t receivers_axis = format == 2 ? 1 : 0;
  if (positions.size() != 2 || traces.size() != 2 || traces[receivers_axis] != positions[0] ||
      reader.shape("time") != std::vector<std::uint64_t>{traces[1 - receivers_axis]} ||
      reader.shape("step") != std::vector<std::uint64_t>{traces[1 - receivers_axis]})
    throw Error(ExitCode::corrupt_file, path + ": the traces, time, step and positions datasets do not agree in shape");
  TraceLayout layout{positions[0], positions[1], traces[1 - receivers_axis], traces[1 - receivers_axis], format};
  if (format == 1) return layout;
  double samples = 0;
  reader.read("samples", Block{{1}, {0}, {1}}, &samples);
  if (!(samples >= 0 && samples <= static_cast<double>(layout.capacity)))
    throw Error(ExitCode::corrupt_file, fmt::format("{}: /samples says {} samples, the file has room for {}", path,
                                                    samples, layout.capacity));
  layout.samples = static_cast<std::uint64_t>(samples);
  return layout;
}

// The /step dataset's first `samples` values (int64, read through double: exact below 2^53).
std::vector<long long> read_steps(const Reader& reader, std::uint64_t samples, std::uint64_t capacity) {
  std::vector<double> steps(samples);
  if (samples > 0) reader.read("step", Block{{capacity}, {0}, {samples}}, steps.data());
  return std::vector<long long>(steps.begin(), steps.end());
}

void reserve_blocks(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ExitCode::io_error, path + ": cannot open it again: " + std::strerror(errno));
  struct stat info {};
  int error = ::fstat(fd, &info) == 0 ? 0 : errno;
  if (error == 0) error = ::posix_fallocate(fd, 0, info.st_size);
  if (error == EOPNOTSUPP || error == EINVAL) error = 0;  // no fallocate here: check_space wrote the size once
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0)
    throw Error(ExitCode::io_error, path + ": cannot reserve the file's space: " + std::strerror(error));
}
}  // namespace

void create_traces(const std::string& path, const std::vector<double>& positions, std::size_t receivers, int dims,
                   std::uint64_t capacity, const std::vector<Attribute>& attributes, const Traces* initial) {
  static_assert(std::endian::native == std::endian::little, "trace values are written as the file's little-endian");
  silence_automatic_error_printing();
  const std::string temporary = path + ".tmp";
  const Context where = writing(temporary);
  std::uint64_t bytes = 8 * (receivers * (capacity + dims) + 2 * capacity + 1);
  for (const Attribute& a : attributes)
    if (const auto* text = std::get_if<std::string>(&a.value)) bytes += text->size();
  check_space(temporary, bytes + (std::uint64_t(1) << 16));
  try {
    {
      Id file(where(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "H5Fcreate"), H5Fclose);
      std::vector<Attribute> all{{"format", std::string(traces_format)}};
      all.insert(all.end(), attributes.begin(), attributes.end());
      for (const Attribute& a : all) write_attribute(file, a, where);
      const double nan = std::numeric_limits<double>::quiet_NaN();
      const long long no_step = -1, none = 0;
      create_contiguous(file, "positions", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {receivers, hsize_t(dims)}, nullptr,
                        where);
      create_contiguous(file, "traces", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {capacity, receivers}, nullptr, where);
      create_contiguous(file, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {capacity}, &nan, where);
      create_contiguous(file, "step", H5T_STD_I64LE, H5T_NATIVE_LLONG, {capacity}, &no_step, where);
      create_contiguous(file, "samples", H5T_STD_I64LE, H5T_NATIVE_LLONG, {1}, &none, where);
      if (receivers > 0) write_all(file, "positions", H5T_NATIVE_DOUBLE, positions.data(), where);
      file.close(where, "H5Fclose");
    }
    reserve_blocks(temporary);
    if (initial && initial->samples > 0) TraceWriter(temporary).append(initial->traces, initial->time, initial->step);
  } catch (const Error&) {
    std::remove(temporary.c_str());
    throw;
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::remove(temporary.c_str());
    throw Error(ExitCode::io_error, "rename " + temporary + " -> " + path + " failed: " + error.message());
  }
}

TraceWriter::TraceWriter(const std::string& path) : path_(path) {
  const Reader reader(path);
  const TraceLayout layout = trace_layout(reader);
  if (layout.format != 2)
    throw Error(ExitCode::corrupt_file, path + ": a receivers file of an earlier format, which is not appended to");
  receivers_ = layout.receivers, capacity_ = layout.capacity, samples_ = layout.samples;
  traces_at_ = reader.value_offset("traces"), time_at_ = reader.value_offset("time");
  step_at_ = reader.value_offset("step"), samples_at_ = reader.value_offset("samples");
}

void TraceWriter::write_at(int fd, const void* data, std::uint64_t bytes, std::uint64_t offset,
                           const char* what) const {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd, p, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      ::close(fd);
      throw Error(ExitCode::io_error,
                  fmt::format("{}: cannot write the receivers' {}: {}; the file keeps its {} samples written before",
                              path_, what, std::strerror(error), samples_));
    }
    p += n, bytes -= static_cast<std::uint64_t>(n), offset += static_cast<std::uint64_t>(n);
  }
}

void TraceWriter::append(const std::vector<double>& traces, const std::vector<double>& times,
                         const std::vector<long long>& steps) {
  const std::uint64_t count = times.size();
  if (count == 0) return;
  if (samples_ + count > capacity_)
    throw Error(ExitCode::io_error, fmt::format("{}: {} samples would pass the file's room for {} (it holds {})", path_,
                                                count, capacity_, samples_));
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ExitCode::io_error, path_ + ": cannot open it for writing: " + std::strerror(errno));
  // The values first, in the room past the samples already there; the count last.
  write_at(fd, traces.data(), 8 * count * receivers_, traces_at_ + 8 * samples_ * receivers_, "traces");
  write_at(fd, times.data(), 8 * count, time_at_ + 8 * samples_, "times");
  write_at(fd, steps.data(), 8 * count, step_at_ + 8 * samples_, "steps");
  const long long total = static_cast<long long>(samples_ + count);
  write_at(fd, &total, 8, samples_at_, "sample count");
  if (::close(fd) != 0)
    throw Error(ExitCode::io_error, path_ + ": closing after the receivers' samples failed: " + std::strerror(errno));
  samples_ += count;
}

void TraceWriter::truncate(std::uint64_t keep) {
  if (keep >= samples_) return;
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ExitCode::io_error, path_ + ": cannot open it for writing: " + std::strerror(errno));
  const long long total = static_cast<long long>(keep);
  write_at(fd, &total, 8, samples_at_, "sample count");
  // The dropped samples' times and steps marked unused again, as a new file's are.
  const std::vector<double> nan(samples_ - keep, std::numeric_limits<double>::quiet_NaN());
  const std::vector<long long> no_step(samples_ - keep, -1);
  samples_ = keep;
  write_at(fd, nan.data(), 8 * nan.size(), time_at_ + 8 * keep, "times");
  write_at(fd, no_step.data(), 8 * no_step.size(), step_at_ + 8 * keep, "steps");
  if (::close(fd) != 0) throw Error(ExitCode::io_error, path_ + ": closing failed: " + std::strerror(errno));
}

Traces read_traces(const std::string& path, bool values) {
  const Reader reader(path);
  const TraceLayout layout = trace_layout(reader);
  Traces t;
  t.receivers = layout.receivers, t.dims = static_cast<int>(layout.dims), t.samples = layout.samples;
  t.capacity = layout.capacity, t.format = layout.format;
  const std::uint64_t receivers = layout.receivers, dims = layout.dims, samples = layout.samples;
  t.positions.resize(t.receivers * t.dims);
  if (receivers > 0) reader.read("positions", Block{{receivers, dims}, {0, 0}, {receivers, dims}}, t.positions.data());
  if (samples > 0) {
    t.time.resize(t.samples);
    reader.read("time", Block{{layout.capacity}, {0}, {samples}}, t.time.data());
    if (values && receivers > 0) {
      t.traces.resize(t.receivers * t.samples);
      if (layout.format == 2) {
        reader.read("traces", Block{{layout.capacity, receivers}, {0, 0}, {samples, receivers}}, t.traces.data());
      } else {
        std::vector<double> by_receiver(t.traces.size());
        reader.read("traces", Block{{receivers, samples}, {0, 0}, {receivers, samples}}, by_receiver.data());
        for (std::uint64_t r = 0; r < receivers; ++r)
          for (std::uint64_t k = 0; k < samples; ++k) t.traces[k * receivers + r] = by_receiver[r * samples + k];
      }
    }
  }
  t.step = read_steps(reader, samples, layout.capacity);
  if (reader.has_attribute("field")) t.field = std::get<std::string>(reader.attribute("field"));
  if (reader.has_attribute("every")) {
    const AttributeValue every = reader.attribute("every");
    if (const auto* n = std::get_if<long long>(&every)) t.every = *n;
  }
  return t;
}

}  // namespace heatwave::hdf5
