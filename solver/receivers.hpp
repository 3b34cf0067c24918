#pragma once
// Receivers (`receivers:` in the config): the field sampled at points every
// `every` steps, from step 0, into an HDF5 file of traces written as the run
// goes (io/hdf5.hpp: /traces [receivers, samples], /time, /step, /positions).
//
// A receiver's value is the multilinear interpolation of the 2^D grid points
// around it, with the weights point sources spread with (position_weights).
// The ranks that own those points send their values to rank 0, which sums
// weight x value in double, in a fixed corner order: the traces are bitwise
// the same on any rank count and any backend that computes the same fields.
// A restart keeps the file's samples up to its checkpoint's step and goes on
// from there, so a stopped and restarted run leaves the uninterrupted run's
// file (docs/io.md); receivers that moved, another `every` or `field` are
// refused (exit 16). The file is laid out whole, with room for every sample
// of the run, when the run starts (io/hdf5.hpp: a full disk shows then), and
// samples are written in place: a failed or killed write loses none written
// before.
#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "io/hdf5.hpp"

#include "solver/backend.hpp"
#include "solver/domain.hpp"
#include "solver/problem.hpp"
#include "core/run_settings.hpp"

namespace heatwave {

// Which level the receivers sample: u^n, or u^{n-1} where `field` names the
// equation's second level (the run and the validation's reference alike).
Level receiver_level(const ReceiverSettings& settings, Equation equation);

// Bytes the receivers take on one rank: rank 0's gather layout, weights and
// buffered samples (`root`), or a rank's interpolation points at most.
std::size_t receiver_memory(const ReceiverSettings& settings, int dims, bool root);

// The samples a run of `steps` steps records: steps 0, every, 2 every, ...
inline std::uint64_t receiver_samples(const ReceiverSettings& settings, long steps) {
  return static_cast<std::uint64_t>(steps / settings.every) + 1;
}

// What this rank's share of the receivers asks of a backend: the corner
// points it owns, the level and `every` (Receivers::record_with asks the
// same; the registry hands it to a backend that tunes itself beforehand).
template <int D>
SampleRequest<D> receiver_request(const ReceiverSettings& settings, const Problem& problem,
                                  const LocalDomain<D>& domain);

template <int D, class Real>
class Receivers {
 public:
  Receivers(const Config& config, const Problem& problem, const LocalDomain<D>& domain, MPI_Comm comm);

  bool active() const { return receivers_ > 0; }
  long every() const { return settings_.every; }
  const std::string& file() const { return settings_.file; }

  // Before the first step (collective): a fresh run creates the file; a
  // restart at `step` keeps the samples of steps <= step (the file must be
  // there, with the same receivers, `every` and `field`: else
  // Error(incompatible_checkpoint) naming what changed). Returns the samples kept.
  std::size_t start(long step, bool restarted);
  // Samples the backend's fields at `step` (collective): the values rank 0
  // buffers until flush().
  void sample(Backend<D, Real>& backend, long step, double time);
  // Whether the backend records the samples as it makes the levels
  // (Backend::record_samples): asked once, after start(), on every rank; a
  // backend that records on some ranks only is stopped. Then sample steps
  // end no chunk, and collect() takes what it recorded after each chunk
  // (collective: every rank's backend records the same steps).
  bool record_with(Backend<D, Real>& backend);
  bool recorded() const { return recorded_; }
  void collect(Backend<D, Real>& backend);
  // Writes the buffered samples to the file (rank 0; collective for errors).
  void flush();
  // Wall seconds spent sampling and writing (the io phase).
  double seconds() const { return seconds_; }

 private:
  // The file's attributes: what it records, and the run's resolved config (its media and sources).
  std::vector<hdf5::Attribute> attributes() const;
  // Error(incompatible_checkpoint) where the file on disk records other receivers than this run's.
  void check_same_receivers(const hdf5::Traces& file, const std::vector<double>& positions) const;
  // Error(incompatible_checkpoint): the file cannot continue the checkpoint's run's traces, and why.
  [[noreturn]] void refuse_restart(const std::string& why) const;
  // This rank's values at its points (points_.size() of them) for one sample
  // (collective): rank 0 interpolates and buffers them.
  void add(long step, double time, const Real* mine);

  ReceiverSettings settings_;
  std::string config_text_, config_hash_;
  Problem problem_;
  MPI_Comm comm_;
  int rank_ = 0;
  std::size_t receivers_ = 0;
  Level level_ = Level::current;
  std::vector<Index<D>> points_;                         // the corner points this rank owns (local coordinates)
  std::vector<int> slots_;                               // their slots: receiver * 2^D + corner
  std::vector<int> counts_, displacements_, all_slots_;  // rank 0: Gatherv layout, every rank's slots
  std::vector<double> weights_;                          // rank 0: a weight a slot
  // Rank 0's samples not yet in the file.
  std::vector<long long> steps_;
  std::vector<double> times_, values_;  // values_: [sample][receiver]
  std::size_t buffered_ = 0;            // samples since the last flush (every rank)
  std::size_t flush_samples_ = 1;       // samples buffered before a flush: 256, or fewer for many receivers
  std::optional<hdf5::TraceWriter> writer_;  // rank 0's open file
  double seconds_ = 0;
  bool recorded_ = false;
};

}  // namespace heatwave
