// cuda-cluster, 2D: the kernel object of a case of the tile family
// (kernel_2d.cuh: streaming and resident tiles) and the 2D families'
// factory (the tiles, or the columns family: kernel_2d_columns_object.cuh).
// Host code: the kernels are declared (kernel_args.cuh), built in units of
// their own.
#pragma once
#include "kernels/cluster/kernel_2d_columns_object.cuh"
#include "kernels/cluster/kernel_args.cuh"
#include "kernels/cluster/kernel_object.cuh"

namespace heatwave::cuda {

namespace {

template <class Real, class Eq>
class ClusterKernel2D final : public ClusterKernelBase<2, Real, Eq> {
  using Base = ClusterKernelBase<2, Real, Eq>;
  using Base::plan_, Base::geo_, Base::shared_bytes_, Base::active_clusters_, Base::threads_x_, Base::threads_y_;

 public:
  // False, with `reason`, where the plan cannot run.
  bool configure(const Problem& problem, const LocalDomain<2>& domain, const ClusterPlan& q,
                 const ClusterMedia<2, Real>& media, std::string& reason) {
    if (!this->set_geometry(problem, domain, q, media, reason)) return false;
    const int R = problem.radius, KR = q.k * R;
    constexpr int V = Pack<Real>::width;
    const bool power_of_2 = q.threads_y >= 1 && (q.threads_y & (q.threads_y - 1)) == 0;
    if (q.resident) {
      bool fits = q.blocks() == 1 && power_of_2 && q.tile_x > R && q.tile_y > R;
      for (int a = 0; a < 2; ++a) {
        const int n = geo_.axis[a].n, t = a == 0 ? q.tile_x : q.tile_y;
        fits = fits && (n % t == 0 || n % t > R);  // a neighbour's edge lies in one tile
      }
      if (!fits)
        return reason = "invalid cluster plan (" + q.text() +
                        "): resident mode is 2D, tiles (and the last, partial ones) wider than r, "
                        "thread rows a power of 2",
               false;
      for (int a = 0; a < 2; ++a)
        if (domain.exchanged[a][0] || domain.exchanged[a][1])
          return reason = "cluster plan (" + q.text() +
                          "): resident mode keeps a whole domain on chip, and this rank's has MPI-exchanged faces",
                 false;
      geo_.halo_left = shared_halo_left(R, V);
      geo_.width = shared_width(R, q.tile_x, V);
      geo_.rows = q.tile_y + 2 * R;
    } else {
      if (q.cluster_x != 1 || q.cluster_y < 1 || q.cluster_y > 16 || q.k < 1 || q.tile_x < 2 * R || q.tile_y < 2 * R ||
          !power_of_2)
        return reason = "invalid cluster plan (" + q.text() +
                        "): 2D clusters are 1 x (1..16) blocks, k >= 1, tiles >= 2r, thread rows a power of 2",
               false;
      geo_.rows = q.tile_y + (q.cluster_y == 1 ? 2 * KR : KR + R);
    }
    threads_x_ = round_up(geo_.width / V, 32);  // a pack per thread across the widest step region
    threads_y_ = q.threads_y;
    geo_.plane = level_stride<Real>(geo_.width, geo_.rows);
    // Both levels and the pair tiles, each plane with its pad; point updates:
    // the calm rows' updates (make_calm_updates_2d).
    const int planes = 2 + static_cast<int>(this->flux_pairs_.size());
    shared_bytes_ = planes * sizeof(Real) * static_cast<std::size_t>(geo_.plane);
    if (this->pointwise_)
      shared_bytes_ += V * sizeof(Real) + geo_.rows * sizeof(typename Eq::template Update<Real>);
    if (!this->fits_device(reason)) return false;

    if (q.resident) {
      // Every tile must be on chip at once: the grid synchronises each step.
      const int room =
          with_kernel([&]<int RR, Form F>() { return this->resident_blocks(kernels_2d<RR, Real, Eq, F>().resident); });
      const dim3 grid = resident_grid();
      const long tiles = static_cast<long>(grid.x) * grid.y;
      if (tiles > room)
        return reason = "cluster plan (" + q.text() + "): the domain's " + std::to_string(tiles) +
                        " tiles do not fit on chip at once (room for " + std::to_string(room) + ")",
               false;
      active_clusters_ = room;
      // Edges: 2 parities x tiles x 4 sides x r x the longer tile side.
      edges_.allocate(static_cast<std::size_t>(2 * tiles * 4 * R) * std::max(q.tile_x, q.tile_y));
      return true;
    }
    active_clusters_ = with_kernel([&]<int RR, Form F>() {
      this->allow_shared_memory(kernels_2d<RR, Real, Eq, F>().streaming);
      return this->max_active_clusters(kernels_2d<RR, Real, Eq, F>().streaming);
    });
    return this->co_scheduled(reason);
  }

  void launch(const Real* u, const Real* u_prev, Real* out_u, Real* out_u_prev, int steps, const Box<2>& window,
              long step, const ClusterSamples<Real>& samples, cudaStream_t stream) override {
    cudaLaunchAttribute attribute[1];
    cudaLaunchConfig_t config;
    const ClusterSources<Real> sources = this->sources(step, steps, stream);
    if (plan_.resident) {
      // One cooperative launch for the chunk: every block resident, grid-wide barriers between steps.
      attribute[0].id = cudaLaunchAttributeCooperative;
      attribute[0].val.cooperative = 1;
      config = cudaLaunchConfig_t{};
      config.gridDim = resident_grid();
      config.blockDim = dim3(threads_x_, threads_y_);
      config.dynamicSmemBytes = shared_bytes_;
      config.stream = stream;
      config.attrs = attribute;
      config.numAttrs = 1;
      for (int a = 0; a < 2; ++a) geo_.axis[a].out_lo = 0, geo_.axis[a].out_hi = geo_.axis[a].n;
    } else {
      config = this->launch_config(attribute, window, stream);
    }
    with_kernel([&]<int R, Form F>() {
      FluxTiles<R, Real> flux;
      for (int i = 0; F == Form::flux_tiles && i < flux.count; ++i) flux.global[i] = this->flux_pairs_[i];
      const FluxTable<2, R, Real>& flux_table = this->template flux_table<R>();
      const bool start = this->starts(step);
      if (plan_.resident)
        HW_CUDA(cudaLaunchKernelEx(&config, kernels_2d<R, Real, Eq, F>().resident, u, u_prev, out_u, out_u_prev, geo_,
                                   this->template lap<R>(), this->update_, steps, start, edges_.get(), flux, flux_table,
                                   this->point_, sources, samples));
      else
        HW_CUDA(cudaLaunchKernelEx(&config, kernels_2d<R, Real, Eq, F>().streaming, u, u_prev, out_u, out_u_prev, geo_,
                                   this->template lap<R>(), this->update_, steps, start, flux, flux_table, this->point_,
                                   sources, samples));
    });
    HW_CUDA(cudaGetLastError());
  }

 private:
  // f.template operator()<R, Form>() for the case's radius and the form its
  // coefficients take (each form instantiated only for an equation that has
  // such a coefficient: the flux forms for the heat, point updates for the
  // waves; pair tiles where alpha comes from a file).
  template <class Fn>
  decltype(auto) with_kernel(Fn&& f) const {
    return with_radius(this->radius_, [&]<int R>() {
      if constexpr (Eq::flux_coefficient != nullptr) {
        if (!this->flux_pairs_.empty()) return f.template operator()<R, Form::flux_tiles>();
        if (this->flux_) return f.template operator()<R, Form::flux>();
      }
      if constexpr (has_point_form<Eq>)
        if (this->pointwise_) return f.template operator()<R, Form::point>();
      return f.template operator()<R, Form::uniform>();
    });
  }

  // A resident launch: a block a tile of the whole domain.
  dim3 resident_grid() const {
    return dim3((geo_.axis[0].n + plan_.tile_x - 1) / plan_.tile_x,
                (geo_.axis[1].n + plan_.tile_y - 1) / plan_.tile_y);
  }

  DeviceBuffer<Real> edges_;  // resident: the tiles' edges, each step (two parities)
};

}  // namespace

template <>
struct KernelFamily<2> {
  // The pipeline (streaming or resident tiles), or the columns family.
  template <class Real, class Eq>
  static std::unique_ptr<ClusterKernel<2, Real>> make(const Problem& problem, const LocalDomain<2>& domain,
                                                      const ClusterPlan& plan, const ClusterMedia<2, Real>& media,
                                                      std::string& reason) {
    if (plan.columns) return make_columns_kernel_2d<Real, Eq>(problem, domain, plan, media, reason);
    return configured<ClusterKernel2D<Real, Eq>>(problem, domain, plan, media, reason);
  }
};

}  // namespace heatwave::cuda
