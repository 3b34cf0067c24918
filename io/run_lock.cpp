#include "io/run_lock.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>

#include "io/errors.hpp"

namespace heatwave {

namespace {

std::string contents(int fd) {
  std::string text(512, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text;
}

}  // namespace

namespace fs = std::filesystem;

RunLock::RunLock(const std::string& path, Target target, const std::string& key, const std::string& owner) {
  const bool directory = target == Target::directory;
  const fs::path dir = directory ? fs::path(path) : fs::path(path).parent_path();
  path_ = directory ? (dir / ".heatwave.lock").string()
                    : (dir / ("." + fs::path(path).filename().string() + ".heatwave.lock")).string();
  std::error_code error;
  if (!dir.empty()) fs::create_directories(dir, error);
  if (error) throw Error(ExitCode::io_error, dir.string() + ": cannot create the directory: " + error.message());
  // The lock is the file under its name now: a run that ends removes it, so
  // a lock taken on a file another run has just unlinked is taken again.
  for (;;) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(ExitCode::io_error, path_ + ": cannot create the lock file: " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int why = errno;
      const std::string holder = contents(fd_);
      ::close(fd_);
      fd_ = -1;
      if (why != EWOULDBLOCK)
        throw Error(ExitCode::io_error, path_ + ": cannot take the lock: " + std::strerror(why));
      throw Error(ExitCode::directory_in_use,
                  path + " (" + key + ") is in use by another heatwave run (" +
                      (holder.empty() ? "holder unknown" : holder) + "): two runs writing one " +
                      (directory ? "directory" : "file") +
                      " would overwrite each other's files; give this run its own " + key +
                      ", or wait for that run to end");
    }
    struct stat held {}, named {};
    if (::fstat(fd_, &held) == 0 && ::stat(path_.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino)
      break;
    ::close(fd_);  // unlinked by the run that held it, between our open and our flock
  }
  // A lock file with a holder but no lock on it: that process is gone.
  if (const std::string stale = contents(fd_); !stale.empty())
    spdlog::warn("{}: taking over a stale lock ({}), whose process is gone", path_, stale);
  char host[256] = "unknown";
  ::gethostname(host, sizeof host - 1);
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char since[32];
  std::strftime(since, sizeof since, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  const std::string me =
      "host " + std::string(host) + ", pid " + std::to_string(::getpid()) + ", " + owner + ", since " + since + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size()))
    spdlog::warn("{}: cannot record this run in the lock file: {}", path_, std::strerror(errno));
}

RunLock::~RunLock() {
  if (fd_ < 0) return;
  // Removed while still held (a run that opens it meanwhile finds it unlinked
  // and takes the new one); emptied first, where it cannot be removed, so the
  // next run finds no stale holder. The lock goes with the descriptor.
  if (::unlink(path_.c_str()) != 0 && ::ftruncate(fd_, 0) != 0) {
  }
  ::close(fd_);
}

}  // namespace heatwave
