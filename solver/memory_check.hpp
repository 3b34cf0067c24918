#pragma once
// Memory a run needs, checked before anything large is allocated: a grid that
// does not fit is a named error (exit 7) instead of std::bad_alloc, the OOM
// killer, or a CUDA error deep in a run.
#include <cstddef>
#include <optional>
#include <string>

#include "solver/domain.hpp"
#include "solver/problem.hpp"

namespace heatwave {

// Bytes one rank allocates for its fields, halo buffers and (where the run
// reads or writes field files) I/O staging, on the host and, for a GPU
// backend, on the device. An estimate from above: rows padded for 16-byte
// packs, every level exchanged.
struct MemoryNeed {
  std::size_t host = 0;
  std::size_t device = 0;
};

// One field's bytes on this rank (rows padded for 16-byte packs on a GPU).
template <int D>
std::size_t field_bytes(const Problem& problem, const LocalDomain<D>& domain, bool on_gpu);

template <int D>
MemoryNeed memory_need(const Problem& problem, const LocalDomain<D>& domain, bool on_gpu, bool field_files);

// Host memory this process may still take: MemAvailable, lowered by the
// cgroup's limit (a Slurm job's share) where one is set. Empty when unknown.
std::optional<std::size_t> host_memory_available();

// "what needs X GiB, Y GiB available (where)" when `need` exceeds
// `available`, else empty. `what` names the grid (config file, points).
std::string memory_shortfall(std::size_t need, std::size_t available, const std::string& where,
                             const std::string& what);

// What to do about a grid that does not fit.
inline constexpr const char* memory_advice = "use a smaller grid, more ranks or a machine with more memory";
// Throws Error(invalid_value) with the shortfall where there is one, and
// `advice` (what to do about it: a run refused) where not empty. A caller
// that goes on another way (auto's fallback to a backend that holds less)
// says why without the advice.
void require_memory(std::size_t need, std::size_t available, const std::string& where, const std::string& what,
                    const std::string& advice = memory_advice);
// "1.5 GiB", "29 GiB".
std::string format_gib(std::size_t bytes);

}  // namespace heatwave
