#include "solver/halo_exchange.hpp"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <type_traits>

#include "io/collective.hpp"
#include "io/metrics.hpp"

namespace heatwave {

namespace {
// Messages are told apart by level and by the side of the receiver they land on
// (my low face goes to my neighbour's high side): two ranks on a periodic axis
// are each other's neighbour on both sides.
int tag(int level, int axis, int receiver_side) { return 8 * level + 2 * axis + receiver_side; }
}  // namespace

bool cuda_aware_mpi() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

template <int D, class Real>
HaloExchange<D, Real>::HaloExchange(Backend<D, Real>& backend, const Decomposition& decomposition,
                                    const LocalDomain<D>& domain, int levels)
    : backend_(backend), comm_(decomposition.comm()) {
  const long H = domain.layout.halo;
  for (int a = 0; a < D; ++a)
    for (int side = 0; side < 2; ++side) {
      if (!domain.exchanged[a][side]) continue;
      // Axes before `a` span their halos (already exchanged), axes after it
      // their owned points (their neighbour halos are not valid yet) and the
      // ghost layers of their physical faces: the sender's ghosts are right,
      // and with deep halos the first step updates the receiver's halo rows
      // next to that face, reading those ghosts. (Of the H layers stored
      // there the backend fills `radius`; the others are never read.)
      Box<D> send, recv;
      for (int b = 0; b < D; ++b) {
        const long n = domain.layout.owned[b];
        send.lo[b] = recv.lo[b] = b < a || !domain.exchanged[b][0] ? -H : 0;
        send.hi[b] = recv.hi[b] = b < a || !domain.exchanged[b][1] ? n + H : n;
      }
      const long n = domain.layout.owned[a];
      send.lo[a] = side == 0 ? 0 : n - H, send.hi[a] = side == 0 ? H : n;
      recv.lo[a] = side == 0 ? -H : n, recv.hi[a] = side == 0 ? 0 : n + H;
      for (int level = 0; level < levels; ++level)
        faces_.push_back({a, side, decomposition.neighbor(a, side), level, send, recv,
                          backend.make_exchange_buffer(send.size()), backend.make_exchange_buffer(recv.size())});
    }
  for (std::size_t first = 0; first < faces_.size();) {
    std::size_t last = first;
    while (last < faces_.size() && faces_[last].axis == faces_[first].axis) ++last;
    stage_faces_.emplace_back(first, last);
    first = last;
  }
}

template <int D, class Real>
void HaloExchange<D, Real>::exchange() {
  for (int stage = 0; stage < stages(); ++stage) {
    start(stage);
    finish(stage);
  }
}

template <int D, class Real>
void HaloExchange<D, Real>::start(int stage) {
  const MPI_Datatype type = std::is_same_v<Real, float> ? MPI_FLOAT : MPI_DOUBLE;
  const auto [first, last] = stage_faces_[static_cast<std::size_t>(stage)];
  requests_.assign(2 * (last - first), MPI_REQUEST_NULL);
  double t0 = steady_seconds();
  for (std::size_t f = first; f < last; ++f) {
    Face& face = faces_[f];
    // Tag by the receiver's side: what I send from my low face lands on my neighbour's high side.
    check_mpi(MPI_Irecv(face.recv.get(), static_cast<int>(face.recv_box.size()), type, face.neighbor,
                        tag(face.level, face.axis, face.side), comm_, &requests_[2 * (f - first)]),
              "MPI_Irecv");
  }
  for (std::size_t f = first; f < last; ++f) {
    Face& face = faces_[f];
    const double t1 = steady_seconds();
    backend_.pack(static_cast<Level>(face.level), face.send_box, face.send.get());
    const double t2 = steady_seconds();
    times_.pack += t2 - t1;
    times_.communicate += t1 - t0;
    check_mpi(MPI_Isend(face.send.get(), static_cast<int>(face.send_box.size()), type, face.neighbor,
                        tag(face.level, face.axis, 1 - face.side), comm_, &requests_[2 * (f - first) + 1]),
              "MPI_Isend");
    t0 = t2;
  }
  times_.communicate += steady_seconds() - t0;
}

template <int D, class Real>
void HaloExchange<D, Real>::finish(int stage) {
  const double t0 = steady_seconds();
  check_mpi(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  const double t1 = steady_seconds();
  const auto [first, last] = stage_faces_[static_cast<std::size_t>(stage)];
  for (std::size_t f = first; f < last; ++f)
    backend_.unpack(static_cast<Level>(faces_[f].level), faces_[f].recv_box, faces_[f].recv.get());
  times_.communicate += t1 - t0;
  times_.unpack += steady_seconds() - t1;
}

template class HaloExchange<2, float>;
template class HaloExchange<2, double>;
template class HaloExchange<3, float>;
template class HaloExchange<3, double>;

}  // namespace heatwave
