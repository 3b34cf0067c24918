#include "solver/media.hpp"

#include <spdlog/fmt/fmt.h>
#include <spdlog/fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>

#include "io/errors.hpp"
#include "io/hdf5.hpp"
#include "io/startup_progress.hpp"
#include "core/equations/equations.hpp"

namespace heatwave {

namespace {

constexpr double pi = 3.14159265358979323846;

// The grid's shape as a dataset holds it: C order (z, y, x).
std::vector<std::uint64_t> file_shape(const std::array<long, 3>& points, int dims) {
  std::vector<std::uint64_t> shape;
  for (int a = dims - 1; a >= 0; --a) shape.push_back(static_cast<std::uint64_t>(points[a]));
  return shape;
}

// Opens `path` and checks that `dataset` is there with the grid's shape.
std::unique_ptr<hdf5::Reader> open_field(const std::string& what, const std::string& path, const std::string& dataset,
                                         const std::array<long, 3>& points, int dims) {
  if (!std::filesystem::exists(path)) throw Error(ExitCode::file_not_found, what + " = " + path + ": no such file");
  auto file = std::make_unique<hdf5::Reader>(path);
  if (!file->has_dataset(dataset))
    throw Error(ExitCode::invalid_value, what + ": " + path + " has no dataset '" + dataset + "'");
  if (const hdf5::Reader::ValueType type = file->value_type(dataset); !type.number)
    throw Error(ExitCode::invalid_value,
                fmt::format("{}: dataset '{}' of {} holds {}; heatwave reads integers or floating-point numbers "
                            "(float64, float32, int8 to int64, uint8 to uint64), converted to the run's precision",
                            what, dataset, path, type.name));
  const auto found = file->shape(dataset), needed = file_shape(points, dims);
  if (found != needed)
    throw Error(ExitCode::invalid_value,
                fmt::format("{}: dataset '{}' of {} has shape [{}], but the grid needs [{}] (z, y, x order: x "
                            "fastest, grid.points reversed)",
                            what, dataset, path, fmt::join(found, ", "), fmt::join(needed, ", ")));
  return file;
}

// The global index, in words, of the linear index of a dataset (x fastest).
std::string point_name(std::uint64_t linear, const std::array<long, 3>& points, int dims) {
  std::vector<long> index;
  for (int a = 0; a < dims; ++a) index.push_back(static_cast<long>(linear % points[a])), linear /= points[a];
  return fmt::format("[{}] (x, y, z)", fmt::join(index, ", "));
}

// How a storage index along an axis takes its value from the grid's points:
// a weighted sum of them (one term with weight 1 inside the grid).
struct Taken {
  std::vector<std::pair<long, double>> terms;  // (global index, weight)
};

// Along an axis of n points, the global index `g` (maybe past a face): its
// periodic image, its own point, or past a non-periodic face either its
// mirror image (`continued` false: a source's value, which no step reads)
// or the polynomial through the continued_points(radius) points nearest the
// face evaluated at g (a coefficient continued past the face, to O(h^(2r+1))
// and at least O(h^5), so that radius r keeps order 2r: docs/design.md,
// "Coefficients past the faces").
Taken taken_from(long g, long n, bool periodic, bool continued, int radius) {
  if (periodic || (g >= 0 && g < n) || !continued) return {{{sample_index(g, n, periodic), 1.0}}};
  const long m = std::min<long>(continued_points(radius), n);
  const long first = g < 0 ? 0 : n - m;
  Taken t;
  for (long k = 0; k < m; ++k) {
    double w = 1;
    for (long l = 0; l < m; ++l)
      if (l != k) w *= static_cast<double>(g - (first + l)) / static_cast<double>(k - l);
    t.terms.emplace_back(first + k, w);
  }
  return t;
}

// The value every storage point takes from a field file (layout order, NaN
// in the padding), read with one hyperslab per combination of contiguous
// runs of the global indices the storage box needs (a periodic halo needs
// the far side of the axis; a continued ghost the points by the face).
template <int D>
std::vector<double> sample_file(const Problem& p, const std::string& path, const std::string& dataset,
                                const LocalDomain<D>& domain, bool continued) {
  const hdf5::Reader file(path);
  const Box<D> storage = domain.layout.storage_box();
  std::array<std::vector<Taken>, D> taken;                 // per axis: how each storage index takes its value
  std::array<std::vector<std::pair<long, long>>, D> runs;  // per axis: (first global index, count)
  std::array<std::map<long, long>, D> position;            // per axis: global index -> compressed position
  for (int a = 0; a < D; ++a) {
    std::vector<long> needed;
    for (long i = storage.lo[a]; i < storage.hi[a]; ++i) {
      taken[a].push_back(taken_from(i + domain.offset[a], p.points[a], p.periodic[a], continued, p.radius));
      for (const auto& [g, w] : taken[a].back().terms) needed.push_back(g);
    }
    std::sort(needed.begin(), needed.end());
    needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
    for (std::size_t k = 0; k < needed.size(); ++k) {
      position[a][needed[k]] = static_cast<long>(k);
      if (runs[a].empty() || needed[k] != runs[a].back().first + runs[a].back().second)
        runs[a].emplace_back(needed[k], 1);
      else
        ++runs[a].back().second;
    }
    for (Taken& t : taken[a])
      for (auto& [g, w] : t.terms) g = position[a][g];  // from now on, compressed positions
  }
  std::array<long, D> compressed{};
  long total = 1;
  for (int a = 0; a < D; ++a) compressed[a] = static_cast<long>(position[a].size()), total *= compressed[a];
  std::vector<double> values(static_cast<std::size_t>(total));
  // Runs along the slowest axis cut into slabs of about 2^20 values, so that
  // a long read reports its progress.
  long plane = 1;
  for (int a = 0; a + 1 < D; ++a) plane *= compressed[a];
  const long slab = std::max(1L, (1L << 20) / std::max(1L, plane));
  std::vector<std::pair<long, long>> slabs;
  for (const auto& [first, count] : runs[D - 1])
    for (long m = 0; m < count; m += slab) slabs.emplace_back(first + m, std::min(slab, count - m));
  runs[D - 1] = slabs;
  // Every combination of runs, one block each. A run's needed indices are
  // consecutive, and so are their compressed positions.
  std::array<std::size_t, D> pick{};
  std::size_t blocks = 1, done = 0;
  for (int a = 0; a < D; ++a) blocks *= runs[a].size();
  for (;;) {
    hdf5::Block block;
    block.global = file_shape(p.points, D);
    long size = 1;
    std::array<long, D> count{}, origin{};  // the run's extent and its first compressed position, per axis
    for (int a = D - 1; a >= 0; --a) {
      const auto [first, n] = runs[a][pick[a]];
      block.offset.push_back(static_cast<std::uint64_t>(first));
      block.count.push_back(static_cast<std::uint64_t>(n));
      count[a] = n, origin[a] = position[a].at(first);
      size *= n;
    }
    std::vector<double> part(static_cast<std::size_t>(size));
    file.read(dataset, block, part.data());
    std::array<long, D> m{};  // the index in the block, axis 0 fastest (the file's order)
    for (long k = 0; k < size; ++k) {
      long target = 0, scale = 1;
      for (int a = 0; a < D; ++a) target += (origin[a] + m[a]) * scale, scale *= compressed[a];
      values[static_cast<std::size_t>(target)] = part[static_cast<std::size_t>(k)];
      for (int a = 0; a < D && ++m[a] == count[a]; ++a) m[a] = 0;
    }
    startup_progress(fmt::format("sampling {} of {}: {:.0f}%", dataset, path,
                                 100.0 * static_cast<double>(++done) / static_cast<double>(blocks)));
    int a = 0;
    while (a < D && ++pick[a] == runs[a].size()) pick[a++] = 0;
    if (a == D) break;
  }
  // Each storage point: the sum over its axes' terms (one term inside the grid;
  // a ghost of a corner, the product of its axes' weights).
  std::vector<double> field(domain.layout.storage_size(), std::numeric_limits<double>::quiet_NaN());
  Index<D> i;
  const long points = storage.size();
  for (long k = 0; k < points; ++k) {
    long rest = k;
    std::array<const Taken*, D> t{};
    for (int a = 0; a < D; ++a) {
      i[a] = storage.lo[a] + rest % storage.extent(a);
      rest /= storage.extent(a);
      t[a] = &taken[a][static_cast<std::size_t>(i[a] - storage.lo[a])];
    }
    double value = 0;
    std::array<std::size_t, D> term{};
    for (;;) {
      long target = 0, scale = 1;
      double weight = 1;
      for (int a = 0; a < D; ++a) {
        const auto& [g, w] = t[a]->terms[term[a]];
        target += g * scale, scale *= compressed[a], weight *= w;
      }
      value += weight * values[static_cast<std::size_t>(target)];
      int a = 0;
      while (a < D && ++term[a] == t[a]->terms.size()) term[a++] = 0;
      if (a == D) break;
    }
    field[domain.layout.offset(i)] = value;
  }
  return field;
}

// Calls each(k) for every point of a source's product of index lists, x fastest.
template <int D, class Real, class F>
void for_each_product(const SourceTerm<D, Real>& term, F&& each) {
  std::array<std::size_t, D> k{};
  for (int a = 0; a < D; ++a)
    if (term.index[a].empty()) return;
  for (;;) {
    each(k);
    int a = 0;
    while (a < D && ++k[a] == term.index[a].size()) k[a++] = 0;
    if (a == D) return;
  }
}

}  // namespace

long sample_index(long g, long n, bool periodic) {
  if (periodic) return ((g % n) + n) % n;
  if (n == 1) return 0;
  const long period = 2 * (n - 1);  // mirror images repeat with this period
  g = ((g % period) + period) % period;
  return g < n ? g : period - g;
}

ValueRange medium_range(const std::string& config, const CoefficientSpec& spec, const Medium& medium,
                        const std::array<long, 3>& points, int dims) {
  switch (medium.type) {
    case MediumType::constant:
      return {medium.value, medium.value};
    case MediumType::layers: {
      const auto [lo, hi] = std::minmax_element(medium.values.begin(), medium.values.end());
      return {*lo, *hi};
    }
    case MediumType::file:
      break;
  }
  const std::string what = config + ": 'material." + spec.key + ".path'";
  open_field(what, medium.path, medium.dataset, points, dims);  // there, with the grid's shape
  const hdf5::DatasetSummary& s = hdf5::summarize(medium.path, medium.dataset);
  auto refuse = [&](double v, std::uint64_t at) {
    throw Error(ExitCode::invalid_value,
                fmt::format("{}: dataset '{}' of {} holds {} at {}: {} ({}) must be {}", what, medium.dataset,
                            medium.path, v, point_name(at, points, dims), spec.meaning, spec.key,
                            coefficient_rule(spec)));
  };
  if (s.has_nonfinite) refuse(s.nonfinite, s.nonfinite_at);
  if (spec.zero_allowed ? s.has_negative : s.has_nonpositive)
    spec.zero_allowed ? refuse(s.negative, s.negative_at) : refuse(s.nonpositive, s.nonpositive_at);
  if (!coefficient_ok(spec, s.largest)) refuse(s.largest, s.largest_at);
  if (s.has_nonzero && !coefficient_ok(spec, s.least_nonzero)) refuse(s.least_nonzero, s.least_nonzero_at);
  return {s.min, s.max};
}

void check_field_file(const std::string& what, const std::string& path, const std::string& dataset,
                      const std::array<long, 3>& points, int dims, const char* role) {
  open_field(what, path, dataset, points, dims);
  const hdf5::DatasetSummary& s = hdf5::summarize(path, dataset);
  if (s.has_nonfinite)
    throw Error(ExitCode::invalid_value, fmt::format("{}: dataset '{}' of {} holds {} at {}: {} must be finite", what,
                                                     dataset, path, s.nonfinite,
                                                     point_name(s.nonfinite_at, points, dims), role));
}

AxisClasses axis_classes(const std::vector<double>& keys, int width, long lo) {
  AxisClasses classes;
  std::map<std::vector<std::uint64_t>, int> seen;
  const std::size_t n = keys.size() / static_cast<std::size_t>(width);
  for (std::size_t k = 0; k < n; ++k) {
    std::vector<std::uint64_t> bits(static_cast<std::size_t>(width));
    std::memcpy(bits.data(), keys.data() + k * width, bits.size() * sizeof(double));
    const auto [it, added] = seen.emplace(std::move(bits), static_cast<int>(classes.first.size()));
    if (added) classes.first.push_back(lo + static_cast<long>(k));
    classes.of.push_back(it->second);
  }
  return classes;
}

bool has_absorbing_faces(const Problem& p) {
  for (int a = 0; a < p.dims; ++a)
    if (p.faces[a][0].absorbing > 0 || p.faces[a][1].absorbing > 0) return true;
  return false;
}

double absorbing_gamma_max(const Problem& p, int axis, int side) {
  const int width = p.faces[axis][side].absorbing;
  if (width == 0) return 0;
  // gamma_max = 12 c / L (L: the layer's width): a wave crossing the layer and
  // back is damped by exp(-gamma_max L / (3c)) = e^-4 under the quadratic
  // profile. Stronger damping reflects more off the profile's gradient: the
  // sweep in docs/design.md ("Absorbing faces") put the least reflection here.
  return 12 * p.coefficients.get("c") / (width * p.spacing[axis]);
}


PositionWeights position_weights(const Problem& p, const std::array<double, max_dims>& x) {
  PositionWeights around{};
  for (int a = 0; a < p.dims; ++a) {
    const double q = x[a] / p.spacing[a];
    long lo = static_cast<long>(std::floor(q));
    double frac = q - static_cast<double>(lo);
    if (lo >= p.points[a] - 1 && !p.periodic[a]) lo = p.points[a] - 1, frac = 0;  // on the high face
    if (p.periodic[a]) lo = sample_index(lo, p.points[a], true);                  // x/h rounded up to n
    around[a][0] = {lo, 1 - frac};
    // On the high face the second point has weight 0: it is the face point again.
    around[a][1] = {p.periodic[a] ? (lo + 1) % p.points[a] : std::min(lo + 1, p.points[a] - 1), frac};
  }
  return around;
}

double time_factor(const TimeFunction& f, double t) {
  switch (f.type) {
    case TimeFunctionType::constant:
      return 1;
    case TimeFunctionType::ricker: {
      const double x = pi * f.frequency * (t - f.delay), a = x * x;
      return (1 - 2 * a) * std::exp(-a);
    }
    case TimeFunctionType::sine:
      return std::sin(2 * pi * f.frequency * t);
    case TimeFunctionType::gaussian: {
      const double d = t - f.delay;
      return std::exp(-d * d / (2 * f.width * f.width));
    }
  }
  return 0;
}

namespace {

// A layer medium's value at global index g along its axis: the layer holding
// x = g h (past every interface at or below it).
double layer_value(const Problem& p, const Medium& m, long g) {
  const double x = static_cast<double>(g) * p.spacing[m.axis];
  const auto layer = std::upper_bound(m.interfaces.begin(), m.interfaces.end(), x) - m.interfaces.begin();
  return m.values[static_cast<std::size_t>(layer)];
}

// The absorbing faces' gamma along one axis at global index g: each face's
// profile gamma_max (d/w)^2 within its layer, summed low face first.
double absorbing_profile(const Problem& p, int a, long g) {
  double gamma = 0;
  for (int side = 0; side < 2; ++side) {
    const int width = p.faces[a][side].absorbing;
    const long from_wall = side == 0 ? g : p.points[a] - 1 - g;
    if (width == 0 || from_wall >= width) continue;
    const double depth = static_cast<double>(width - from_wall) / width;  // 1 at the wall, 0 at the layer's inner edge
    gamma += absorbing_gamma_max(p, a, side) * depth * depth;
  }
  return gamma;
}

// The global index a storage index samples along an axis (mirror or periodic image past a face).
template <int D>
long sampled(const Problem& p, const LocalDomain<D>& domain, int a, long i) {
  return sample_index(i + domain.offset[a], p.points[a], p.periodic[a]);
}

// A coefficient's table along axis a over the storage box: f(global index),
// the index continued past a non-periodic face (a layer or a profile is
// evaluated where the ghost is), wrapped on a periodic axis.
template <int D, class F>
std::vector<double> axis_table(const Problem& p, const LocalDomain<D>& domain, int a, F&& f) {
  const Box<D> storage = domain.layout.storage_box();
  std::vector<double> table;
  for (long i = storage.lo[a]; i < storage.hi[a]; ++i) {
    const long g = i + domain.offset[a];
    table.push_back(f(p.periodic[a] ? sample_index(g, p.points[a], true) : g));
  }
  return table;
}

// A coefficient's file (layout order) in the working precision, continued
// past the faces by polynomial extrapolation (taken_from), never below half
// the data's least value (a positive coefficient stays positive; the least
// value itself cut the order of a coefficient that falls towards a face to
// 3.4-3.6 at radius 3 and 4, whose ghosts reach further out).
template <class Real, int D>
std::vector<Real> file_field(const Problem& p, const std::string& key, const std::string& path,
                             const std::string& dataset, const LocalDomain<D>& domain) {
  const double least = continued_floor(p.material_range.at(key).first);
  startup_progress(fmt::format("reading {} from {}", key, path));
  const std::vector<double> values = sample_file(p, path, dataset, domain, true);
  std::vector<Real> field(values.size());
  for (std::size_t k = 0; k < values.size(); ++k)
    field[k] = static_cast<Real>(std::isnan(values[k]) ? values[k] : std::max(values[k], least));
  return field;
}

// A point source on a rank: along each axis the storage indices that are the
// grid points around its position (a point's own index or, on a periodic
// axis, its image; never a mirror ghost) with their linear weights, doubled
// on a non-periodic boundary point (its trapezoid weight is 1/2); q is the
// amplitude times the weights' product over the cell volume (the amplitude
// and volume in x's weights), so that the trapezoid integral of q is the
// amplitude.
template <int D, class Real>
SourceTerm<D, Real> point_source(const Problem& p, const Source& s, const LocalDomain<D>& domain) {
  SourceTerm<D, Real> term;
  term.time = s.time;
  const PositionWeights around = position_weights(p, s.center);
  const Box<D> storage = domain.layout.storage_box();
  std::array<std::vector<double>, D> weights;
  for (int a = 0; a < D; ++a)
    for (long i = storage.lo[a]; i < storage.hi[a]; ++i) {
      const long own = i + domain.offset[a];
      const long global = p.periodic[a] ? sample_index(own, p.points[a], true) : own;
      if (global != sampled(p, domain, a, i)) continue;  // a mirror ghost is not the point
      double w = 0;
      for (const auto& [index, share] : around[a])
        if (global == index) w += share;
      if (!p.periodic[a] && (global == 0 || global == p.points[a] - 1)) w *= 2;
      if (w != 0) term.index[a].push_back(i), weights[a].push_back(w);
    }
  double volume = 1;
  for (int a = 0; a < D; ++a) volume *= p.spacing[a];
  for (int a = 0; a < D; ++a)
    for (const double w : weights[a])
      term.factor[a].push_back(static_cast<Real>(a == 0 ? s.amplitude * w / volume : w));
  return term;
}

// A gaussian amplitude exp(-r^2 / (2 width^2)) over the box where it is at
// least 2^-60 of its peak along every axis; 0 past it. Separable: the
// product of exp(-d_a^2 / (2 width^2)) along the axes, the amplitude in x's.
template <int D, class Real>
SourceTerm<D, Real> gaussian_source(const Problem& p, const Source& s, const LocalDomain<D>& domain) {
  SourceTerm<D, Real> term;
  term.time = s.time;
  const double reach2 = 2 * s.width * s.width * 60 * std::log(2.0);
  const Box<D> storage = domain.layout.storage_box();
  for (int a = 0; a < D; ++a)
    for (long i = storage.lo[a]; i < storage.hi[a]; ++i) {
      const double d = static_cast<double>(sampled(p, domain, a, i)) * p.spacing[a] - s.center[a];
      if (d * d <= reach2)
        term.index[a].push_back(i), term.factor[a].push_back(static_cast<Real>(
                                        (a == 0 ? s.amplitude : 1.0) * std::exp(-(d * d) / (2 * s.width * s.width))));
    }
  return term;
}

// A field source: every storage point, its file's values.
template <int D, class Real>
SourceTerm<D, Real> field_source(const Problem& p, const Source& s, const LocalDomain<D>& domain) {
  SourceTerm<D, Real> term;
  term.time = s.time;
  const Box<D> storage = domain.layout.storage_box();
  for (int a = 0; a < D; ++a)
    for (long i = storage.lo[a]; i < storage.hi[a]; ++i) term.index[a].push_back(i);
  startup_progress(fmt::format("reading a source from {}", s.path));
  const std::vector<double> values = sample_file(p, s.path, s.dataset, domain, false);
  term.q.reserve(static_cast<std::size_t>(storage.size()));
  for_each_product(term, [&](const std::array<std::size_t, D>& k) {
    Index<D> i;
    for (int a = 0; a < D; ++a) i[a] = term.index[a][k[a]];
    term.q.push_back(static_cast<Real>(values[domain.layout.offset(i)]));
  });
  return term;
}

}  // namespace

template <int D, class Real, class Eq>
Media<D, Real, Eq> Media<D, Real, Eq>::make(const Problem& p, const LocalDomain<D>& domain) {
  Media m;
  m.radius = p.radius;
  m.dt = p.dt;
  m.uniform = make_update<Eq, Real>(uniform_coefficients<Eq>(p), p.dt);
  const Box<D> storage = domain.layout.storage_box();
  for (int a = 0; a < D; ++a) m.lo[a] = storage.lo[a];
  const Coefficients uniform = uniform_coefficients<Eq>(p);
  for (int n = 0; n < count; ++n) {
    const char* key = Eq::coefficients[n].key;
    Coefficient& c = m.coefficients[n];
    c.base = uniform.get(key);
    const auto it = p.material.find(key);
    if (it == p.material.end()) continue;
    const Medium& medium = it->second;
    bool flux_key = false;
    if constexpr (Eq::flux_coefficient != nullptr) flux_key = std::string_view(key) == Eq::flux_coefficient;
    if (flux_key) {
      // The heat's alpha: the pair coefficients K, from a file's alpha a point or a table.
      m.flux = true;
      if (medium.type == MediumType::file) {
        m.flux_alpha = file_field<Real>(p, key, medium.path, medium.dataset, domain);
        continue;
      }
      m.flux_axis = medium.type == MediumType::layers ? medium.axis : 0;
      const std::vector<double> alpha = axis_table(p, domain, m.flux_axis, [&](long g) {
        return medium.type == MediumType::layers ? layer_value(p, medium, g) : medium.value;
      });
      for (int a = 0; a < D; ++a)
        for (int j = 1; j <= p.radius; ++j) {
          const Real w = static_cast<Real>(central_weight(p.radius, j) / (p.spacing[a] * p.spacing[a]));
          const std::size_t step = a == m.flux_axis ? static_cast<std::size_t>(j) : 0;
          std::vector<Real> table(alpha.size(), std::numeric_limits<Real>::quiet_NaN());
          for (std::size_t i = 0; i + step < alpha.size(); ++i)
            table[i] = w * harmonic_mean(static_cast<Real>(alpha[i]), static_cast<Real>(alpha[i + step]));
          m.flux_tables.push_back(std::move(table));
        }
      continue;
    }
    m.pointwise = true;
    switch (medium.type) {
      case MediumType::constant:
        c.base = medium.value;
        break;
      case MediumType::layers:
        c.axis = medium.axis;
        c.layer = axis_table(p, domain, medium.axis, [&](long g) { return layer_value(p, medium, g); });
        break;
      case MediumType::file:
        c.field = file_field<Real>(p, key, medium.path, medium.dataset, domain);
        break;
    }
    if (std::string_view(key) == "gamma" && has_absorbing_faces(p))
      for (int a = 0; a < D; ++a)
        if (p.faces[a][0].absorbing > 0 || p.faces[a][1].absorbing > 0)
          c.profile[a] = axis_table(p, domain, a, [&](long g) { return absorbing_profile(p, a, g); });
    if constexpr (Eq::has_energy)
      if (std::string_view(key) == "c") m.c_index = n, m.c_max = p.coefficients.get("c");
  }
  // The runs along x of equal coefficients, where no coefficient is a field.
  bool fields = false;
  for (const Coefficient& c : m.coefficients) fields = fields || !c.field.empty();
  if (m.pointwise && !fields) {
    const long n = storage.extent(0);
    for (long x = 0; x < n; ++x) {
      bool changes = x == 0;
      for (const Coefficient& c : m.coefficients) {
        if (!c.layer.empty() && c.axis == 0) changes = changes || c.layer[x] != c.layer[x - (x > 0)];
        if (!c.profile[0].empty()) changes = changes || c.profile[0][x] != c.profile[0][x - (x > 0)];
      }
      if (changes) m.x_runs.push_back(storage.lo[0] + x);
    }
  }
  for (const Source& source : p.sources) {
    switch (source.type) {
      case SourceType::point:
        m.sources.push_back(point_source<D, Real>(p, source, domain));
        break;
      case SourceType::gaussian:
        m.sources.push_back(gaussian_source<D, Real>(p, source, domain));
        break;
      case SourceType::field:
        m.sources.push_back(field_source<D, Real>(p, source, domain));
        break;
    }
  }
  return m;
}

template <int D, class Real, class Eq>
std::size_t Media<D, Real, Eq>::bytes() const {
  std::size_t n = 0;
  for (const Coefficient& c : coefficients) {
    n += c.layer.size() * sizeof(double) + c.field.size() * sizeof(Real);
    for (const auto& profile : c.profile) n += profile.size() * sizeof(double);
  }
  n += flux_alpha.size() * sizeof(Real);
  for (const auto& table : flux_tables) n += table.size() * sizeof(Real);
  for (const auto& s : sources) {
    n += s.q.size() * sizeof(Real);
    for (const auto& index : s.index) n += index.size() * sizeof(long);
    for (const auto& factor : s.factor) n += factor.size() * sizeof(Real);
  }
  return n;
}

template <int D>
MediaMemory media_memory(const Problem& p, const LocalDomain<D>& domain) {
  const std::size_t real = p.precision == Precision::float32 ? 4 : 8;
  const std::size_t points = domain.layout.storage_size();
  const Box<D> storage = domain.layout.storage_box();
  std::size_t along = 0;  // one table an axis
  for (int a = 0; a < D; ++a) along += static_cast<std::size_t>(storage.extent(a));
  MediaMemory m;
  // What Media::make keeps: per coefficient a file's field, a layer table
  // along its axis (the heat's alpha: its D r pair tables instead) and the
  // absorbing profiles along the axes that have an absorbing face.
  const char* flux = p.equation == Equation::heat ? "alpha" : nullptr;
  for (const auto& [key, medium] : p.material) {
    const bool flux_key = flux && key == flux;
    if (medium.type == MediumType::file) {
      m.held += points * real, m.staging = std::max(m.staging, points * 2 * sizeof(double));
    } else if (flux_key) {
      const int axis = medium.type == MediumType::layers ? medium.axis : 0;
      m.held += static_cast<std::size_t>(D * p.radius) * static_cast<std::size_t>(storage.extent(axis)) * real;
    } else if (medium.type == MediumType::layers) {
      m.held += static_cast<std::size_t>(storage.extent(medium.axis)) * sizeof(double);
    }
    if (key == "gamma" && has_absorbing_faces(p))
      for (int a = 0; a < D; ++a)
        if (p.faces[a][0].absorbing > 0 || p.faces[a][1].absorbing > 0)
          m.held += static_cast<std::size_t>(storage.extent(a)) * sizeof(double);
  }
  for (const Source& source : p.sources) {
    if (source.type == SourceType::field) {
      m.held += points * real + along * sizeof(long), m.staging = std::max(m.staging, points * 2 * sizeof(double));
    } else if (source.type == SourceType::gaussian) {
      m.held += along * (real + sizeof(long));  // separable: an index and a factor a point along each axis
    } else {
      m.held += (std::size_t(1) << D) * (real + sizeof(long)) * 4;  // the corners and their periodic images
    }
  }
  return m;
}

template MediaMemory media_memory(const Problem&, const LocalDomain<2>&);
template MediaMemory media_memory(const Problem&, const LocalDomain<3>&);

#define HW_MEDIA(D, Real)                  \
  template struct Media<D, Real, Heat>;    \
  template struct Media<D, Real, Wave>;    \
  template struct Media<D, Real, DampedWave>;
HW_MEDIA(2, float)
HW_MEDIA(2, double)
HW_MEDIA(3, float)
HW_MEDIA(3, double)

}  // namespace heatwave
