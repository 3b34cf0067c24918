// GhostFaces (solver/ghost_faces.hpp), the GPU backends' one-launch ghost
// fill: every point it writes against the faces filled axis by axis, each
// pass reading what the passes before it left, bit for bit. Its reads come
// from the field as it was before the fill: a point it read that some face
// writes would show up as a difference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <utility>
#include <random>
#include <vector>

#include "solver/ghost_faces.hpp"

namespace heatwave {
namespace {

FaceRule rule(BoundaryType type, double value, long n, int side, double h = 0.05) {
  FaceRule r;
  r.type = type, r.value = value, r.h = h, r.n = n, r.side = side;
  return r;
}

template <int D>
LocalDomain<D> domain(const Index<D>& owned, int halo) {
  LocalDomain<D> d;
  d.layout.owned = owned, d.layout.halo = halo, d.global = owned;
  return d;
}

// Every face's rule in axis then side order, as (type, value), each with
// its axis's points (an exchanged face's rule is set and never read).
template <int D>
void set_faces(LocalDomain<D>& d, std::initializer_list<std::pair<BoundaryType, double>> rules) {
  int k = 0;
  for (const auto& [type, value] : rules) {
    const int a = k / 2, side = k % 2;
    d.face[a][side] = rule(type, value, d.layout.owned[a], side);
    ++k;
  }
}

template <int D>
void for_each(const Box<D>& box, auto&& f) {
  for (long k = 0; k < box.size(); ++k) f(box_point(box, k));
}

// Differing points (all the storage) between the one-pass fill and the
// axis-by-axis one, on fresh random data.
template <int D, class Real>
long differing(const LocalDomain<D>& d, int radius, const Box<D>* window = nullptr) {
  const Layout<D>& layout = d.layout;
  std::vector<Real> before(layout.storage_size());
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (Real& value : before) value = static_cast<Real>(dist(rng));
  // Axis by axis, as the host backend and the GPU's former launch an axis.
  std::vector<Real> want = before;
  for (int a = 0; a < D; ++a)
    for (int side = 0; side < 2; ++side) {
      if (d.exchanged[a][side]) continue;
      Box<D> box = d.ghost_box(a, side, radius);
      for (int o = 0; o < D && window; ++o)
        if (o != a) box.lo[o] = std::max(box.lo[o], window->lo[o]), box.hi[o] = std::min(box.hi[o], window->hi[o]);
      const FaceRule& r = d.face[a][side];
      for_each<D>(box, [&](const Index<D>& i) {
        Index<D> src = i;
        src[a] = r.source(i[a]);
        want[layout.offset(i)] = r.ghost(i[a], want[layout.offset(src)]);
      });
    }
  // One pass, reading only the field before it: each point of the faces'
  // boxes written once, and no point a face writes read (so one launch may
  // write them all at once).
  std::vector<Real> got = before;
  const GhostFaces<D> faces(d, radius, window);
  std::vector<int> writes(got.size(), 0), held(got.size(), 0);
  for (int f = 0; f < faces.count; ++f)
    for_each<D>(faces.box[f], [&](const Index<D>& i) { held[layout.offset(i)] = 1; });
  long held_reads = 0;
  for (int f = 0; f < faces.count; ++f)
    for_each<D>(faces.box[f], [&](const Index<D>& i) {
      Real value;
      auto read = [&](const Index<D>& src) {
        held_reads += held[layout.offset(src)];
        return before[layout.offset(src)];
      };
      if (faces.ghost(f, i, read, value)) got[layout.offset(i)] = value, ++writes[layout.offset(i)];
    });
  EXPECT_EQ(held_reads, 0);
  long miswritten = 0;  // written twice, or held and not written
  for (std::size_t p = 0; p < got.size(); ++p) miswritten += writes[p] != held[p];
  EXPECT_EQ(miswritten, 0);
  long n = 0;
  for (std::size_t p = 0; p < got.size(); ++p) n += std::memcmp(&got[p], &want[p], sizeof(Real)) != 0;
  return n;
}

TEST(UnitGhostFaces, OnePassLeavesWhatTheAxisByAxisFillsLeave2D) {
  for (int radius = 1; radius <= 4; ++radius) {
    LocalDomain<2> d = domain<2>({23, 17}, radius + 1);
    d.face[0][0] = rule(BoundaryType::dirichlet, 0.3, 23, 0);
    d.face[0][1] = rule(BoundaryType::neumann, 1.2, 23, 1);
    d.face[1][0] = rule(BoundaryType::neumann, -0.8, 17, 0);
    d.face[1][1] = rule(BoundaryType::dirichlet, -0.5, 17, 1);
    EXPECT_EQ((differing<2, float>(d, radius)), 0) << "radius " << radius;
    EXPECT_EQ((differing<2, double>(d, radius)), 0) << "radius " << radius;
    // y periodic, x Dirichlet on both sides (corners of Dirichlet face points).
    d.face[0][1] = rule(BoundaryType::dirichlet, 1.5, 23, 1);
    d.face[1][0] = rule(BoundaryType::periodic, 0, 17, 0), d.face[1][1] = rule(BoundaryType::periodic, 0, 17, 1);
    EXPECT_EQ((differing<2, double>(d, radius)), 0) << "radius " << radius << ", y periodic";
  }
}

TEST(UnitGhostFaces, OnePassLeavesWhatTheAxisByAxisFillsLeave3D) {
  for (int radius : {1, 2, 4}) {
    LocalDomain<3> d = domain<3>({13, 11, 9}, radius);
    d.face[0][0] = rule(BoundaryType::dirichlet, 0.3, 13, 0);
    d.face[0][1] = rule(BoundaryType::neumann, 1.2, 13, 1);
    d.face[1][0] = rule(BoundaryType::periodic, 0, 11, 0), d.face[1][1] = rule(BoundaryType::periodic, 0, 11, 1);
    d.face[2][0] = rule(BoundaryType::neumann, -0.4, 9, 0);
    d.face[2][1] = rule(BoundaryType::dirichlet, 1.0, 9, 1);
    EXPECT_EQ((differing<3, double>(d, radius)), 0) << "radius " << radius;
    EXPECT_EQ((differing<3, float>(d, radius)), 0) << "radius " << radius;
  }
}

// Exchanged faces have no ghosts to fill; a window (the cuda backend's
// inner steps under MPI: the inner points along exchanged axes) clips the
// other faces' boxes.
TEST(UnitGhostFaces, ExchangedFacesAndAWindow) {
  LocalDomain<2> d = domain<2>({23, 17}, 3);
  d.face[0][0] = rule(BoundaryType::dirichlet, 0.3, 23, 0);
  d.face[1][0] = rule(BoundaryType::neumann, -0.8, 17, 0);
  d.face[1][1] = rule(BoundaryType::dirichlet, -0.5, 17, 1);
  d.exchanged[0][1] = true;
  EXPECT_EQ((differing<2, double>(d, 2)), 0);
  Box<2> window = d.layout.storage_box();
  window.hi[0] = 23 - 4;
  EXPECT_EQ((differing<2, double>(d, 2, &window)), 0);

  LocalDomain<3> e = domain<3>({13, 11, 9}, 2);
  set_faces(e, {{BoundaryType::neumann, 0.7},
                {BoundaryType::dirichlet, 0.2},
                {BoundaryType::dirichlet, -0.1},
                {BoundaryType::neumann, 0.9},
                {BoundaryType::dirichlet, 0.0},  // exchanged
                {BoundaryType::dirichlet, 1.0}});
  e.exchanged[2][0] = true;
  Box<3> inner = e.layout.storage_box();
  inner.lo[2] = 2;
  EXPECT_EQ((differing<3, float>(e, 2, &inner)), 0);
  EXPECT_EQ((differing<3, float>(e, 2)), 0);
}

// Where a face's rule alone makes its ghosts (GhostFaces::alone: the walk
// over every face skipped): all of a face but the edges it shares with the
// faces of other axes, here at the fewest points an axis with both faces
// may have (2r + 1: z of 5 at radius 2, Dirichlet both sides, whose low
// ghost -2 reads point 2, one short of the high face's layer). Shorter, a
// source would be held by the opposite face and no point is alone (z of 3:
// the low ghost -2 reads the high Dirichlet face point).
TEST(UnitGhostFaces, EachFaceAloneButItsEdges) {
  LocalDomain<3> d = domain<3>({13, 6, 5}, 2);
  set_faces(d, {{BoundaryType::neumann, 0.7},
                {BoundaryType::dirichlet, 0.2},
                {BoundaryType::neumann, -0.1},
                {BoundaryType::neumann, 0.9},
                {BoundaryType::dirichlet, 1.0},
                {BoundaryType::dirichlet, -1.0}});
  const GhostFaces<3> faces(d, 2);
  ASSERT_EQ(faces.count, 6);
  EXPECT_EQ(faces.alone[0].lo, (Index<3>{-2, 0, 1}));  // clear of the y faces' layers and the z faces' points
  EXPECT_EQ(faces.alone[0].hi, (Index<3>{0, 6, 4}));
  EXPECT_EQ(faces.alone[4].lo, (Index<3>{0, 0, -2}));  // z low: its ghosts and its face point
  EXPECT_EQ(faces.alone[4].hi, (Index<3>{12, 6, 1}));
  EXPECT_EQ((differing<3, double>(d, 2)), 0);
  EXPECT_EQ((differing<3, float>(d, 2)), 0);

  LocalDomain<3> e = d;
  e.layout.owned[2] = 3, e.face[2][0].n = 3, e.face[2][1].n = 3;
  const GhostFaces<3> short_z(e, 2);
  EXPECT_TRUE(short_z.alone[4].empty());
  EXPECT_TRUE(short_z.alone[5].empty());
  EXPECT_FALSE(short_z.alone[0].empty());
}

// Between steps the cuda backend fills only the ghosts the next step reads
// (GhostFaces::only_step_reads): every point a star stencil of the radius
// reads from the update box that lies in a face's box, but for the
// Dirichlet face points (g in both fields). Without exchanged sides,
// exactly those, each once; with them, at least those.
template <int D>
void check_step_reads(const LocalDomain<D>& d, int radius) {
  const Layout<D>& layout = d.layout;
  GhostFaces<D> faces(d, radius);
  std::vector<int> in_box(layout.storage_size(), 0), read(layout.storage_size(), 0);
  for (int f = 0; f < faces.count; ++f)
    for_each<D>(faces.box[f], [&](const Index<D>& i) { in_box[layout.offset(i)] = 1; });
  const Box<D> owned = layout.owned_box();
  for_each<D>(d.update_box(radius, 0), [&](const Index<D>& i) {
    for (int a = 0; a < D; ++a)
      for (int m = -radius; m <= radius; ++m) {
        Index<D> j = i;
        j[a] += m;
        const bool face_point = GhostFaces<D>::holds(owned, j);  // owned and in a face's box: a Dirichlet face point
        if (in_box[layout.offset(j)] && !face_point) read[layout.offset(j)] = 1;
      }
  });
  faces.only_step_reads(d, radius);
  std::vector<int> writes(layout.storage_size(), 0);
  for (int f = 0; f < faces.count; ++f)
    for_each<D>(faces.written[f], [&](const Index<D>& i) {
      EXPECT_TRUE(GhostFaces<D>::holds(faces.box[f], i)) << "face " << f << " writes past its box";
      ++writes[layout.offset(i)];
    });
  bool exchanged = false;
  for (int a = 0; a < D; ++a) exchanged = exchanged || d.exchanged[a][0] || d.exchanged[a][1];
  long missed = 0, extra = 0, twice = 0;
  for (std::size_t p = 0; p < read.size(); ++p)
    missed += read[p] && !writes[p], extra += !read[p] && writes[p], twice += writes[p] > 1;
  EXPECT_EQ(missed, 0) << "radius " << radius << ": ghosts the step reads, left unfilled";
  EXPECT_EQ(twice, 0) << "radius " << radius;
  if (!exchanged) EXPECT_EQ(extra, 0) << "radius " << radius << ": ghosts no step reads, filled";
}

TEST(UnitGhostFaces, OnlyWhatTheNextStepReads) {
  for (int radius = 1; radius <= 4; ++radius) {
    LocalDomain<2> d = domain<2>({23, 17}, radius + 1);
    set_faces(d, {{BoundaryType::dirichlet, 0.3},
                  {BoundaryType::neumann, 1.2},
                  {BoundaryType::periodic, 0},
                  {BoundaryType::periodic, 0}});
    check_step_reads(d, radius);
    LocalDomain<3> e = domain<3>({13, 11, 9}, radius);
    set_faces(e, {{BoundaryType::dirichlet, 0.3},
                  {BoundaryType::neumann, 1.2},
                  {BoundaryType::neumann, -0.1},
                  {BoundaryType::dirichlet, 0.5},
                  {BoundaryType::dirichlet, 1.0},
                  {BoundaryType::dirichlet, -1.0}});
    check_step_reads(e, radius);
    e.exchanged[2][1] = true;
    check_step_reads(e, radius);
  }
  // At radius 1 a domain of Dirichlet faces has no ghost a step reads.
  LocalDomain<3> all = domain<3>({13, 11, 9}, 1);
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side) all.face[a][side] = rule(BoundaryType::dirichlet, 0.5, all.layout.owned[a], side);
  GhostFaces<3> faces(all, 1);
  faces.only_step_reads(all, 1);
  EXPECT_EQ(faces.count, 6);
  EXPECT_EQ(faces.largest(), 0);
}

}  // namespace
}  // namespace heatwave
