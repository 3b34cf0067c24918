#include "validation/report.hpp"

#include <spdlog/fmt/fmt.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/errors.hpp"
#include "plot_convergence.hpp"  // generated from validation/plot_convergence.py

namespace heatwave::validation {

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::pass:
      return "PASS";
    case Outcome::fail:
      return "FAIL";
    case Outcome::skip:
      return "SKIP";
  }
  return "?";
}

long Report::count(Outcome o) const {
  return std::count_if(rows.begin(), rows.end(), [&](const Row& r) { return r.outcome == o; });
}

namespace {

std::string measured_text(const Row& r) {
  if (r.outcome == Outcome::skip) return "-";
  // Orders (convergence, manufactured) read best as plain numbers.
  return r.quantity.rfind("order", 0) == 0 ? fmt::format("{:.3f}", r.measured) : fmt::format("{:.3e}", r.measured);
}

std::string summary_line(const Report& r) {
  return fmt::format(
      "{} rows: {} PASS, {} FAIL, {} SKIP in {:.1f} s of checks, {}{}", r.rows.size(), r.count(Outcome::pass),
      r.count(Outcome::fail), r.count(Outcome::skip), r.seconds,
      r.plots.empty() ? std::string("no plots") : fmt::format("{:.1f} s of plots", r.plot_seconds),
      r.count(Outcome::pass) + r.count(Outcome::fail) == 0 ? " (no check ran: a suite that checks nothing fails)" : "");
}

void write_text(const std::string& path, const std::string& text, const char* what) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) throw Error(ExitCode::io_error, path + ": cannot write the " + what);
}

std::string table_line(const Row& r, std::size_t case_width, std::size_t check_width) {
  return fmt::format("{:<{}}  {:<{}}  {:>11}  {:<12}  {}{}", r.case_name, case_width, r.check + " " + r.quantity,
                     check_width, measured_text(r), r.tolerance, to_string(r.outcome),
                     r.note.empty() ? "" : "  (" + r.note + ")");
}

}  // namespace

void print_table(const Report& r) {
  std::size_t case_width = 4, check_width = 5;
  for (const Row& row : r.rows) {
    case_width = std::max(case_width, row.case_name.size());
    check_width = std::max(check_width, row.check.size() + 1 + row.quantity.size());
  }
  std::printf("validation suite %s (%s), reference: %s\n", r.suite.c_str(), r.source.c_str(), r.reference.c_str());
  std::printf("%s\n", fmt::format("{:<{}}  {:<{}}  {:>11}  {:<12}  {}", "case", case_width, "check", check_width,
                                  "measured", "tolerance", "result")
                          .c_str());
  for (const Row& row : r.rows) std::printf("%s\n", table_line(row, case_width, check_width).c_str());
  if (!r.passed()) {
    std::printf("\nfailed checks:\n");
    for (const Row& row : r.rows)
      if (row.outcome == Outcome::fail) std::printf("%s\n", table_line(row, case_width, check_width).c_str());
  }
  std::printf("\n%s: %s\n", r.passed() ? "PASSED" : "FAILED", summary_line(r).c_str());
  std::fflush(stdout);
}

void write_json(const Report& r, const std::string& path) {
  nlohmann::json j;
  j["suite"] = r.suite;
  j["source"] = r.source;
  j["reference"] = r.reference;
  j["seconds"] = r.seconds;
  j["plot_seconds"] = r.plot_seconds;
  j["passed"] = r.passed();
  j["summary"] = {{"pass", r.count(Outcome::pass)}, {"fail", r.count(Outcome::fail)}, {"skip", r.count(Outcome::skip)}};
  j["rows"] = nlohmann::json::array();
  for (const Row& row : r.rows)
    j["rows"].push_back({{"case", row.case_name},
                         {"check", row.check},
                         {"quantity", row.quantity},
                         {"measured", row.measured},
                         {"tolerance", row.tolerance},
                         {"result", to_string(row.outcome)},
                         {"note", row.note}});
  j["ladders"] = nlohmann::json::array();
  for (const Ladder& l : r.ladders)
    j["ladders"].push_back({{"case", l.case_name},
                            {"expected_order", l.expected_order},
                            {"points", l.points},
                            {"spacing", l.spacing},
                            {"error", l.error}});
  j["plots"] = {{"files", r.plots}, {"note", r.plot_note}};
  write_text(path, j.dump(2) + "\n", "validation report (JSON)");
}

void write_markdown(const Report& r, const std::string& path) {
  std::ostringstream md;
  md << "# Validation report: " << r.suite << "\n\n";
  md << "Suite `" << r.source << "`, reference " << r.reference << ".\n\n";
  md << "**" << (r.passed() ? "PASSED" : "FAILED") << "**: " << summary_line(r) << ".\n\n";
  md << "| case | check | measured | tolerance | result |\n|---|---|---|---|---|\n";
  for (const Row& row : r.rows)
    md << "| " << row.case_name << " | " << row.check << " " << row.quantity << " | " << measured_text(row) << " | "
       << row.tolerance << " | " << to_string(row.outcome) << (row.note.empty() ? "" : " (" + row.note + ")") << " |\n";
  if (!r.ladders.empty()) {
    md << "\n## Convergence\n\n";
    if (r.plots.empty()) md << "No plots: " << r.plot_note << "\n";
    for (const std::string& png : r.plots)
      md << "![" << png << "](" << std::filesystem::path(png).filename().string() << ")\n";
  }
  write_text(path, md.str(), "validation report (Markdown)");
}

void make_plots(Report& r, const std::string& dir) {
  if (r.ladders.empty()) return;
  std::string python = "python3";
  if (const char* env = std::getenv("HEATWAVE_PYTHON"); env && *env)
    python = env;
  else if (std::filesystem::exists("/usr/bin/python3"))
    python = "/usr/bin/python3";
  const std::string script = dir + "/plot_convergence.py", data = dir + "/convergence.json", log = dir + "/plot.log";
  write_text(script, plot_convergence_py, "plot script");
  write_json(r, data);
  const std::string command = "'" + python + "' '" + script + "' '" + data + "' '" + dir + "' >'" + log + "' 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(log);
  std::string line, last;
  std::vector<std::string> made;
  while (std::getline(in, line)) {
    if (line.rfind("wrote ", 0) == 0) made.push_back(line.substr(6));
    if (!line.empty()) last = line;
  }
  if (status == 0 && !made.empty()) {
    r.plots = made;
    return;
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.plot_note = fmt::format("{} {} failed (exit {}): {}; see {}", python, script, code, last, log);
}

}  // namespace heatwave::validation
