#pragma once
// The point form's updates by axis classes (the waves' c and gamma,
// absorbing profiles), for the kernels that take them: the one-step kernel's
// ClassOp (step_kernel.cuh) and cuda-cluster's 3D pipeline and deep family
// (kernel_3d_forms.cuh) and 2D columns family. Device code; the kernel
// objects make the table (update_class_table.cuh).
#include <cuda_runtime.h>

#include "solver/media_views.hpp"

namespace heatwave::cuda {

// An axis as the table maps it: the coordinates [lo, lo + n) that hold data
// (a periodic axis: all its n points, from 0).
struct ClassAxis {
  int lo = 0, n = 0;
  bool periodic = false;
};

// Form::point where no coefficient is read from a file: the update at a
// point is a function of what each axis contributes there (a layer's value
// along its axis, an absorbing profile's value), so points group into
// classes along each axis (the interior one class, each point of an
// absorbing layer its own, each layer one) and the updates into a table by
// (z class, y class, x class), made once for the kernel object (the seismic
// shot's: at most 49 x 49 x 27 entries, 2 MB). A point looks its update up
// there, a load a point: where neighbouring points share an x class (all
// but those in an x absorbing layer) the same entry, an L1 hit. This
// replaces the coefficient views' 4-7 dependent loads and the update's
// double arithmetic a point, which made the points of an x absorbing layer
// 8x the others' cost and held their blocks' barriers (docs/performance.md).
// An entry is padded to 16 bytes: the factors a step takes (the update's
// first fields) come in one vector load.
template <class Update>
struct alignas(16) UpdateEntry {
  Update update;
};
template <class Update>
struct UpdateClasses {
  // [z_offset[gz - lo[2]] + y_offset[gy - lo[1]] + x_class[gx - lo[0]]] (2D: no z)
  const UpdateEntry<Update>* at = nullptr;
  const int* x_class = nullptr;
  const int* y_offset = nullptr;             // y's class * x classes
  const int* z_offset = nullptr;             // z's class * y classes * x classes
  int lo[3] = {0, 0, 0};                     // the first coordinate each map covers along each axis
  static constexpr int max_x_classes = 256;  // a 3D pack's x classes are a byte each
};
// The table's entry (xc, yc[, zc]): the update at a point of each class (`rep`: one point a class).
template <int D, class Real, class Eq>
__global__ void __launch_bounds__(256)
    make_update_classes(UpdateEntry<typename Eq::template Update<Real>>* table, const PointUpdates<D, Real, Eq> updates,
                        const int* x_rep, const int* y_rep, const int* z_rep, int nx, int ny, long entries) {
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < entries;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    Index<D> i;
    i[0] = x_rep[k % nx], i[1] = y_rep[k / nx % ny];
    if constexpr (D == 3) i[2] = z_rep[k / (static_cast<long>(nx) * ny)];
    table[k].update = updates.at(updates.row(i), 0, i[0]);
  }
}
// What each stored coordinate lo + k of an axis contributes to the
// coefficients (PointUpdates::axis_contributions): the keys of its class.
template <int D, class Real, class Eq>
__global__ void __launch_bounds__(256)
    axis_contributions(double* keys, const PointUpdates<D, Real, Eq> updates, int axis, int lo, int n) {
  constexpr int width = PointUpdates<D, Real, Eq>::contributions;
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x)
    updates.axis_contributions(axis, lo + k, keys + static_cast<long>(k) * width);
}

}  // namespace heatwave::cuda
