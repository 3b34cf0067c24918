#pragma once
// cuda-cluster, 3D: how the kernel of kernel_3d_pipeline.cuh takes what varies in
// space. The point form's updates (the waves' c and gamma, absorbing
// profiles): a thread's pack column's updates plane by plane, from the
// table by axis classes (update_classes.cuh).
// CUDA-only: included by kernel_3d_pipeline.cuh (and so by the deep family's).
#include "kernels/cuda/update_classes.cuh"

namespace heatwave::cuda {

// Form::point: a thread's pack column (x, y fixed for the sweep), its
// updates plane by plane: from the classes' table where there is one, else
// (a coefficient from a file) each point's from the coefficient views.
// Coordinates past the stored points are wrapped or clamped (stored_coordinate).
template <class Real, class Eq>
struct PointColumn3D {
  using Update = typename Eq::template Update<Real>;
  using Updates = PointUpdates<3, Real, Eq>;
  using Classes = UpdateClasses<Update>;
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
