#include "io/files.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "io/errors.hpp"

namespace heatwave {

void write_text_file(const std::string& path, const std::string& text, const std::string& what) {
  const std::string temporary = path + ".tmp";
  std::FILE* out = std::fopen(temporary.c_str(), "w");
  if (!out) throw Error(ExitCode::io_error, temporary + ": cannot create the " + what + ": " + std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  int error = written ? 0 : errno;
  if (std::fclose(out) != 0 && error == 0) error = errno;
  if (!written || error != 0) {
    std::remove(temporary.c_str());
    throw Error(ExitCode::io_error, path + ": cannot write the " + what + ": " + std::strerror(error ? error : EIO));
  }
  std::error_code renamed;
  std::filesystem::rename(temporary, path, renamed);
  if (renamed) {
    std::remove(temporary.c_str());
    throw Error(ExitCode::io_error, "rename " + temporary + " -> " + path + " failed: " + renamed.message());
  }
}

std::uint64_t require_regular_file(const std::string& path, const std::string& what) {
  const std::string a = what.starts_with("HDF5") || std::string("aeiou").find(what[0]) != std::string::npos ? "an " : "a ";
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw Error(ExitCode::file_not_found, path + ": cannot open the " + what + ": " + std::strerror(errno));
  if (S_ISDIR(info.st_mode)) throw Error(ExitCode::file_not_found, path + ": is a directory, not " + a + what);
  if (!S_ISREG(info.st_mode))
    throw Error(ExitCode::file_not_found,
                path + ": is not a regular file (" +
                    (S_ISFIFO(info.st_mode)                            ? "a FIFO"
                     : S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode) ? "a device"
                                                                      : "a special file") +
                    "); " + a + what + " must be one");
  return static_cast<std::uint64_t>(info.st_size);
}

}  // namespace heatwave
