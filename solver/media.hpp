#pragma once
// Media and sources on a rank's grid: the coefficients of `material:` and
// the spatial parts of `sources:`, on the rank's storage box (its ghosts and
// halos too) from their global definition, in the forms the config gives
// them. Every rank and every backend sees the same values at the same global
// point, so nothing about them is exchanged (docs/design.md, "Media and
// sources").
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/hd.hpp"
#include "solver/domain.hpp"
#include "solver/media_views.hpp"
#include "solver/problem.hpp"
#include "solver/stencil.hpp"

namespace heatwave {

struct ValueRange {
  double min = 0, max = 0;
};

// The smallest and largest value of a coefficient's medium over the grid. A
// file's dataset is read whole; a missing file or dataset, a shape other than
// the grid's, NaN/Inf or a value the coefficient may not take is refused with
// an Error naming the file, the dataset and the value.
ValueRange medium_range(const std::string& config, const CoefficientSpec& spec, const Medium& medium,
                        const std::array<long, 3>& points, int dims);
// The same checks for a field any finite values may hold: a `type: field`
// source, an `initial` or `velocity` of `type: file`. `what`: the config
// key, with the config file ("case.yaml: 'initial.path'"); `role`: what
// must be finite ("a source").
void check_field_file(const std::string& what, const std::string& path, const std::string& dataset,
                      const std::array<long, 3>& points, int dims, const char* role);

// The global point whose value a storage point takes along an axis of n
// points: itself inside the grid; past a face its mirror image (even
// reflection about the boundary point), or its periodic image.
long sample_index(long g, long n, bool periodic);
// The points nearest a face through which a file's coefficient is continued
// past it (the polynomial of one degree less, evaluated at the ghost): 2r+1,
// at least 5 (the quartic radius 1 and 2 take).
inline int continued_points(int radius) { return std::max(5, 2 * radius + 1); }
// The least value a coefficient continued past a face takes: half the
// data's least (positive stays positive; a smooth medium keeps its order).
inline double continued_floor(double least) { return least / 2; }

// Absorbing faces (BoundaryFace::absorbing): the damped wave's gamma grows
// into each layer as gamma_max (d/w)^2, d the points from the layer's inner
// edge, w its width, with gamma_max = 12 c / (w h) (docs/design.md has the
// sweep that chose it): a profile along each axis (Media's tables), summed
// over the axes at a point.
bool has_absorbing_faces(const Problem& p);
double absorbing_gamma_max(const Problem& p, int axis, int side);

// The grid points around a position along each axis and their linear
// weights ([a][0]: the point at or below it, weight 1 - f; [a][1]: the next
// one, weight f; wrapped on a periodic axis; on the high face of another both
// are the face point, weights 1 and 0). Point sources spread with them,
// receivers interpolate with them.
using PositionWeights = std::array<std::array<std::pair<long, double>, 2>, max_dims>;
PositionWeights position_weights(const Problem& p, const std::array<double, max_dims>& x);

// Bytes the media and sources of a rank hold where they compute (`held`:
// the fields read from files, one value a point in the working precision,
// and the sources' points) and, on the host, what reading a file takes on
// top while it is sampled (`staging`). Tables (layers, profiles) are small
// and counted too.
struct MediaMemory {
  std::size_t held = 0, staging = 0;
};
template <int D>
MediaMemory media_memory(const Problem& p, const LocalDomain<D>& domain);

// f(t) of a source's time function.
double time_factor(const TimeFunction& f, double t);

// Whether the equation's flux coefficient (the heat's alpha) varies in space:
// then the operator is the flux form over its pair coefficients.
template <class Eq>
bool flux_varies(const Problem& p) {
  return Eq::flux_coefficient && p.material.count(Eq::flux_coefficient) > 0;
}

// The coefficients of the update that goes with the flux form: the flux
// coefficient, where it varies, is in the pair coefficients (set to 1 here).
template <class Eq>
Coefficients uniform_coefficients(const Problem& p) {
  Coefficients uniform = p.coefficients;
  if (flux_varies<Eq>(p)) uniform.set(Eq::flux_coefficient, 1.0);
  return uniform;
}

// f(t) of every source's time function at time t, in the working precision:
// what each backend adds the sources' q(x) with.
template <class Real>
std::vector<Real> source_factors(const std::vector<TimeFunction>& times, double t) {
  std::vector<Real> f;
  for (const TimeFunction& time : times) f.push_back(static_cast<Real>(time_factor(time, t)));
  return f;
}

// ---------------------------------------------------------------------------
// Media and sources as the config defines them: the views the host loops and
// the CUDA kernels evaluate are solver/media_views.hpp's; what a rank holds
// (Media, the sources' points) is made here.

// The coordinates lo, lo + 1, ... of an axis grouped by their contributions
// (`width` values a coordinate in `keys`, PointUpdates::axis_contributions),
// compared by their bits: each coordinate's class, and the first coordinate
// of each class.
struct AxisClasses {
  std::vector<int> of;
  std::vector<long> first;
};
AxisClasses axis_classes(const std::vector<double>& keys, int width, long lo);

// A source on a rank: the storage points it touches, as a product of index
// lists along the axes (a point source: the 2^D points around it and their
// periodic images; a gaussian: the box where exp(-r^2/2w^2) >= 2^-60; a
// field: every storage point), and q there in the working precision. A
// point source and a Gaussian are separable: q is the product of a factor
// a point along each axis (the linear weights; exp(-d^2/2w^2)), the
// amplitude (over a point source's cell volume) in x's, each in the working
// precision, multiplied in axis order (the host, the cuda launch and the
// cluster kernels alike): a few numbers an axis however wide the box. A
// field holds q over the product, x fastest. Added after
// the step with f(t_n), as Update::force at the point: one source after
// another, in config order.
template <int D, class Real>
struct SourceTerm {
  TimeFunction time;
  std::array<std::vector<long>, D> index;
  std::array<std::vector<Real>, D> factor;  // separable: at each index
  std::vector<Real> q;                      // a field's; empty where separable
  std::size_t points() const {
    std::size_t n = 1;
    for (const auto& i : index) n *= i.size();
    return n;
  }
};
// What a backend computes with where coefficients vary or sources are given
// (rank-local, host memory; the GPU backends copy the vectors and take views
// of the copies). Built from the problem's global definition.
template <int D, class Real, class Eq>
struct Media {
  using Update = typename Eq::template Update<Real>;
  static constexpr int count = static_cast<int>(Eq::coefficients.size());
  struct Coefficient {
    double base = 0;
    int axis = 0;
    std::vector<double> layer;
    std::vector<Real> field;
    std::array<std::vector<double>, D> profile;
  };
  std::array<Coefficient, count> coefficients;
  bool pointwise = false;  // a coefficient other than the flux one varies
  Update uniform{};
  double dt = 0;
  double c_max = 0;      // the wave energy's kinetic weight is (c_max / c)^2 where c varies
  int c_index = -1;      // c's place in the coefficients (wave equations), where c varies
  // The heat's flux form: a file's alpha a point, or the K tables along `flux_axis`.
  bool flux = false;
  std::vector<Real> flux_alpha;
  std::vector<std::vector<Real>> flux_tables;  // [a * radius + j - 1]
  int flux_axis = 0;
  int radius = 1;
  std::array<long, max_dims> lo{0, 0, 0};
  std::vector<SourceTerm<D, Real>> sources;
  // Where the point-by-point coefficients may change along x: the storage x
  // indices that start a run of equal x tables (layers along x, the x
  // profiles), from lo[0]; empty where a coefficient is a file's field (every
  // point its own). A host row makes one update a run.
  std::vector<long> x_runs;

  static Media make(const Problem& p, const LocalDomain<D>& domain);

  bool flux_form() const { return flux; }
  // Views whose pointers `place` gives for each vector: its data() on the
  // host, a device copy's on a GPU.
  template <class Place>
  CoefficientView<Real> coefficient(int n, Place&& place) const {
    const Coefficient& c = coefficients[n];
    CoefficientView<Real> v;
    v.base = c.base, v.axis = c.axis;
    if (!c.layer.empty()) v.layer = place(c.layer);
    if (!c.field.empty()) v.field = place(c.field);
    for (int a = 0; a < D; ++a)
      if (!c.profile[a].empty()) v.profile[a] = place(c.profile[a]);
    for (int a = 0; a < D; ++a) v.lo[a] = lo[a];
    return v;
  }
  template <class Place>
  PointUpdates<D, Real, Eq> updates(Place&& place) const {
    PointUpdates<D, Real, Eq> u;
    for (int n = 0; n < count; ++n) u.k[n] = coefficient(n, place);
    u.uniform = uniform, u.dt = dt, u.varies = pointwise;
    u.calm_lo = std::numeric_limits<long>::min(), u.calm_hi = std::numeric_limits<long>::max();
    for (const Coefficient& c : coefficients) {
      if (!c.field.empty() || (!c.layer.empty() && c.axis == 0)) u.calm_lo = u.calm_hi = lo[0];
      if (c.profile[0].empty()) continue;
      // The profile's zeros between the layers (every absorbing layer is at a face).
      long first = 0, last = 0;
      const long n = static_cast<long>(c.profile[0].size());
      while (first < n && c.profile[0][first] != 0) ++first;
      for (last = first; last < n && c.profile[0][last] == 0; ++last) {}
      u.calm_lo = std::max(u.calm_lo, lo[0] + first), u.calm_hi = std::min(u.calm_hi, lo[0] + last);
    }
    return u;
  }
  template <int R, class Place>
  FluxPairs<D, R, Real> pairs(const std::array<double, 3>& spacing, const Index<D>& strides, Place&& place) const {
    FluxPairs<D, R, Real> f;
    if (!flux_alpha.empty()) f.alpha = place(flux_alpha);
    for (int a = 0; a < D; ++a) {
      f.stride[a] = strides[a];
      for (int j = 1; j <= R; ++j) {
        f.w[a][j - 1] = static_cast<Real>(CentralDifference<R>::weight[j] / (spacing[a] * spacing[a]));
        if (!flux_tables.empty()) f.table[a][j - 1] = place(flux_tables[a * R + j - 1]);
      }
    }
    f.axis = flux_axis, f.lo = lo[flux_axis];
    return f;
  }
  template <class Place>
  KineticWeight<Real> kinetic_weight(Place&& place) const {
    KineticWeight<Real> w;
    if (c_index >= 0) w.c = coefficient(c_index, place), w.c_max = c_max, w.varies = true;
    return w;
  }
  template <class Place>
  SourceView<D, Real> source(std::size_t t, Place&& place) const {
    SourceView<D, Real> v;
    const SourceTerm<D, Real>& s = sources[t];
    for (int a = 0; a < D; ++a) {
      v.index[a] = place(s.index[a]), v.count[a] = static_cast<long>(s.index[a].size());
      if (!s.factor[a].empty()) v.factor[a] = place(s.factor[a]);
    }
    if (!s.q.empty()) v.q = place(s.q);
    return v;
  }
  std::vector<TimeFunction> times() const {
    std::vector<TimeFunction> out;
    for (const auto& s : sources) out.push_back(s.time);
    return out;
  }
  // Host bytes this holds (the memory check's count).
  std::size_t bytes() const;
};

}  // namespace heatwave
