#pragma once
// Host side: the point form's table of updates by axis classes
// (update_classes.cuh), made once for a kernel object.
#include <algorithm>
#include <array>
#include <vector>

#include "kernels/cuda/update_classes.cuh"
#include "kernels/cuda/check.hpp"
#include "solver/media.hpp"

namespace heatwave::cuda {

// The classes' table of a case (Form::point, UpdateClasses): made once for
// a kernel object, where no coefficient is read from a file and the classes
// fit (x's in max_x_classes, the table in max_entries); else view() has no
// table (`at` null). The maps reach `pad` coordinates past the stored ones
// at both ends, made for those coordinates as stored_coordinate wraps or
// clamps them: a kernel whose points stay within that reach indexes a map by
// the coordinate itself.
template <int D, class Real, class Eq>
class UpdateClassTable {
 public:
  using Update = typename Eq::template Update<Real>;
  void make(const std::array<ClassAxis, D>& axes, const PointUpdates<D, Real, Eq>& point, int pad = 0) {
    constexpr int width = PointUpdates<D, Real, Eq>::contributions;
    constexpr long max_entries = 1L << 20;  // 32 MB of fp32 damped-wave updates
    for (const CoefficientView<Real>& view : point.k)
      if (view.field) return;
    std::array<std::vector<int>, D> cls, reps;  // each mapped coordinate's class; a point of each class
    for (int a = 0; a < D; ++a) {
      const ClassAxis& axis = axes[a];
      const int lo = axis.lo, n = axis.n;
      DeviceBuffer<double> keys;
      keys.allocate(static_cast<std::size_t>(n) * width);
      axis_contributions<D, Real, Eq><<<(n + 255) / 256, 256>>>(keys.get(), point, a, lo, n);
      HW_CUDA(cudaGetLastError());
      std::vector<double> host(static_cast<std::size_t>(n) * width);
      HW_CUDA(cudaMemcpy(host.data(), keys.get(), host.size() * sizeof(double), cudaMemcpyDeviceToHost));
      const AxisClasses found = axis_classes(host, width, lo);
      for (long c : found.first) reps[a].push_back(static_cast<int>(c));
      classes_.lo[a] = lo - pad;
      for (int c = lo - pad; c < lo + n + pad; ++c) {  // as stored_coordinate
        const int stored = axis.periodic ? ((c % n) + n) % n : std::clamp(c, lo, lo + n - 1);
        cls[a].push_back(found.of[stored - lo]);
      }
    }
    const long nx = static_cast<long>(reps[0].size()), ny = static_cast<long>(reps[1].size());
    const long entries = nx * ny * (D == 3 ? static_cast<long>(reps[D - 1].size()) : 1L);
    if (nx > UpdateClasses<Update>::max_x_classes || entries > max_entries) return;
    for (int& c : cls[1]) c = static_cast<int>(c * nx);
    if constexpr (D == 3)
      for (int& c : cls[2]) c = static_cast<int>(c * nx * ny);
    for (int a = 0; a < D; ++a) {
      maps_[a].allocate(cls[a].size());
      reps_[a].allocate(reps[a].size());
      HW_CUDA(cudaMemcpy(maps_[a].get(), cls[a].data(), cls[a].size() * sizeof(int), cudaMemcpyHostToDevice));
      HW_CUDA(cudaMemcpy(reps_[a].get(), reps[a].data(), reps[a].size() * sizeof(int), cudaMemcpyHostToDevice));
    }
    table_.allocate(static_cast<std::size_t>(entries));
    const long blocks = std::min<long>((entries + 255) / 256, 4096);
    make_update_classes<D, Real, Eq><<<static_cast<unsigned>(blocks), 256>>>(
        table_.get(), point, reps_[0].get(), reps_[1].get(), reps_[D - 1].get(), static_cast<int>(nx),
        static_cast<int>(ny), entries);
    HW_CUDA(cudaGetLastError());
    HW_CUDA(cudaDeviceSynchronize());
    classes_.at = table_.get();
    classes_.x_class = maps_[0].get(), classes_.y_offset = maps_[1].get();
    if constexpr (D == 3) classes_.z_offset = maps_[2].get();
    for (int a = 0; a < D; ++a)
      count_[a] = static_cast<int>(reps[a].size()), mapped_[a] = static_cast<int>(cls[a].size());
  }
  const UpdateClasses<Update>& view() const { return classes_; }
  // Along `axis`: the classes, and the coordinates its map covers (from view().lo[axis]).
  int count(int axis) const { return count_[axis]; }
  int mapped(int axis) const { return mapped_[axis]; }

 private:
  DeviceBuffer<UpdateEntry<Update>> table_;
  std::array<DeviceBuffer<int>, D> maps_, reps_;
  UpdateClasses<Update> classes_;
  int count_[D] = {}, mapped_[D] = {};
};

}  // namespace heatwave::cuda
