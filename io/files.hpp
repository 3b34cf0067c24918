#pragma once
// Files as heatwave meets them: inputs that must be regular files, and small
// text files (metrics JSON, XDMF series) written whole or not at all.
#include <cstdint>
#include <string>

namespace heatwave {

// Writes `text` to `path` through `path`.tmp and a rename, so a reader never
// sees half a file; on failure (a full disk, no permission) the temporary is
// removed, `path` is left as it was, and Error(io_error) names the file, what
// it is and the system's reason.
void write_text_file(const std::string& path, const std::string& text, const std::string& what);

// Error(file_not_found) naming `path` and `what` it should be, unless it is a
// regular file (not missing, a directory, a FIFO or a device); returns its size.
std::uint64_t require_regular_file(const std::string& path, const std::string& what);

}  // namespace heatwave
