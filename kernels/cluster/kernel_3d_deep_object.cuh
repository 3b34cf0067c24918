// cuda-cluster, 3D: the deep family's kernel object (its kernels:
// kernel_3d_deep.cuh). Built with HEATWAVE_CLUSTER_3D_DEEP. Host code: the
// kernels are declared (kernel_args.cuh), built in units of their own.
#pragma once
#include <type_traits>

#include "io/errors.hpp"
#include "kernels/cluster/kernel_3d_object.cuh"

namespace heatwave::cuda {

namespace {

// The kernel object of a deep plan: checks the plan against the case and
// the device (shared memory, every block resident at once) and launches
// the sweep cooperatively.
template <class Real, class Eq>
class DeepKernel3DObject final : public ClusterKernelBase<3, Real, Eq> {
  using Base = ClusterKernelBase<3, Real, Eq>;
  using Base::plan_, Base::geo_, Base::shared_bytes_, Base::active_clusters_, Base::threads_x_, Base::threads_y_;

 public:
  bool configure(const Problem& problem, const LocalDomain<3>& domain, const ClusterPlan& q,
                 const ClusterMedia<3, Real>& media, std::string& reason) {
    if (!this->set_geometry(problem, domain, q, media, reason)) return false;
    const int R = problem.radius;
    constexpr int V = Pack<Real>::width;
    const std::string plan = "deep plan (" + q.text() + ")";
    if (q.k < 1 || q.k > max_levels_deep || q.tile_x < 2 * R || q.tile_y < 2 * R || q.tile_x % V != 0 ||
        q.tile_y % deep_rows != 0)
      return reason = "invalid " + plan + ": k from 1 to " + std::to_string(max_levels_deep) +
                      ", tiles >= 2r, tile_x a multiple of " + std::to_string(V) + " and tile_y of " +
                      std::to_string(deep_rows),
             false;
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
    // Each block's strips lie in its own tile: a last, partial tile is whole or more than r wide.
    for (int a = 0; a < 2; ++a) {
      const int n = geo_.axis[a].n, tile = a == 0 ? q.tile_x : q.tile_y;
      if (n % tile != 0 && n % tile <= R)
        return reason = plan + " leaves a last tile of " + std::to_string(n % tile) + " points along " + "xy"[a] +
                        " (at most r)",
               false;
    }
    geo_.halo_left = shared_halo_left(R, V);
    geo_.width = shared_width(R, q.tile_x, V);
    geo_.rows = q.tile_y + 2 * R;
    geo_.plane = level_stride<Real>(geo_.width, geo_.rows);
    threads_x_ = q.tile_x / V, threads_y_ = q.tile_y / deep_rows;
    if (threads_x_ * threads_y_ > deep_threads)
      return reason = plan + " needs " + std::to_string(threads_x_ * threads_y_) + " threads a block (at most " +
                      std::to_string(deep_threads) + ")",
             false;
    const int slots = Eq::levels * deep_level0_planes(R) + (q.k - 1) * (2 * R + 1);
    shared_bytes_ = sizeof(Real) * static_cast<std::size_t>(slots) * geo_.plane;
    if (!this->fits_device(reason)) return false;
    blocks_x_ = (geo_.axis[0].n + q.tile_x - 1) / q.tile_x, blocks_y_ = (geo_.axis[1].n + q.tile_y - 1) / q.tile_y;
    active_clusters_ = INT_MAX;  // the fewest of any kernel the plan's launches may run
    each_kernel(R, q.k,
                [&](auto kernel) { active_clusters_ = std::min(active_clusters_, this->resident_blocks(kernel)); });
    if (blocks_x_ * blocks_y_ > active_clusters_)
      return reason = plan + " needs its " + std::to_string(blocks_x_ * blocks_y_) +
                      " blocks resident at once, and " + std::to_string(active_clusters_) + " fit",
             false;
    edges_.allocate(static_cast<std::size_t>(2L * blocks_x_ * blocks_y_ * deep_strip_levels(q.k) * R *
                                             deep_strip_values(R, q.tile_x, q.tile_y)));
    if constexpr (has_point_form<Eq>)
      if (this->pointwise_) classes_.make(geo_, this->point_);
    return true;
  }

  bool records_samples() const override { return false; }

  // The kernels a plan's launches may run (launch's choice; a run's last launch may have fewer levels).
  template <class F>
  void each_kernel(int radius, int k, F&& f) const {
    if (this->flux_ || this->pointwise_) return with_radius(radius, [&]<int R>() { media_kernel<R>(f); });
    with_radius(radius, [&]<int R>() {
      f(deep_kernels_3d<R, Real, Eq>().rings);
      if (this->source_count() > 0) f(deep_kernels_3d<R, Real, Eq>().sourced);
    });
    if (radius == 1)
      each_window_kernel([&](auto kernel, int levels) {
        if (k >= levels) f(kernel);
      });
  }
  // The register-window kernels (r 1, fp32): f(kernel, its levels), 2 to deep_window_levels.
  template <class F>
  static void each_window_kernel(F&& f) {
    if constexpr (std::is_same_v<Real, float>) {
      const DeepKernels3D<1, Real, Eq> kernels = deep_kernels_3d<1, Real, Eq>();
      for (int levels = 2; levels <= deep_window_levels; ++levels) f(kernels.windows[levels], levels);
    }
  }

  void launch(const Real* u, const Real* u_prev, Real* out_u, Real* out_u_prev, int steps, const Box<3>& window,
              long step, const ClusterSamples<Real>& samples, cudaStream_t stream) override {
    for (int a = 0; a < 3; ++a)
      if (window.lo[a] != 0 || window.hi[a] != geo_.axis[a].n || samples.count > 0)
        throw Error(ExitCode::internal, "a deep plan writes the owned box and records no receivers");
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeCooperative;
    attribute[0].val.cooperative = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(blocks_x_, blocks_y_);
    config.blockDim = dim3(threads_x_, threads_y_);
    config.dynamicSmemBytes = shared_bytes_;
    config.stream = stream;
    config.attrs = attribute;
    config.numAttrs = 1;
    const ClusterSources<Real> sources = this->sources(step, steps, stream);
    auto run = [&]<int R>(DeepKernel3D<R, Real, Eq> kernel) {
      HW_CUDA(cudaLaunchKernelEx(&config, kernel, u, u_prev, out_u, out_u_prev, geo_, this->template lap<R>(),
                                 this->update_, steps, this->starts(step), edges_.get(), sources, this->point_,
                                 classes_.view(), this->template flux<R>(), this->template flux_table<R>()));
      HW_CUDA(cudaGetLastError());
    };
    if (this->flux_ || this->pointwise_)
      return with_radius(this->radius_, [&]<int R>() { media_kernel<R>(run); });
    if (sources.count > 0) {
      with_radius(this->radius_, [&]<int R>() { run(deep_kernels_3d<R, Real, Eq>().sourced); });
      return;
    }
    bool windowed = false;
    if (this->radius_ == 1)
      each_window_kernel([&](auto kernel, int levels) {
        if (steps == levels) run(kernel), windowed = true;
      });
    if (windowed) return;
    with_radius(this->radius_, [&]<int R>() { run(deep_kernels_3d<R, Real, Eq>().rings); });
  }

 private:
  // f(the media's one kernel a radius, deep_media_kernel_3d).
  template <int R, class Fn>
  void media_kernel(Fn&& f) const {
    if constexpr (Eq::flux_coefficient != nullptr)
      if (this->flux_) return f(deep_media_kernel_3d<R, Real, Eq, Form::flux>());
    if constexpr (has_point_form<Eq>)
      if (this->pointwise_) f(deep_media_kernel_3d<R, Real, Eq, Form::point>());
  }

  int blocks_x_ = 0, blocks_y_ = 0;
  DeviceBuffer<Real> edges_;  // the tiles' edge strips (deep_kernel_3d)
  UpdateClassTable<3, Real, Eq> classes_;  // Form::point
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
