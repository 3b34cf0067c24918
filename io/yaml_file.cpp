#include "io/yaml_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "io/errors.hpp"
#include "io/files.hpp"

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
  const std::uint64_t size = require_regular_file(path, what);
  if (size > max_input_bytes)
    throw Error(ExitCode::file_not_found, path + ": is " + std::to_string(size) + " bytes, more than the " + what +
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
