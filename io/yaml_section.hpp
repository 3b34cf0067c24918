#pragma once
// Strict reading of a YAML map: the key paths, unknown keys (with the nearest
// valid one), wrong types and bad values become heatwave::Error with the file,
// line and column. The config (io/config.cpp) and the validation suite
// (validation/suite_load.cpp) read their files through it.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "io/errors.hpp"

namespace heatwave::yaml {

inline std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1] ? 1u : 0u)});
      diag = up;
    }
  }
  return row[b.size()];
}

inline std::string scalar_text(const YAML::Node& n) {
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a map";
  return "nothing";
}

template <class T>
struct TypeName;
template <>
struct TypeName<long> {
  static constexpr const char* value = "an integer";
};
template <>
struct TypeName<int> {
  static constexpr const char* value = "an integer";
};
template <>
struct TypeName<double> {
  static constexpr const char* value = "a number";
};
template <>
struct TypeName<std::string> {
  static constexpr const char* value = "a string";
};
template <>
struct TypeName<bool> {
  static constexpr const char* value = "true or false";
};
template <>
struct TypeName<std::uint64_t> {
  static constexpr const char* value = "a non-negative integer";
};

// A map in the YAML tree at a known key path. It knows which keys it allows,
// so unknown keys are reported (with the nearest valid one) before anything else.
class Section {
 public:
  Section(YAML::Node node, std::string path, const std::string& file, std::vector<std::string> allowed)
      : node_(std::move(node)), path_(std::move(path)), file_(file), allowed_(std::move(allowed)) {
    if (!node_.IsMap())
      fail(ExitCode::wrong_type, node_, path_.empty() ? "the config" : "'" + path_ + "'",
           "expects a map of keys, got " + scalar_text(node_));
    for (const auto& kv : node_) {
      const std::string key = kv.first.Scalar();
      if (std::find(allowed_.begin(), allowed_.end(), key) != allowed_.end()) continue;
      std::string best;
      std::size_t best_d = 3;  // suggest only near misses
      for (const auto& a : allowed_) {
        auto d = edit_distance(key, a);
        if (d < best_d) best_d = d, best = a;
      }
      std::string msg = "unknown key '" + qualified(key) + "'";
      msg += best.empty() ? "; valid keys here: " + join(allowed_) : " (did you mean '" + best + "'?)";
      fail(ExitCode::unknown_key, kv.first, "", msg);
    }
  }

  bool has(const std::string& key) const { return static_cast<bool>(node_[key]); }
  YAML::Node raw(const std::string& key) const { return node_[key]; }
  std::string qualified(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const std::string& file() const { return file_; }

  Section section(const std::string& key, std::vector<std::string> allowed) const {
    if (!has(key)) fail(ExitCode::invalid_value, node_, "'" + qualified(key) + "'", "is required");
    return Section(node_[key], qualified(key), file_, std::move(allowed));
  }

  template <class T>
  T get(const std::string& key, T fallback) const {
    return has(key) ? convert<T>(node_[key], qualified(key)) : fallback;
  }
  template <class T>
  T require(const std::string& key) const {
    if (!has(key)) fail(ExitCode::invalid_value, node_, "'" + qualified(key) + "'", "is required");
    return convert<T>(node_[key], qualified(key));
  }
  template <class T>
  std::vector<T> list(const std::string& key) const {
    YAML::Node n = node_[key];
    if (!n.IsSequence())
      fail(ExitCode::wrong_type, n, "'" + qualified(key) + "'",
           std::string("expects a list of ") + TypeName<T>::value + "s, got " + scalar_text(n));
    std::vector<T> out;
    for (std::size_t i = 0; i < n.size(); ++i)
      out.push_back(convert<T>(n[i], qualified(key) + "[" + std::to_string(i) + "]"));
    return out;
  }
  // Pick one of `choices` from a string value.
  template <class E>
  E choice(const std::string& key, E fallback, const std::vector<std::pair<std::string, E>>& choices) const {
    if (!has(key)) return fallback;
    std::string v = convert<std::string>(node_[key], qualified(key));
    for (const auto& [name, e] : choices)
      if (name == v) return e;
    std::vector<std::string> names;
    for (const auto& c : choices) names.push_back(c.first);
    fail(ExitCode::invalid_value, node_[key], "'" + qualified(key) + "'",
         "= '" + v + "' is not one of: " + join(names));
  }

  // One of the kinds of a name table (core/numerics.hpp, core/run_settings.hpp).
  template <class Kind, std::size_t N>
  Kind named(const std::string& key, Kind fallback, const std::array<std::pair<Kind, const char*>, N>& names) const {
    std::vector<std::pair<std::string, Kind>> choices;
    for (const auto& [kind, name] : names) choices.emplace_back(name, kind);
    return choice<Kind>(key, fallback, choices);
  }
  // "auto" (empty) or a value of type T; `fallback` when the key is absent.
  template <class T>
  std::optional<T> get_or_auto(const std::string& key, std::optional<T> fallback) const {
    if (!has(key)) return fallback;
    if (node_[key].IsScalar() && node_[key].Scalar() == "auto") return std::nullopt;
    return get<T>(key, T{});
  }
  // "auto" (empty) or one of the kinds of a name table.
  template <class Kind, std::size_t N>
  std::optional<Kind> auto_or(const std::string& key, std::optional<Kind> fallback,
                              const std::array<std::pair<Kind, const char*>, N>& names) const {
    std::vector<std::pair<std::string, std::optional<Kind>>> choices{{"auto", std::nullopt}};
    for (const auto& [kind, name] : names) choices.emplace_back(name, kind);
    return choice<std::optional<Kind>>(key, fallback, choices);
  }

  [[noreturn]] void fail(ExitCode code, const YAML::Node& where, const std::string& what,
                         const std::string& msg) const {
    std::ostringstream os;
    os << file_;
    if (where.IsDefined() && where.Mark().line >= 0)
      os << ":" << where.Mark().line + 1 << ":" << where.Mark().column + 1;
    os << ": " << (what.empty() ? "" : what + " ") << msg;
    throw Error(code, os.str());
  }
  [[noreturn]] void invalid(const std::string& key, const std::string& msg,
                            ExitCode code = ExitCode::invalid_value) const {
    YAML::Node n = has(key) ? node_[key] : node_;
    fail(code, n, "'" + qualified(key) + "'", (has(key) ? "= " + value_text(n) + " " : "") + msg);
  }

 private:
  template <class T>
  T convert(const YAML::Node& n, const std::string& key) const {
    T v{};
    if (!n.IsScalar() || !YAML::convert<T>::decode(n, v))
      fail(ExitCode::wrong_type, n, "'" + key + "'",
           std::string("expects ") + TypeName<T>::value + ", got " + scalar_text(n));
    if constexpr (std::is_floating_point_v<T>)
      if (!std::isfinite(v))
        fail(ExitCode::invalid_value, n, "'" + key + "'", "= " + scalar_text(n) + " is not finite");
    return v;
  }
  static std::string value_text(const YAML::Node& n) {
    if (n.IsScalar()) return n.Scalar().empty() ? "\"\"" : n.Scalar();
    YAML::Emitter e;
    e << YAML::Flow << n;
    return e.c_str();
  }
  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  }

  YAML::Node node_;
  std::string path_;
  const std::string& file_;
  std::vector<std::string> allowed_;
};

}  // namespace heatwave::yaml
