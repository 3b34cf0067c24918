#include "solver/halo_exchange.hpp"

#include <algorithm>

#include "io/collective.hpp"
#include "io/errors.hpp"
#include "io/metrics.hpp"

namespace heatwave {

namespace {
// Messages are told apart by level and by the side of the receiver they land on
// (my low face goes to my neighbour's high side): two ranks on a periodic axis
// are each other's neighbour on both sides.
int tag(int level, int axis, int receiver_side) { return 8 * level + 2 * axis + receiver_side; }
}  // namespace

template <int D, class Real>
HaloExchange<D, Real>::HaloExchange(Backend<D, Real>& backend, const Decomposition& decomposition,
                                    const LocalDomain<D>& domain, int levels, HaloTransportKind transport)
    : backend_(backend),
      transport_(
          make_halo_transport(transport, decomposition.comm(), sizeof(Real), {backend.memory(), backend.stream()})) {
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
                          static_cast<Real*>(transport_->buffer(static_cast<std::size_t>(send.size()))),
                          static_cast<Real*>(transport_->buffer(static_cast<std::size_t>(recv.size())))});
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
std::vector<HaloMessage> HaloExchange<D, Real>::messages(int stage, bool receives) const {
  const auto [first, last] = stage_faces_[static_cast<std::size_t>(stage)];
  std::vector<HaloMessage> out;
  for (std::size_t f = first; f < last; ++f) {
    const Face& face = faces_[f];
    // Tag by the receiver's side: what I send from my low face lands on my neighbour's high side.
    if (receives)
      out.push_back({face.recv, face.recv_box.size(), face.neighbor, tag(face.level, face.axis, face.side)});
    else
      out.push_back({face.send, face.send_box.size(), face.neighbor, tag(face.level, face.axis, 1 - face.side)});
  }
  std::stable_sort(out.begin(), out.end(), [](const HaloMessage& a, const HaloMessage& b) { return a.tag < b.tag; });
  return out;
}

template <int D, class Real>
void HaloExchange<D, Real>::start(int stage) {
  const auto [first, last] = stage_faces_[static_cast<std::size_t>(stage)];
  const double t0 = steady_seconds();
  transport_->post_receives(messages(stage, true));
  const double t1 = steady_seconds();
  backend_.span_begin();
  for (std::size_t f = first; f < last; ++f)
    backend_.pack(static_cast<Level>(faces_[f].level), faces_[f].send_box, faces_[f].send);
  backend_.span_end(Backend<D, Real>::Span::pack);
  const double t2 = steady_seconds();
  transport_->post_sends(messages(stage, false));
  times_.pack += t2 - t1;
  times_.communicate += t1 - t0 + steady_seconds() - t2;
}

template <int D, class Real>
void HaloExchange<D, Real>::finish(int stage) {
  const double t0 = steady_seconds();
  transport_->wait();
  const double t1 = steady_seconds();
  const auto [first, last] = stage_faces_[static_cast<std::size_t>(stage)];
  backend_.span_begin();
  for (std::size_t f = first; f < last; ++f)
    backend_.unpack(static_cast<Level>(faces_[f].level), faces_[f].recv_box, faces_[f].recv);
  backend_.span_end(Backend<D, Real>::Span::unpack);
  transport_->unpacked();
  times_.communicate += t1 - t0;
  times_.unpack += steady_seconds() - t1;
}

template class HaloExchange<2, float>;
template class HaloExchange<2, double>;
template class HaloExchange<3, float>;
template class HaloExchange<3, double>;

}  // namespace heatwave
