#include "solver/halo_exchange.hpp"

#include <type_traits>

namespace heatwave {

namespace {
// Messages are told apart by level and by the side of the receiver they land on
// (my low face goes to my neighbour's high side): two ranks on a periodic axis
// are each other's neighbour on both sides.
int tag(int level, int axis, int receiver_side) { return 8 * level + 2 * axis + receiver_side; }
}  // namespace

template <int D, class Real>
HaloExchange<D, Real>::HaloExchange(Backend<D, Real>& backend, const Decomposition& decomposition,
                                    const LocalDomain<D>& domain, int levels)
    : backend_(backend), comm_(decomposition.comm()) {
  const long H = domain.layout.halo;
  for (int a = 0; a < D; ++a)
    for (int side = 0; side < 2; ++side) {
      if (!domain.exchanged[a][side]) continue;
      // Axes before `a` span their halos (already exchanged), axes after it
      // only their owned points (their halos are not valid yet).
      Box<D> send, recv;
      for (int b = 0; b < D; ++b) {
        const long n = domain.layout.owned[b];
        send.lo[b] = recv.lo[b] = b < a ? -H : 0;
        send.hi[b] = recv.hi[b] = b < a ? n + H : n;
      }
      const long n = domain.layout.owned[a];
      send.lo[a] = side == 0 ? 0 : n - H, send.hi[a] = side == 0 ? H : n;
      recv.lo[a] = side == 0 ? -H : n, recv.hi[a] = side == 0 ? 0 : n + H;
      for (int level = 0; level < levels; ++level)
        faces_.push_back({a, side, decomposition.neighbor(a, side), level, send, recv,
                          backend.make_exchange_buffer(send.size()), backend.make_exchange_buffer(recv.size())});
    }
}

template <int D, class Real>
void HaloExchange<D, Real>::exchange() {
  const MPI_Datatype type = std::is_same_v<Real, float> ? MPI_FLOAT : MPI_DOUBLE;
  std::vector<MPI_Request> requests;
  for (std::size_t first = 0; first < faces_.size();) {
    const int axis = faces_[first].axis;
    std::size_t last = first;
    while (last < faces_.size() && faces_[last].axis == axis) ++last;
    requests.clear();
    for (std::size_t f = first; f < last; ++f) {
      Face& face = faces_[f];
      // Tag by the receiver's side: what I send from my low face lands on my neighbour's high side.
      const int recv_tag = tag(face.level, face.axis, face.side);
      requests.emplace_back();
      MPI_Irecv(face.recv.get(), static_cast<int>(face.recv_box.size()), type, face.neighbor, recv_tag, comm_,
                &requests.back());
    }
    for (std::size_t f = first; f < last; ++f) {
      Face& face = faces_[f];
      backend_.pack(static_cast<Level>(face.level), face.send_box, face.send.get());
      const int send_tag = tag(face.level, face.axis, 1 - face.side);
      requests.emplace_back();
      MPI_Isend(face.send.get(), static_cast<int>(face.send_box.size()), type, face.neighbor, send_tag, comm_,
                &requests.back());
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    for (std::size_t f = first; f < last; ++f)
      backend_.unpack(static_cast<Level>(faces_[f].level), faces_[f].recv_box, faces_[f].recv.get());
    first = last;
  }
}

template class HaloExchange<2, float>;
template class HaloExchange<2, double>;
template class HaloExchange<3, float>;
template class HaloExchange<3, double>;

}  // namespace heatwave
