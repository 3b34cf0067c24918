#pragma once
// Media and sources on a rank's grid: the coefficient fields of `material:`
// and the spatial parts of `sources:`, sampled at every point of the rank's
// storage box (its ghosts and halos too) from their global definition. Every
// rank and every backend sees the same values at the same global point, so
// nothing about them is exchanged (docs/design.md, "Media and sources").
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "solver/domain.hpp"
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
// The same checks for a `type: field` source (any finite values).
void check_source_file(const std::string& config, std::size_t index, const Source& source,
                       const std::array<long, 3>& points, int dims);

// The global point whose value a storage point takes along an axis of n
// points: itself inside the grid; past a face its mirror image (even
// reflection about the boundary point), or its periodic image.
long sample_index(long g, long n, bool periodic);

// A coefficient's value at every storage point of the domain (layout order;
// NaN in the padding outside the storage box). Its constant where the
// coefficient is not in the problem's material.
template <int D>
std::vector<double> medium_field(const Problem& problem, const std::string& key, const LocalDomain<D>& domain);

// The spatial part q(x) of a source at every storage point (layout order).
// A point source spreads its amplitude over the 2^D grid points around its
// position with multilinear weights, divided by the cell volume and the
// point's trapezoid weight: the trapezoid integral of q is the amplitude.
template <int D>
std::vector<double> source_field(const Problem& problem, const Source& source, const LocalDomain<D>& domain);

// Absorbing faces (BoundaryFace::absorbing): the damped wave's gamma grows
// into each layer as gamma_max (d/w)^2, d the points from the layer's inner
// edge, w its width, with gamma_max = 12 c / (w h) (docs/design.md has the
// sweep that chose it). absorbing_gamma is the sum over the faces at global
// point g (indices along each axis).
bool has_absorbing_faces(const Problem& p);
double absorbing_gamma_max(const Problem& p, int axis, int side);
double absorbing_gamma(const Problem& p, const long* g);

// The grid points around a position along each axis and their linear
// weights ([a][0]: the point at or below it, weight 1 - f; [a][1]: the next
// one, weight f; wrapped on a periodic axis; on the high face of another both
// are the face point, weights 1 and 0). Point sources spread with them,
// receivers interpolate with them.
using PositionWeights = std::array<std::array<std::pair<long, double>, 2>, max_dims>;
PositionWeights position_weights(const Problem& p, const std::array<double, max_dims>& x);

// f(t) of a source's time function.
double time_factor(const TimeFunction& f, double t);

// The harmonic mean 2ab/(a+b): the coefficient of the flux between two grid
// points in the heat equation's div(alpha grad u) (exact for a layer
// interface midway between them).
inline double harmonic_mean(double a, double b) {
#ifdef HEATWAVE_TEST_ARITHMETIC_MEAN
  // Test-only (tests/CMakeLists.txt builds heatwave_arithmetic_mean with it):
  // the wrong face rule, which the layered manufactured cases must catch.
  return (a + b) / 2;
#else
  return 2 * a * b / (a + b);
#endif
}

// Whether the equation's flux coefficient (the heat's alpha) varies in space:
// then the operator is the flux form over its pair fields.
template <class Eq>
bool flux_varies(const Problem& p) {
  return Eq::flux_coefficient && p.material.count(Eq::flux_coefficient) > 0;
}

// The coefficients of the update that goes with the flux form: the flux
// coefficient, where it varies, is in the pair fields (set to 1 here).
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

// What a backend computes with when coefficients vary or sources are given,
// in the working precision and the field's layout; the backends that run on
// a device copy these there. Built from the problem's global definition.
template <int D, class Real, class Eq>
struct MediaFields {
  using Update = typename Eq::template Update<Real>;
  int radius = 1;
  // The flux coefficient's pair fields K_aj (solver/stencil.hpp), [a * radius + j - 1];
  // empty where the equation's flux coefficient does not vary.
  std::vector<std::vector<Real>> pairs;
  // The update at each point (the other varying coefficients); empty where none varies.
  std::vector<Update> updates;
  // The update where no coefficient varies point by point (the flux coefficient set to 1).
  Update uniform{};
  // Wave energy with c varying: the kinetic term's weight (c_max/c)^2 a point.
  std::vector<double> kinetic_weight;
  // Each source's spatial part, in config order, and its time function.
  std::vector<std::vector<Real>> sources;
  std::vector<TimeFunction> times;

  bool flux_form() const { return !pairs.empty(); }
  // f(t) of every source at time t, in the working precision.
  std::vector<Real> factors(double t) const { return source_factors<Real>(times, t); }

  static MediaFields make(const Problem& p, const LocalDomain<D>& domain) {
    MediaFields m;
    m.radius = p.radius;
    const std::size_t n = domain.layout.storage_size();
    const Coefficients uniform = uniform_coefficients<Eq>(p);
    const auto varies = [&](const char* key) { return key && p.material.count(key) > 0; };
    if (flux_varies<Eq>(p)) {
      const std::vector<double> k = medium_field(p, Eq::flux_coefficient, domain);
      const auto strides = domain.layout.strides();
      for (int a = 0; a < D; ++a)
        for (int j = 1; j <= p.radius; ++j) {
          const double w = (p.radius == 1 ? CentralDifference<1>::weight[j] : CentralDifference<2>::weight[j]) /
                           (p.spacing[a] * p.spacing[a]);
          std::vector<Real> pair(n, std::numeric_limits<Real>::quiet_NaN());
          const long s = j * strides[a];
          for (std::size_t q = 0; q + s < n; ++q)
            if (!std::isnan(k[q]) && !std::isnan(k[q + s]))
              pair[q] = static_cast<Real>(w * harmonic_mean(k[q], k[q + s]));
          m.pairs.push_back(std::move(pair));
        }
    }
    m.uniform = Update::make(uniform, p.dt);
    std::vector<std::pair<const char*, std::vector<double>>> pointwise;
    for (const CoefficientSpec& spec : Eq::coefficients)
      if (varies(spec.key) && spec.key != std::string_view(Eq::flux_coefficient ? Eq::flux_coefficient : ""))
        pointwise.emplace_back(spec.key, medium_field(p, spec.key, domain));
    if (!pointwise.empty()) {
      // Neighbouring points mostly share their values (layers): make an
      // update only where they change.
      m.updates.assign(n, m.uniform);
      Coefficients here = uniform;
      std::vector<double> last(pointwise.size(), std::numeric_limits<double>::quiet_NaN());
      Update made = m.uniform;
      for (std::size_t q = 0; q < n; ++q) {
        bool inside = true, same = true;
        for (std::size_t k = 0; k < pointwise.size(); ++k) {
          const double v = pointwise[k].second[q];
          inside = inside && !std::isnan(v), same = same && v == last[k];
        }
        if (!inside) continue;  // padding outside the storage box
        if (!same) {
          for (std::size_t k = 0; k < pointwise.size(); ++k)
            here.set(pointwise[k].first, last[k] = pointwise[k].second[q]);
          made = Update::make(here, p.dt);
        }
        m.updates[q] = made;
      }
    }
    if constexpr (Eq::has_energy) {
      if (varies("c")) {
        const auto entry = std::find_if(pointwise.begin(), pointwise.end(),
                                        [](const auto& e) { return std::string_view(e.first) == "c"; });
        const std::vector<double> flux_c =
            entry == pointwise.end() ? medium_field(p, "c", domain) : std::vector<double>{};
        const std::vector<double>& c = entry == pointwise.end() ? flux_c : entry->second;
        const double c_max = p.coefficients.get("c");
        m.kinetic_weight.resize(n);
        for (std::size_t q = 0; q < n; ++q) m.kinetic_weight[q] = (c_max * c_max) / (c[q] * c[q]);
      }
    }
    for (const Source& source : p.sources) {
      const std::vector<double> q = source_field(p, source, domain);
      m.sources.emplace_back(q.begin(), q.end());
      m.times.push_back(source.time);
    }
    return m;
  }
};

}  // namespace heatwave
