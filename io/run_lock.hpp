#pragma once
// One run per thing it writes: a checkpoint or output directory, a receivers
// or metrics file. An advisory lock (flock) held while the run lives, on
// <dir>/.heatwave.lock for a directory and on <dir>/.<name>.heatwave.lock
// beside a file (not on the file: HDF5 takes a flock of its own on the files
// it opens). The lock file says who holds it (host, PID, config hash, since
// when). Two runs writing one place would overwrite each other's files and
// log them as their own. A run that ends (whatever its exit code) removes its
// lock files; one killed leaves them, stale, for the next run to take over.
#include <string>

namespace heatwave {

class RunLock {
 public:
  enum class Target { directory, file };
  // Creates the directory (a file's: its parent) if needed and takes the
  // lock. A lock another live process holds is Error(directory_in_use)
  // naming the holder and `key` (the config key that names the place); a lock
  // file whose process is gone (the kernel released its flock) is taken over
  // with a warning. `owner`: what this run writes into the file (its config hash).
  RunLock(const std::string& path, Target target, const std::string& key, const std::string& owner);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace heatwave
