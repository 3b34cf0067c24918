#pragma once
// Logging through spdlog. Rank 0 speaks at the chosen level; other ranks only
// warn and err, with their rank in the prefix, so a 1000-rank job stays readable.
// Info and debug go to stdout, warnings and errors to stderr; colour only on a terminal.
#include <spdlog/spdlog.h>

#include "io/startup_progress.hpp"

namespace heatwave {

void init_logging(int rank, int size, spdlog::level::level_enum level = spdlog::level::info);

// "1.23 s", "2 min 05 s": durations for progress lines.
std::string format_duration(double seconds);

}  // namespace heatwave
