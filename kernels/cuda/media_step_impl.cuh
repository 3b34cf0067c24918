// The step where coefficients vary in space or sources are given.
//
// The streaming kernel of step_kernel.cuh with the operator and update as
// the config defines them (solver/media.hpp): a wave's update at each point
// from the table of updates by axis classes where c and gamma come from
// layers and absorbing profiles (ClassOp), built from its c and gamma where
// one is a file's field (PointOp), the heat's flux form with K from alpha
// where it is used (FluxOp). Then each source, in config order, adds f(t_n) q at the points it
// touches (a launch over its points; a point source's are 2^D). The same
// expressions as the host backend's, so the fields are bitwise the host's.
// Only a coefficient or source read from a file is a field on the device.
// Included by the units CMakeLists.txt generates from media_step.cu.in, a
// dimension and precision each.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <map>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/media_step.cuh"
#include "kernels/cuda/step_kernel.cuh"
#include "kernels/cuda/update_class_table.cuh"

namespace heatwave::cuda {

namespace {

// One source's f(t_n) q at the points it touches inside `box`, added by the
// point's Update::force (threads along x, blocks along y and z, strided).
template <int D, class Real, class Eq>
__global__ void __launch_bounds__(256)
    source_kernel(Real* __restrict__ out, const SourceView<D, Real> s, const PointUpdates<D, Real, Eq> updates,
                  const Real f, const Box<D> box, const Layout<D> layout, const bool start) {
  const long k0 = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (k0 >= s.count[0]) return;
  const long z_count = D == 3 ? s.count[D - 1] : 1;
  for (long k2 = D == 3 ? blockIdx.z : 0; k2 < z_count; k2 += gridDim.z)
    for (long k1 = blockIdx.y; k1 < s.count[1]; k1 += gridDim.y) {
      Index<D> i;
      long k[D];
      k[0] = k0, k[1] = k1;
      if constexpr (D == 3) k[2] = k2;
      for (int a = 0; a < D; ++a) i[a] = s.index[a][k[a]];
      const Real q = s.at(k);
      bool inside = q != 0;
      for (int a = 0; a < D; ++a) inside = inside && i[a] >= box.lo[a] && i[a] < box.hi[a];
      if (!inside) continue;
      const long p = layout.offset(i);
      out[p] = updates.at(p, i).force(out[p], fused(f, q, Real(0)), start);
    }
}

// The pair coefficients as dense fields over the storage box (cuda-cluster's tiles).
template <int D, int R, class Real>
__global__ void __launch_bounds__(256)
    fill_pairs_kernel(Real* const* __restrict__ fields, const FluxPairs<D, R, Real> pairs, const Box<D> box,
                      const Layout<D> layout) {
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < box.size();
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const Index<D> i = box_point(box, k);
    const long p = layout.offset(i);
    for (int a = 0; a < D; ++a) {
      // A pair whose far point is past the storage box has no value.
      const bool inside = i[a] + 1 < box.hi[a];
      for (int j = 1; j <= R; ++j)
        fields[a * R + j - 1][p] = inside && i[a] + j < box.hi[a] ? pairs.pair(a, j, p, component(i, pairs.axis)) : Real(NAN);
    }
  }
}

// Device copies of the Media vectors a view points at, made once.
class DeviceCopies {
 public:
  template <class T>
  const T* operator()(const std::vector<T>& host) {
    if (host.empty()) return nullptr;
    auto [it, fresh] = copies_.try_emplace(host.data());
    if (fresh) {
      it->second.allocate(host.size() * sizeof(T));
      HW_CUDA(cudaMemcpy(it->second.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    }
    return reinterpret_cast<const T*>(it->second.get());
  }
 private:
  std::map<const void*, DeviceBuffer<unsigned char>> copies_;
};

template <int D, class Real, class Eq>
class MediaStepKernel final : public StepKernel<D, Real> {
 public:
  MediaStepKernel(const Problem& problem, const LocalDomain<D>& domain)
      : problem_(problem), layout_(domain.layout), shape_(launch_shape<D>(Eq::levels)) {
    // No prefetch: a point's own update takes the registers prefetching
    // would (H100, 3D wave 801x801x401 fp32: the shot 101 -> 125 Gcells/s,
    // layers 151 -> 173 without it); the kernels are built for none.
    shape_.prefetch = 0;
    const auto media = Media<D, Real, Eq>::make(problem, domain);
    varies_ = media.pointwise || media.flux_form();
    pointwise_ = media.pointwise;
    if (!varies_) plain_ = make_plain_step_kernel<D, Real>(problem, domain);
    updates_ = media.updates(copies_);
    if constexpr (Eq::flux_coefficient == nullptr)
      if (media.pointwise) {  // the table by classes, unless a coefficient is a file's (then PointOp)
        const Box<D> stored = layout_.storage_box();
        std::array<ClassAxis, D> axes;
        for (int a = 0; a < D; ++a)
          axes[a] = {static_cast<int>(stored.lo[a]), static_cast<int>(stored.extent(a)), false};
        classes_.make(axes, updates_, Pack<Real>::width);
      }
    kinetic_ = media.kinetic_weight(copies_);
    with_radius(problem.radius, [&]<int R>() {
      std::get<R - 1>(pairs_) = media.template pairs<R>(problem.spacing, layout_.strides(), copies_);
    });
    flux_ = media.flux_form();
    for (std::size_t t = 0; t < media.sources.size(); ++t) sources_.push_back(media.source(t, copies_));
    times_ = media.times();
    listed_ = std::none_of(problem.sources.begin(), problem.sources.end(),
                           [](const Source& s) { return s.type == SourceType::field; });
    if (listed_) source_terms_ = media.sources;
  }

  void launch(const Real* u, Real* u_next, const Box<D>& box, long step, cudaStream_t stream) const override {
    if (box.empty()) return;
    const bool start = Eq::levels == 2 && step == 0;
    if (plain_) {
      plain_->launch(u, u_next, box, step, stream);
    } else {
      with_radius(problem_.radius, [&]<int R>() {
        if constexpr (Eq::flux_coefficient != nullptr) {
          const FluxOp<D, R, Real, Eq> op{pairs<R>(), updates_.uniform};
          launch_step<D, R, Real, Eq, 0>(op, shape_, u, u_next, box, start, layout_, stream);
        } else {
          const auto lap = LaplacianWeights<D, R, Real>::make(problem_.spacing, layout_.strides());
          if (classes_.view().at)
            launch_step<D, R, Real, Eq, 0>(ClassOp<D, R, Real, Eq>{lap, classes_.view()}, shape_, u, u_next, box,
                                           start, layout_, stream);
          else
            launch_step<D, R, Real, Eq, 0>(PointOp<D, R, Real, Eq>{lap, updates_}, shape_, u, u_next, box, start,
                                           layout_, stream);
        }
      });
    }
    const std::vector<Real> f = source_factors<Real>(times_, problem_.time_at(step));
    const auto capped = [](long n) { return static_cast<unsigned>(std::min(std::max(n, 1L), 65535L)); };
    for (std::size_t t = 0; t < sources_.size(); ++t) {
      const SourceView<D, Real>& s = sources_[t];
      const dim3 blocks(static_cast<unsigned>((s.count[0] + 255) / 256), capped(s.count[1]),
                        D == 3 ? capped(s.count[D - 1]) : 1u);
      if (s.count[0] == 0) continue;
      source_kernel<D, Real, Eq><<<blocks, 256, 0, stream>>>(u_next, s, updates_, f[t], box, layout_, start);
      HW_CUDA(cudaGetLastError());
    }
  }

  KineticWeight<Real> kinetic_weight() const override { return kinetic_; }
  const void* point_updates() const override { return pointwise_ ? &updates_ : nullptr; }
  bool source_terms(std::vector<SourceTerm<D, Real>>& terms, std::vector<TimeFunction>& times) const override {
    terms = source_terms_, times = times_;
    return listed_;
  }

  const void* flux_view() const override {
    if (!flux_) return nullptr;
    return with_radius(problem_.radius, [&]<int R>() { return static_cast<const void*>(&pairs<R>()); });
  }
  std::vector<const Real*> flux_pairs() const override {
    if (!flux_) return {};
    if (pair_fields_.empty())
      with_radius(problem_.radius, [&]<int R>() {
        std::vector<Real*> fields;
        for (int n = 0; n < D * R; ++n) {
          pair_fields_.emplace_back();
          pair_fields_.back().allocate(layout_.storage_size());
          fields.push_back(pair_fields_.back().get());
        }
        DeviceBuffer<Real*> table;
        table.allocate(fields.size());
        HW_CUDA(cudaMemcpy(table.get(), fields.data(), fields.size() * sizeof(Real*), cudaMemcpyHostToDevice));
        const Box<D> box = layout_.storage_box();
        const long blocks = std::min<long>((box.size() + 255) / 256, 4096);
        fill_pairs_kernel<D, R, Real><<<static_cast<unsigned>(blocks), 256>>>(table.get(), pairs<R>(), box, layout_);
        HW_CUDA(cudaGetLastError());
        HW_CUDA(cudaDeviceSynchronize());
      });
    std::vector<const Real*> out;
    for (const auto& field : pair_fields_) out.push_back(field.get());
    return out;
  }

 private:
  template <int R>
  const FluxPairs<D, R, Real>& pairs() const {
    return std::get<R - 1>(pairs_);
  }

  Problem problem_;
  Layout<D> layout_;
  LaunchShape shape_;
  DeviceCopies copies_;
  bool varies_ = false, flux_ = false, pointwise_ = false;
  std::unique_ptr<StepKernel<D, Real>> plain_;  // the coefficients are constant: sources only
  PointUpdates<D, Real, Eq> updates_;
  UpdateClassTable<D, Real, Eq> classes_;  // the waves' updates by classes, where no coefficient is a file's
  KineticWeight<Real> kinetic_;
  template <int R>
  using Pairs = FluxPairs<D, R, Real>;
  typename PerRadius<Pairs>::type pairs_;  // the run's radius'
  std::vector<SourceView<D, Real>> sources_;
  std::vector<TimeFunction> times_;
  // The sources' points and q for cuda-cluster, where none is a field.
  std::vector<SourceTerm<D, Real>> source_terms_;
  bool listed_ = true;
  mutable std::vector<DeviceBuffer<Real>> pair_fields_;
};

}  // namespace

template <int D, class Real>
std::unique_ptr<StepKernel<D, Real>> make_media_step_kernel(const Problem& problem, const LocalDomain<D>& domain) {
  return with_equation(problem.equation, [&]<class Eq>() -> std::unique_ptr<StepKernel<D, Real>> {
    return std::make_unique<MediaStepKernel<D, Real, Eq>>(problem, domain);
  });
}

}  // namespace heatwave::cuda
