#pragma once
// What the suite's files share, private to validation/ (not in suite.hpp): a
// backend run's snapshots, the row makers of each check kind, the manufactured ladder.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "io/metrics.hpp"
#include "solver/problem.hpp"
#include "validation/manufactured.hpp"
#include "validation/report.hpp"
#include "validation/suite.hpp"

namespace heatwave::validation::detail {

// The state of a backend run at one step, on rank 0 of the case's ranks.
struct Snapshot {
  long step = 0;
  std::vector<double> current, previous;  // previous: wave only
  FieldSummary summary;
};

// The largest |a - b| and the sum of its squares over the points added. A NaN
// keeps the largest NaN, so its `<=` judgement fails.
struct Difference {
  double max = 0, sum_sq = 0;
  void add(double a, double b) {
    const double d = std::abs(a - b);
    max = std::isnan(d) || std::isnan(max) ? NAN : std::max(max, d);
    sum_sq += d * d;
  }
};

// validation/checks.cpp

std::vector<Snapshot> run_backend(Config config, const std::vector<long>& steps, MPI_Comm comm);
std::pair<double, double> mode_error(const Problem& p, const std::vector<double>& u, double factor,
                                     const InitialCondition& shape);
Outcome judge(double measured, double limit);
Row row(const Case& c, CheckKind kind, std::string quantity, double measured, double tolerance, std::string note = "");
void exact_rows(const Case& c, const Check& check, const Problem& p, const std::vector<Snapshot>& snaps,
                const std::vector<long>& steps, Report& report);
void reference_rows(const Case& c, const Check& check, const Problem& p, const std::vector<Snapshot>& snaps,
                    const std::vector<long>& steps, Report& report);
void trace_rows(const Case& c, const Check& check, const Problem& p, const std::string& scratch, MPI_Comm comm,
                bool reporter, Report& report);
void conservation_rows(const Case& c, const Check& check, const Problem& p, const std::vector<Snapshot>& snaps,
                       const std::vector<long>& steps, Report& report);

// validation/convergence.cpp

// One grid of a manufactured ladder: its config (grid, dt, steps; no files
// yet) and its manufactured solution.
struct ManufacturedLevel {
  Config config;
  Manufactured solution;
};

std::vector<ManufacturedLevel> manufactured_ladder(const Config& config, const Check& check);
void convergence_rows(const Case& c, const Check& check, MPI_Comm comm, bool reporter, Report& report);
void manufactured_rows(const Case& c, const Check& check, const std::string& scratch, MPI_Comm comm, bool reporter,
                       Report& report);

}  // namespace heatwave::validation::detail
