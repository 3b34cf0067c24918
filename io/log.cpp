#include "io/log.hpp"

#include <chrono>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace heatwave {

namespace {

// Colour only on a terminal that is the user's: mpirun hands its ranks a
// pseudo-terminal even when its own output goes to a file, so under an MPI
// launcher (or with NO_COLOR set, https://no-color.org) the log stays plain.
spdlog::color_mode colour_for(int fd) {
  for (const char* var : {"NO_COLOR", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMIX_RANK"})
    if (const char* v = std::getenv(var); v && *v) return spdlog::color_mode::never;
  return isatty(fd) ? spdlog::color_mode::always : spdlog::color_mode::never;
}

// Results and progress on stdout, warnings and errors on stderr (a script
// that keeps the results sees the errors still), each in colour only where
// that stream is a terminal: logs piped into files or Slurm outputs stay plain.
class SplitSink final : public spdlog::sinks::sink {
 public:
  SplitSink() {
    out_.set_color_mode(colour_for(STDOUT_FILENO));
    err_.set_color_mode(colour_for(STDERR_FILENO));
  }
  void log(const spdlog::details::log_msg& message) override {
    if (message.level >= spdlog::level::warn) {
      out_.flush();  // what came before stays before
      err_.log(message);
    } else {
      out_.log(message);
    }
  }
  void flush() override {
    out_.flush();
    err_.flush();
  }
  void set_pattern(const std::string& pattern) override {
    out_.set_pattern(pattern);
    err_.set_pattern(pattern);
  }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    out_.set_formatter(formatter->clone());
    err_.set_formatter(std::move(formatter));
  }

 private:
  spdlog::sinks::ansicolor_stdout_sink_mt out_;
  spdlog::sinks::ansicolor_stderr_sink_mt err_;
};

}  // namespace

void init_logging(int rank, int size, spdlog::level::level_enum level) {
  auto logger = std::make_shared<spdlog::logger>("heatwave", std::make_shared<SplitSink>());
  logger->set_pattern(size > 1 ? "[%H:%M:%S.%e] [rank " + std::to_string(rank) + "] %^%l%$: %v"
                               : "[%H:%M:%S.%e] %^%l%$: %v");
  logger->set_level(rank == 0 ? level : std::max(level, spdlog::level::warn));
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

namespace {
// When the set-up began: the process's start, as near as a static initialiser
// gets, until a case of a suite begins its own; and the last line's time.
auto setup_start = std::chrono::steady_clock::now();
double last_line = 0;
}  // namespace

void startup_begin() { setup_start = std::chrono::steady_clock::now(), last_line = 0; }

void debug_line(const std::string& what) { spdlog::debug(what); }

void warning_line(const std::string& what) { spdlog::warn(what); }

void startup_progress(const std::string& what) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count();
  if (elapsed < 2 || elapsed - last_line < 2) return;
  last_line = elapsed;
  spdlog::info("start-up: {} ({})", what, format_duration(elapsed));
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
