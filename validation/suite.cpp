// `heatwave validate`: runs each case of a suite and reports. Reading the suite
// is validation/suite_load.cpp; the checks are validation/checks.cpp and convergence.cpp.
#include "validation/suite.hpp"

#include <mpi.h>
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>

#include "io/log.hpp"
#include "io/startup_progress.hpp"
#include "validation/checks.hpp"
#include "validation/reference.hpp"
#include "validation/report.hpp"

namespace heatwave::validation {

const char* to_string(CheckKind k) {
  switch (k) {
    case CheckKind::exact:
      return "exact";
    case CheckKind::convergence:
      return "convergence";
    case CheckKind::reference:
      return "reference";
    case CheckKind::conservation:
      return "conservation";
    case CheckKind::manufactured:
      return "manufactured";
  }
  return "?";
}

namespace {

using namespace detail;

// A case name as a file name.
std::string file_name(std::string name) {
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') ch = '_';
  return name;
}

void run_case(const Case& c, const std::string& scratch, Report& report) {
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  const bool reporter = world_rank == 0;
  if (c.ranks > world_size) {
    for (const Check& check : c.checks)
      report.rows.push_back(
          {c.name, to_string(check.kind), "-", 0, "-", Outcome::skip,
           fmt::format("needs {} ranks, the job has {}: run under mpirun -n {}", c.ranks, world_size, c.ranks)});
    return;
  }
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank < c.ranks ? 0 : MPI_UNDEFINED, world_rank, &comm);
  if (comm == MPI_COMM_NULL) return;

  const Problem p = Problem::from(c.config);
  std::vector<long> steps = c.steps.empty() ? std::vector<long>{p.steps} : c.steps;
  // Every step any check needs, ascending: the checked ones, and where
  // conservation starts (heat: 0; wave: 1, where the energy is first defined).
  std::vector<long> needed = steps;
  needed.push_back(info(p.equation).conserved == Conserved::mean ? 0 : 1);
  std::sort(needed.begin(), needed.end());
  needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
  // Convergence and manufactured ladders make their own runs.
  const bool one_run = std::any_of(c.checks.begin(), c.checks.end(), [](const Check& k) {
    return k.kind != CheckKind::convergence && k.kind != CheckKind::manufactured;
  });
  const std::vector<Snapshot> snaps = one_run ? run_backend(c.config, needed, comm) : std::vector<Snapshot>{};
  for (const Check& check : c.checks) {
    switch (check.kind) {
      case CheckKind::exact:
        if (reporter) exact_rows(c, check, p, snaps, steps, report);
        break;
      case CheckKind::reference:
        if (reporter) reference_rows(c, check, p, snaps, steps, report);
        if (c.config.run.receivers.any())
          trace_rows(c, check, p, scratch + "/traces/" + file_name(c.name), comm, reporter, report);
        break;
      case CheckKind::conservation:
        if (reporter) conservation_rows(c, check, p, snaps, steps, report);
        break;
      case CheckKind::convergence:
        convergence_rows(c, check, comm, reporter, report);
        break;
      case CheckKind::manufactured:
        manufactured_rows(c, check, scratch + "/manufactured/" + file_name(c.name), comm, reporter, report);
        break;
    }
  }
  MPI_Comm_free(&comm);
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

ExitCode run_suite(const Options& o) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Suite suite = load_suite(o.suite_path);
  if (!o.backend.empty())
    for (Case& c : suite.cases) c.config.run.backend = kind_named(backend_names, o.backend);
  const std::string dir = o.output_dir.empty() ? suite.output_dir : o.output_dir;

  Report report;
  report.suite = suite.name;
  report.source = suite.source;
  report.reference = reference::description();
  // Manufactured ladders write their fields under manufactured/ (every rank of
  // a case reads them), the reference check its receivers' files under traces/.
  const std::string scratch = std::filesystem::absolute(dir).string();
  const double start = now();
  for (const Case& c : suite.cases) {
    const double t0 = now();
    startup_begin();
    const std::size_t first = report.rows.size();
    run_case(c, scratch, report);
    const bool failed = std::any_of(report.rows.begin() + first, report.rows.end(),
                                    [](const Row& r) { return r.outcome == Outcome::fail; });
    spdlog::info("case {} ({}, {} rank(s)): {} in {:.2f} s", c.name, backend_choice_name(c.config.run.backend), c.ranks,
                 failed ? "FAIL" : "done", now() - t0);
  }
  report.seconds = now() - start;

  int passed = report.passed() ? 1 : 0;
  if (rank == 0) {
    std::filesystem::create_directories(dir);
    if (o.plots) {
      const double t0 = now();
      make_plots(report, dir);
      report.plot_seconds = now() - t0;
    }
    else if (!report.ladders.empty())
      report.plot_note = "plots turned off (--no-plots)";
    if (!report.plot_note.empty()) spdlog::warn("no convergence plots: {}", report.plot_note);
    const std::string json = o.json_path.empty() ? dir + "/report.json" : o.json_path;
    const std::string markdown = o.markdown_path.empty() ? dir + "/report.md" : o.markdown_path;
    write_json(report, json);
    write_markdown(report, markdown);
    print_table(report);
    spdlog::info("report written to {} and {}{}", json, markdown,
                 report.plots.empty() ? "" : fmt::format(", {} plot(s) in {}", report.plots.size(), dir));
  }
  MPI_Bcast(&passed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return passed ? ExitCode::ok : ExitCode::validation_failed;
}

}  // namespace heatwave::validation
