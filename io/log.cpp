#include "io/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cmath>
#include <cstdio>

namespace heatwave {

void init_logging(int rank, int size, spdlog::level::level_enum level) {
  auto logger = spdlog::stdout_color_mt("heatwave");
  logger->set_pattern(size > 1 ? "[%H:%M:%S.%e] [rank " + std::to_string(rank) + "] %^%l%$: %v"
                               : "[%H:%M:%S.%e] %^%l%$: %v");
  logger->set_level(rank == 0 ? level : std::max(level, spdlog::level::warn));
  spdlog::set_default_logger(logger);
}

std::string format_duration(double s) {
  char buf[64];
  if (!std::isfinite(s)) return "?";
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.2f s", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%d min %02d s", static_cast<int>(s / 60), static_cast<int>(s) % 60);
  else if (s < 86400 * 10)
    std::snprintf(buf, sizeof buf, "%d h %02d min", static_cast<int>(s / 3600), static_cast<int>(s / 60) % 60);
  else if (s < 86400 * 365.25 * 1000)
    std::snprintf(buf, sizeof buf, "%.0f days", s / 86400);
  else
    return "more than 1000 years";
  return buf;
}

}  // namespace heatwave
