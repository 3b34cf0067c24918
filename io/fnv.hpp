#pragma once
// FNV-1a 64 over bytes, or 64-bit words byte by byte, least significant
// first (the same on every host): the content hashes a checkpoint records
// (media files, receivers' positions) and the config's hash.
#include <cstdint>
#include <string>

#include <spdlog/fmt/fmt.h>

namespace heatwave {

struct Fnv1a {
  std::uint64_t h = 1469598103934665603ull;
  void byte(unsigned char c) { h = (h ^ c) * 1099511628211ull; }
  void operator()(std::uint64_t word) {
    for (int b = 0; b < 8; ++b) byte(static_cast<unsigned char>(word >> (8 * b)));
  }
  std::string hex() const { return fmt::format("{:016x}", h); }
};

}  // namespace heatwave
