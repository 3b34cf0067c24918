#pragma once
// One run per checkpoint or output directory: an advisory lock (flock) on
// <dir>/.heatwave.lock, held while the run lives, the file holding who holds
// it (host, PID, config hash, since when). Two runs writing one directory
// would overwrite each other's files and log them as their own.
#include <string>

namespace heatwave {

class DirectoryLock {
 public:
  // Creates `dir` if needed and takes its lock. A lock another live process
  // holds is Error(directory_in_use) naming the holder; a lock file whose
  // process is gone (the kernel released its flock) is taken over with a
  // warning. `owner`: what this run writes into the file (its config hash).
  DirectoryLock(const std::string& dir, const std::string& owner);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace heatwave
