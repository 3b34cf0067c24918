#pragma once
// Errors and exit codes. Every failure the user can cause maps to one distinct,
// documented exit code (README "Exit codes"); job scripts branch on them.
#include <stdexcept>
#include <string>

namespace heatwave {

enum class ExitCode : int {
  ok = 0,
  internal = 1,                  // a bug or an unexpected library failure
  usage = 2,                     // bad command line (CLI11 uses 2 as well)
  file_not_found = 3,            // config or input file missing / unreadable
  yaml_syntax = 4,               // the YAML does not parse
  unknown_key = 5,               // a key the schema does not know
  wrong_type = 6,                // a value of the wrong type
  invalid_value = 7,             // out of range: sizes, lengths, coefficients, modes...
  grid_too_small = 8,            // fewer points than the stencil radius needs
  periodic_mismatch = 9,         // periodic on one face of an axis only
  unstable = 10,                 // dt past the stability limit
  t_end_mismatch = 11,           // t_end is not a whole number of explicit steps
  non_finite = 12,               // NaN/Inf appeared during the run
  io_error = 13,                 // reading or writing a data file failed
  mpi_error = 14,                // decomposition / MPI failures
  cuda_error = 15,               // a CUDA call failed, or a GPU backend with no CUDA device (or no CUDA in the build)
  incompatible_checkpoint = 16,  // restart from a checkpoint of another grid, equation, precision, radius or dims
  corrupt_file = 17,             // an HDF5 file that does not open or read: truncated, checksum (Fletcher32) mismatch
  validation_failed = 18,        // `heatwave validate` ran and at least one check failed
  directory_in_use = 19,         // another live run holds a checkpoint or output directory, a receivers or metrics file
  earlier_run = 20,              // a fresh run would replace the files an earlier run left (no --restart, no --overwrite)
  interrupted = 75,              // stopped by SIGTERM/SIGUSR1 after a checkpoint (EX_TEMPFAIL: requeue)
};

// The one exception type the app turns into a message and an exit code.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
  ExitCode code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

}  // namespace heatwave
