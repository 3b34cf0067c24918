#pragma once
// The host side of a cluster kernel object, shared by every family of both
// dimensions: the axes' geometry from the rank's box, the equation's update
// and the stencil weights, the checks that a plan fits the device, launch
// configurations, and the families' factory.
#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/dispatch.hpp"
#include "kernels/cluster/kernel.cuh"
#include "kernels/cluster/kernel_args.cuh"
#include "kernels/cluster/source_boxes.hpp"
#include "kernels/cuda/check.hpp"

namespace heatwave::cuda {

inline int round_up(int n, int m) { return (n + m - 1) / m * m; }

// The host side of a kernel object: geometry from the rank's box, the
// equation's update and the stencil weights, the checks every plan passes.
template <int D, class Real, class Eq>
class ClusterKernelBase : public ClusterKernel<D, Real> {
 protected:
  using Update = typename Eq::template Update<Real>;
  using ClusterKernel<D, Real>::plan_;
  using ClusterKernel<D, Real>::geo_;
  using ClusterKernel<D, Real>::shared_bytes_;
  using ClusterKernel<D, Real>::active_clusters_;

  // The axes as the kernels see them, and the parts of the plan every
  // dimension derives alike. False, with `reason`, where the box is too small.
  // `media`: where the flux coefficient varies, the device pair fields
  // (2D: FluxTiles) or its views (3D: FluxPairs); the point updates where
  // another coefficient does.
  bool set_geometry(const Problem& problem, const LocalDomain<D>& domain, const ClusterPlan& plan,
                    const ClusterMedia<D, Real>& media, std::string& reason) {
    const int R = problem.radius;
    radius_ = R;
    const std::vector<const Real*>& flux_pairs = media.flux_pairs;
    flux_pairs_ = flux_pairs;
    if (media.point_updates) point_ = *static_cast<const PointUpdates<D, Real, Eq>*>(media.point_updates);
    pointwise_ = media.point_updates != nullptr;
    flux_ = media.flux != nullptr;
    if (flux_)
      with_radius(
          R, [&]<int RR>() { std::get<RR - 1>(fluxes_) = *static_cast<const FluxPairs<D, RR, Real>*>(media.flux); });
    const bool tiles = flux_pairs.size() == static_cast<std::size_t>(D * R);
    if (cluster_flux_tiles(problem) != tiles || (!tiles && !flux_pairs.empty()) || (tiles && !flux_) ||
        flux_ != flux_varies<Eq>(problem))
      return reason =
                 "the cluster kernels need the flux coefficient's views where it varies (and in 2D, from a "
                 "file, its " +
                 std::to_string(D * R) + " pair fields), and neither where it does not",
             false;
    int device = 0, can = 0;
    HW_CUDA(cudaGetDevice(&device));
    HW_CUDA(cudaDeviceGetAttribute(&can, cudaDevAttrClusterLaunch, device));
    if (!can) return reason = "this device cannot launch thread-block clusters", false;
    const int H = domain.layout.halo;
    for (int a = 0; a < D; ++a) {
      ClusterAxis& x = geo_.axis[a];
      const bool ex_lo = domain.exchanged[a][0], ex_hi = domain.exchanged[a][1];
      x.n = static_cast<int>(domain.layout.owned[a]);
      if (x.n < 2 * R + 2) return reason = "fewer than 2r+2 points along an axis", false;
      x.periodic = !ex_lo && !ex_hi && domain.face[a][0].type == BoundaryType::periodic;
      x.load_lo = ex_lo ? -H : -R, x.load_hi = ex_hi ? x.n + H : x.n + R;
      x.core_lo = ex_lo ? -H : 0, x.core_hi = ex_hi ? x.n + H : x.n;
      if (x.periodic) x.core_lo = -unbounded, x.core_hi = unbounded;
      x.upd_lo = x.core_lo + (domain.dirichlet(a, 0) ? 1 : 0);
      x.upd_hi = x.core_hi - (domain.dirichlet(a, 1) ? 1 : 0);
      for (int side = 0; side < 2; ++side) {
        x.exchanged[side] = domain.exchanged[a][side];
        x.ghosts[side] = !x.exchanged[side] && !x.periodic;
        x.face[side] = domain.face[a][side];
      }
    }
    const auto strides = domain.layout.strides();
    geo_.lead = domain.layout.lead();
    geo_.halo = domain.layout.halo;
    for (int a = 0; a < D; ++a) geo_.stride[a] = strides[a];
    plan_ = plan, geo_.plan = plan;  // the kernels read its tiling
    geo_.thread_rows_log2 = 0;
    while ((1 << geo_.thread_rows_log2) < plan.threads_y) ++geo_.thread_rows_log2;
    // Shared column 0 is k*r rounded up to packs left of the tile: tiles that
    // are whole packs then start on 16-byte boundaries, so loads and stores are packs.
    constexpr int V = Pack<Real>::width;
    geo_.halo_left = shared_halo_left(plan.k * R, V);
    geo_.width = shared_width(plan.k * R, plan.tile_x, V);
    with_radius(
        R, [&]<int RR>() { std::get<RR - 1>(laps_) = LaplacianWeights<D, RR, Real>::make(problem.spacing, strides); });
    update_ = make_update<Eq, Real>(uniform_coefficients<Eq>(problem), problem.dt);  // the flux coefficient in the pairs
    problem_ = problem;
    // No flux table kernels in a wave's units, nor past the radii a 3D unit's kernels take.
    if constexpr (Eq::flux_coefficient != nullptr)
      if (flux_) with_radius<D == 3 ? max_radius_3d : max_radius>(R, [&]<int RR>() { build_flux_table<RR>(); });
    return set_sources(media, reason);
  }

  // The sources' boxes the kernels add (ClusterSources, make_source_boxes).
  bool set_sources(const ClusterMedia<D, Real>& media, std::string& reason) {
    times_ = media.source_times;
    if (!media.listed) return reason = "the cluster kernels add no field source (every point a source's)", false;
    std::array<SourceAxis, D> axes;
    for (int a = 0; a < D; ++a)
      axes[a] = {geo_.axis[a].n, geo_.axis[a].periodic, geo_.axis[a].upd_lo, geo_.axis[a].upd_hi};
    const auto [boxes, weights] = make_source_boxes<D, Real>(media.sources, axes);
    if (boxes.size() > static_cast<std::size_t>(max_cluster_source_boxes))
      return reason = "the cluster kernels add at most " + std::to_string(max_cluster_source_boxes) +
                      " source boxes a rank (a point source's points or a Gaussian's box, split where a periodic "
                      "axis wraps them), and this rank has " +
                      std::to_string(boxes.size()),
             false;
    source_extents_ = boxes;
    if (!boxes.empty()) {
      source_boxes_.allocate(boxes.size());
      HW_CUDA(cudaMemcpy(source_boxes_.get(), boxes.data(), boxes.size() * sizeof(SourceBox), cudaMemcpyHostToDevice));
      source_weights_.allocate(weights.size());
      HW_CUDA(cudaMemcpy(source_weights_.get(), weights.data(), weights.size() * sizeof(Real), cudaMemcpyHostToDevice));
    }
    return true;
  }

  // The source boxes this rank adds (ClusterSources::count).
  int source_count() const { return static_cast<int>(source_extents_.size()); }

  // The sources of a launch of `steps` steps from step `step`: f(t_n) of each
  // source at each step, in the working precision (source_factors, as the
  // other backends take them), copied on `stream` into a slot of a ring (a
  // split chunk's inner and outer launches run on two streams at once; a
  // slot is reused four launches later, after the chunk's streams have met).
  ClusterSources<Real> sources(long step, int steps, cudaStream_t stream) {
    ClusterSources<Real> s;
    if (source_extents_.empty()) return s;
    s.boxes = source_boxes_.get(), s.count = source_count(), s.sources = static_cast<int>(times_.size());
    s.weights = source_weights_.get();
    std::vector<Real> f;
    for (int m = 0; m < steps; ++m)
      for (const Real value : source_factors<Real>(times_, problem_.time_at(step + m))) f.push_back(value);
    if (f.size() > factor_slot_) {  // a longer launch (a resident chunk): a larger ring, once its users are done
      HW_CUDA(cudaDeviceSynchronize());
      factor_slot_ = std::max<std::size_t>(f.size(), 64);
      factors_.allocate(factor_slots * factor_slot_);
    }
    Real* slot = factors_.get() + (next_slot_++ % factor_slots) * factor_slot_;
    // From pageable memory: the copy is staged before it returns, so `f` may go.
    HW_CUDA(cudaMemcpyAsync(slot, f.data(), f.size() * sizeof(Real), cudaMemcpyHostToDevice, stream));
    s.factors = slot;
    return s;
  }

  // Threads and shared memory of a block within the device's limits.
  bool fits_device(std::string& reason) const {
    const ClusterPlan& q = plan_;
    if (threads_x_ * threads_y_ > 512)
      return reason = "cluster plan (" + q.text() + ") needs " + std::to_string(threads_x_ * threads_y_) +
                      " threads a block (at most 512)",
             false;
    int device = 0;
    HW_CUDA(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    HW_CUDA(cudaGetDeviceProperties(&prop, device));
    if (shared_bytes_ > prop.sharedMemPerBlockOptin)
      return reason = "cluster plan (" + q.text() + ") needs " + std::to_string(shared_bytes_ / 1024) +
                      " KiB of shared memory a block, more than the device's " +
                      std::to_string(prop.sharedMemPerBlockOptin / 1024),
             false;
    return true;
  }

  // Lets `kernel` use the plan's shared memory (and as much of the SM's as it
  // has: blocks an SM are limited by it, not by L1).
  template <class Kernel>
  void allow_shared_memory(Kernel kernel) const {
    HW_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes_)));
    HW_CUDA(
        cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
    if (plan_.blocks() > 8)
      HW_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  }

  // Blocks of `kernel` (the plan's block shape and shared memory, allowed
  // here) that the whole GPU holds at once: the one-block launches that
  // size their grids by it (resident, deep, columns).
  template <class Kernel>
  int resident_blocks(Kernel kernel) const {
    allow_shared_memory(kernel);
    int device = 0, sms = 0, per_sm = 0;
    HW_CUDA(cudaGetDevice(&device));
    HW_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    HW_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads_x_ * threads_y_, shared_bytes_));
    return per_sm * sms;
  }

  // Clusters of the plan that fit on the device at once (0: they cannot be co-scheduled).
  template <class Kernel>
  int max_active_clusters(Kernel kernel) {
    cudaLaunchAttribute attribute[1];
    Box<D> owned;
    for (int a = 0; a < D; ++a) owned.hi[a] = geo_.axis[a].n;
    cudaLaunchConfig_t config = launch_config(attribute, owned, nullptr);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return clusters;
  }
  bool co_scheduled(std::string& reason) const {
    if (active_clusters_ > 0) return true;
    return reason = "cudaOccupancyMaxActiveClusters is 0 for the plan (" + plan_.text() + "): clusters of " +
                    std::to_string(plan_.blocks()) + " blocks with " + std::to_string(shared_bytes_ / 1024) +
                    " KiB each cannot be co-scheduled",
           false;
  }

  // A streaming launch: whole clusters over the write-back window (blocks past
  // it have empty tiles); 3D slabs of tile_z planes along z.
  cudaLaunchConfig_t launch_config(cudaLaunchAttribute* attribute, const Box<D>& window, cudaStream_t stream) {
    const ClusterPlan& q = plan_;
    for (int a = 0; a < D; ++a)
      geo_.axis[a].out_lo = static_cast<int>(window.lo[a]), geo_.axis[a].out_hi = static_cast<int>(window.hi[a]);
    auto extent = [&](int a) { return geo_.axis[a].out_hi - geo_.axis[a].out_lo; };
    auto blocks = [&](int a, int tile, int cluster) {
      return (extent(a) + cluster * tile - 1) / (cluster * tile) * cluster;
    };
    cudaLaunchConfig_t config{};
    if constexpr (D == 2)
      config.gridDim = dim3(blocks(0, q.tile_x, 1), blocks(1, q.tile_y, q.cluster_y));
    else
      config.gridDim = dim3(blocks(0, q.tile_x, q.cluster_x), blocks(1, q.tile_y, q.cluster_y),
                            (extent(2) + q.tile_z - 1) / q.tile_z);
    config.blockDim = dim3(threads_x_, threads_y_);
    config.dynamicSmemBytes = shared_bytes_;
    config.stream = stream;
    attribute[0].id = cudaLaunchAttributeClusterDimension;
    attribute[0].val.clusterDim.x = q.cluster_x;
    attribute[0].val.clusterDim.y = q.cluster_y;
    attribute[0].val.clusterDim.z = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
    return config;
  }

  // Whether a launch from `step` starts the run: the Taylor start of an
  // equation second order in time.
  static bool starts(long step) { return Eq::levels == 2 && step == 0; }

  template <int R>
  const LaplacianWeights<D, R, Real>& lap() const {
    return std::get<R - 1>(laps_);
  }
  template <int R>
  const FluxPairs<D, R, Real>& flux() const {
    return std::get<R - 1>(fluxes_);
  }
  // Form::flux where alpha is constant or in layers (no file): the table of
  // the pair coefficients by the layers' coordinate (FluxTable); null elsewhere.
  template <int R>
  const FluxTable<D, R, Real>& flux_table() const {
    return std::get<R - 1>(flux_tables_);
  }
  template <int R>
  void build_flux_table() {
    FluxTable<D, R, Real>& table = std::get<R - 1>(flux_tables_);
    const FluxPairs<D, R, Real>& f = flux<R>();
    if (f.alpha) return;
    const ClusterAxis& axis = geo_.axis[f.axis];
    table.axis = f.axis, table.lo = (axis.periodic ? 0 : axis.load_lo) - flux_table_pad;
    const int n = (axis.periodic ? axis.n : axis.load_hi) + flux_table_pad - table.lo;
    table.hi = table.lo + n;
    DeviceBuffer<FluxEntry<D, R, Real>>& entries = std::get<R - 1>(flux_entries_);
    entries.allocate(static_cast<std::size_t>(n));
    make_flux_table<D, R, Real><<<(n + 255) / 256, 256>>>(entries.get(), f, geo_, table.lo, n);
    HW_CUDA(cudaGetLastError());
    // The runs of equal entries (FluxTable::same_to), from the entries made.
    std::vector<FluxEntry<D, R, Real>> made(static_cast<std::size_t>(n));
    HW_CUDA(cudaMemcpy(made.data(), entries.get(), made.size() * sizeof(made[0]), cudaMemcpyDeviceToHost));
    std::vector<int> same_to(made.size());
    for (int c = n - 1; c >= 0; --c)
      same_to[c] =
          c + 1 < n && std::memcmp(&made[c].k, &made[c + 1].k, sizeof(made[c].k)) == 0 ? same_to[c + 1] : table.lo + c;
    flux_runs_.allocate(same_to.size());
    HW_CUDA(cudaMemcpy(flux_runs_.get(), same_to.data(), same_to.size() * sizeof(int), cudaMemcpyHostToDevice));
    table.at = entries.get(), table.same_to = flux_runs_.get();
  }

  int radius_ = 1;
  int threads_x_ = 32, threads_y_ = 1;  // block shape
  // One of each for every radius, at R - 1 (the case's radius is set).
  template <int R>
  using Lap = LaplacianWeights<D, R, Real>;
  template <int R>
  using Pairs = FluxPairs<D, R, Real>;
  template <int R>
  using Table = FluxTable<D, R, Real>;
  template <int R>
  using TableEntries = DeviceBuffer<FluxEntry<D, R, Real>>;
  typename PerRadius<Lap>::type laps_{};
  Update update_{};
  std::vector<const Real*> flux_pairs_;  // 2D: device pair fields, [a * R + j - 1]; empty: a constant flux coefficient
  typename PerRadius<Pairs>::type fluxes_{};                           // device views, where flux_
  bool flux_ = false;                                                  // the flux coefficient varies: Form::flux
  typename PerRadius<Table>::type flux_tables_;
  typename PerRadius<TableEntries>::type flux_entries_;
  DeviceBuffer<int> flux_runs_;          // the case's radius's table's (FluxTable::same_to)
  PointUpdates<D, Real, Eq> point_{};    // device views, where pointwise_
  bool pointwise_ = false;               // a coefficient other than the flux one varies: Form::point
  Problem problem_;                      // the sources' times
  std::vector<TimeFunction> times_;      // the sources' time functions, in config order
  DeviceBuffer<SourceBox> source_boxes_;
  std::vector<SourceBox> source_extents_;  // the same on the host, where the launches' plans weigh them
  DeviceBuffer<Real> source_weights_;      // the boxes' factors along their axes
  static constexpr std::size_t factor_slots = 4;
  DeviceBuffer<Real> factors_;  // the ring of the launches' f(t_n)
  std::size_t factor_slot_ = 0;
  std::size_t next_slot_ = 0;
};

// The kernel object of `Kernel`'s type, configured for `plan`; null (with
// `reason`) where the plan cannot run.
template <class Kernel, int D, class Real>
std::unique_ptr<ClusterKernel<D, Real>> configured(const Problem& problem, const LocalDomain<D>& domain,
                                                   const ClusterPlan& plan, const ClusterMedia<D, Real>& media,
                                                   std::string& reason) {
  auto kernel = std::make_unique<Kernel>();
  if (!kernel->configure(problem, domain, plan, media, reason)) return nullptr;
  return kernel;
}

// The kernel families of each dimension (kernel_2d_object.cuh,
// kernel_3d_object.cuh): make() builds the object of the family a plan names.
template <int D>
struct KernelFamily;

// The kernel object of dimension D for `Eq`, configured for `plan`; null
// (with `reason`) where the plan cannot run.
template <int D, class Real, class Eq>
std::unique_ptr<ClusterKernel<D, Real>> make_cluster_kernel_for(const Problem& problem, const LocalDomain<D>& domain,
                                                                const ClusterPlan& plan,
                                                                const ClusterMedia<D, Real>& media, std::string& reason) {
  return KernelFamily<D>::template make<Real, Eq>(problem, domain, plan, media, reason);
}
// The objects of one dimension, precision and equation, built in a unit of
// their own (kernels/cluster/units.cmake; with kernel_2d_object.cuh or
// kernel_3d_object.cuh, which define KernelFamily<D>).
#define HEATWAVE_CLUSTER_OBJECTS(D, Real, Eq)                                               \
  template std::unique_ptr<ClusterKernel<D, Real>> make_cluster_kernel_for<D, Real, Eq>( \
      const Problem&, const LocalDomain<D>&, const ClusterPlan&, const ClusterMedia<D, Real>&, std::string&);

}  // namespace heatwave::cuda
