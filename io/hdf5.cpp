// The helpers every HDF5 file kind shares (io/hdf5_detail.hpp): error
// reporting, attributes written, hyperslabs of a block, the disk-space check.
#include <hdf5.h>
#include <spdlog/fmt/fmt.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <variant>

#include "io/errors.hpp"
#include "io/hdf5_detail.hpp"

namespace heatwave::hdf5::detail {

void silence_automatic_error_printing() {
  static const herr_t silenced = H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (silenced < 0) throw Error(ExitCode::io_error, "H5Eset_auto2 failed: cannot take over HDF5 error reporting");
}

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

std::vector<hsize_t> hsizes(const std::vector<std::uint64_t>& values) {
  std::vector<hsize_t> out;
  out.reserve(values.size());
  for (std::uint64_t v : values) out.push_back(static_cast<hsize_t>(v));
  return out;
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

}  // namespace heatwave::hdf5::detail
