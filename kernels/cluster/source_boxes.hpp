#pragma once
// The cluster kernels' sources as boxes of separable factors: what the
// kernel objects copy to the device (kernel_object.cuh) and the kernels add
// (common.cuh). Plain C++, so that the host tests check the boxes.
#include <array>
#include <vector>

#include "kernels/cluster/source_box.hpp"
#include "solver/media.hpp"

namespace heatwave::cuda {

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
