// The cluster kernels' source boxes (kernels/cluster/source_boxes.hpp):
// the boxes and factors a rank's sources become, worked out here by hand.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "kernels/cluster/source_boxes.hpp"

namespace heatwave::cuda {
namespace {

template <int D>
SourceTerm<D, double> term(const std::array<std::vector<long>, D>& index) {
  SourceTerm<D, double> t;
  t.index = index;
  // Factor k of axis a is 10 a + k: each weight says where it came from.
  for (int a = 0; a < D; ++a)
    for (std::size_t k = 0; k < index[a].size(); ++k) t.factor[a].push_back(10.0 * a + static_cast<double>(k));
  return t;
}

void expect_box(const SourceBox& box, std::array<int, 3> lo, std::array<int, 3> hi, std::array<int, 3> factor,
                int source) {
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(box.lo[a], lo[a]) << "axis " << a;
    EXPECT_EQ(box.hi[a], hi[a]) << "axis " << a;
    EXPECT_EQ(box.factor[a], factor[a]) << "axis " << a;
  }
  EXPECT_EQ(box.source, source);
}

TEST(UnitSourceBoxes, APointSourceIsOneBoxOfItsPoints) {
  // Its 2 x 2 points (x 4-5, y 7-8) inside the update box [1, 9)^2.
  const std::array<SourceAxis, 2> axes{SourceAxis{10, false, 1, 9}, SourceAxis{10, false, 1, 9}};
  const auto [boxes, weights] = make_source_boxes<2, double>({term<2>({{{4, 5}, {7, 8}}})}, axes);
  ASSERT_EQ(boxes.size(), 1u);
  expect_box(boxes[0], {4, 7, 0}, {6, 9, 1}, {0, 2, 0}, 0);
  EXPECT_EQ(weights, (std::vector<double>{0, 1, 10, 11}));
}

TEST(UnitSourceBoxes, APeriodicSeamSplitsABoxAndFacesDropPoints) {
  // x wraps (n 8): -2..2 are 6, 7, 0, 1, 2, two runs; z's points 0 and 3 lie
  // outside the update box [1, 3) (a Dirichlet face, a ghost).
  const std::array<SourceAxis, 3> axes{SourceAxis{8, true, 0, 8}, SourceAxis{6, false, 0, 6},
                                       SourceAxis{3, false, 1, 3}};
  const auto [boxes, weights] = make_source_boxes<3, double>({term<3>({{{-2, -1, 0, 1, 2}, {3, 4}, {0, 1, 2, 3}}})}, axes);
  ASSERT_EQ(boxes.size(), 2u);
  // x's weights in coordinate order (0, 1, 2, 6, 7: factors 2, 3, 4, 0, 1), then y's, then z's (1, 2).
  EXPECT_EQ(weights, (std::vector<double>{2, 3, 4, 0, 1, 10, 11, 21, 22}));
  expect_box(boxes[0], {0, 3, 1}, {3, 5, 3}, {0, 5, 7}, 0);
  expect_box(boxes[1], {6, 3, 1}, {8, 5, 3}, {3, 5, 7}, 0);
}

TEST(UnitSourceBoxes, APeriodicImageIsThePointItselfTheFirstKept) {
  // Wider than its periodic axis (n 3): -1..3 wrap to 2, 0, 1, 2, 0; each
  // coordinate keeps the factor of its first index.
  const std::array<SourceAxis, 2> axes{SourceAxis{3, true, 0, 3}, SourceAxis{5, false, 1, 4}};
  const auto [boxes, weights] = make_source_boxes<2, double>({term<2>({{{-1, 0, 1, 2, 3}, {2}}})}, axes);
  ASSERT_EQ(boxes.size(), 1u);
  expect_box(boxes[0], {0, 2, 0}, {3, 3, 1}, {0, 3, 0}, 0);
  EXPECT_EQ(weights, (std::vector<double>{1, 2, 0, 10}));
}

TEST(UnitSourceBoxes, SourcesKeepConfigOrderAndOneOutsideTheRankHasNoBox) {
  // Source 1 lies past the update box along y: no box (its x factor stays
  // in the weights, unused).
  const std::array<SourceAxis, 2> axes{SourceAxis{10, false, 0, 10}, SourceAxis{10, false, 0, 10}};
  const auto [boxes, weights] =
      make_source_boxes<2, double>({term<2>({{{2}, {3}}}), term<2>({{{4}, {12}}}), term<2>({{{6, 8}, {1}}})}, axes);
  ASSERT_EQ(boxes.size(), 3u);
  expect_box(boxes[0], {2, 3, 0}, {3, 4, 1}, {0, 1, 0}, 0);
  // Source 2: x 6 and 8 are two runs, so two boxes, x fastest.
  expect_box(boxes[1], {6, 1, 0}, {7, 2, 1}, {3, 5, 0}, 2);
  expect_box(boxes[2], {8, 1, 0}, {9, 2, 1}, {4, 5, 0}, 2);
  EXPECT_EQ(weights, (std::vector<double>{0, 10, 0, 0, 1, 10}));
}

}  // namespace
}  // namespace heatwave::cuda
