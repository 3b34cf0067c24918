#pragma once
// The cluster kernels' sources as boxes of separable factors: what the
// kernel objects copy to the device (kernel_object.cuh) and the kernels add
// (common.cuh). Plain C++, so that the host tests check the boxes.
#include <array>
#include <vector>

#include "core/hd.hpp"
#include "solver/media.hpp"

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

// An axis of the rank as the boxes see it: its points, whether one rank
// spans it (coordinates wrap), and the points the stencil updates, [lo, hi).
struct SourceAxis {
  int n = 1;
  bool periodic = false;
  int lo = 0, hi = 1;
};

template <class Real>
struct SourceBoxes {
  std::vector<SourceBox> boxes;  // in config order, x's runs fastest
  std::vector<Real> weights;     // the boxes' factors along their axes
};

// The boxes of each source's points that the update box holds (not a
// ghost, not a Dirichlet face point), wrapped on a periodic axis, where a
// periodic image is the point itself (the first of them kept). Separable
// sources only (SourceTerm::q empty).
template <int D, class Real>
SourceBoxes<Real> make_source_boxes(const std::vector<SourceTerm<D, Real>>& sources,
                                    const std::array<SourceAxis, D>& axes);

}  // namespace heatwave::cuda
