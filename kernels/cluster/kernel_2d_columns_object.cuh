// cuda-cluster, 2D: the columns family's kernel object (its kernels:
// kernel_2d_columns.cuh). Host code: the kernels are declared
// (kernel_args.cuh), built in units of their own.
#pragma once
#include <array>
#include <map>

#include "io/errors.hpp"
#include "kernels/cluster/kernel_args.cuh"
#include "kernels/cluster/kernel_object.cuh"
#include "kernels/cuda/update_class_table.cuh"

namespace heatwave::cuda {

namespace {

// The kernel object of a columns plan: checks the plan against the case and
// the device, makes the point form's updates by row, and launches a block a
// strip and segment with the kernels of the case's form, radius and events.
template <class Real, class Eq>
class ColumnsKernel2DObject final : public ClusterKernelBase<2, Real, Eq> {
  using Base = ClusterKernelBase<2, Real, Eq>;
  using Base::plan_, Base::geo_, Base::shared_bytes_, Base::active_clusters_, Base::threads_x_, Base::threads_y_;

 public:
  bool configure(const Problem& problem, const LocalDomain<2>& domain, const ClusterPlan& q,
                 const ClusterMedia<2, Real>& media, std::string& reason) {
    if (!this->set_geometry(problem, domain, q, media, reason)) return false;
    const int R = problem.radius;
    shape_ = columns_shape(R, Eq::levels, sizeof(Real) == 8, this->flux_ || this->pointwise_);
    const int K = shape_.max_levels;
    const std::string plan = "columns plan (" + q.text() + ")";
    if (q.k < 1 || q.k > K || q.tile_x < 32 || q.tile_x > shape_.threads || q.tile_x % 32 != 0 ||
        q.tile_x - 2 * q.k * R < 32 || q.tile_y < 0)
      return reason = "invalid " + plan + ": k from 1 to " + std::to_string(K) + " for radius " + std::to_string(R) +
                      (Eq::levels == 2 ? " (two levels)" : "") + ", threads a multiple of 32 up to " +
                      std::to_string(shape_.threads) + " keeping 32 columns past the 2 k r of halo, rows >= 0",
             false;
    if (!this->flux_pairs_.empty())
      return reason = plan + " runs alpha constant or in layers (the streaming plans run a file's)", false;
    if (geo_.stride[1] > columns_max_row_stride)
      return reason = plan + ": rows of " + std::to_string(geo_.stride[1]) + " points, past the " +
                      std::to_string(columns_max_row_stride) + " its kernels address",
             false;
    if constexpr (has_point_form<Eq>)
      if (this->pointwise_ && !make_point_rows(reason)) return reason = plan + " " + reason, false;
    threads_x_ = q.tile_x, threads_y_ = 1;
    with_radius(R,
                [&]<int RR>() { shared_bytes_ = columns_shared_bytes<Real, RR>(launch_steps(q.k), shape_.threads); });
    if (!this->fits_device(reason)) return false;
    // The fewest blocks at once of the kernels the plan's launches may run
    // (each allowed its shared memory): the case's (with sources or without)
    // and those that record receivers. Each sizes its launches' segments.
    for (const ColumnEvents e : {case_events(), ColumnEvents::receivers}) {
      int& active = active_[static_cast<int>(e)];
      active = INT_MAX;
      with_kernels(e, [&]<int RR>(const ColumnsKernels2D<RR, Real, Eq>& kernels) {
        for (int k = 1; k <= q.k; ++k)
          if (launch_steps(k) == k) active = std::min(active, this->resident_blocks(kernels.by_levels[k]));
      });
    }
    active_clusters_ = active_[static_cast<int>(case_events())];
    if (active_clusters_ == 0 || active_[static_cast<int>(ColumnEvents::receivers)] == 0)
      return reason =
                 plan + ": no block fits an SM (" + std::to_string(shared_bytes_ / 1024) + " KiB of shared memory)",
             false;
    return true;
  }

  // The most levels compiled up to the plan's k and `left`.
  int launch_steps(int left) const override {
    int k = std::min(left, plan_.k);
    const ColumnsShape launches = columns_events_shape(shape_, case_events(), sizeof(Real) == 8);
    while (k > 1 && !columns_levels_compiled(launches, k)) --k;
    return k;
  }

  void launch(const Real* u, const Real* u_prev, Real* out_u, Real* out_u_prev, int steps, const Box<2>& window,
              long step, const ClusterSamples<Real>& samples, cudaStream_t stream) override {
    if (launch_steps(steps) != steps)
      throw Error(ExitCode::internal, "a columns launch of " + std::to_string(steps) + " steps (not compiled)");
    for (int a = 0; a < 2; ++a)
      geo_.axis[a].out_lo = static_cast<int>(window.lo[a]), geo_.axis[a].out_hi = static_cast<int>(window.hi[a]);
    const ClusterPlan& q = plan_;
    const int kept = q.tile_x - 2 * steps * this->radius_;
    const int strips = (geo_.axis[0].out_hi - geo_.axis[0].out_lo + kept - 1) / kept;
    const int rows = geo_.axis[1].out_hi - geo_.axis[1].out_lo;
    const ClusterSources<Real> sources = this->sources(step, steps, stream);
    const ColumnEvents events = samples.count > 0 ? ColumnEvents::receivers : case_events();
    with_kernels(events, [&]<int R>(const ColumnsKernels2D<R, Real, Eq>& kernels) {
      int segments = q.tile_y > 0 ? (rows + q.tile_y - 1) / q.tile_y : 0;
      if (segments == 0) {  // (once a launch shape: with sources the model times each block)
        const int active = active_[static_cast<int>(events)];
        const std::array<int, 6> shape{
            steps, active, geo_.axis[0].out_lo, geo_.axis[0].out_hi, geo_.axis[1].out_lo, geo_.axis[1].out_hi};
        int& known = segments_[shape];
        if (known == 0) known = fastest_segments(strips, kept, steps, columns_chunk<Real, R>, active);
        segments = known;
      }
      const int segment_rows = (rows + segments - 1) / segments;
      const dim3 grid(strips, (rows + segment_rows - 1) / segment_rows);
      kernels.by_levels[steps]<<<grid, q.tile_x, columns_shared_bytes<Real, R>(steps, shape_.threads), stream>>>(
          u, u_prev, out_u, out_u_prev, geo_, this->template lap<R>(), this->update_, ColumnFaces<Real, R>::make(geo_),
          this->template flux_table<R>(), sources, this->starts(step), segment_rows, samples, point_rows_);
    });
    HW_CUDA(cudaGetLastError());
  }

 private:
  // Form::point: the updates by x class and row (ColumnUpdates), from the
  // table by axis classes. False, with `reason`, where there is none (a
  // file's c or gamma) or it would be larger than max_entries.
  bool make_point_rows(std::string& reason) {
    using Update = typename Eq::template Update<Real>;
    classes_.make(class_axes(geo_), this->point_, flux_table_pad);
    const long entries = static_cast<long>(classes_.count(0)) * classes_.mapped(1);
    if (!classes_.view().at || entries > ColumnUpdates<Update>::max_entries)
      return reason =
                 "runs the waves' c and gamma constant, in layers or with absorbing faces, in few enough classes "
                 "along x (the streaming plans run a file's)",
             false;
    column_updates_.allocate(static_cast<std::size_t>(entries));
    const long blocks = std::min<long>((entries + 255) / 256, 4096);
    make_column_updates<Update><<<static_cast<unsigned>(blocks), 256>>>(column_updates_.get(), classes_.view(),
                                                                        classes_.count(0), classes_.mapped(1));
    HW_CUDA(cudaGetLastError());
    HW_CUDA(cudaDeviceSynchronize());
    point_rows_.at = column_updates_.get(), point_rows_.rows = classes_.mapped(1);
    point_rows_.x_class = classes_.view().x_class;
    point_rows_.x_lo = classes_.view().lo[0], point_rows_.y_lo = classes_.view().lo[1];
    return true;
  }

  // The kernels a launch without receivers runs.
  ColumnEvents case_events() const { return this->source_count() > 0 ? ColumnEvents::sources : ColumnEvents::none; }
  // f.template operator()<R>(kernels) with the case's radius and form, and
  // `events` (the flux form only for an equation with a flux coefficient,
  // the point form for one with another).
  template <class Fn>
  void with_kernels(ColumnEvents events, Fn&& f) const {
    with_radius(this->radius_, [&]<int R>() {
      auto with_events = [&]<Form F>() {
        switch (events) {
          case ColumnEvents::none:
            return f.template operator()<R>(columns_kernels_2d<R, Real, Eq, F, ColumnEvents::none>());
          case ColumnEvents::sources:
            return f.template operator()<R>(columns_kernels_2d<R, Real, Eq, F, ColumnEvents::sources>());
          case ColumnEvents::receivers:
            return f.template operator()<R>(columns_kernels_2d<R, Real, Eq, F, ColumnEvents::receivers>());
        }
      };
      if constexpr (Eq::flux_coefficient != nullptr)
        if (this->flux_) return with_events.template operator()<Form::flux>();
      if constexpr (has_point_form<Eq>)
        if (this->pointwise_) return with_events.template operator()<Form::point>();
      with_events.template operator()<Form::uniform>();
    });
  }

  // Segments a strip (a plan's rows 0) that finish soonest (columns_segments,
  // plan.hpp), the blocks at their sources' rows weighed: filling the slots
  // once is not enough (at 16384^2, 71 strips on 264 slots, 3 segments leave
  // 51 slots idle, 11 take three waves of shorter blocks), and the few
  // blocks that add a Gaussian's points set a launch's time where the others
  // are as long as they are (the sink at 8352^2: 212 Gcells/s at 5
  // segments, 503 at 14).
  int fastest_segments(int strips, int kept, int steps, int chunk, int active) const {
    const ClusterAxis& ax = geo_.axis[0];
    const ClusterAxis& ay = geo_.axis[1];
    const int reach = steps * this->radius_;
    const ColumnsLaunch launch{strips, ay.out_lo, ay.out_hi - ay.out_lo, reach, steps, chunk, active};
    if (this->source_extents_.empty()) return columns_segments(launch, event_iteration_cost, {});
    // Each strip's boxes: those over a column its threads compute.
    std::vector<std::vector<const SourceBox*>> strip_boxes(strips);
    for (const SourceBox& box : this->source_extents_)
      for (int b = 0; b < strips; ++b) {
        const int lo = ax.out_lo + b * kept - reach, hi = lo + kept + 2 * reach;
        for (int wrap = ax.periodic ? -1 : 0; wrap <= (ax.periodic ? 1 : 0); ++wrap)
          if (hi > box.lo[0] + wrap * ax.n && lo < box.hi[0] + wrap * ax.n) {
            strip_boxes[b].push_back(&box);
            break;
          }
      }
    return columns_segments(launch, event_iteration_cost, [&](int strip, int from, int to, int& lo, int& hi) {
      lo = INT_MAX, hi = INT_MIN;  // the kernel's event rows, as it finds them
      for (const SourceBox* box : strip_boxes[strip]) {
        int first, last;
        rows_of(ay, box->lo[1], box->hi[1], from, to, first, last);
        if (first <= last) lo = std::min(lo, first), hi = std::max(hi, last);
      }
    });
  }
  // An iteration at a source's rows against a steady one: fitted to the
  // fp32 sink (H200, 8352^2, k 8: its blocks at 9 segment counts from 5 to
  // 32 timed, each within 7% of this model at 3; 2 picked 16 segments, 449
  // Gcells/s, 3 picks 14, 503).
  static constexpr double event_iteration_cost = 3.0;

  std::map<std::array<int, 6>, int> segments_;  // fastest_segments by launch shape (steps, slots, window)
  int active_[3] = {0, 0, 0};  // blocks the GPU holds at once, by ColumnEvents
  ColumnsShape shape_{};       // the form's kernels' (plan.hpp)
  // Form::point: the table by classes (its x classes' map), each x class's updates by row.
  UpdateClassTable<2, Real, Eq> classes_;
  DeviceBuffer<UpdateEntry<typename Eq::template Update<Real>>> column_updates_;
  ColumnUpdates<typename Eq::template Update<Real>> point_rows_;
};

}  // namespace

// The kernel object of a columns plan (null, with `reason`, where it cannot run).
template <class Real, class Eq>
std::unique_ptr<ClusterKernel<2, Real>> make_columns_kernel_2d(const Problem& problem, const LocalDomain<2>& domain,
                                                               const ClusterPlan& plan,
                                                               const ClusterMedia<2, Real>& media,
                                                               std::string& reason) {
  return configured<ColumnsKernel2DObject<Real, Eq>>(problem, domain, plan, media, reason);
}

}  // namespace heatwave::cuda
