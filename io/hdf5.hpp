#pragma once
// HDF5 files of global arrays, through the C API. Every call is checked; a
// failure becomes heatwave::Error naming the call, the file and the dataset.
// Arrays are stored in C order, slowest axis first (z, y, x), so x is fastest
// on disk as in memory, and the layout does not depend on the decomposition.
#include <mpi.h>

#include <cstdint>
#include <functional>
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
  // What a dataset's values are: float32, int16, uint8, ..., or what else
  // ("compound {r, i} of 16 bytes (complex numbers, as h5py writes them)",
  // "a string"); `number`: an integer or a floating-point type, which read()
  // converts.
  struct ValueType {
    bool number = false;
    std::string name;
  };
  ValueType value_type(const std::string& dataset) const;
  // Where a contiguous, allocated dataset's values start in the file (bytes):
  // for writes in place that touch no HDF5 metadata (TraceWriter).
  std::uint64_t value_offset(const std::string& dataset) const;
  // Reads this rank's block of `dataset` (converted to Real).
  template <class Real>
  void read(const std::string& dataset, const Block& block, Real* out) const;
  // A listing of attributes and datasets (shape, type, chunks, filters): `heatwave inspect`.
  std::string describe() const;
  // Reads every value of `dataset` (in slabs of about 8 MiB), so that HDF5
  // checks each chunk's Fletcher32 checksum: Error(corrupt_file) on the first
  // damaged chunk. Returns the values read.
  std::uint64_t verify(const std::string& dataset) const;
  // Every value of `dataset` in file order, as doubles, in slabs of whole
  // indices of its slowest axis of about `values` values each:
  // visit(index of the slab's first value, the slab's values).
  void for_each_slab(const std::string& dataset, std::uint64_t values,
                     const std::function<void(std::uint64_t, const std::vector<double>&)>& visit) const;

 private:
  std::string path_;
  std::int64_t file_ = -1;  // hid_t
};

// One pass over a whole dataset (in slabs of about 1 MiB), remembered for the
// process while the file keeps its size and modification time: its least and
// largest value, the first value that is not finite, the first <= 0 and the
// first < 0 (C-order indices, 0 when none: `has_*`), the finite values of
// largest and of least non-zero magnitude (where first), and the FNV-1a 64 hash
// of its shape and values read as double. A medium's range, checks and
// content hash from one read of its file, however often a run asks.
struct DatasetSummary {
  double min = 0, max = 0;
  bool has_nonfinite = false, has_nonpositive = false, has_negative = false;
  double nonfinite = 0, nonpositive = 0, negative = 0;
  std::uint64_t nonfinite_at = 0, nonpositive_at = 0, negative_at = 0;
  bool has_nonzero = false;
  double largest = 0, least_nonzero = 0;  // by magnitude
  std::uint64_t largest_at = 0, least_nonzero_at = 0;
  std::string hash;
};
const DatasetSummary& summarize(const std::string& path, const std::string& dataset);

// Receiver traces (solver/receivers.hpp), format "heatwave receivers 2":
// /traces [capacity, receivers] float64 (a row a sample: time down,
// receivers across, as a gather is drawn), /time (float64) and /step (int64)
// [capacity], /positions [receivers, dims], /samples [1] (int64), and
// attributes on the root group. The first `samples` rows are the run's
// samples; past them /time is NaN and /step -1: room for the samples to come
// (a run that ends as planned fills them all).
//
// The file is laid out whole when the run starts (contiguous datasets,
// allocated and reserved on disk, written as `path`.tmp and renamed), so a
// full disk, a quota or a file-size limit shows then, as a clean
// Error(io_error). After that only values are written, in place, with plain
// pwrite: the new samples (one contiguous block), then /samples. No HDF5 metadata changes and no
// space is allocated, so a write that fails (EFBIG, ENOSPC, EIO) or a process
// killed in the middle of one leaves every sample up to the last completed
// append readable, and no half-closed HDF5 file behind to crash the exit.
struct Traces {
  std::size_t receivers = 0, samples = 0, capacity = 0;
  int dims = 0;
  int format = 2;                 // 1: the earlier growing layout, [receivers, samples] (read, rewritten on restart)
  std::vector<double> positions;  // [receivers][dims]
  std::vector<double> traces;     // [samples][receivers] (empty where read without values)
  std::vector<double> time;
  std::vector<long long> step;
  std::string field;
  long long every = 0;  // the `every` attribute (0: absent)
};

// Makes `path` with room for `capacity` samples (replacing any file there
// only once the new one is complete), holding `initial`'s samples where given.
void create_traces(const std::string& path, const std::vector<double>& positions, std::size_t receivers, int dims,
                   std::uint64_t capacity, const std::vector<Attribute>& attributes, const Traces* initial = nullptr);

// A receivers file of format 2 opened for appending (one rank).
class TraceWriter {
 public:
  explicit TraceWriter(const std::string& path);  // Error(corrupt_file) where it is not one
  std::uint64_t receivers() const { return receivers_; }
  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t samples() const { return samples_; }
  // Appends samples: `traces` [count][receivers], their times and steps.
  // Error(io_error) where the capacity is exceeded or a write fails; the samples before stay.
  void append(const std::vector<double>& traces, const std::vector<double>& times, const std::vector<long long>& steps);
  // Keeps the first `keep` samples (a restart resumes after them).
  void truncate(std::uint64_t keep);

 private:
  void write_at(int fd, const void* data, std::uint64_t bytes, std::uint64_t offset, const char* what) const;
  std::string path_;
  std::uint64_t receivers_ = 0, capacity_ = 0, samples_ = 0;
  std::uint64_t traces_at_ = 0, time_at_ = 0, step_at_ = 0, samples_at_ = 0;  // byte offsets in the file
};

// The whole file (its samples' values too, unless `values` is false).
Traces read_traces(const std::string& path, bool values = true);

}  // namespace heatwave::hdf5
