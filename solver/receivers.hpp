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
// file (docs/io.md).
#include <mpi.h>

#include <string>
#include <vector>

#include "solver/backend.hpp"
#include "solver/domain.hpp"
#include "solver/problem.hpp"
#include "solver/run_settings.hpp"

namespace heatwave {

// Which level the receivers sample: u^n, or u^{n-1} where `field` names the
// equation's second level (the run and the validation's reference alike).
Level receiver_level(const ReceiverSettings& settings, Equation equation);

template <int D, class Real>
class Receivers {
 public:
  Receivers(const ReceiverSettings& settings, const Problem& problem, const LocalDomain<D>& domain, MPI_Comm comm);

  bool active() const { return receivers_ > 0; }
  long every() const { return settings_.every; }
  const std::string& file() const { return settings_.file; }

  // Before the first step (collective): a fresh run creates the file; a
  // restart at `step` keeps the samples of steps <= step (the file must be
  // there, with as many receivers). Returns the samples kept.
  std::size_t start(long step, bool restarted);
  // Samples the backend's fields at `step` (collective): the values rank 0
  // buffers until flush().
  void sample(Backend<D, Real>& backend, long step, double time);
  // Writes the buffered samples to the file (rank 0; collective for errors).
  void flush();
  // Wall seconds spent sampling and writing (the io phase).
  double seconds() const { return seconds_; }

 private:
  ReceiverSettings settings_;
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
  double seconds_ = 0;
};

}  // namespace heatwave
