#pragma once
// The validation report: one row per measured quantity (case, check, measured
// value, tolerance, PASS/FAIL/SKIP), the convergence ladders behind the order
// rows, printed as a table and written as JSON, Markdown and PNG plots.
#include <string>
#include <vector>

namespace heatwave::validation {

enum class Outcome { pass, fail, skip };
const char* to_string(Outcome);

struct Row {
  std::string case_name;
  std::string check;     // "exact", "reference", "convergence", "conservation", "manufactured"
  std::string quantity;  // what was measured: "max rel @ step 40", "order 17->33 pts", ...
  double measured = 0;
  std::string tolerance;  // as the check reads it: "<= 1e-12", "4 +- 0.1"
  Outcome outcome = Outcome::fail;
  std::string note;  // why it failed or was skipped, when there is more to say
};

// The errors of one convergence study, for the plots.
struct Ladder {
  std::string case_name;
  double expected_order = 0;
  std::vector<long> points;     // points on axis x per level
  std::vector<double> spacing;  // h on axis x per level
  std::vector<double> error;    // max |u - u_exact| per level
};

struct Report {
  std::string suite, source, backend_note, reference;
  std::vector<Row> rows;
  std::vector<Ladder> ladders;
  double seconds = 0;       // the cases' checks
  double plot_seconds = 0;  // the convergence plots (0: none made)
  std::vector<std::string> plots;  // PNG files made
  std::string plot_note;           // why there are no plots, when there are none

  long count(Outcome) const;
  // No failure, and something ran: a suite whose every row is skipped proves nothing.
  bool passed() const { return count(Outcome::fail) == 0 && count(Outcome::pass) > 0; }
};

// The table on stdout, FAIL rows repeated at the end so they are not missed.
void print_table(const Report&);
// Writes JSON and Markdown. Throws Error(io_error).
void write_json(const Report&, const std::string& path);
void write_markdown(const Report&, const std::string& path);
// Plots each ladder as <dir>/convergence-<case>.png with validation/plot_convergence.py
// (via $HEATWAVE_PYTHON, else /usr/bin/python3, else python3 on PATH); fills
// report.plots, or report.plot_note with the reason there are none.
void make_plots(Report&, const std::string& dir);

}  // namespace heatwave::validation
