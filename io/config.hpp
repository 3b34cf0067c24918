#pragma once
// The typed, validated configuration. YAML goes in through load_config();
// everything downstream reads this struct, never YAML.
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/equations/equations.hpp"
#include "core/numerics.hpp"
#include "core/run_settings.hpp"

namespace heatwave {

// 2^53: where a double stops counting exactly (steps, grid points).
inline constexpr double max_exact_count = 9007199254740992.0;

// A config file as read: the case (what is solved: physics and numerics) and
// the run settings (how it runs). Problem::from derives the numerics.
struct Config {
  std::string source;  // file the config came from, for messages

  Equation equation = Equation::heat;
  Precision precision = Precision::float64;
  int dims = 2;
  std::array<long, max_dims> points{1, 1, 1};
  std::array<double, max_dims> length{1.0, 1.0, 1.0};
  int radius = 1;             // stencil radius: 1 (2nd order) or 2 (4th order)
  Coefficients coefficients;  // the equation's (heat: alpha; wave: c), by name

  // Time: exactly one of steps / t_end; dt explicit or automatic.
  std::optional<double> dt;  // empty: auto
  double dt_safety = 0.9;    // fraction of the stability limit used by dt: auto
  std::optional<long> steps;
  std::optional<double> t_end;

  std::array<std::array<BoundaryFace, 2>, max_dims> boundary{};  // [axis][low, high]
  InitialCondition initial;
  std::optional<InitialCondition> velocity;  // equations second order in time; zero when absent

  // Coefficients that vary in space (`material:`), by key; a coefficient not
  // here is the constant in `coefficients`.
  std::map<std::string, Medium, std::less<>> material;
  std::vector<Source> sources;

  RunSettings run;
};

// Parse and validate. `source` names the text in messages. A file's relative
// data paths (initial, material and source files) resolve against its folder.
// Throws heatwave::Error with a distinct ExitCode for each kind of problem.
Config load_config_file(const std::string& path);

// What a coefficient's every value must be: finite, > 0 (or >= 0 where the
// spec allows 0), and where not 0 within 1e-150 to 1e150 in magnitude, so
// that its square and the dt it sets are normal doubles (alpha: 1e-320 or a
// c of 1e200 would make the steps' numbers underflow or overflow).
inline constexpr double max_coefficient_magnitude = 1e150;
bool coefficient_ok(const CoefficientSpec& spec, double value);
std::string coefficient_rule(const CoefficientSpec& spec);  // "> 0 and finite, within ..."
Config load_config_text(const std::string& text, const std::string& source);

// The built-in quickstart case (configs/quickstart.yaml, embedded at build time).
Config default_config();

// The resolved config (every default filled in) as YAML: logged, hashed, and
// stored with every output so a run can be reproduced from its files.
std::string to_yaml(const Config&);
std::string config_hash(const Config&);  // FNV-1a 64 of the case's resolved YAML, hex (run settings left out)

}  // namespace heatwave
