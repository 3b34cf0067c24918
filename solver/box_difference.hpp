#pragma once
// Boxes less boxes, on the host: the rims of a window around an inner box
// (the overlap of computation with a halo exchange).
#include <vector>

#include "solver/box.hpp"

namespace heatwave {

// The points of `outer` that are not in `inner` (a box inside `outer`), as at
// most 2*D disjoint slabs; all of `outer` when `inner` is empty.
template <int D>
std::vector<Box<D>> box_difference(const Box<D>& outer, const Box<D>& inner) {
  if (inner.empty()) return {outer};
  std::vector<Box<D>> slabs;
  Box<D> rest = outer;
  for (int a = 0; a < D; ++a) {
    if (inner.lo[a] > rest.lo[a]) {
      Box<D> slab = rest;
      slab.hi[a] = rest.lo[a] = inner.lo[a];
      slabs.push_back(slab);
    }
    if (inner.hi[a] < rest.hi[a]) {
      Box<D> slab = rest;
      slab.lo[a] = rest.hi[a] = inner.hi[a];
      slabs.push_back(slab);
    }
  }
  return slabs;
}

}  // namespace heatwave
