#pragma once
// Start-up progress, declared apart from io/log.hpp so that CUDA units can
// report without compiling spdlog.
#include <string>

namespace heatwave {

// "start-up: <what> (<elapsed since the set-up began>)" at info, once the
// start-up has taken more than 2 s, and then at most every 2 s (a fast start
// stays silent). Long start-up stages call it as they go.
void startup_progress(const std::string& what);
// A set-up begins: the process's start, and each case of a benchmark or a
// validation suite (whose start-up is its own, not the cases' before it).
void startup_begin();

// A debug line (--log-level debug), and a warning, for units that do not
// compile spdlog.
void debug_line(const std::string& what);
void warning_line(const std::string& what);

}  // namespace heatwave
