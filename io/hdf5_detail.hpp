#pragma once
// Internal helpers of the io/hdf5*.cpp files (not part of io/hdf5.hpp): checked
// HDF5 calls and their messages, identifiers closed on scope exit, hyperslabs.
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "io/errors.hpp"
#include "io/hdf5.hpp"

namespace heatwave::hdf5::detail {

// Our messages carry the library's own words, so its automatic printing goes.
void silence_automatic_error_printing();

// The HDF5 error stack of the failed call, outermost first, as one line.
std::string error_stack();

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

std::vector<hsize_t> hsizes(const std::vector<std::uint64_t>& values);

void write_attribute(hid_t location, const Attribute& attribute, const Context& where);

// The block as a hyperslab of a dataset's file space.
Id select_block(hid_t dataset, const Block& block, const Context& at);
Id memory_space(const Block& block, const Context& at);

// Space for a file of `bytes` where `path` will be: a probe file of that
// size is allocated and removed before HDF5 writes anything. A full disk, a
// quota or a file-size limit refuses the probe with its errno, and the run
// stops with that message; HDF5 never holds a half-written file (a failed
// HDF5 close leaves the library in a state that crashes MPI_Finalize).
void check_space(const std::string& path, std::uint64_t bytes);

}  // namespace heatwave::hdf5::detail
