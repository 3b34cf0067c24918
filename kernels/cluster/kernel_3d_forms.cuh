#pragma once
// cuda-cluster, 3D: how the kernel of kernel_3d_pipeline.cuh takes what varies in
// space. The point form's updates (the waves' c and gamma, absorbing
// profiles): the table of the updates by axis classes, made once for the
// kernel object, and a thread's pack column's updates plane by plane.
// CUDA-only: included by kernel_3d_pipeline.cuh (and so by the deep family's).
#include <array>
#include <vector>

#include "kernels/cluster/common.cuh"

namespace heatwave::cuda {

// Form::point where no coefficient is read from a file: the update at a
// point is a function of what each axis contributes there (a layer's value
// along its axis, an absorbing profile's value), so points group into
// classes along each axis (the interior one class, each point of an
// absorbing layer its own, each layer one) and the updates into a table by
// (z class, y class, x class), made once for the kernel object (the seismic
// shot's: at most 49 x 49 x 27 entries, 2 MB). A pack looks its points'
// updates up there, a load a point and plane: where they share an x class
// (all but the packs in an x absorbing layer) the same entry, an L1 hit.
// This replaces the coefficient views' 4-7 dependent loads and the update's
// double arithmetic a point, which made the packs of an x absorbing layer
// 8x the others' cost and held their blocks' barriers (docs/performance.md).
// An entry is padded to 16 bytes: the factors a step takes (the update's
// first fields) come in one vector load.
template <class Update>
struct alignas(16) UpdateEntry {
  Update update;
};
template <class Update>
struct UpdateClasses3D {
  const UpdateEntry<Update>* at = nullptr;  // [z_offset[gz - lo[2]] + y_offset[gy - lo[1]] + x_class[gx - lo[0]]]
  const int* x_class = nullptr;
  const int* y_offset = nullptr;  // y's class * x classes
  const int* z_offset = nullptr;  // z's class * y classes * x classes
  int lo[3] = {0, 0, 0};          // the stored coordinates' first along each axis
  static constexpr int max_x_classes = 256;  // a pack's x classes are a byte each
};
// The table's entry (xc, yc, zc): the update at a point of each class (`rep`: one point a class).
template <class Real, class Eq>
__global__ void __launch_bounds__(256)
    make_update_classes_3d(UpdateEntry<typename Eq::template Update<Real>>* table,
                           const PointUpdates<3, Real, Eq> updates, const int* x_rep, const int* y_rep,
                           const int* z_rep, int nx, int ny, long entries) {
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < entries;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const long x = x_rep[k % nx], y = y_rep[k / nx % ny], z = z_rep[k / (static_cast<long>(nx) * ny)];
    table[k].update = updates.at(updates.row(Index<3>{x, y, z}), 0, x);
  }
}
// What each stored coordinate lo + k of an axis contributes to the
// coefficients (PointUpdates::axis_contributions): the keys of its class.
template <class Real, class Eq>
__global__ void __launch_bounds__(256)
    axis_contributions_3d(double* keys, const PointUpdates<3, Real, Eq> updates, int axis, int lo, int n) {
  constexpr int width = PointUpdates<3, Real, Eq>::contributions;
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x)
    updates.axis_contributions(axis, lo + k, keys + static_cast<long>(k) * width);
}

// The classes' table of a case (Form::point, UpdateClasses3D): made once for
// a kernel object (the pipeline's and the deep family's), where no
// coefficient is read from a file and the classes fit (x's in a byte, the
// table in max_entries); else view() has no table (`at` null) and the
// kernels make each point's update from the coefficient views.
template <class Real, class Eq>
class UpdateClassTable3D {
 public:
  using Update = typename Eq::template Update<Real>;
  void make(const ClusterGeometry<3>& geo, const PointUpdates<3, Real, Eq>& point) {
    constexpr int width = PointUpdates<3, Real, Eq>::contributions;
    constexpr long max_entries = 1L << 20;  // 32 MB of fp32 damped-wave updates
    for (const CoefficientView<Real>& view : point.k)
      if (view.field) return;
    std::array<std::vector<int>, 3> cls, reps;  // each stored coordinate's class; a point of each class
    for (int a = 0; a < 3; ++a) {
      const ClusterAxis& axis = geo.axis[a];
      classes_.lo[a] = axis.periodic ? 0 : axis.load_lo;
      const int n = (axis.periodic ? axis.n : axis.load_hi) - classes_.lo[a];
      DeviceBuffer<double> keys;
      keys.allocate(static_cast<std::size_t>(n) * width);
      axis_contributions_3d<Real, Eq><<<(n + 255) / 256, 256>>>(keys.get(), point, a, classes_.lo[a], n);
      HW_CUDA(cudaGetLastError());
      std::vector<double> host(static_cast<std::size_t>(n) * width);
      HW_CUDA(cudaMemcpy(host.data(), keys.get(), host.size() * sizeof(double), cudaMemcpyDeviceToHost));
      const AxisClasses found = axis_classes(host, width, classes_.lo[a]);
      cls[a] = found.of;
      for (long c : found.first) reps[a].push_back(static_cast<int>(c));
    }
    const long nx = static_cast<long>(reps[0].size()), ny = static_cast<long>(reps[1].size());
    const long entries = nx * ny * static_cast<long>(reps[2].size());
    if (nx > UpdateClasses3D<Update>::max_x_classes || entries > max_entries) return;
    for (int& c : cls[1]) c = static_cast<int>(c * nx);
    for (int& c : cls[2]) c = static_cast<int>(c * nx * ny);
    for (int a = 0; a < 3; ++a) {
      maps_[a].allocate(cls[a].size());
      reps_[a].allocate(reps[a].size());
      HW_CUDA(cudaMemcpy(maps_[a].get(), cls[a].data(), cls[a].size() * sizeof(int), cudaMemcpyHostToDevice));
      HW_CUDA(cudaMemcpy(reps_[a].get(), reps[a].data(), reps[a].size() * sizeof(int), cudaMemcpyHostToDevice));
    }
    table_.allocate(static_cast<std::size_t>(entries));
    const long blocks = std::min<long>((entries + 255) / 256, 4096);
    make_update_classes_3d<Real, Eq>
        <<<static_cast<unsigned>(blocks), 256>>>(table_.get(), point, reps_[0].get(), reps_[1].get(), reps_[2].get(),
                                                 static_cast<int>(nx), static_cast<int>(ny), entries);
    HW_CUDA(cudaGetLastError());
    HW_CUDA(cudaDeviceSynchronize());
    classes_.at = table_.get();
    classes_.x_class = maps_[0].get(), classes_.y_offset = maps_[1].get();
    classes_.z_offset = maps_[2].get();
  }
  const UpdateClasses3D<Update>& view() const { return classes_; }

 private:
  DeviceBuffer<UpdateEntry<Update>> table_;
  std::array<DeviceBuffer<int>, 3> maps_, reps_;
  UpdateClasses3D<Update> classes_;
};

// Form::point: a thread's pack column (x, y fixed for the sweep), its
// updates plane by plane: from the classes' table where there is one, else
// (a coefficient from a file) each point's from the coefficient views.
// Coordinates past the stored points are wrapped or clamped (stored_coordinate).
template <class Real, class Eq>
struct PointColumn3D {
  using Update = typename Eq::template Update<Real>;
  using Updates = PointUpdates<3, Real, Eq>;
  using Classes = UpdateClasses3D<Update>;
  static constexpr int V = Pack<Real>::width;
  // With the table (else null): its entries for the column's y, the lanes' x classes (a byte each).
  const UpdateEntry<Update>* row = nullptr;
  unsigned x_classes = 0;
  bool x_same = true;  // the lanes share their x class
  PointColumn3D() = default;
  __device__ PointColumn3D(const Classes& table, const ClusterGeometry<3>& geo, int x, int y) {
    if (!table.at) return;
    row = table.at + table.y_offset[stored_coordinate(geo.axis[1], y) - table.lo[1]];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const unsigned c = table.x_class[stored_coordinate(geo.axis[0], x + v) - table.lo[0]];
      x_classes |= c << (8 * v);
      x_same = x_same && c == (x_classes & 255u);
    }
  }
  // Plane p's part of the points' updates.
  struct Plane {
    const UpdateEntry<Update>* entries;  // the table's for (p, y)
    Update first;                        // lane 0's
    typename Updates::Row row;           // no table: the row's views
    long offset;                         // no table: the global offset of the plane's point x = 0
  };
  template <bool Table>
  __device__ Plane plane(const Updates& updates, const Classes& table, const ClusterGeometry<3>& geo, int y,
                         int p) const {
    Plane q;
    const int gz = stored_coordinate(geo.axis[2], p);
    if (Table || row) {
      q.entries = row + table.z_offset[gz - table.lo[2]];
      q.first = q.entries[x_classes & 255u].update;
      return q;
    }
    const int gy = stored_coordinate(geo.axis[1], y);
    q.row = updates.row(Index<3>{0, gy, gz});
    q.offset = geo.lead + (gy + geo.halo) * geo.stride[1] + (gz + geo.halo) * geo.stride[2];
    return q;
  }
  // The update of lane v's point (x: the pack's first). Same: the lanes
  // share their x class (the steady path's own code for such packs).
  template <bool Table, bool Same = false>
  __device__ Update at(const Updates& updates, const ClusterGeometry<3>& geo, const Plane& q, int x, int v) const {
    // Steady: lane 0's entry where the lanes share it, else a load a lane
    // (choosing lane 0's entry by x_same at run time costs selects in every
    // pack: the shot 3% slower).
    if (Table) return v == 0 || Same ? q.first : q.entries[x_classes >> (8 * v) & 255u].update;
    if (row) return v == 0 || x_same ? q.first : q.entries[x_classes >> (8 * v) & 255u].update;
    const int gx = stored_coordinate(geo.axis[0], x + v);
    return updates.at(q.row, q.offset + gx, gx);
  }
};

}  // namespace heatwave::cuda
