// heatwave: the command line. Parses arguments (CLI11), runs a command, and
// turns every heatwave::Error into its message and its exit code.
#include <mpi.h>
#include <omp.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "build_info.hpp"
#include "io/config.hpp"
#include "io/errors.hpp"
#include "io/hdf5.hpp"
#include "io/log.hpp"
#include "io/metrics.hpp"
#include "io/yaml_section.hpp"
#include "solver/halo_transport.hpp"
#include "solver/problem.hpp"
#include "solver/registry.hpp"
#include "solver/simulation.hpp"
#include "validation/suite.hpp"
#ifdef HEATWAVE_HAVE_CUDA
#include "kernels/cuda/device.hpp"
#endif

namespace heatwave {
namespace {

// Where a run writes, as absolute paths: inputs in a config resolve against
// its folder, what a run writes against the working directory.
std::string written_paths(const RunSettings& run) {
  std::vector<std::string> written;
  const auto add = [&](const char* what, const std::string& path) {
    if (!path.empty()) written.push_back(std::string(what) + " " + std::filesystem::absolute(path).lexically_normal().string());
  };
  add("metrics", run.metrics_file);
  if (run.checkpoint.every > 0 || run.checkpoint.every_seconds > 0) add("checkpoints", run.checkpoint.dir);
  if (run.output.every > 0) add("outputs", run.output.dir);
  if (run.receivers.any()) add("traces", run.receivers.file);
  return written.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(written, ", "));
}

struct RunOptions {
  std::string config_path;
  std::string backend;
  int threads = -1;
  std::string metrics;
  std::string restart;
  bool new_dt = false;
  bool overwrite = false;
};

// Set by SIGTERM/SIGUSR1 (Slurm's warning before the time limit); the time
// loop polls it at chunk boundaries, checkpoints and stops.
volatile std::sig_atomic_t stop_requested = 0;
// stdout and stderr where a launcher reads them: pipes, and under Open MPI
// the pseudo-terminals mpirun gives its ranks. mpirun, once signalled
// itself, stops reading them: a full buffer would then block rank 0's next
// log line, and with it the checkpoint. After a stop request a log line that
// cannot be written at once is dropped instead (never on a file or on a
// user's own terminal, whose open description the shell shares).
bool launcher_outputs[2] = {false, false};
extern "C" void request_stop(int) {
  stop_requested = 1;
  for (int fd : {1, 2})
    if (launcher_outputs[fd - 1]) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);  // async-signal-safe
}

void install_stop_handlers() {
  for (int fd : {1, 2}) {
    struct stat info {};
    const bool launched = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
    launcher_outputs[fd - 1] = ::fstat(fd, &info) == 0 && (S_ISFIFO(info.st_mode) || (launched && ::isatty(fd)));
  }
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int signal : {SIGTERM, SIGUSR1})
    if (sigaction(signal, &action, nullptr) != 0)
      throw Error(ExitCode::internal, "sigaction failed: cannot install the SIGTERM/SIGUSR1 handler");
  // A write past a file-size limit (a quota, `ulimit -f`) fails with EFBIG
  // and becomes an I/O error with the file's name, instead of killing the run.
  std::signal(SIGXFSZ, SIG_IGN);
}

int command_run(const RunOptions& o) {
  install_stop_handlers();  // first: a stop asked for during set-up is seen at the first chunk's end
  Config config = o.config_path.empty() ? default_config() : load_config_file(o.config_path);
  if (!o.backend.empty()) config.run.backend = kind_named(backend_names, o.backend);
  if (o.threads >= 0) config.run.threads = o.threads;
  if (!o.metrics.empty()) config.run.metrics_file = o.metrics;
  if (config.run.threads > 0) omp_set_num_threads(config.run.threads);

  // A config past the stability limit or off t_end, or whose outputs collide, stops here, before the log starts.
  const Problem problem = Problem::from(config);
  check_run_paths(config, problem);
  const std::vector<std::string> warnings = check_sources(problem);
  spdlog::info("heatwave {} ({}) - {} {}D, {}, radius {}, config {} (hash {})", build::version, build::git_commit,
               to_string(config.equation), config.dims, to_string(config.precision), config.radius, config.source,
               config_hash(config));
  spdlog::info("resolved config:\n{}", to_yaml(config));
  spdlog::info("writes (paths relative to the working directory): {}", written_paths(config.run));
  for (const std::string& warning : warnings) spdlog::warn("{}", warning);
  if (o.new_dt && o.restart.empty())
    throw Error(ExitCode::usage, "--new-dt goes with --restart (it lets a restart change dt)");
  if (o.overwrite && !o.restart.empty())
    throw Error(ExitCode::usage, "--overwrite starts afresh; --restart continues: give one of them");
  const RunMetrics metrics = run_config(
      config, RunControl{o.restart, o.new_dt, &stop_requested, o.overwrite ? EarlierRun::replace : EarlierRun::refuse});
  return metrics.interrupted ? static_cast<int>(ExitCode::interrupted) : 0;
}

int command_inspect(const std::string& path) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return 0;
  const hdf5::Reader file(path);
  std::fputs(file.describe().c_str(), stdout);
  // Every chunk read back: a damaged file is refused here as a restart would refuse it.
  std::uint64_t values = 0;
  const auto datasets = file.dataset_names();
  for (const std::string& name : datasets) values += file.verify(name);
  std::printf(
      "checksums: verified (every chunk of %zu dataset(s) read back, through its Fletcher32 filter where it has one, %llu values)\n",
      datasets.size(), static_cast<unsigned long long>(values));
  return 0;
}

// A receivers file: a summary, or with `csv` every sample as CSV (step,
// time, then a column a receiver) to `output` ("-": stdout).
int command_traces(const std::string& path, bool csv, const std::string& output) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return 0;
  const hdf5::Traces t = hdf5::read_traces(path);
  if (!csv) {
    std::printf("%s: %zu receivers (field %s), %zu samples", path.c_str(), t.receivers, t.field.c_str(), t.samples);
    if (t.samples > 0)
      std::printf(", steps %lld to %lld, t = %.10g to %.10g", t.step.front(), t.step.back(), t.time.front(),
                  t.time.back());
    std::printf("\n");
    return 0;
  }
  std::FILE* out = output == "-" ? stdout : std::fopen(output.c_str(), "w");
  if (!out) throw Error(ExitCode::io_error, output + ": cannot open for writing (" + std::strerror(errno) + ")");
  std::fprintf(out, "step,time");
  for (std::size_t r = 0; r < t.receivers; ++r) {
    std::string name = "r" + std::to_string(r) + "(";
    for (int a = 0; a < t.dims; ++a) name += (a ? " " : "") + fmt::format("{:.6g}", t.positions[r * t.dims + a]);
    std::fprintf(out, ",%s)", name.c_str());
  }
  std::fprintf(out, "\n");
  for (std::size_t s = 0; s < t.samples; ++s) {
    std::fprintf(out, "%lld,%.17g", t.step[s], t.time[s]);
    for (std::size_t r = 0; r < t.receivers; ++r) std::fprintf(out, ",%.17g", t.traces[s * t.receivers + r]);
    std::fprintf(out, "\n");
  }
  if (out != stdout && std::fclose(out) != 0)
    throw Error(ExitCode::io_error, output + ": writing failed (" + std::strerror(errno) + ")");
  return 0;
}

int command_info() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return 0;
  char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(mpi_version, &len);
  std::string mpi(mpi_version, len);
  if (auto nl = mpi.find('\n'); nl != std::string::npos) mpi.resize(nl);
  std::printf("heatwave %s (commit %s, %s build)\n", build::version, build::git_commit, build::build_type);
  std::printf("features:\n");
  std::printf("  cuda:    %s\n", build::cuda ? build::cuda_architectures : "no (built with HEATWAVE_CUDA=OFF)");
  std::printf("  mpi:     %s\n", mpi.c_str());
  std::printf("  nccl:    %s\n", build::nccl);
  std::printf("  openmp:  %d thread(s) by default\n", omp_get_max_threads());
  std::printf("  hdf5:    %s\n", build::hdf5);
  std::printf("  kokkos:  %s\n", build::kokkos);
  std::string backends, transports;
  for (BackendKind kind : built_backends()) backends += std::string(backends.empty() ? "" : ", ") + to_string(kind);
  for (HaloTransportKind kind : built_transports())
    transports += std::string(transports.empty() ? "" : ", ") + to_string(kind);
  std::printf(
      "backends: %s (auto: cuda-cluster where a GPU is visible, else host; cuda-cluster: temporal blocking over "
      "thread-block clusters, autotuned against cuda's one-step kernel, which it runs where that is faster)\n",
      backends.c_str());
  std::printf("halo transports: %s (auto: nccl with a GPU per rank, else CUDA-aware MPI, else mpi-host)\n",
              transports.c_str());
  if (build::cuda) {
    // The 3D families the default build leaves out (CMake options HEATWAVE_CLUSTER_3D_*).
    std::string extra;
    for (const auto& [built, name] : {std::pair{build::cluster_3d_dsmem, "3D DSMEM clusters"},
                                      std::pair{build::cluster_3d_high_radius, "3D radius 3-4"},
                                      std::pair{build::cluster_3d_deep, "3D deep"}})
      if (built) extra += std::string(extra.empty() ? "" : ", ") + name;
    std::printf("cluster kernels: 2D tiles and columns, 3D pipeline r 1-%d; also built: %s\n",
                build::cluster_3d_max_radius, extra.empty() ? "none of the optional families" : extra.c_str());
  }
  std::string equations;
  for (std::size_t e = 0; e < equation_count; ++e)
    equations += std::string(equations.empty() ? "" : ", ") + info(static_cast<Equation>(e)).name + ": " +
                 info(static_cast<Equation>(e)).summary;
  std::printf("equations: %s\n", equations.c_str());
#ifdef HEATWAVE_HAVE_CUDA
  const auto gpus = cuda::devices();
  std::printf("devices:  %s\n", gpus.empty() ? "none visible (backend auto runs on the host)" : "");
  for (const auto& d : gpus)
    std::printf("  [%d] %s, sm_%d%d, %d SMs, %.1f GiB, L2 %.0f MiB, %d KiB shared/block, clusters %s\n", d.index,
                d.name.c_str(), d.compute_major, d.compute_minor, d.multiprocessors, d.memory_gib, d.l2_mib,
                d.shared_per_block_optin_kib, d.clusters ? "yes" : "no");
#else
  std::printf("devices:  none (no CUDA in this build)\n");
#endif
  return 0;
}

// Errors every rank raises together (config, problem and decomposition checks
// all ranks run alike; non-finite detection follows a reduction; checkpoint,
// output and input files are collective, io/collective.hpp): rank 0
// reports, all ranks exit with the code. Anything else may be one rank's
// alone, and the job is aborted so that no rank waits forever.
bool raised_on_every_rank(ExitCode code) {
  const int c = static_cast<int>(code);
  return (c >= static_cast<int>(ExitCode::file_not_found) && c <= static_cast<int>(ExitCode::io_error)) ||
         code == ExitCode::usage || code == ExitCode::mpi_error || code == ExitCode::incompatible_checkpoint ||
         code == ExitCode::corrupt_file || code == ExitCode::directory_in_use || code == ExitCode::earlier_run;
}

// The first word that is not an option, when it names no command: a message
// with the nearest one ("runn": did you mean 'run'?), else "".
std::string unknown_command(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--log-level") {
      ++i;  // its value
      continue;
    }
    if (word.starts_with("-")) continue;
    std::string names, nearest;
    std::size_t best = 3;  // near misses only
    for (const CLI::App* command : app.get_subcommands({})) {
      const std::string& name = command->get_name();
      if (name == word) return "";
      names += (names.empty() ? "" : ", ") + name;
      if (const std::size_t d = yaml::edit_distance(word, name); d < best) best = d, nearest = name;
    }
    return "heatwave: '" + word + "' is not a command" + (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)") +
           "; the commands are " + names + "\n";
  }
  return "";
}

// Started without mpirun, MPI_Init makes Open MPI's shared-memory store
// itself (PMIx's, 4 MiB): a file-size limit below that fails there, in 14
// lines of PMIx errors, before heatwave runs. Said here instead, as the I/O
// error it is. (Under mpirun the launcher makes the store, under its own limit.)
constexpr rlim_t mpi_init_file_size_floor = 4096 * 1024;
void require_file_size_for_mpi_init() {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK")) return;
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
      limit.rlim_cur >= mpi_init_file_size_floor)
    return;
  std::fprintf(stderr,
               "heatwave: the file-size limit (ulimit -f) is %llu KiB, below the %llu KiB that Open MPI's MPI_Init "
               "writes for its shared-memory store when heatwave starts without mpirun: raise it (ulimit -f %llu or "
               "more), or start under mpirun\n",
               static_cast<unsigned long long>(limit.rlim_cur / 1024),
               static_cast<unsigned long long>(mpi_init_file_size_floor / 1024),
               static_cast<unsigned long long>(mpi_init_file_size_floor / 1024));
  std::exit(static_cast<int>(ExitCode::io_error));
}

}  // namespace
}  // namespace heatwave

int main(int argc, char** argv) {
  using namespace heatwave;
  require_file_size_for_mpi_init();
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  CLI::App app{"heatwave: heat and wave equations on 2D/3D grids, on CPUs and Hopper GPUs"};
  app.require_subcommand(1);
  app.fallthrough();  // --log-level before or after the command: heatwave run case.yaml --log-level debug
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));

  RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "run a case (no file: the built-in quickstart)");
  run_cmd->add_option("config", run.config_path, "case YAML file");
  run_cmd->add_option("--backend", run.backend, "override the config's backend")
      ->check(CLI::IsMember(choices_with_auto(backend_names)));
  run_cmd->add_option("--threads", run.threads, "host OpenMP threads (0: default)")
      ->check(CLI::Validator(
          [](std::string& value) {
            return value.starts_with("-") ? "must be 0 or more (0: OpenMP's default), not " + value : std::string();
          },
          "N >= 0"));
  run_cmd->add_option("--metrics", run.metrics, "metrics JSON path");
  run_cmd->add_option("--restart", run.restart,
                      "continue from a checkpoint: 'latest' (newest in checkpoint.dir that verifies) or a file");
  run_cmd->add_flag("--overwrite", run.overwrite,
                    "start afresh where an earlier run left checkpoints, outputs or traces: remove them first");
  run_cmd->add_flag("--new-dt", run.new_dt,
                    "with --restart: go on from the checkpoint's time with the config's dt where it differs");
  validation::Options validate;
  auto* validate_cmd = app.add_subcommand("validate",
                                          "run a validation suite: exact solutions, convergence orders, "
                                          "manufactured solutions (media and sources), the Kokkos reference, "
                                          "conservation; a pass/fail report");
  validate_cmd->add_option("suite", validate.suite_path, "suite YAML file (configs/validation/standard.yaml)")
      ->required();
  validate_cmd->add_option("--output-dir", validate.output_dir, "report directory (default: the suite's 'output')");
  validate_cmd->add_option("--json", validate.json_path, "report JSON path (default: <output-dir>/report.json)");
  validate_cmd->add_option("--markdown", validate.markdown_path,
                           "report Markdown path (default: <output-dir>/report.md)");
  validate_cmd->add_option("--backend", validate.backend, "run every case on this backend")
      ->check(CLI::IsMember(choices_with_auto(backend_names)));
  validate_cmd->add_flag("!--no-plots", validate.plots, "skip the convergence plots (Python + matplotlib)");
  auto* info_cmd = app.add_subcommand("info", "version, build features and devices");
  bench::Options bench_options;
  auto* bench_cmd = app.add_subcommand("bench", "benchmark a matrix of cases against the memory roofline");
  bench_cmd->add_option("suite", bench_options.suite, "benchmark suite YAML (default: a small built-in matrix)");
  bench_cmd->add_option("--json", bench_options.json, "results JSON path");
  std::string inspect_path;
  auto* inspect_cmd = app.add_subcommand("inspect", "print what a checkpoint or output file holds");
  inspect_cmd->add_option("file", inspect_path, "HDF5 file")->required();

  std::string traces_path, traces_output = "-";
  bool traces_csv = false;
  auto* traces_cmd = app.add_subcommand("traces", "summarise a receivers file, or export its traces as CSV");
  traces_cmd->add_option("file", traces_path, "receivers HDF5 file")->required();
  traces_cmd->add_flag("--csv", traces_csv, "print every sample as CSV: step, time, a column a receiver");
  traces_cmd->add_option("-o,--output", traces_output, "CSV file (default: stdout)");

  int code = 0;
  bool abort_job = false;
  try {
    try {
      if (const std::string typo = unknown_command(app, argc, argv); !typo.empty()) {
        if (rank == 0) std::fputs(typo.c_str(), stderr);
        MPI_Finalize();
        return static_cast<int>(ExitCode::usage);
      }
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      code = rank == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : static_cast<int>(ExitCode::usage));
      if (code != 0) code = static_cast<int>(ExitCode::usage);
      MPI_Finalize();
      return code;
    }
    init_logging(rank, size, spdlog::level::from_str(log_level));
    if (*run_cmd)
      code = command_run(run);
    else if (*validate_cmd)
      code = static_cast<int>(validation::run_suite(validate));
    else if (*info_cmd)
      code = command_info();
    else if (*bench_cmd)
      code = bench::run(bench_options);
    else if (*inspect_cmd)
      code = command_inspect(inspect_path);
    else if (*traces_cmd)
      code = command_traces(traces_path, traces_csv || traces_output != "-", traces_output);
  } catch (const Error& e) {
    abort_job = !raised_on_every_rank(e.code());
    if (rank == 0 || abort_job) spdlog::error("{}", e.what());
    code = static_cast<int>(e.code());
  } catch (const std::exception& e) {
    spdlog::error("internal error: {}", e.what());
    code = static_cast<int>(ExitCode::internal);
    abort_job = true;
  }
  spdlog::shutdown();
  if (abort_job && size > 1) MPI_Abort(MPI_COMM_WORLD, code);
  MPI_Finalize();
  return code;
}
