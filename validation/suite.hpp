#pragma once
// `heatwave validate suite.yaml`: reads a suite of cases (docs/validation.md),
// runs each on its backend and rank count, checks it against the exact
// discrete solution, the convergence order, the Kokkos reference, the
// conservation laws and manufactured solutions for media and sources, and
// reports (table, JSON, Markdown, convergence plots).
#include <string>
#include <vector>

#include "io/config.hpp"
#include "io/errors.hpp"
#include "validation/manufactured.hpp"

namespace heatwave::validation {

enum class CheckKind { exact, convergence, reference, conservation, manufactured };
const char* to_string(CheckKind);

struct Check {
  CheckKind kind = CheckKind::exact;
  double tolerance = 0;  // exact / reference / conservation: relative; convergence, manufactured: on the order
  // convergence and manufactured
  int levels = 3;         // grids, each halving h
  double time_power = 2;  // dt = nu * h^time_power (manufactured: the base grid's dt * (h/h0)^time_power)
  double nu = 0.01;       // convergence only
  double order = 0;       // expected order (convergence: 2 * radius unless set)
  // manufactured only
  ManufacturedKind problem = ManufacturedKind::smooth;
  bool at_least = false;  // the order must not fall below order - tolerance (instead of within it)
  double error = 1e-2;    // bound on the finest grid's max |u - u_exact| / max |u_exact|
};

struct Case {
  std::string name;
  Config config;  // resolved: base config, overrides, matrix variant, backend
  int ranks = 1;
  std::vector<long> steps;  // where exact / reference / conservation measure; empty: the run's last step
  std::vector<Check> checks;
};

struct Suite {
  std::string name, source, output_dir;
  std::vector<Case> cases;
};

// Strict like the config: unknown keys, wrong types and bad values are
// heatwave::Error naming the suite file, the case and the key.
Suite load_suite(const std::string& path);

struct Options {
  std::string suite_path;
  std::string output_dir;     // empty: the suite's `output`, else "validation-report"
  std::string json_path;      // empty: <output_dir>/report.json
  std::string markdown_path;  // empty: <output_dir>/report.md
  std::string backend;        // non-empty: overrides every case's backend
  bool plots = true;
};

// Runs the suite on MPI_COMM_WORLD (a case of r ranks runs on world ranks
// 0..r-1; rank 0 reports). Returns ok or validation_failed on every rank.
ExitCode run_suite(const Options&);

}  // namespace heatwave::validation
