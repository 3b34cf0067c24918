#pragma once
// The files a run writes and reads back: checkpoints (the last `keep` kept,
// restart from the newest or a named one) and field outputs with their XDMF
// series for ParaView. Collective over the decomposition's ranks; the HDF5
// mechanics are io/hdf5's, names and attributes field_io's.
#include <memory>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "io/run_lock.hpp"
#include "solver/backend.hpp"
#include "solver/decomposition.hpp"
#include "solver/field_io.hpp"

namespace heatwave {

// What a fresh run does with the files an earlier run left where it writes
// (checkpoints, outputs, traces): `refuse` them (heatwave run's default),
// `replace` them (--overwrite), or `keep` them as they are (tests and suites
// that manage their own directories).
enum class EarlierRun { keep, refuse, replace };

// What a run writes, claimed as it starts (collective; rank 0 holds the
// locks): the checkpoint directory where checkpoints are on (or it restarts),
// the output directory where outputs are, the receivers file (and, for a
// run that writes one, the metrics file: claim_metrics).
// A second run on any of them stops with Error(directory_in_use) naming the
// holder. A fresh run then looks at what an earlier run left there:
// checkpoints, outputs, the receivers file. `refuse`: Error(earlier_run)
// naming them and both ways on (--restart latest, --overwrite); `replace`:
// they are removed, and the log says which.
class RunClaims {
 public:
  RunClaims(const Config& config, MPI_Comm comm, bool restart, EarlierRun earlier);

  // The metrics file's lock (metrics.file, where set): a run that writes one. Collective.
  void claim_metrics();
  // The checkpoint directory's lock where not yet held: a stop signal's
  // checkpoint in a run without checkpoints. Collective.
  void claim_checkpoints();
  // A marker in checkpoint.dir that the run stopped on a signal after
  // writing `checkpoint`: what a batch script tests to requeue where a
  // launcher hides exit 75 (Open MPI's mpirun under SIGTERM). The next run
  // that claims the directory removes it. Collective.
  void mark_stopped(const std::string& checkpoint);

 private:
  void lock_checkpoints();  // rank 0
  const Config& config_;
  MPI_Comm comm_;
  int rank_ = 0;
  std::string owner_;
  std::unique_ptr<RunLock> checkpoint_lock_, output_lock_, receivers_lock_, metrics_lock_;  // rank 0's
};

template <int D, class Real>
class RunFiles {
 public:
  RunFiles(const Config& config, RunClaims& claims, const Problem& problem, const Decomposition& decomposition,
           const LocalDomain<D>& domain, Backend<D, Real>& backend)
      : config_(config),
        claims_(claims),
        problem_(problem),
        decomposition_(decomposition),
        domain_(domain),
        backend_(backend),
        media_record_(field_io::media_record(problem)) {}

  // A checkpoint of the current state in checkpoint.dir, the last `keep` kept. Returns its path.
  std::string write_checkpoint();
  // Restores the fields and the step from a checkpoint path, or for "latest"
  // from the newest checkpoint in checkpoint.dir that verifies (an older one
  // where the newest is damaged: each skipped one is logged with the reason).
  // The checkpoint must resume this run's schedule (Problem::from with its
  // clock and `new_dt`). Returns the path used.
  std::string restart(const std::string& checkpoint, bool new_dt = false);
  // A field output of the current state in output.dir, and the XDMF series.
  void write_output();

  // Wall seconds spent in these files so far (the io phase).
  double seconds() const { return seconds_; }

 private:
  // The levels a checkpoint holds, by dataset name: the equation's (u, and u_previous).
  std::vector<std::pair<std::string, Level>> checkpoint_levels() const;
  void write_levels(const std::string& path, const std::string& kind,
                    const std::vector<std::pair<std::string, Level>>& levels);

  const Config& config_;
  RunClaims& claims_;
  const Problem& problem_;
  const Decomposition& decomposition_;
  const LocalDomain<D>& domain_;
  Backend<D, Real>& backend_;
  std::string media_record_;                           // the media files' hashes as the run started
  std::vector<std::pair<long, double>> output_steps_;  // (step, time) of the outputs in the XDMF series
  double seconds_ = 0;
};

// Refuses (Error(invalid_value), before anything runs) a config whose outputs
// name one path twice (metrics.file and receivers.file, a file in place of a
// directory, a file named as checkpoints or outputs are inside checkpoint.dir
// or output.dir), or name a file the run reads (the config, initial,
// velocity, material or source files).
void check_run_paths(const Config& config, const Problem& problem);

// Where mark_stopped leaves its marker.
std::string stop_marker_path(const Config& config);

// The clock a restart resumes from (collective): the checkpoint named, or for
// "latest" the newest in checkpoint.dir whose attributes read (the data is
// verified when RunFiles::restart reads it).
RestartClock restart_clock(const Config& config, const std::string& checkpoint, MPI_Comm comm);

// initial: or velocity: of type file, read into the backend after initialize()
// (collective). Returns the wall seconds it took.
template <int D, class Real>
double load_initial_files(const Problem& problem, const Decomposition& decomposition, const LocalDomain<D>& domain,
                          Backend<D, Real>& backend);

}  // namespace heatwave
