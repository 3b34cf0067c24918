#pragma once
// What the GPU backends (cuda, cuda-cluster) share: the fields in device
// memory on one stream, and the work on them that is not a time step: initial
// values, ghost fills of physical faces, boxes to and from buffers (halos,
// I/O), diagnostics, CUDA-event timers. CUDA-only: include from .cu files.
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/pack.cuh"
#include "solver/backend.hpp"
#include "solver/initial.hpp"
#include "solver/media.hpp"

namespace heatwave::cuda {

template <int D, class Real>
class DeviceFields {
 public:
  // Rows are padded for 16-byte packs (Layout::align); u and u_next start poisoned.
  DeviceFields(const Problem& problem, const LocalDomain<D>& domain);
  ~DeviceFields();
  DeviceFields(const DeviceFields&) = delete;
  DeviceFields& operator=(const DeviceFields&) = delete;

  const LocalDomain<D>& domain() const { return domain_; }
  cudaStream_t stream() const { return stream_; }

  // A field of the domain's storage size, poisoned (all bits set is a NaN: a
  // read of a point nobody wrote shows up).
  void allocate_poisoned(DeviceBuffer<Real>& field) const;
  void set_initial(Real* field, const InitialSpec& spec);
  // Ghost layers and Dirichlet face points of every physical face, as the
  // host backend fills them axis by axis (so ghost corners come out alike),
  // in one launch (`also`: of a second field too; a launch a face cost a
  // short chunk more than its stencil: docs/performance.md). With a
  // `window`, only ghosts within it along the other axes (a part of the
  // field other work on `stream` leaves alone). Ghosts::step_reads: only
  // those the next step reads (GhostFaces::only_step_reads; both fields must
  // hold g at their Dirichlet face points).
  enum class Ghosts { all, step_reads };
  void fill_ghosts(Real* field, cudaStream_t stream = nullptr, const Box<D>* window = nullptr,
                   Ghosts which = Ghosts::all);
  void fill_ghosts(Real* field, Real* also, cudaStream_t stream = nullptr, const Box<D>* window = nullptr,
                   Ghosts which = Ghosts::all);
  // The owned box of a field to or from host memory; waits for the copy.
  void read(const Real* field, Real* host);
  void write(Real* field, const Real* host);
  // A field's values at layout offsets into host memory; waits.
  void gather(const Real* field, const std::vector<long>& offsets, Real* host);
  // A box to or from a contiguous device buffer, queued on the stream.
  void pack(const Real* field, const Box<D>& box, Real* buffer);
  void unpack(Real* field, const Box<D>& box, const Real* buffer);
  // Diagnostics of u (the energy terms from u_prev where `energy`); waits.
  // kinetic_weight: the wave energy's weight a point where c varies (1 elsewhere).
  LocalStats stats(const Real* u, const Real* u_prev, bool energy, double c2,
                   const KineticWeight<Real>& kinetic_weight = {});

  void synchronize() { HW_CUDA(cudaStreamSynchronize(stream_)); }
  void start_timer() { HW_CUDA(cudaEventRecord(start_, stream_)); }
  double stop_timer();

  // u^n, and the buffer a step writes u^{n+1} into; an equation second order
  // in time keeps u^{n-1} there between steps (the leapfrog reads it at the
  // point it overwrites).
  DeviceBuffer<Real> u, u_next;

 private:
  template <int R>
  LocalStats stats_radius(const Real* u, const Real* u_prev, bool energy, double c2,
                          const KineticWeight<Real>& kinetic_weight);

  Problem problem_;
  LocalDomain<D> domain_;
  DeviceBuffer<Real> staging_;
  DeviceBuffer<long> gather_offsets_;  // gather(): the last offsets, kept while they do not change
  std::vector<long> gathered_;
  DeviceBuffer<Real> gather_values_;
  DeviceBuffer<double> partials_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Blocks for a grid-stride loop over n items.
inline int grid_for(long n, int threads) {
  return static_cast<int>(std::min<long>((n + threads - 1) / threads, 65536L));
}

}  // namespace heatwave::cuda
