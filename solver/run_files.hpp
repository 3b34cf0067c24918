#pragma once
// The files a run writes and reads back: checkpoints (the last `keep` kept,
// restart from the newest or a named one) and field outputs with their XDMF
// series for ParaView. Collective over the decomposition's ranks; the HDF5
// mechanics are io/hdf5's, names and attributes field_io's.
#include <memory>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "io/directory_lock.hpp"
#include "solver/backend.hpp"
#include "solver/decomposition.hpp"
#include "solver/field_io.hpp"

namespace heatwave {

template <int D, class Real>
class RunFiles {
 public:
  RunFiles(const Config& config, const Problem& problem, const Decomposition& decomposition,
           const LocalDomain<D>& domain, Backend<D, Real>& backend)
      : config_(config),
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

  // Takes the checkpoint directory's lock (and the output directory's, with
  // `outputs`) on rank 0, so that no second run writes there (collective;
  // Error(directory_in_use) naming the holder). Writes take them too, on
  // their first call.
  void claim_directories(bool checkpoints, bool outputs);

  // Wall seconds spent in these files so far (the io phase).
  double seconds() const { return seconds_; }

 private:
  // The levels a checkpoint holds, by dataset name: the equation's (u, and u_previous).
  std::vector<std::pair<std::string, Level>> checkpoint_levels() const;
  void write_levels(const std::string& path, const std::string& kind,
                    const std::vector<std::pair<std::string, Level>>& levels);

  const Config& config_;
  const Problem& problem_;
  const Decomposition& decomposition_;
  const LocalDomain<D>& domain_;
  Backend<D, Real>& backend_;
  std::string media_record_;                           // the media files' hashes as the run started
  std::vector<std::pair<long, double>> output_steps_;  // (step, time) of the outputs in the XDMF series
  double seconds_ = 0;
  std::unique_ptr<DirectoryLock> checkpoint_lock_, output_lock_;  // rank 0's
};

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
