#pragma once
// backend: host. OpenMP over x-rows, the x loop vectorised; the stencil is
// solver/stencil.hpp's and the time update the equation's, the same
// expressions every backend evaluates (bitwise equal fields). Included by
// the units CMakeLists.txt generates from host_backend.cpp.in, one a
// dimension, precision and equation (one a dimension and precision took
// 53 s on 2 quiet cores for 3D fp32, 109-140 s under load).
#include "kernels/host/host_backend.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "io/errors.hpp"
#include "solver/initial.hpp"
#include "solver/media.hpp"
#include "solver/stencil.hpp"

namespace heatwave {

namespace host {

// Boxes smaller than this run on one thread: waking a team costs more than
// the work, and far more when cores are oversubscribed (parallel ctest runs).
constexpr long parallel_threshold = 1 << 15;

// Calls row(start) for every x-row of the box, rows spread over OpenMP threads
// (collapsed loops: a thread finds its first row once, not each row).
template <int D, class F>
void parallel_rows(const Box<D>& box, F&& row) {
  if (box.empty()) return;
  const bool parallel = box.size() >= parallel_threshold;
  if constexpr (D == 2) {
#pragma omp parallel for schedule(static) if (parallel)
    for (long y = box.lo[1]; y < box.hi[1]; ++y) row(Index<2>{box.lo[0], y});
  } else {
#pragma omp parallel for collapse(2) schedule(static) if (parallel)
    for (long z = box.lo[2]; z < box.hi[2]; ++z)
      for (long y = box.lo[1]; y < box.hi[1]; ++y) row(Index<3>{box.lo[0], y, z});
  }
}

// The bytes of one plane of a 3D tile, so that the planes a sweep keeps in
// use (2R + 1 of u, the one it writes and the previous level's) stay in the
// core's L2: planes of a whole x-y slab outgrow it (1024^2 points: 4 MB in
// fp32) and every z neighbour would come from memory again.
inline long tile_plane_bytes(int radius) {
  static const long l2 = [] {
    const long reported = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return reported > 0 ? reported : 1L << 20;
  }();
  return l2 / (2 * (2 * radius + 3));  // half the cache: the rest for the hardware's own use
}

// Calls row(start) for every x-row of `box` that a step computes. In 3D the
// rows are swept in tiles of whole x-rows, a few y-rows high, each streamed
// along z: a thread takes a block of z-planes (the same one each step, so the
// pages it first touched are the ones it updates) and sweeps its tiles
// through it. In 2D three rows fit in L1 and the rows are simply shared out.
template <int D, class F>
void parallel_sweep(const Box<D>& box, int radius, long row_bytes, F&& row) {
  if constexpr (D == 2) {
    parallel_rows(box, row);
  } else {
    if (box.empty()) return;
    const long ey = box.extent(1), ez = box.extent(2);
    const long ty = std::clamp(tile_plane_bytes(radius) / std::max(row_bytes, 1L), 1L, ey);
    const long tiles = (ey + ty - 1) / ty;
    const bool parallel = box.size() >= parallel_threshold;
    const long blocks = parallel ? std::min<long>(ez, omp_get_max_threads()) : 1;
#pragma omp parallel for schedule(static) if (parallel)
    for (long item = 0; item < blocks * tiles; ++item) {
      const long b = item / tiles, t = item % tiles;
      const long z0 = box.lo[2] + ez * b / blocks, z1 = box.lo[2] + ez * (b + 1) / blocks;
      const long y0 = box.lo[1] + t * ty, y1 = std::min(box.hi[1], y0 + ty);
      for (long z = z0; z < z1; ++z)
        for (long y = y0; y < y1; ++y) row(Index<3>{box.lo[0], y, z});
    }
  }
}

// A field's storage: allocated without being written, so that the threads of
// the sweep touch its pages first (first-touch placement on NUMA nodes).
template <class T>
struct UntouchedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UntouchedAllocator<U>;
  };
  template <class U>
  void construct(U*) noexcept {}  // no value-initialisation
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

template <int D, class Real, class Eq>
class HostBackend final : public Backend<D, Real> {
 public:
  HostBackend(const Problem& problem, const LocalDomain<D>& domain)
      : problem_(problem),
        domain_(domain),
        strides_(domain.layout.strides()),
        update_(make_update<Eq, Real>(problem.coefficients, problem.dt)) {
    if (problem.varies() || !problem.sources.empty()) media_ = Media<D, Real, Eq>::make(problem, domain);
    u_.resize(domain_.layout.storage_size());
    u_next_.resize(domain_.layout.storage_size());
    poison(u_);
    poison(u_next_);
  }

  BackendKind kind() const override { return BackendKind::host; }
  long step() const override { return step_; }
  void set_step(long step) override { step_ = step; }

  void initialize() override {
    set_owned(u_, InitialSpec::initial(problem_));
    fill_ghosts(u_);
    if constexpr (Eq::levels == 2) {
      set_owned(u_next_, InitialSpec::velocity(problem_));  // v0, where u^{n-1} will be
    } else {
      u_next_ = u_;  // Dirichlet face points must hold g in both buffers
    }
    step_ = 0;
  }

  void advance(int k) override {
    for (int m = 0; m < k; ++m) {
      update(domain_.update_box(problem_.radius, k - 1 - m));
      finish_step();
    }
  }
  void update(const Box<D>& region) override {
    with_radius(problem_.radius, [&]<int R>() { step_box<R>(region); });
    if (media_) add_sources(region, *media_);
  }
  void finish_step() override {
    std::swap(u_, u_next_);
    fill_ghosts(u_, 1);  // the x ghosts: row by row in the next sweep (RowGhosts)
    ++step_;
  }

  void pack(Level level, const Box<D>& box, Real* buffer) override { copy_box(field(level), box, buffer, true); }
  void unpack(Level level, const Box<D>& box, const Real* buffer) override {
    copy_box(field(level), box, const_cast<Real*>(buffer), false);
  }
  void read(Level level, Real* owned) override { copy_box(field(level), domain_.layout.owned_box(), owned, true); }
  void gather(Level level, const std::vector<Index<D>>& points, Real* out) override {
    const Field& u = field(level);
    for (std::size_t i = 0; i < points.size(); ++i) out[i] = u[domain_.layout.offset(points[i])];
  }
  void write(Level level, const Real* owned) override {
    copy_box(field(level), domain_.layout.owned_box(), const_cast<Real*>(owned), false);
    if (level == Level::current) fill_ghosts(u_);
  }

  LocalStats stats() override {
    fill_ghosts(u_);
    return with_radius(problem_.radius, [&]<int R>() { return stats_radius<R>(); });
  }

 private:
  // u^n is u_; u^{n-1} (second order in time) lives in u_next_ between steps.
  using Field = std::vector<Real, UntouchedAllocator<Real>>;
  Field& field(Level level) {
    if (level == Level::previous && Eq::levels < 2)
      throw Error(ExitCode::internal, std::string("the ") + Eq::name + " equation has no previous level");
    return level == Level::current ? u_ : u_next_;
  }

  template <int R>
  LaplacianWeights<D, R, Real> laplacian() const {
    return LaplacianWeights<D, R, Real>::make(problem_.spacing, strides_);
  }

  // The host's views of the media: pointers to its own vectors.
  static constexpr auto on_host = [](const auto& v) { return v.data(); };

  // One time step over `box`, u^{n+1} into u_next_; there an equation second
  // order in time reads u^{n-1} (v0 before the first step) at the point it
  // overwrites.
  template <int R>
  void step_box(const Box<D>& box) {
    if (media_ && (media_->pointwise || media_->flux_form())) return step_box_media<R>(box, *media_);
    const auto lap = laplacian<R>();
    const auto up = media_ ? media_->uniform : update_;
    const RowGhosts ghosts = row_ghosts();
    Real* u = u_.data();
    Real* next = u_next_.data();
    const long n = box.extent(0);
    const bool start = Eq::levels == 2 && step_ == 0;
    parallel_sweep(box, R, n * long(sizeof(Real)), [&](const Index<D>& i) {
      const long p0 = domain_.layout.offset(i);
      ghosts(u + p0 - i[0]);
      if constexpr (Eq::levels == 1) {
#pragma omp simd
        for (long x = 0; x < n; ++x) next[p0 + x] = up.step(u[p0 + x], u[p0 + x], lap(u, p0 + x));
      } else if (start) {
#pragma omp simd
        for (long x = 0; x < n; ++x) next[p0 + x] = up.start(u[p0 + x], next[p0 + x], lap(u, p0 + x));
      } else {
#pragma omp simd
        for (long x = 0; x < n; ++x) next[p0 + x] = up.step(u[p0 + x], next[p0 + x], lap(u, p0 + x));
      }
    });
  }

  // The same step where coefficients vary: the flux form's operator where
  // alpha varies, the point's own update where another coefficient does.
  // Updates are made only where the coefficients change along a row (layers:
  // once a layer; the same inputs make the same update, bit for bit).
  template <int R>
  void step_box_media(const Box<D>& box, const Media<D, Real, Eq>& m) {
    using Update = typename Eq::template Update<Real>;
    constexpr int count = PointUpdates<D, Real, Eq>::count;
    const auto lap = laplacian<R>();
    const auto flux = m.template pairs<R>(problem_.spacing, strides_, on_host);
    const auto updates = m.updates(on_host);
    const RowGhosts ghosts = row_ghosts();
    Real* u = u_.data();
    Real* next = u_next_.data();
    const long n = box.extent(0);
    const bool start = Eq::levels == 2 && step_ == 0, flux_form = m.flux_form();
    run_caches_.resize(std::max(run_caches_.size(), static_cast<std::size_t>(omp_get_max_threads())));
    parallel_sweep(box, R, n * long(sizeof(Real)), [&](const Index<D>& row) {
      const long p0 = domain_.layout.offset(row);
      ghosts(u + p0 - row[0]);
      const auto shared = updates.row(row);
      if (!flux_form && !m.x_runs.empty()) {
        // Runs of equal coefficients along x (layers, absorbing profiles):
        // one update a run, the stencil and the update vectorised together.
        // A row whose shared values are the last row's (a layer's rows away
        // from the y and z profiles) takes that row's run updates.
        RunCache& cache = run_caches_[static_cast<std::size_t>(omp_get_thread_num())];
        if (!cache.same(row[0], n, shared)) {
          cache.updates.clear();
          for (auto run = std::upper_bound(m.x_runs.begin(), m.x_runs.end(), row[0]) - 1;
               run != m.x_runs.end() && *run < row[0] + n; ++run) {
            const long x = std::max(*run, row[0]) - row[0];
            double v[count];
            updates.values(shared, p0 + x, row[0] + x, v);
            cache.updates.push_back(Update::at_point(v, updates.dt));
          }
          cache.keep(row[0], n, shared);
        }
        // Many short runs (an absorbing profile's points along x): the row's
        // Laplacian first, in one vector loop, then the runs' updates.
        Real* op = nullptr;
        if (cache.updates.size() > 4) {
          op = row_buffer(n);
#pragma omp simd
          for (long x = 0; x < n; ++x) op[x] = lap(u, p0 + x);
        }
        auto run = std::upper_bound(m.x_runs.begin(), m.x_runs.end(), row[0]) - 1;
        for (long x = 0, r = 0; x < n; ++run, ++r) {
          const long end = std::min<long>(n, run + 1 == m.x_runs.end() ? n : *(run + 1) - row[0]);
          const Update& up = cache.updates[static_cast<std::size_t>(r)];
          if (op)
            step_run(up, u + p0, next + p0, x, end, start, [&](long k) { return op[k]; });
          else
            step_run(up, u + p0, next + p0, x, end, start, [&](long k) { return lap(u, p0 + k); });
          x = end;
        }
        return;
      }
      // A point at a time (a coefficient from a file, or the flux form): the
      // row's operator first, then its updates, one a run of equal
      // coefficients.
      Real* op = row_buffer(n);
      if (flux_form && flux.alpha) {
#pragma omp simd
        for (long x = 0; x < n; ++x) op[x] = flux.from_file(u, p0 + x);
      } else if (flux_form && flux.axis == 0) {
#pragma omp simd
        for (long x = 0; x < n; ++x) op[x] = flux.from_tables(u, p0 + x, row[0] + x);
      } else if (flux_form) {
        const long along = component(row, flux.axis);  // the row's pairs: the same at every point
#pragma omp simd
        for (long x = 0; x < n; ++x) op[x] = flux.from_tables(u, p0 + x, along);
      } else {
#pragma omp simd
        for (long x = 0; x < n; ++x) op[x] = lap(u, p0 + x);
      }
      const auto at = [&](long k) { return op[k]; };
      if (!updates.varies) {  // alpha alone varies: one update for the row
        step_run(updates.uniform, u + p0, next + p0, 0, n, start, at);
        return;
      }
      // Runs of equal coefficients found along the row (a file of a few
      // materials has long ones): one update a run.
      for (long x = 0; x < n;) {
        double v[count], w[count];
        updates.values(shared, p0 + x, row[0] + x, v);
        long end = x + 1;
        for (; end < n; ++end) {
          updates.values(shared, p0 + end, row[0] + end, w);
          if (!std::equal(std::begin(v), std::end(v), std::begin(w))) break;
        }
        step_run(Update::at_point(v, updates.dt), u + p0, next + p0, x, end, start, at);
        x = end;
      }
    });
  }

  // A row's worth of scratch, one a thread.
  static Real* row_buffer(long n) {
    thread_local std::vector<Real> buffer;
    buffer.resize(static_cast<std::size_t>(n));
    return buffer.data();
  }

  // next[k] for k in [x, end) of a row (u, next: the row's first point) with
  // one update, the operator op(k).
  template <class Op>
  static void step_run(const typename Eq::template Update<Real>& up, const Real* u, Real* next, long x, long end,
                       bool start, Op&& op) {
    if (end - x < 8) {  // a point or a few (an absorbing profile's): not worth a vector loop's set-up
      for (long k = x; k < end; ++k) next[k] = start ? up.start(u[k], next[k], op(k)) : up.step(u[k], next[k], op(k));
    } else if (start) {
#pragma omp simd
      for (long k = x; k < end; ++k) next[k] = up.start(u[k], next[k], op(k));
    } else {
#pragma omp simd
      for (long k = x; k < end; ++k) next[k] = up.step(u[k], next[k], op(k));
    }
  }

  // The updates of a row's runs of equal coefficients, for the row they were made for.
  struct RunCache {
    long first = 0, n = -1;
    typename PointUpdates<D, Real, Eq>::Row shared{};
    std::vector<typename Eq::template Update<Real>> updates;
    bool same(long x0, long count, const typename PointUpdates<D, Real, Eq>::Row& row) const {
      if (x0 != first || count != n) return false;
      for (int k = 0; k < PointUpdates<D, Real, Eq>::count; ++k)
        if (row.k[k].medium != shared.k[k].medium || row.k[k].profiles != shared.k[k].profiles) return false;
      return true;
    }
    void keep(long x0, long count, const typename PointUpdates<D, Real, Eq>::Row& row) {
      first = x0, n = count, shared = row;
    }
  };

  // The sources after the step over `box`: each one's f(t_n) q at the points
  // it touches inside the box, added by the point's Update::force, one source
  // after another in config order.
  void add_sources(const Box<D>& box, const Media<D, Real, Eq>& m) {
    if (m.sources.empty() || box.empty()) return;
    const std::vector<Real> f = source_factors<Real>(m.times(), problem_.time_at(step_));
    const auto updates = m.updates(on_host);
    const bool start = Eq::levels == 2 && step_ == 0;
    Real* next = u_next_.data();
    for (std::size_t t = 0; t < m.sources.size(); ++t) {
      const SourceView<D, Real> s = m.source(t, on_host);
      long rows = 1;
      for (int a = 1; a < D; ++a) rows *= s.count[a];
#pragma omp parallel for schedule(static) if (m.sources[t].points() >= static_cast<std::size_t>(parallel_threshold))
      for (long r = 0; r < rows; ++r) {
        Index<D> i;
        long k[D], rest = r;  // the point's place in the source's index lists
        bool inside = true;
        for (int a = 1; a < D; ++a) {
          k[a] = rest % s.count[a], rest /= s.count[a];
          i[a] = s.index[a][k[a]];
          inside = inside && i[a] >= box.lo[a] && i[a] < box.hi[a];
        }
        if (!inside) continue;
        for (k[0] = 0; k[0] < s.count[0]; ++k[0]) {
          i[0] = s.index[0][k[0]];
          if (i[0] < box.lo[0] || i[0] >= box.hi[0]) continue;
          const Real q = s.at(k);
          if (q == 0) continue;
          const long p = domain_.layout.offset(i);
          next[p] = updates.at(p, i).force(next[p], fused(f[t], q, Real(0)), start);
        }
      }
    }
  }

  // Poison, written by the threads that will sweep each page: a stencil that
  // reads a point nobody wrote turns the answer to NaN.
  void poison(Field& u) {
    const Box<D> storage = domain_.layout.storage_box();
    const long n = storage.extent(0);
    Real* data = u.data();
    parallel_sweep(storage, problem_.radius, n * long(sizeof(Real)), [&](const Index<D>& start) {
      std::fill_n(data + domain_.layout.offset(start), n, std::numeric_limits<Real>::quiet_NaN());
    });
  }

  // Ghost layers (and Dirichlet face points) of the physical faces across
  // axes from `first_axis` on. Each layer's rule is made once; a ghost is then
  // a load and a multiply-add.
  void fill_ghosts(Field& u, int first_axis = 0) {
    Real* data = u.data();
    if (first_axis == 0) {
      const RowGhosts ghosts = row_ghosts();
      Box<D> rows = domain_.layout.storage_box();
      rows.lo[0] = 0, rows.hi[0] = 1;
      parallel_rows(rows, [&](const Index<D>& row) {
        ghosts(data + domain_.layout.offset(row));
      });
    }
    for (int a = std::max(first_axis, 1); a < D; ++a)
      for (int side = 0; side < 2; ++side) {
        if (domain_.exchanged[a][side]) continue;
        const Box<D> box = domain_.ghost_box(a, side, problem_.radius);
        const long n = box.extent(0), stride = strides_[a];
        std::vector<FaceRule::Layer<Real>> layer;
        for (long i = box.lo[a]; i < box.hi[a]; ++i) layer.push_back(domain_.face[a][side].template layer<Real>(i));
        parallel_rows(box, [&](const Index<D>& start) {
          const FaceRule::Layer<Real> g = layer[static_cast<std::size_t>(start[a] - box.lo[a])];
          Real* row = data + domain_.layout.offset(start);
          const Real* src = row + (g.source - start[a]) * stride;
#pragma omp simd
          for (long x = 0; x < n; ++x) row[x] = g(src[x]);
        });
      }
  }

  // The x ghosts (and Dirichlet face points) of one row, from the row's own
  // points. A star stencil reads a row's x ghosts only for that row's own
  // points, so each sweep fills them just before it computes the row, while
  // the row is in cache: filled for the whole field after the step, they
  // cost a memory round trip a row (a fifth of a 256^3 step).
  struct RowGhosts {
    std::vector<FaceRule::Layer<Real>> layers;
    std::vector<long> at;  // the ghost's x
    void operator()(Real* row) const {  // row: its point x = 0
      for (std::size_t l = 0; l < layers.size(); ++l) row[at[l]] = layers[l](row[layers[l].source]);
    }
  };
  RowGhosts row_ghosts() const {
    RowGhosts g;
    for (int side = 0; side < 2; ++side) {
      if (domain_.exchanged[0][side]) continue;
      const Box<D> box = domain_.ghost_box(0, side, problem_.radius);
      for (long x = box.lo[0]; x < box.hi[0]; ++x) {
        g.layers.push_back(domain_.face[0][side].template layer<Real>(x));
        g.at.push_back(x);
      }
    }
    return g;
  }

  void set_owned(Field& u, const InitialSpec& spec) {
    const Box<D> box = domain_.layout.owned_box();
    parallel_rows(box, [&](const Index<D>& start) {
      long g[max_dims] = {0, 0, 0};
      for (int a = 0; a < D; ++a) g[a] = start[a] + domain_.offset[a];
      const long p0 = domain_.layout.offset(start);
      for (long x = 0; x < box.extent(0); ++x, ++g[0]) u[p0 + x] = static_cast<Real>(initial_value(spec, g));
    });
  }

  // Box <-> contiguous buffer, x fastest.
  void copy_box(Field& u, const Box<D>& box, Real* buffer, bool to_buffer) {
    const long n = box.extent(0);
    parallel_rows(box, [&](const Index<D>& start) {
      long row = 0, scale = 1;
      for (int a = 1; a < D; ++a) row += (start[a] - box.lo[a]) * scale, scale *= box.extent(a);
      Real* b = buffer + row * n;
      Real* f = u.data() + domain_.layout.offset(start);
      if (to_buffer)
        std::copy(f, f + n, b);
      else
        std::copy(b, b + n, f);
    });
  }

  template <int R>
  LocalStats stats_radius() {
    const auto lap = laplacian<R>();
    const Box<D> owned = domain_.layout.owned_box();
    const Box<D> updated = domain_.update_box(R, 0);
    const Real* u = u_.data();
    const Real* prev = u_next_.data();
    const double dt = problem_.dt, c2 = Eq::energy_c2(problem_.coefficients);
    const bool energy = Eq::has_energy && step_ > 0;
    const KineticWeight<Real> kinetic_weight = media_ ? media_->kinetic_weight(on_host) : KineticWeight<Real>{};
    double mn = std::numeric_limits<double>::infinity(), mx = -mn, w_sum = 0, sum = 0, sq = 0, kin = 0, pot = 0;
    long bad = 0;
    long rows = 1;
    for (int a = 1; a < D; ++a) rows *= owned.extent(a);
#pragma omp parallel for schedule(static) reduction(min : mn) reduction(max : mx) \
    reduction(+ : w_sum, sum, sq, kin, pot, bad) if (owned.size() >= parallel_threshold)
    for (long r = 0; r < rows; ++r) {
      Index<D> i;
      long rest = r;
      double w_row = 1;
      bool row_updated = true;
      for (int a = 1; a < D; ++a) {
        i[a] = rest % owned.extent(a);
        rest /= owned.extent(a);
        w_row *= domain_.weight(a, i[a]);
        row_updated = row_updated && i[a] >= updated.lo[a] && i[a] < updated.hi[a];
      }
      for (long x = 0; x < owned.extent(0); ++x) {
        i[0] = x;
        const long p = domain_.layout.offset(i);
        const double v = u[p], w = w_row * domain_.weight(0, x);
        if (!std::isfinite(v)) {
          ++bad;
          continue;
        }
        mn = std::min(mn, v), mx = std::max(mx, v);
        w_sum += w, sum += w * v, sq += w * v * v;
        if (energy && row_updated && x >= updated.lo[0] && x < updated.hi[0]) {
          const double du = (v - prev[p]) / dt;
          kin += w * du * du * kinetic_weight.at(p, i);
          pot -= w * c2 * prev[p] * static_cast<double>(lap(u, p));
        }
      }
    }
    LocalStats s;
    s.min = mn, s.max = mx, s.weight = w_sum, s.sum = sum, s.sum_squares = sq, s.kinetic = kin, s.potential = pot;
    s.non_finite = bad;
    s.points = owned.size();
    return s;
  }

  Problem problem_;
  LocalDomain<D> domain_;
  Index<D> strides_;
  typename Eq::template Update<Real> update_;
  std::optional<Media<D, Real, Eq>> media_;  // where coefficients vary or sources are given
  std::vector<RunCache> run_caches_;          // one a thread: its last row's run updates
  // u^n, and the buffer a step writes u^{n+1} into (swapped after the step).
  std::vector<Real, UntouchedAllocator<Real>> u_, u_next_;
  long step_ = 0;
};

}  // namespace host

template <int D, class Real, class Eq>
std::unique_ptr<Backend<D, Real>> make_host_backend_for(const Problem& problem, const LocalDomain<D>& domain) {
  return std::make_unique<host::HostBackend<D, Real, Eq>>(problem, domain);
}

}  // namespace heatwave
