#pragma once
// HDF5 files of global arrays, through the C API. Every call is checked; a
// failure becomes heatwave::Error naming the call, the file and the dataset.
// Arrays are stored in C order, slowest axis first (z, y, x), so x is fastest
// on disk as in memory, and the layout does not depend on the decomposition.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace heatwave::hdf5 {

// True when this build writes with parallel HDF5 (collective MPI-IO hyperslab
// writes); false: ranks write their blocks one after another with serial HDF5.
bool collective_writes();

// This rank's block of a global array, C order (slowest axis first).
struct Block {
  std::vector<std::uint64_t> global, offset, count;
};

using AttributeValue = std::variant<long long, double, std::string, std::vector<long long>, std::vector<double>>;
struct Attribute {
  std::string name;
  AttributeValue value;
};

// One field: this rank's block, C order.
template <class Real>
struct FieldView {
  std::string name;
  const Real* data;
};

// Writes `path` collectively over `comm`: the attributes on the root group and
// one chunked, Fletcher32-checksummed dataset per field. The file is written
// as `path`.tmp, flushed, closed and renamed, so a file under its final name is
// always complete. Throws Error(io_error) on every rank when any rank fails.
template <class Real>
void write_fields(const std::string& path, MPI_Comm comm, const Block& block, const std::vector<Attribute>& attributes,
                  const std::vector<FieldView<Real>>& fields);

// One file opened read-only by one rank (not collective). A file that does not
// open, or a read that fails (truncation, checksum mismatch), is Error(corrupt_file).
class Reader {
 public:
  explicit Reader(const std::string& path);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::string& path() const { return path_; }
  std::vector<std::string> attribute_names() const;
  bool has_attribute(const std::string& name) const;
  AttributeValue attribute(const std::string& name) const;
  std::vector<std::string> dataset_names() const;
  bool has_dataset(const std::string& name) const;
  std::vector<std::uint64_t> shape(const std::string& dataset) const;
  // Reads this rank's block of `dataset` (converted to Real).
  template <class Real>
  void read(const std::string& dataset, const Block& block, Real* out) const;
  // A listing of attributes and datasets (shape, type, chunks, filters): `heatwave inspect`.
  std::string describe() const;
  // Reads every value of `dataset` (in slabs of about 8 MiB), so that HDF5
  // checks each chunk's Fletcher32 checksum: Error(corrupt_file) on the first
  // damaged chunk. Returns the values read.
  std::uint64_t verify(const std::string& dataset) const;

 private:
  std::string path_;
  std::int64_t file_ = -1;  // hid_t
};

// Receiver traces, written by one rank as a run goes (solver/receivers.hpp):
// /traces [receivers, samples] float64, /time (float64) and /step (int64)
// [samples], /positions [receivers, dims]; attributes on the root group. The
// sample axis is unlimited and chunked; every call opens and closes the file,
// so what a stopped or killed run leaves holds each sample written so far.
// Failures are Error(io_error) naming the file (corrupt_file where one read back is wrong).
void create_traces(const std::string& path, const std::vector<double>& positions, std::size_t receivers, int dims,
                   const std::vector<Attribute>& attributes);
// Appends samples: `traces` receiver-major ([receivers][samples]), their times and steps.
void append_traces(const std::string& path, const std::vector<double>& traces, const std::vector<double>& times,
                   const std::vector<long long>& steps);
// Keeps the samples of steps <= last_step (a restart resumes after them; what
// a run wrote past its checkpoint goes) in a file of `receivers` traces.
// Returns the samples kept.
std::size_t truncate_traces(const std::string& path, long long last_step, std::size_t receivers);

struct Traces {
  std::size_t receivers = 0, samples = 0;
  int dims = 0;
  std::vector<double> positions;  // [receivers][dims]
  std::vector<double> traces;     // [receivers][samples]
  std::vector<double> time;
  std::vector<long long> step;
  std::string field;
};
Traces read_traces(const std::string& path);

}  // namespace heatwave::hdf5
