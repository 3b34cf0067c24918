// hdf5::summarize: one pass over a whole dataset (range, first bad values,
// content hash), remembered for the process while the file is unchanged.
#include <spdlog/fmt/fmt.h>

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "io/errors.hpp"
#include "io/fnv.hpp"
#include "io/hdf5.hpp"
#include "io/log.hpp"

namespace heatwave::hdf5 {

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
      if (std::abs(v) > std::abs(s.largest)) s.largest = v, s.largest_at = at;
      if (v != 0 && (!s.has_nonzero || std::abs(v) < std::abs(s.least_nonzero)))
        s.has_nonzero = true, s.least_nonzero = v, s.least_nonzero_at = at;
    }
    startup_progress(fmt::format("reading {} of {}: {:.0f}%", dataset, path,
                                 100.0 * static_cast<double>(first + values.size()) / static_cast<double>(total)));
  });
  s.hash = hash.hex();
  return done.emplace(key, s).first->second;
}

}  // namespace heatwave::hdf5
