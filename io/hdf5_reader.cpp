// hdf5::Reader: one HDF5 file opened read-only by one rank: its attributes,
// datasets, blocks read, checksums verified and the `heatwave inspect` listing.
#include <hdf5.h>
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <sstream>
#include <type_traits>
#include <variant>

#include "io/errors.hpp"
#include "io/files.hpp"
#include "io/hdf5.hpp"
#include "io/hdf5_detail.hpp"

static_assert(sizeof(hid_t) == sizeof(std::int64_t), "Reader stores a hid_t as int64_t");

namespace heatwave::hdf5 {

using namespace detail;

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
  if (offset == HADDR_UNDEF)
    throw Error(
        ExitCode::corrupt_file,
        path_ + ", '" + dataset + "': its values have no place in the file (not a contiguous, allocated dataset)");
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
  for_each_slab(dataset, std::uint64_t(1) << 20,
                [&](std::uint64_t, const std::vector<double>& v) { count += v.size(); });
  return count;
}

template void Reader::read<float>(const std::string&, const Block&, float*) const;
template void Reader::read<double>(const std::string&, const Block&, double*) const;

Reader::ValueType Reader::value_type(const std::string& dataset) const {
  const Context at = reading(path_).on(dataset);
  Id data(at(H5Dopen2(file_, dataset.c_str(), H5P_DEFAULT), "H5Dopen2"), H5Dclose);
  Id type(at(H5Dget_type(data), "H5Dget_type"), H5Tclose);
  const std::size_t bits = 8 * H5Tget_size(type);
  switch (at(H5Tget_class(type), "H5Tget_class")) {
    case H5T_INTEGER:
      return {true, fmt::format("{}int{}", H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "", bits)};
    case H5T_FLOAT:
      return {true, fmt::format("float{}", bits)};
    case H5T_COMPOUND: {
      std::vector<std::string> members;
      for (int m = 0; m < H5Tget_nmembers(type); ++m) {
        char* name = H5Tget_member_name(type, static_cast<unsigned>(m));
        members.push_back(name ? name : "?");
        H5free_memory(name);
      }
      const bool complex = members == std::vector<std::string>{"r", "i"};
      return {false, fmt::format("compound {{{}}} of {} bytes{}", fmt::join(members, ", "), bits / 8,
                                 complex ? " (complex numbers, as h5py writes them)" : "")};
    }
    case H5T_STRING:
      return {false, "strings"};
    case H5T_ENUM:
      return {false, "an enum"};
    case H5T_ARRAY:
      return {false, "arrays"};
    case H5T_VLEN:
      return {false, "variable-length sequences"};
    default:
      return {false, fmt::format("a type of class {} ({} bits)", static_cast<int>(H5Tget_class(type)), bits)};
  }
}

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
    Id properties(at(H5Dget_create_plist(data), "H5Dget_create_plist"), H5Pclose);
    os << "  " << name << ": " << value_type(name).name << " ["
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

}  // namespace heatwave::hdf5
