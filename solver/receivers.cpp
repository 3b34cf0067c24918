#include "solver/receivers.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "io/collective.hpp"
#include "io/hdf5.hpp"
#include "io/metrics.hpp"
#include "solver/equations/equations.hpp"
#include "solver/media.hpp"

namespace heatwave {

namespace {
// Samples buffered on rank 0 before they go to the file.
constexpr std::size_t flush_samples = 256;
}  // namespace

Level receiver_level(const ReceiverSettings& settings, Equation equation) {
  return settings.field == info(equation).level_names[0] ? Level::current : Level::previous;
}

template <int D, class Real>
Receivers<D, Real>::Receivers(const ReceiverSettings& settings, const Problem& problem, const LocalDomain<D>& domain,
                              MPI_Comm comm)
    : settings_(settings), problem_(problem), comm_(comm) {
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  const auto positions = settings.positions();
  receivers_ = positions.size();
  if (!active()) return;
  level_ = receiver_level(settings, problem.equation);
  constexpr int corners = 1 << D;
  for (std::size_t r = 0; r < receivers_; ++r) {
    const PositionWeights around = position_weights(problem, positions[r]);
    for (int c = 0; c < corners; ++c) {
      Index<D> local{};
      bool owned = true;
      double weight = 1;
      for (int a = 0; a < D; ++a) {
        const auto& [global, w] = around[a][(c >> a) & 1];
        weight *= w;
        local[a] = global - domain.offset[a];
        owned = owned && local[a] >= 0 && local[a] < domain.layout.owned[a];
      }
      if (rank_ == 0) weights_.push_back(weight);
      if (owned) points_.push_back(local), slots_.push_back(static_cast<int>(r * corners + c));
    }
  }
  // Rank 0 learns once which slots each rank sends.
  int size = 1, mine = static_cast<int>(slots_.size());
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  if (rank_ == 0) counts_.resize(size), displacements_.resize(size);
  check_mpi(MPI_Gather(&mine, 1, MPI_INT, counts_.data(), 1, MPI_INT, 0, comm), "MPI_Gather");
  if (rank_ == 0) {
    for (int i = 1; i < size; ++i) displacements_[i] = displacements_[i - 1] + counts_[i - 1];
    all_slots_.resize(receivers_ * corners);
    if (displacements_.back() + counts_.back() != static_cast<int>(all_slots_.size()))
      throw Error(ExitCode::internal, "receivers: the ranks own " +
                                          std::to_string(displacements_.back() + counts_.back()) +
                                          " interpolation points, not " + std::to_string(all_slots_.size()));
  }
  check_mpi(MPI_Gatherv(slots_.data(), mine, MPI_INT, all_slots_.data(), counts_.data(), displacements_.data(), MPI_INT,
                        0, comm),
            "MPI_Gatherv");
}

template <int D, class Real>
std::size_t Receivers<D, Real>::start(long step, bool restarted) {
  if (!active()) return 0;
  const double t0 = steady_seconds();
  unsigned long long kept = 0;
  on_every_rank(comm_, [&] {
    if (rank_ != 0) return;
    if (restarted) {
      if (!std::filesystem::exists(settings_.file))
        throw Error(ExitCode::file_not_found,
                    "receivers.file '" + settings_.file + "' is missing: a restart continues the traces the run wrote");
      kept = hdf5::truncate_traces(settings_.file, step, receivers_);
      return;
    }
    std::vector<double> positions;
    for (const auto& x : settings_.positions()) positions.insert(positions.end(), x.begin(), x.begin() + D);
    hdf5::create_traces(settings_.file, positions, receivers_, D,
                        {{"format", std::string("heatwave receivers 1")},
                         {"field", settings_.field},
                         {"every", static_cast<long long>(settings_.every)},
                         {"interpolation", std::string("multilinear over the 2^D grid points around each receiver")},
                         {"equation", std::string(to_string(problem_.equation))}});
  });
  check_mpi(MPI_Bcast(&kept, 1, MPI_UNSIGNED_LONG_LONG, 0, comm_), "MPI_Bcast");
  if (restarted)
    spdlog::info("receivers: {} keeps its {} samples up to step {}; sampling goes on", settings_.file, kept, step);
  seconds_ += steady_seconds() - t0;
  return kept;
}

template <int D, class Real>
void Receivers<D, Real>::sample(Backend<D, Real>& backend, long step, double time) {
  if (!active()) return;
  const double t0 = steady_seconds();
  std::vector<Real> mine(points_.size());
  backend.gather(level_, points_, mine.data());
  std::vector<double> values(mine.begin(), mine.end()), all(rank_ == 0 ? all_slots_.size() : 0);
  check_mpi(MPI_Gatherv(values.data(), static_cast<int>(values.size()), MPI_DOUBLE, all.data(), counts_.data(),
                        displacements_.data(), MPI_DOUBLE, 0, comm_),
            "MPI_Gatherv");
  if (rank_ == 0) {
    std::vector<double> at(all.size());
    for (std::size_t i = 0; i < all.size(); ++i) at[all_slots_[i]] = all[i];
    constexpr int corners = 1 << D;
    for (std::size_t r = 0; r < receivers_; ++r) {
      double sum = 0;
      for (int c = 0; c < corners; ++c) sum += weights_[r * corners + c] * at[r * corners + c];
      values_.push_back(sum);
    }
    steps_.push_back(step);
    times_.push_back(time);
  }
  seconds_ += steady_seconds() - t0;
  if (++buffered_ >= flush_samples) flush();  // every rank counts: flush() is collective
}

template <int D, class Real>
void Receivers<D, Real>::flush() {
  if (!active()) return;
  const double t0 = steady_seconds();
  on_every_rank(comm_, [&] {
    if (rank_ != 0 || steps_.empty()) return;
    // [sample][receiver] buffered, [receiver][sample] on disk.
    const std::size_t samples = steps_.size();
    std::vector<double> traces(values_.size());
    for (std::size_t s = 0; s < samples; ++s)
      for (std::size_t r = 0; r < receivers_; ++r) traces[r * samples + s] = values_[s * receivers_ + r];
    hdf5::append_traces(settings_.file, traces, times_, steps_);
    steps_.clear(), times_.clear(), values_.clear();
  });
  buffered_ = 0;
  seconds_ += steady_seconds() - t0;
}

template class Receivers<2, float>;
template class Receivers<2, double>;
template class Receivers<3, float>;
template class Receivers<3, double>;

}  // namespace heatwave
