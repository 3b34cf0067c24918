#include "solver/receivers.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include "io/collective.hpp"
#include "io/hdf5.hpp"
#include "io/metrics.hpp"
#include "core/equations/equations.hpp"
#include "solver/media.hpp"

namespace heatwave {

namespace {
// Samples buffered on rank 0 before they go to the file: 256, or as many as
// fit in 32 MiB for many receivers (at least one).
std::size_t flush_samples(std::size_t receivers) {
  return std::clamp<std::size_t>((std::size_t(32) << 20) / (8 * std::max<std::size_t>(receivers, 1)), 1, 256);
}

// Every receiver's position, [receiver][dims].
std::vector<double> flat_positions(const ReceiverSettings& settings, int dims) {
  std::vector<double> out;
  for (const auto& x : settings.positions()) out.insert(out.end(), x.begin(), x.begin() + dims);
  return out;
}

// Each receiver's 2^D interpolation corners, in slot order (receiver * 2^D +
// corner): visit(slot, local index, weight, whether this rank owns it).
template <int D, class Visit>
void for_each_corner(const std::vector<std::array<double, max_dims>>& positions, const Problem& problem,
                     const LocalDomain<D>& domain, Visit visit) {
  constexpr int corners = 1 << D;
  for (std::size_t r = 0; r < positions.size(); ++r) {
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
      visit(static_cast<int>(r * corners + c), local, weight, owned);
    }
  }
}

std::string point_text(const double* x, int dims) {
  std::string text = "(";
  for (int a = 0; a < dims; ++a) text += fmt::format("{}{:.6g}", a ? ", " : "", x[a]);
  return text + ")";
}
}  // namespace

std::size_t receiver_memory(const ReceiverSettings& settings, int dims, bool root) {
  const std::size_t receivers = settings.count(), corners = std::size_t(1) << dims;
  // A rank's points (an index and a slot each) and its gathered values.
  const std::size_t points = receivers * corners * (8 * static_cast<std::size_t>(dims) + 4 + 16);
  if (!root) return points;
  // Rank 0: positions (made twice as the run starts), weights, every rank's
  // slots, the gathered values twice, and the buffered samples.
  return points + receivers * (2 * 24 + corners * (8 + 4 + 16) + 8 * flush_samples(receivers));
}

Level receiver_level(const ReceiverSettings& settings, Equation equation) {
  return settings.field == info(equation).level_names[0] ? Level::current : Level::previous;
}

template <int D, class Real>
Receivers<D, Real>::Receivers(const Config& config, const Problem& problem, const LocalDomain<D>& domain,
                              MPI_Comm comm)
    : settings_(config.run.receivers), problem_(problem), comm_(comm) {
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  const ReceiverSettings& settings = settings_;
  const auto positions = settings.positions();
  receivers_ = positions.size();
  if (!active()) return;
  flush_samples_ = flush_samples(receivers_);
  if (rank_ == 0) config_text_ = to_yaml(config), config_hash_ = config_hash(config);
  level_ = receiver_level(settings, problem.equation);
  for_each_corner(positions, problem, domain, [&](int slot, const Index<D>& local, double weight, bool owned) {
    if (rank_ == 0) weights_.push_back(weight);
    if (owned) points_.push_back(local), slots_.push_back(slot);
  });
  // Rank 0 learns once which slots each rank sends.
  int size = 1, mine = static_cast<int>(slots_.size());
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  if (rank_ == 0) counts_.resize(size), displacements_.resize(size);
  check_mpi(MPI_Gather(&mine, 1, MPI_INT, counts_.data(), 1, MPI_INT, 0, comm), "MPI_Gather");
  if (rank_ == 0) {
    for (int i = 1; i < size; ++i) displacements_[i] = displacements_[i - 1] + counts_[i - 1];
    all_slots_.resize(receivers_ << D);
    if (displacements_.back() + counts_.back() != static_cast<int>(all_slots_.size()))
      throw Error(ExitCode::internal, "receivers: the ranks own " +
                                          std::to_string(displacements_.back() + counts_.back()) +
                                          " interpolation points, not " + std::to_string(all_slots_.size()));
  }
  check_mpi(MPI_Gatherv(slots_.data(), mine, MPI_INT, all_slots_.data(), counts_.data(), displacements_.data(), MPI_INT,
                        0, comm),
            "MPI_Gatherv");
}

template <int D>
SampleRequest<D> receiver_request(const ReceiverSettings& settings, const Problem& problem,
                                  const LocalDomain<D>& domain) {
  SampleRequest<D> request;
  const auto positions = settings.positions();
  if (positions.empty()) return request;
  request.level = receiver_level(settings, problem.equation), request.every = settings.every;
  for_each_corner(positions, problem, domain, [&](int, const Index<D>& local, double, bool owned) {
    if (owned) request.points.push_back(local);
  });
  return request;
}

template <int D, class Real>
std::vector<hdf5::Attribute> Receivers<D, Real>::attributes() const {
  return {{"field", settings_.field},
          {"every", static_cast<long long>(settings_.every)},
          {"interpolation", std::string("multilinear over the 2^D grid points around each receiver")},
          {"equation", std::string(to_string(problem_.equation))},
          {"config", config_text_},
          {"config_hash", config_hash_}};
}

template <int D, class Real>
void Receivers<D, Real>::refuse_restart(const std::string& why) const {
  throw Error(ExitCode::incompatible_checkpoint,
              "receivers.file " + settings_.file + ": " + why +
                  ": a restart continues the traces the checkpoint's run began; restore its receivers and their "
                  "file, or start afresh (--overwrite)");
}

template <int D, class Real>
void Receivers<D, Real>::check_same_receivers(const hdf5::Traces& file, const std::vector<double>& positions) const {
  if (file.receivers != receivers_ || file.dims != D)
    refuse_restart(fmt::format("holds {} receivers' traces in {}D, this config has {} in {}D", file.receivers,
                               file.dims, receivers_, D));
  if (file.every != 0 && file.every != settings_.every)
    refuse_restart(
        fmt::format("was sampled every {} step(s), the config says receivers.every = {}", file.every, settings_.every));
  if (!file.field.empty() && file.field != settings_.field)
    refuse_restart(fmt::format("records '{}', the config says receivers.field = {}", file.field, settings_.field));
  for (std::size_t r = 0; r < receivers_; ++r)
    if (!std::equal(positions.begin() + r * D, positions.begin() + (r + 1) * D, file.positions.begin() + r * D))
      refuse_restart(fmt::format("receiver {} is at {} in the config but at {} in the file", r,
                                 point_text(positions.data() + r * D, D),
                                 point_text(file.positions.data() + r * D, D)));
}

template <int D, class Real>
std::size_t Receivers<D, Real>::start(long step, bool restarted) {
  if (!active()) return 0;
  const double t0 = steady_seconds();
  unsigned long long kept = 0;
  const std::uint64_t capacity = receiver_samples(settings_, problem_.steps);
  on_every_rank(comm_, [&] {
    if (rank_ != 0) return;
    const std::string& path = settings_.file;
    const std::vector<double> positions = flat_positions(settings_, D);
    if (!restarted) {
      hdf5::create_traces(path, positions, receivers_, D, capacity, attributes());
    } else {
      if (!std::filesystem::exists(path))
        throw Error(ExitCode::file_not_found,
                    "receivers.file '" + path + "' is missing: a restart continues the traces the run wrote");
      hdf5::Traces old = hdf5::read_traces(path, false);
      check_same_receivers(old, positions);
      while (kept < old.samples && old.step[kept] <= step) ++kept;
      // Every sample up to the checkpoint's step (steps 0, every, ...), or the file is older than the checkpoint.
      const unsigned long long needed = static_cast<unsigned long long>(step / settings_.every) + 1;
      if (kept != needed || old.step[kept - 1] != static_cast<long long>(needed - 1) * settings_.every)
        refuse_restart(fmt::format("holds {} sample(s){}, the restart from step {} needs the {} up to it (every {} "
                                   "step(s) from step 0): an older copy of the file, or another run's",
                                   old.samples,
                                   old.samples ? fmt::format(" (steps {} to {})", old.step.front(), old.step.back())
                                               : std::string(),
                                   step, needed, settings_.every));
      if (old.format == 2 && old.capacity >= capacity) {
        hdf5::TraceWriter(path).truncate(kept);
      } else {
        // Room for more samples (a run made longer), or the earlier layout:
        // the kept samples move into a new file, which replaces the old one whole.
        old = hdf5::read_traces(path);
        old.samples = kept;
        old.traces.resize(kept * receivers_), old.time.resize(kept), old.step.resize(kept);
        hdf5::create_traces(path, positions, receivers_, D, capacity, attributes(), &old);
      }
    }
    writer_.emplace(path);
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
  std::vector<Real> mine(points_.size());
  const double t0 = steady_seconds();
  backend.gather(level_, points_, mine.data());
  seconds_ += steady_seconds() - t0;
  add(step, time, mine.data());
}

template <int D, class Real>
bool Receivers<D, Real>::record_with(Backend<D, Real>& backend) {
  int records = active() && backend.record_samples(level_, points_, settings_.every) ? 1 : 0, all = records;
  check_mpi(MPI_Allreduce(&records, &all, 1, MPI_INT, MPI_MIN, comm_), "MPI_Allreduce");
  if (records && !all) backend.record_samples(level_, {}, 0);
  recorded_ = all != 0;
  return recorded_;
}

template <int D, class Real>
void Receivers<D, Real>::collect(Backend<D, Real>& backend) {
  if (!recorded_) return;
  std::vector<long> steps;
  std::vector<Real> values;
  const double t0 = steady_seconds();
  backend.take_samples(steps, values);
  seconds_ += steady_seconds() - t0;
  for (std::size_t k = 0; k < steps.size(); ++k)
    add(steps[k], problem_.time_at(steps[k]), values.data() + k * points_.size());
}

template <int D, class Real>
void Receivers<D, Real>::add(long step, double time, const Real* mine) {
  const double t0 = steady_seconds();
  std::vector<double> values(mine, mine + points_.size()), all(rank_ == 0 ? all_slots_.size() : 0);
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
  if (++buffered_ >= flush_samples_) flush();  // every rank counts: flush() is collective
}

template <int D, class Real>
void Receivers<D, Real>::flush() {
  if (!active()) return;
  const double t0 = steady_seconds();
  on_every_rank(comm_, [&] {
    if (rank_ != 0 || steps_.empty()) return;
    writer_->append(values_, times_, steps_);  // [sample][receiver], as on disk
    steps_.clear(), times_.clear(), values_.clear();
  });
  buffered_ = 0;
  seconds_ += steady_seconds() - t0;
}

template SampleRequest<2> receiver_request(const ReceiverSettings&, const Problem&, const LocalDomain<2>&);
template SampleRequest<3> receiver_request(const ReceiverSettings&, const Problem&, const LocalDomain<3>&);
template class Receivers<2, float>;
template class Receivers<2, double>;
template class Receivers<3, float>;
template class Receivers<3, double>;

}  // namespace heatwave
