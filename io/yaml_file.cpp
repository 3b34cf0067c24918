#include "io/yaml_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "io/errors.hpp"

namespace heatwave::yaml {

namespace {

std::string where(const std::string& source, const YAML::Mark& mark) {
  return source + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

// Every map below `node`: a key given twice is an error naming both places.
void refuse_duplicate_keys(const YAML::Node& node, const std::string& source, const std::string& path) {
  if (node.IsMap()) {
    std::map<std::string, YAML::Mark> seen;
    for (const auto& kv : node) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
      const std::string qualified = path.empty() ? key : path + "." + key;
      if (!key.empty()) {
        const auto [it, fresh] = seen.emplace(key, kv.first.Mark());
        if (!fresh)
          throw Error(ExitCode::yaml_syntax, where(source, kv.first.Mark()) + ": key '" + qualified + "' is given twice (first at " +
                                                 where(source, it->second) + "); each key may appear once");
      }
      refuse_duplicate_keys(kv.second, source, qualified);
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) refuse_duplicate_keys(node[i], source, path + "[" + std::to_string(i) + "]");
  }
}

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw Error(ExitCode::file_not_found, path + ": cannot open the " + what + ": " + std::strerror(errno));
  if (S_ISDIR(info.st_mode)) throw Error(ExitCode::file_not_found, path + ": is a directory, not a " + what);
  if (!S_ISREG(info.st_mode))
    throw Error(ExitCode::file_not_found, path + ": is not a regular file (" +
                                              (S_ISFIFO(info.st_mode) ? "a FIFO" : S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode) ? "a device" : "a special file") +
                                              "); a " + what + " must be one");
  if (static_cast<std::size_t>(info.st_size) > max_input_bytes)
    throw Error(ExitCode::file_not_found, path + ": is " + std::to_string(info.st_size) + " bytes, more than a " + what +
                                              " may be (" + std::to_string(max_input_bytes) + " bytes): is it the right file?");
  std::ifstream in(path);
  if (!in) throw Error(ExitCode::file_not_found, path + ": cannot open the " + what + " (is it readable?)");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

YAML::Node parse_document(const std::string& text, const std::string& source) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(text);
  } catch (const YAML::ParserException& e) {
    throw Error(ExitCode::yaml_syntax, where(source, e.mark) + ": YAML syntax error: " + e.msg);
  }
  if (documents.size() > 1)
    throw Error(ExitCode::yaml_syntax, where(source, documents[1].Mark()) + ": a second YAML document (after '---'); " + source +
                                           " must hold one");
  if (documents.empty()) return YAML::Node();
  refuse_duplicate_keys(documents[0], source, "");
  return documents[0];
}

YAML::Node load_file(const std::string& path, const std::string& what) {
  return parse_document(read_input_file(path, what), path);
}

}  // namespace heatwave::yaml
