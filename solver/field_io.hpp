#pragma once
// What checkpoints and outputs hold and where they live: file names, the
// attributes that describe a run, the restart compatibility check, and the
// XDMF series of the outputs. The HDF5 mechanics are io/hdf5's.
#include <string>
#include <vector>

#include "io/hdf5.hpp"
#include "solver/domain.hpp"
#include "solver/problem.hpp"
#include "core/run_settings.hpp"

namespace heatwave::field_io {

// This rank's owned box as a block of the global array, C order (z, y, x).
template <int D>
hdf5::Block block_of(const LocalDomain<D>& domain) {
  hdf5::Block b;
  for (int a = D - 1; a >= 0; --a) {
    b.global.push_back(static_cast<std::uint64_t>(domain.global[a]));
    b.offset.push_back(static_cast<std::uint64_t>(domain.offset[a]));
    b.count.push_back(static_cast<std::uint64_t>(domain.layout.owned[a]));
  }
  return b;
}

// <dir>/checkpoint_<step>.h5 and <dir>/fields_<step>.h5; steps zero-padded so names sort.
std::string checkpoint_path(const std::string& dir, long step);
std::string output_path(const std::string& dir, long step);
// Steps of the complete files of one kind in `dir` (never *.tmp), ascending.
std::vector<long> checkpoint_steps(const std::string& dir);
std::vector<long> output_steps(const std::string& dir);
// The newest complete checkpoint in `dir`; Error(file_not_found) when none.
std::string latest_checkpoint(const std::string& dir);
// Removes all but the newest `keep` checkpoints in `dir`.
void prune_checkpoints(const std::string& dir, int keep);
// Creates `dir` (and parents) when missing. Throws Error(io_error).
void make_directory(const std::string& dir);

// A file a coefficient or a source reads, named by its config key
// ("material.alpha", "sources[2]").
struct DataFile {
  std::string key, path, dataset;
};
std::vector<DataFile> data_files(const Problem& problem);

// The content hash of each file a medium or a source reads, one
// "<key> <path>#<dataset> <hash>" line each ("" without such files): taken
// once when a run starts, so that a file edited during the run cannot pass
// for the one the run read. Reads every such file whole.
std::string media_record(const Problem& problem);

// Attributes of every file: step, time, dt, the resolved config and its hash,
// version and commit, and what a restart checks (equation, precision, dims,
// radius, points, `media_hashes`: the run's media_record, where not empty,
// and `receivers`: receivers_record).
std::vector<hdf5::Attribute> run_attributes(const Config& config, const Problem& problem, const std::string& kind,
                                            long step, int ranks, const std::string& media = "");

// Refuses, with Error(incompatible_checkpoint) naming the differing setting, a
// checkpoint that this problem cannot continue, or whose media and source
// files have changed since (it reads them all). Returns the checkpoint's
// clock (step, time, dt).
RestartClock check_restart_compatible(const hdf5::Reader& checkpoint, const Problem& problem,
                                      const std::vector<std::string>& datasets);

// What a checkpoint records of the run's receivers, for a restart to check:
// "every=N field=F count=M positions=<hash>", or "none".
std::string receivers_record(const ReceiverSettings& receivers, int dims);

// Refuses (Error(incompatible_checkpoint), naming what changed) a restart
// whose receivers differ from those the checkpoint's run recorded: `every`,
// `field`, their number or their positions (the first receiver that moved,
// read from the traces file where it can be). A checkpoint that records
// receivers restarts without them, with a warning; one without the record
// (written before heatwave kept it) is left to the traces file's own check.
void check_receivers_compatible(const hdf5::Reader& checkpoint, const ReceiverSettings& receivers, int dims);

// Rewrites <output.dir>/fields.xmf listing the outputs at (step, time).
void write_output_series(const Problem& problem, const OutputSettings& output,
                         const std::vector<std::pair<long, double>>& steps);

}  // namespace heatwave::field_io
