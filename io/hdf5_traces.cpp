// Receiver traces files (format "heatwave receivers 2"): create_traces,
// TraceWriter (appends in place with pwrite) and read_traces.
#include <hdf5.h>
#include <spdlog/fmt/fmt.h>

#include <fcntl.h>
#include <unistd.h>

#include <sys/stat.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <variant>

#include "io/errors.hpp"
#include "io/hdf5.hpp"
#include "io/hdf5_detail.hpp"

namespace heatwave::hdf5 {

using namespace detail;

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
    throw Error(ExitCode::corrupt_file,
                fmt::format("{}: /samples says {} samples, the file has room for {}", path, samples, layout.capacity));
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
  if (error != 0) throw Error(ExitCode::io_error, path + ": cannot reserve the file's space: " + std::strerror(error));
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
