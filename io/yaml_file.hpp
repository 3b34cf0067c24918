#pragma once
// Reading YAML input the way every heatwave input is read (configs,
// validation and benchmark suites): a regular file under a size limit, one
// document, no key twice in a map. yaml-cpp accepts duplicate keys (the first
// wins) and several documents; a config that silently drops a value is worse
// than one that is refused, so both are errors naming file:line of each place.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>

namespace heatwave::yaml {

inline constexpr std::size_t max_input_bytes = std::size_t(1) << 20;  // 1 MiB: any real config is far smaller

// The text of `path`, a regular file of at most max_input_bytes; `what` names
// it in messages ("config file"). Error(file_not_found) for a missing,
// unreadable or non-regular file (a directory, a FIFO, a device) or one too large.
std::string read_input_file(const std::string& path, const std::string& what);

// One YAML document from `text` (empty text: a null node). Error(yaml_syntax)
// for a syntax error, a second document or a key given twice in a map.
YAML::Node parse_document(const std::string& text, const std::string& source);

// read_input_file, then parse_document.
YAML::Node load_file(const std::string& path, const std::string& what);

}  // namespace heatwave::yaml
