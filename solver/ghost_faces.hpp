// The ghosts of a field's physical faces in one pass: what filling them axis
// by axis leaves (the host backend's order, so ghost corners come out alike),
// point by point. The GPU backends fill every face in one launch with it
// (kernels/cuda/device_fields.cu); a launch an axis cost a short launch of
// the cluster kernels more than its stencil (docs/performance.md).
#pragma once

#include <algorithm>

#include "core/hd.hpp"
#include "core/numerics.hpp"
#include "solver/box.hpp"
#include "solver/domain.hpp"

namespace heatwave {

// The physical faces (the sides not exchanged) in axis order, each with its
// ghost box: within `window` along the other axes where one is given (a part
// of the field other work leaves alone), empty faces left out.
template <int D>
struct GhostFaces {
  int count = 0;
  int axis[2 * max_dims]{};
  Box<D> box[2 * max_dims]{};
  FaceRule rule[2 * max_dims]{};
  // The points of face f's box that no other face holds, and whose source
  // no other face holds either: there ghost() is face f's rule alone (all
  // of a face but its edges; none where the axis is so short that a source
  // lands in the opposite face's layers). It spares most points the walk
  // over every face.
  Box<D> alone[2 * max_dims]{};
  // The points of face f's box the fill writes: all of them, or, after
  // only_step_reads(), those the next step reads.
  Box<D> written[2 * max_dims]{};

  GhostFaces(const LocalDomain<D>& domain, int radius, const Box<D>* window = nullptr) {
    for (int a = 0; a < D; ++a)
      for (int side = 0; side < 2; ++side) {
        if (domain.exchanged[a][side]) continue;
        Box<D> b = domain.ghost_box(a, side, radius);
        for (int o = 0; o < D && window; ++o)
          if (o != a) b.lo[o] = std::max(b.lo[o], window->lo[o]), b.hi[o] = std::min(b.hi[o], window->hi[o]);
        if (b.empty()) continue;
        axis[count] = a, box[count] = b, written[count] = b, rule[count] = domain.face[a][side];
        ++count;
      }
    for (int f = 0; f < count; ++f) {
      const int a = axis[f];
      alone[f] = box[f];
      for (int g = 0; g < count; ++g) {
        const int o = axis[g];
        if (g == f) continue;
        if (o != a) {  // g's layers lie at one end of axis o: keep clear of them
          if (rule[g].side == 0)
            alone[f].lo[o] = std::max(alone[f].lo[o], box[g].hi[o]);
          else
            alone[f].hi[o] = std::min(alone[f].hi[o], box[g].lo[o]);
          continue;
        }
        for (long i = box[f].lo[a]; i < box[f].hi[a]; ++i) {  // the opposite face of the axis
          const long src = rule[f].fixed_point(i) ? i : rule[f].source(i);
          const auto inside = [&](long j) { return j >= box[g].lo[a] && j < box[g].hi[a]; };
          if (inside(i) || inside(src)) alone[f].hi[a] = alone[f].lo[a];
        }
      }
    }
  }
  // Between two steps, only the ghosts the next step reads (the cuda
  // backend's fill a step). Its star stencil of `radius` over the update box
  // reads no ghost that is out of range along a second axis (edges and
  // corners: along a physical side, past the update box), and past a
  // Dirichlet face neither the face point (g in both fields: no step writes
  // it) nor the farthest layer (only the face point reads it). Values are
  // unchanged: ghost() still walks the whole boxes. At radius 1 a Dirichlet
  // face has nothing left to fill.
  void only_step_reads(const LocalDomain<D>& domain, int radius) {
    const Box<D> update = domain.update_box(radius, 0);
    for (int f = 0; f < count; ++f) {
      const int a = axis[f];
      Box<D> w = box[f];
      for (int o = 0; o < D; ++o) {
        if (o == a) continue;
        if (!domain.exchanged[o][0]) w.lo[o] = std::max(w.lo[o], update.lo[o]);
        if (!domain.exchanged[o][1]) w.hi[o] = std::min(w.hi[o], update.hi[o]);
      }
      if (rule[f].side == 0)
        w.lo[a] = std::max(w.lo[a], update.lo[a] - radius), w.hi[a] = std::min(w.hi[a], 0L);
      else
        w.lo[a] = std::max(w.lo[a], domain.layout.owned[a]), w.hi[a] = std::min(w.hi[a], update.hi[a] + radius);
      written[f] = w;
    }
  }
  // The most points a face writes.
  long largest() const {
    long n = 0;
    for (int f = 0; f < count; ++f) n = std::max(n, written[f].size());
    return n;
  }
  // Coordinate a of point i, and i with it set to v. Selects over a
  // constant-trip loop, never i[a] with a runtime a: a GPU thread indexing
  // an array at run time keeps it in local memory (48 bytes of stack a
  // thread in the fill before, about 4 L2 write sectors a ghost point).
  HW_HD static long along(const Index<D>& i, int a) {
    long v = i[0];
    HW_UNROLL
    for (int b = 1; b < D; ++b) v = b == a ? i[b] : v;
    return v;
  }
  HW_HD static Index<D> moved(Index<D> i, int a, long v) {
    HW_UNROLL
    for (int b = 0; b < D; ++b) i[b] = b == a ? v : i[b];
    return i;
  }

  HW_HD static bool holds(const Box<D>& b, const Index<D>& i) {
    for (int a = 0; a < D; ++a)
      if (i[a] < b.lo[a] || i[a] >= b.hi[a]) return false;
    return true;
  }

  // The value the axis-by-axis fills leave at point i of face f's box, from
  // `read` (a point's value before the fill), into `value`; false where an
  // earlier face holds i (that face's pass writes it: each point once). The
  // point's source is mapped through the rule of each face that holds it,
  // the last axis's first, and the rules applied the first axis's first:
  // the same operations on the same value, bit for bit. `read` is asked only
  // for points no face holds (a Dirichlet face point on the way is g,
  // whatever the faces before it left), so one pass may write them all.
  template <class Real, class Read>
  HW_HD bool ghost(int f, const Index<D>& i, Read read, Real& value) const {
    if (holds(alone[f], i)) {  // what the walk below does where face f alone holds i and its source
      const auto layer = rule[f].template layer<Real>(along(i, axis[f]));
      value = layer.fixed ? layer.value : layer(read(moved(i, axis[f], layer.source)));
      return true;
    }
    bool earlier = false;
    for (int g = 0; g < f; ++g) earlier = earlier || holds(box[g], i);
    if (earlier) return false;
    Index<D> src = i;
    unsigned applied = 0;
    bool fixed = false;
    for (int g = count - 1; g >= 0 && !fixed; --g) {
      if (!holds(box[g], src)) continue;
      applied |= 1u << g;
      const long at = along(src, axis[g]);
      fixed = rule[g].fixed_point(at);
      if (!fixed) src = moved(src, axis[g], rule[g].source(at));
    }
    value = fixed ? Real(0) : read(src);
    for (int g = 0; g < count; ++g)
      if (applied & (1u << g)) value = rule[g].ghost(along(i, axis[g]), value);
    return true;
  }
};

}  // namespace heatwave
