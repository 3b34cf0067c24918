#pragma once
// FNV-1a 64 over 64-bit words, byte by byte, least significant first (the
// same on every host): the content hashes a checkpoint records (media files,
// receivers' positions).
#include <cstdint>
#include <string>

#include <spdlog/fmt/fmt.h>

namespace heatwave {

struct Fnv1a {
  std::uint64_t h = 1469598103934665603ull;
  void operator()(std::uint64_t word) {
    for (int b = 0; b < 8; ++b) h = (h ^ ((word >> (8 * b)) & 0xffu)) * 1099511628211ull;
  }
  std::string hex() const { return fmt::format("{:016x}", h); }
};

}  // namespace heatwave
