// cuda-cluster, 3D: the deep family's kernel object (its kernels:
// kernel_3d_deep.cuh). Host code: the kernels are declared (kernel_args.cuh),
// built in units of their own.
#pragma once

#include "io/errors.hpp"
#include "kernels/cluster/kernel_3d_object.cuh"

namespace heatwave::cuda {

namespace {

// The kernel object of a deep plan: checks the plan against the case (the
// compiled shape; constant coefficients, or the waves' by axis classes;
// ranks along z) and the device (shared memory, every block resident at
// once), makes the point form's classes, and launches the sweep
// cooperatively with the launch's sources and receivers.
template <class Real, class Eq>
class DeepKernel3DObject final : public ClusterKernelBase<3, Real, Eq> {
  using Base = ClusterKernelBase<3, Real, Eq>;
  using Base::plan_, Base::geo_, Base::shared_bytes_, Base::active_clusters_, Base::threads_x_, Base::threads_y_;

 public:
  bool configure(const Problem& problem, const LocalDomain<3>& domain, const ClusterPlan& q,
                 const ClusterMedia<3, Real>& media, std::string& reason) {
    if (!this->set_geometry(problem, domain, q, media, reason)) return false;
    const int R = problem.radius;
    const std::string plan = "deep plan (" + q.text() + ")";
    if (!deep_built(R, Eq::levels))
      return reason = "the deep family has no kernels for " + std::string(Eq::name) + " at radius " +
                      std::to_string(R),
             false;
    if (this->flux_)
      return reason = plan + " runs a constant " + std::string(Eq::name) +
                      " coefficient (the pipeline runs the flux form's media)",
             false;
    if (this->pointwise_ && !deep_point_built(R, sizeof(Real) == 8, Eq::levels))
      return reason = plan + " has no point-form kernels (media, absorbing faces) for " + std::string(Eq::name) +
                      " in " + (sizeof(Real) == 8 ? "fp64" : "fp32") + " at radius " + std::to_string(R) +
                      " (the pipeline runs them)",
             false;
    events_ = deep_events_built(R, sizeof(Real) == 8, Eq::levels, this->pointwise_);
    if (this->source_count() > 0 && !events_)
      return reason = plan + " adds sources in fp32 at radius 1 only (the pipeline runs this case's)", false;
    const DeepShape shape = deep_shape(R, sizeof(Real) == 8, Eq::levels);
    if (q.tile_x != shape.tile_x || q.tile_y != shape.tile_y || (q.k != 1 && q.k != shape.k))
      return reason = "invalid " + plan + ": the " + (sizeof(Real) == 8 ? "fp64" : "fp32") + " kernels at radius " +
                      std::to_string(R) + " take tiles of " + std::to_string(shape.tile_x) + "x" +
                      std::to_string(shape.tile_y) + " and k " + std::to_string(shape.k) + " (or 1)",
             false;
    k_ = q.k;
    // Ranks along z only: a launch computes the cone into the z halos (as on
    // a periodic axis) and writes the owned planes, one launch a halo
    // exchange (the halos at most k r deep; overlap does not split it).
    for (int a = 0; a < 2; ++a)
      if (domain.exchanged[a][0] || domain.exchanged[a][1])
        return reason = plan + " splits ranks along z only: this rank exchanges halos along " + "xy"[a], false;
    const ClusterAxis& az = geo_.axis[2];
    for (int side = 0; side < 2; ++side) {
      const int halo = side == 0 ? -az.load_lo : az.load_hi - az.n;
      if (domain.exchanged[2][side] && halo > q.k * R)
        return reason = plan + " runs a launch a halo exchange: halos of " + std::to_string(halo) +
                        " planes (parallel.exchange_every) are deeper than its k r = " + std::to_string(q.k * R),
               false;
    }
    // Every tile is whole, the last of an axis moved back to end at its end:
    // the axis holds a tile, and the last tile's own points (past its
    // neighbour's) are none or at least r (the lines it sends lie in its neighbour).
    for (int a = 0; a < 2; ++a) {
      const int n = geo_.axis[a].n, tile = a == 0 ? q.tile_x : q.tile_y;
      if (n < tile || (n % tile != 0 && n % tile < R))
        return reason = plan + " needs at least " + std::to_string(tile) + " points along " + "xy"[a] +
                        (n < tile ? "" : ", and a last tile of r or more") + " (this rank has " + std::to_string(n) +
                        ")",
               false;
    }
    if constexpr (has_point_form<Eq>)
      if (this->pointwise_) {
        classes_.make(class_axes(geo_), this->point_, q.k * R);  // the maps reach the cone's planes
        if (!classes_.view().at)
          return reason = plan + " takes the coefficients by axis classes: a coefficient from a file, or more than " +
                          std::to_string(UpdateClasses<typename Eq::template Update<Real>>::max_x_classes) +
                          " classes along x (the pipeline runs it)",
                 false;
      }
    threads_x_ = deep_threads, threads_y_ = 1;
    shared_bytes_ = static_cast<std::size_t>(
        deep_shared_bytes(R, Eq::levels, shape.k, sizeof(Real), shape.tile_x, shape.tile_y));
    if (!this->fits_device(reason)) return false;
    blocks_x_ = (geo_.axis[0].n + q.tile_x - 1) / q.tile_x, blocks_y_ = (geo_.axis[1].n + q.tile_y - 1) / q.tile_y;
    active_clusters_ = INT_MAX;  // the fewest of the two kernels a plan's launches run
    for (const bool events : {false, true})
      with_kernel(events, [&]<int RR, bool Point, bool Events>() {
        for (int steps : {k_, 1})
          this->active_clusters_ = std::min(this->active_clusters_,
                                            this->resident_blocks(deep_kernel_3d_of<RR, Real, Eq, Point, Events>(steps)));
      });
    if (blocks_x_ * blocks_y_ > active_clusters_)
      return reason = plan + " needs its " + std::to_string(blocks_x_ * blocks_y_) +
                      " blocks resident at once, and " + std::to_string(active_clusters_) + " fit",
             false;
    // The two sets of edge strips, then a flag (unsigned) a block.
    const long blocks = static_cast<long>(blocks_x_) * blocks_y_;
    edges_.allocate(static_cast<std::size_t>(
        2L * blocks * std::max(shape.k - 1, 1) * deep_edge_values(R, shape.tile_x, shape.tile_y) +
        (blocks * static_cast<long>(sizeof(unsigned)) + static_cast<long>(sizeof(Real)) - 1) / static_cast<long>(sizeof(Real))));
    return true;
  }

  bool records_samples() const override { return events_; }
  // The kernels are built for the shape's k and for 1: a chunk's remainder runs one step a launch.
  int launch_steps(int left) const override { return left >= k_ ? k_ : 1; }

  void launch(const Real* u, const Real* u_prev, Real* out_u, Real* out_u_prev, int steps, const Box<3>& window,
              long step, const ClusterSamples<Real>& samples, cudaStream_t stream) override {
    for (int a = 0; a < 3; ++a)
      if (window.lo[a] != 0 || window.hi[a] != geo_.axis[a].n)
        throw Error(ExitCode::internal, "a deep plan writes the owned box");
    const ClusterSources<Real> sources = this->sources(step, steps, stream);
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeCooperative;
    attribute[0].val.cooperative = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(blocks_x_, blocks_y_);
    config.blockDim = dim3(deep_threads);
    config.dynamicSmemBytes = shared_bytes_;
    config.stream = stream;
    config.attrs = attribute;
    config.numAttrs = 1;
    with_kernel(sources.count > 0 || samples.count > 0, [&]<int R, bool Point, bool Events>() {
      HW_CUDA(cudaLaunchKernelEx(&config, deep_kernel_3d_of<R, Real, Eq, Point, Events>(steps), u, u_prev, out_u, out_u_prev,
                                 this->geo_, this->template lap<R>(), this->update_, steps, this->starts(step),
                                 edges_.get(), sources, samples, classes_.view()));
      HW_CUDA(cudaGetLastError());
    });
  }

 private:
  int blocks_x_ = 0, blocks_y_ = 0, k_ = 1;
  bool events_ = false;                    // kernels with sources and receivers are built for the form
  UpdateClassTable<3, Real, Eq> classes_;  // Point

  // f.template operator()<R, Point, Events>() for the case's radius and
  // form, with events where asked and built (the point form's kernels have
  // them always).
  template <class Fn>
  void with_kernel(bool events, Fn&& f) const {
    with_radius(this->radius_, [&]<int R>() {
      constexpr bool fp64 = sizeof(Real) == 8;
      if constexpr (deep_built(R, Eq::levels)) {
        if constexpr (deep_point_built(R, fp64, Eq::levels))
          if (this->pointwise_) return f.template operator()<R, true, true>();
        if constexpr (deep_events_built(R, fp64, Eq::levels, false))
          if (events) return f.template operator()<R, false, true>();
        f.template operator()<R, false, false>();
      }
    });
  }
  DeviceBuffer<Real> edges_;  // the tiles' edge strips (deep_kernel_3d), two sets, and the blocks' flags
};

}  // namespace

// The kernel object of a deep plan (null, with `reason`, where it cannot
// run; declared in kernel_3d_object.cuh), built in a unit of its own
// (kernels/cluster/units.cmake: HEATWAVE_CLUSTER_3D_DEEP).
template <class Real, class Eq>
std::unique_ptr<ClusterKernel<3, Real>> make_deep_kernel_3d(const Problem& problem, const LocalDomain<3>& domain,
                                                            const ClusterPlan& plan, const ClusterMedia<3, Real>& media,
                                                            std::string& reason) {
  return configured<DeepKernel3DObject<Real, Eq>>(problem, domain, plan, media, reason);
}
#define HEATWAVE_DEEP_OBJECT_3D(Real, Eq)                                                   \
  template std::unique_ptr<ClusterKernel<3, Real>> make_deep_kernel_3d<Real, Eq>( \
      const Problem&, const LocalDomain<3>&, const ClusterPlan&, const ClusterMedia<3, Real>&, std::string&);

}  // namespace heatwave::cuda
