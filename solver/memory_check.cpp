#include "solver/memory_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "io/errors.hpp"

namespace heatwave {

namespace {

// A number from a cgroup file ("max" or absent: no limit).
std::optional<std::size_t> read_cgroup_value(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return std::nullopt;
  try {
    const unsigned long long v = std::stoull(word);
    // cgroup v1 writes a page-rounded 2^63 for "no limit".
    if (v >= (1ULL << 62)) return std::nullopt;
    return static_cast<std::size_t>(v);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Limit minus usage of this process's memory cgroup (v2, else v1), if limited.
std::optional<std::size_t> cgroup_headroom() {
  const std::pair<const char*, const char*> files[] = {
      {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
      {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"}};
  for (const auto& [limit_file, usage_file] : files) {
    const auto limit = read_cgroup_value(limit_file);
    if (!limit) continue;
    const std::size_t usage = read_cgroup_value(usage_file).value_or(0);
    return *limit > usage ? *limit - usage : 0;
  }
  return std::nullopt;
}

}  // namespace

std::string format_gib(std::size_t bytes) {
  const double gib = static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0);
  return gib >= 10 ? fmt::format("{:.0f} GiB", gib) : fmt::format("{:.2g} GiB", gib);
}

template <int D>
std::size_t field_bytes(const Problem& problem, const LocalDomain<D>& domain, bool on_gpu) {
  const std::size_t real = problem.precision == Precision::float32 ? 4 : 8;
  Layout<D> layout = domain.layout;
  if (on_gpu) layout.align = static_cast<int>(16 / real);
  return layout.storage_size() * real;
}

template <int D>
MemoryNeed memory_need(const Problem& problem, const LocalDomain<D>& domain, bool on_gpu, bool field_files) {
  const std::size_t real = problem.precision == Precision::float32 ? 4 : 8;
  const Layout<D>& layout = domain.layout;
  const std::size_t owned = static_cast<std::size_t>(layout.owned_box().size());
  // u and u_next (which holds u^{n-1} for a second-order equation).
  const std::size_t fields = 2 * field_bytes(problem, domain, on_gpu);
  // Halo buffers: a send and a receive buffer per exchanged face and level.
  std::size_t halo = 0;
  for (int a = 0; a < D; ++a)
    for (int side = 0; side < 2; ++side) {
      if (!domain.exchanged[a][side]) continue;
      std::size_t face = static_cast<std::size_t>(layout.halo);
      for (int b = 0; b < D; ++b)
        if (b != a) face *= static_cast<std::size_t>(layout.owned[b] + 2 * layout.halo);
      halo += 2 * face * static_cast<std::size_t>(problem.levels()) * real;
    }
  // I/O: the owned box of every level staged in host memory for a checkpoint,
  // an output or an initial field file (and, on a GPU, a device staging buffer).
  const std::size_t staging = field_files ? owned * static_cast<std::size_t>(problem.levels()) * real : 0;
  MemoryNeed need;
  if (on_gpu) {
    need.device = fields + halo + (field_files ? owned * real : 0);
    need.host = staging + halo;  // pinned twins of the halo buffers for mpi-host
  } else {
    need.host = fields + halo + staging;
  }
  return need;
}

template std::size_t field_bytes(const Problem&, const LocalDomain<2>&, bool);
template std::size_t field_bytes(const Problem&, const LocalDomain<3>&, bool);
template MemoryNeed memory_need(const Problem&, const LocalDomain<2>&, bool, bool);
template MemoryNeed memory_need(const Problem&, const LocalDomain<3>&, bool, bool);

std::optional<std::size_t> host_memory_available() {
  std::optional<std::size_t> available;
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream words(line);
    std::string key;
    std::size_t kib = 0;
    if (words >> key >> kib && key == "MemAvailable:") available = kib * 1024;
  }
  if (const auto headroom = cgroup_headroom()) available = available ? std::min(*available, *headroom) : *headroom;
  return available;
}

std::string memory_shortfall(std::size_t need, std::size_t available, const std::string& where,
                             const std::string& what) {
  if (need <= available) return {};
  return fmt::format("{} needs {}, {} available ({})", what, format_gib(need), format_gib(available), where);
}

void require_memory(std::size_t need, std::size_t available, const std::string& where, const std::string& what,
                    const std::string& advice) {
  const std::string shortfall = memory_shortfall(need, available, where, what);
  if (shortfall.empty()) return;
  throw Error(ExitCode::invalid_value, advice.empty() ? shortfall : shortfall + ": " + advice);
}

}  // namespace heatwave
