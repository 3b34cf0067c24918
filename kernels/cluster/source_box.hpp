#pragma once
// A box of a source's points, as the cluster kernels add it (common.cuh) and
// the host makes it (source_boxes.hpp). Plain C++, no host-only header.
#include "core/hd.hpp"

namespace heatwave::cuda {

// Points of a source a rank holds: runs of consecutive coordinates along
// each axis, a box for each product of runs.
struct SourceBox {
  int lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};  // local coordinates, wrapped into [0, n) on a periodic axis
  int source = 0;                            // its place in the config
  int factor[3] = {0, 0, 0};                 // where its factors along each axis start in the weights
  HW_HD bool holds(int a, int c) const { return c >= lo[a] && c < hi[a]; }
  // Its q at (x, y, z), which it holds (z: 3D), as the host makes it (SourceTerm).
  template <int D, class Real>
  HW_HD Real q(const Real* weights, int x, int y, int z) const {
    Real product = weights[factor[0] + x - lo[0]] * weights[factor[1] + y - lo[1]];
    if constexpr (D == 3) product *= weights[factor[2] + z - lo[2]];
    return product;
  }
};

}  // namespace heatwave::cuda
