// cuda-cluster, 3D: the kernel object of a case. It checks a plan against
// the device (shared memory, co-scheduling), makes the point form's update
// classes (UpdateClassTable), and launches the pipeline of
// kernel_3d_pipeline.cuh; a deep plan's object is kernel_3d_deep_object.cuh's.
// Host code: the kernels are declared (kernel_args.cuh), built in units of
// their own.
#pragma once
#include "kernels/cluster/kernel_args.cuh"
#include "kernels/cluster/kernel_object.cuh"
#include "kernels/cuda/update_class_table.cuh"

namespace heatwave::cuda {

// The kernel object of a deep plan (kernel_3d_deep_object.cuh; built with
// HEATWAVE_CLUSTER_3D_DEEP), null with `reason` where it cannot run.
template <class Real, class Eq>
std::unique_ptr<ClusterKernel<3, Real>> make_deep_kernel_3d(const Problem& problem, const LocalDomain<3>& domain,
                                                            const ClusterPlan& plan, const ClusterMedia<3, Real>& media,
                                                            std::string& reason);

// Kernels without Events are built for the uniform form only: the media's
// runs come with sources or receivers as a rule, and both ways would double
// their units in the build.
template <Form F>
constexpr bool events_apart = F == Form::uniform;
// The pipeline kernel of a form for a launch of `steps` steps, with events
// or none where the form is built both ways; clusters of several blocks
// only where the build has their kernels.
template <int R, class Real, class Eq, Form F, bool Clustered>
Kernel3D<R, Real, Eq> kernel_3d_clustered(int steps, bool events) {
  if constexpr (events_apart<F>)
    if (!events) return kernel_3d_of<R, Real, Eq, F, Clustered, false>(steps);
  return kernel_3d_of<R, Real, Eq, F, Clustered, true>(steps);
}
template <int R, class Real, class Eq, Form F>
Kernel3D<R, Real, Eq> kernel_3d(int steps, bool clustered, bool events) {
  if constexpr (build::cluster_3d_dsmem)
    if (clustered) return kernel_3d_clustered<R, Real, Eq, F, true>(steps, events);
  return kernel_3d_clustered<R, Real, Eq, F, false>(steps, events);
}

namespace {

template <class Real, class Eq>
class ClusterKernel3D final : public ClusterKernelBase<3, Real, Eq> {
  using Base = ClusterKernelBase<3, Real, Eq>;
  using Base::plan_, Base::geo_, Base::shared_bytes_, Base::active_clusters_, Base::threads_x_, Base::threads_y_;

 public:
  // False, with `reason`, where the plan cannot run.
  bool configure(const Problem& problem, const LocalDomain<3>& domain, const ClusterPlan& q,
                 const ClusterMedia<3, Real>& media, std::string& reason) {
    if (!this->set_geometry(problem, domain, q, media, reason)) return false;
    const int R = problem.radius, KR = q.k * R;
    constexpr int V = Pack<Real>::width;
    if (q.resident)
      return reason = "invalid cluster plan (" + q.text() + "): resident mode is 2D (3D domains stream along z)", false;
    if (q.cluster_x < 1 || q.cluster_y < 1 || q.blocks() > 8 || q.k < 1 || q.k > max_levels_3d(R) || q.tile_x < 2 * R ||
        q.tile_y < 2 * R || q.tile_z < 1 || q.threads_y != 1)
      return reason = "invalid cluster plan (" + q.text() + "): 3D clusters are up to 8 blocks over x-y, k from 1 to " +
                      std::to_string(max_levels_3d(R)) + " for radius " + std::to_string(R) +
                      ", tiles >= 2r, tile_z >= 1, threads_y 1 (a thread a pack of the plane)",
             false;
    geo_.rows = q.tile_y + 2 * KR;
    threads_x_ = geo_.width / V;
    threads_y_ = geo_.rows;  // a thread a pack of the shared plane
    const int slots = Eq::levels * level0_planes_3d(R) + (q.k - 1) * upper_planes_3d(R);  // as the kernel's rings
    geo_.plane = level_stride<Real>(geo_.width, geo_.rows);
    shared_bytes_ = sizeof(Real) * static_cast<std::size_t>(slots) * geo_.plane;
    if (!this->fits_device(reason)) return false;
    if constexpr (has_point_form<Eq>)
      if (this->pointwise_) classes_.make(class_axes(geo_), this->point_);
    // Every kernel the plan launches (one a step count) may use the shared
    // memory; the plan's own step count sets the occupancy.
    // (With Events and without, where the form is built both ways: the fewer
    // clusters of the two.)
    const bool clustered = q.blocks() > 1;
    active_clusters_ = with_kernel([&]<int RR, Form F>() {
      int active = INT_MAX;
      for (const bool events : {true, false}) {
        if (!events && !events_apart<F>) continue;  // the same kernels as with events
        for (int s = 1; s <= q.k; ++s) this->allow_shared_memory(kernel_3d<RR, Real, Eq, F>(s, clustered, events));
        active = std::min(active, this->max_active_clusters(kernel_3d<RR, Real, Eq, F>(q.k, clustered, events)));
      }
      return active;
    });
    return this->co_scheduled(reason);
  }

  void launch(const Real* u, const Real* u_prev, Real* out_u, Real* out_u_prev, int steps, const Box<3>& window,
              long step, const ClusterSamples<Real>& samples, cudaStream_t stream) override {
    cudaLaunchAttribute attribute[1];
    const cudaLaunchConfig_t config = this->launch_config(attribute, window, stream);
    const ClusterSources<Real> sources = this->sources(step, steps, stream);
    const bool events = sources.count > 0 || samples.count > 0;
    with_kernel([&]<int R, Form F>() {
      HW_CUDA(cudaLaunchKernelEx(&config, kernel_3d<R, Real, Eq, F>(steps, plan_.blocks() > 1, events), u, u_prev,
                                 out_u, out_u_prev, geo_, this->template lap<R>(), this->update_, steps,
                                 this->starts(step), this->point_, sources, samples, classes_.view(),
                                 this->template flux<R>(), this->template flux_table<R>()));
    });
    HW_CUDA(cudaGetLastError());
  }

 private:
  UpdateClassTable<3, Real, Eq> classes_;  // Form::point

  // f.template operator()<R, Form>() for the case's radius and form (each
  // form instantiated only for an equation that has such a coefficient: the
  // flux form for the heat, point updates for the waves).
  template <class Fn>
  decltype(auto) with_kernel(Fn&& f) const {
    return with_radius<max_radius_3d>(this->radius_, [&]<int R>() {
      if constexpr (Eq::flux_coefficient != nullptr)
        if (this->flux_) return f.template operator()<R, Form::flux>();
      if constexpr (has_point_form<Eq>)
        if (this->pointwise_) return f.template operator()<R, Form::point>();
      return f.template operator()<R, Form::uniform>();
    });
  }
};

}  // namespace

template <>
struct KernelFamily<3> {
  // The pipeline (streaming slabs, clusters over x-y), or the deep family.
  template <class Real, class Eq>
  static std::unique_ptr<ClusterKernel<3, Real>> make(const Problem& problem, const LocalDomain<3>& domain,
                                                      const ClusterPlan& plan, const ClusterMedia<3, Real>& media,
                                                      std::string& reason) {
    if (reason = unbuilt_plan(plan, 3, problem.radius); !reason.empty()) return nullptr;
    if constexpr (build::cluster_3d_deep)
      if (plan.deep) return make_deep_kernel_3d<Real, Eq>(problem, domain, plan, media, reason);
    return configured<ClusterKernel3D<Real, Eq>>(problem, domain, plan, media, reason);
  }
};

}  // namespace heatwave::cuda
