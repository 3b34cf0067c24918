#include "kernels/cuda/device_fields.cuh"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/dispatch.hpp"
#include "kernels/cuda/dependent_launch.cuh"
#include "solver/ghost_faces.hpp"
#include "solver/stencil.hpp"

namespace heatwave::cuda {

namespace {

// The ghosts of every physical face of one or two fields (blockIdx.y: the
// face, then the field), as the axis-by-axis fills leave them
// (GhostFaces::ghost). A thread a point of a face's written box, x fastest (whole rows
// of the y and z faces; the layers of a row side by side on the x faces:
// the fewest sectors a warp), found by 32-bit divisions (a 64-bit one costs
// tens of instructions).
template <int D, class Real>
__global__ void ghost_kernel(Real* first, Real* second, const Layout<D> layout, const GhostFaces<D> faces) {
  follow_previous_kernel();
  const int f = blockIdx.y % faces.count;
  Real* u = blockIdx.y < faces.count ? first : second;
  const Box<D> box = faces.written[f];
  const unsigned e0 = static_cast<unsigned>(box.extent(0)), e1 = static_cast<unsigned>(box.extent(1));
  const unsigned n = static_cast<unsigned>(box.size());
  for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) {
    Index<D> i;
    i[0] = box.lo[0] + k % e0;
    if constexpr (D == 2) i[1] = box.lo[1] + k / e0;
    if constexpr (D == 3) i[1] = box.lo[1] + k / e0 % e1, i[2] = box.lo[2] + k / e0 / e1;
    Real value;
    if (faces.ghost(
            f, i, [&](const Index<D>& src) { return u[layout.offset(src)]; }, value))
      u[layout.offset(i)] = value;
  }
}

template <int D, class Real>
__global__ void initial_kernel(Real* u, const Layout<D> layout, const Index<D> offset, const InitialSpec spec) {
  const Box<D> box = layout.owned_box();
  const long n = box.size();
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const Index<D> i = box_point(box, k);
    long g[max_dims] = {0, 0, 0};
#pragma unroll
    for (int a = 0; a < D; ++a) g[a] = i[a] + offset[a];
    u[layout.offset(i)] = static_cast<Real>(initial_value(spec, g));
  }
}

// Box <-> contiguous buffer, x fastest (halo faces, I/O).
template <int D, class Real, bool ToBuffer>
__global__ void copy_box_kernel(Real* u, const Layout<D> layout, const Box<D> box, Real* buffer) {
  const long n = box.size();
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const long p = layout.offset(box_point(box, k));
    if constexpr (ToBuffer)
      buffer[k] = u[p];
    else
      u[p] = buffer[k];
  }
}

// Diagnostics: per-block partial sums in double, reduced on the host in block
// order (deterministic). Slots: min, max, weight, sum, squares, kinetic,
// potential, non-finite count.
constexpr int stats_slots = 8;
constexpr int stats_threads = 256;

template <int D, int R, class Real>
__global__ void __launch_bounds__(stats_threads)
    stats_kernel(const Real* u, const Real* prev, const LaplacianWeights<D, R, Real> lap, const LocalDomain<D> domain,
                 const Box<D> updated, const double dt, const double c2, const bool energy,
                 const KineticWeight<Real> kinetic_weight, double* partials) {
  const Box<D> owned = domain.layout.owned_box();
  const long n = owned.size();
  double v_min = INFINITY, v_max = -INFINITY, w_sum = 0, sum = 0, sq = 0, kin = 0, pot = 0, bad = 0;
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const Index<D> i = box_point(owned, k);
    const long p = domain.layout.offset(i);
    const double v = u[p];
    if (!isfinite(v)) {
      bad += 1;
      continue;
    }
    double w = 1;
    bool in_updated = true;
#pragma unroll
    for (int a = 0; a < D; ++a) {
      w *= domain.weight(a, i[a]);
      in_updated = in_updated && i[a] >= updated.lo[a] && i[a] < updated.hi[a];
    }
    v_min = fmin(v_min, v), v_max = fmax(v_max, v);
    w_sum += w, sum += w * v, sq += w * v * v;
    if (energy && in_updated) {
      const double du = (v - prev[p]) / dt;
      kin += w * du * du * kinetic_weight.at(p, i);
      pot -= w * c2 * prev[p] * static_cast<double>(lap(u, p));
    }
  }
  double vals[stats_slots] = {v_min, v_max, w_sum, sum, sq, kin, pot, bad};
  __shared__ double shared[stats_slots][stats_threads / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int s = 0; s < stats_slots; ++s) {
    double x = vals[s];
    for (int off = 16; off > 0; off /= 2) {
      const double y = __shfl_down_sync(0xffffffffu, x, off);
      x = s == 0 ? fmin(x, y) : s == 1 ? fmax(x, y) : x + y;
    }
    if (lane == 0) shared[s][warp] = x;
  }
  __syncthreads();
  if (threadIdx.x < stats_slots) {
    const int s = threadIdx.x;
    double x = shared[s][0];
    for (int w = 1; w < stats_threads / 32; ++w)
      x = s == 0 ? fmin(x, shared[s][w]) : s == 1 ? fmax(x, shared[s][w]) : x + shared[s][w];
    partials[blockIdx.x * stats_slots + s] = x;
  }
}

}  // namespace

template <int D, class Real>
DeviceFields<D, Real>::DeviceFields(const Problem& problem, const LocalDomain<D>& domain)
    : problem_(problem), domain_(domain) {
  domain_.layout.align = Pack<Real>::width;  // rows padded for 16-byte packs
  // The greatest priority: halo packs and unpacks, and a split chunk's
  // boundary work, are the critical path; a cluster backend's inner launch
  // (a stream of its own) fills the SMs around them.
  HW_CUDA(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest_stream_priority()));
  HW_CUDA(cudaEventCreate(&start_));
  HW_CUDA(cudaEventCreate(&stop_));
  allocate_poisoned(u);
  allocate_poisoned(u_next);
}

template <int D, class Real>
DeviceFields<D, Real>::~DeviceFields() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaStreamDestroy(stream_);
}

template <int D, class Real>
void DeviceFields<D, Real>::allocate_poisoned(DeviceBuffer<Real>& field) const {
  const std::size_t n = domain_.layout.storage_size();
  field.allocate(n);
  // On the fields' stream: a non-blocking stream is not ordered after the
  // legacy default stream, so a plain cudaMemset could land after the
  // initial values (it did, at random, once the stream ran at high priority).
  HW_CUDA(cudaMemsetAsync(field.get(), 0xff, n * sizeof(Real), stream_));
}

template <int D, class Real>
void DeviceFields<D, Real>::set_initial(Real* field, const InitialSpec& spec) {
  initial_kernel<D, Real><<<grid_for(domain_.layout.owned_box().size(), 256), 256, 0, stream_>>>(field, domain_.layout,
                                                                                                 domain_.offset, spec);
  HW_CUDA(cudaGetLastError());
}

template <int D, class Real>
void DeviceFields<D, Real>::fill_ghosts(Real* field, cudaStream_t stream, const Box<D>* window, Ghosts which) {
  fill_ghosts(field, nullptr, stream, window, which);
}

template <int D, class Real>
void DeviceFields<D, Real>::fill_ghosts(Real* field, Real* also, cudaStream_t stream, const Box<D>* window,
                                        Ghosts which) {
  if (!stream) stream = stream_;
  GhostFaces<D> faces(domain_, problem_.radius, window);
  if (which == Ghosts::step_reads) faces.only_step_reads(domain_, problem_.radius);
  const long largest = faces.largest();
  if (largest == 0) return;
  if (largest > std::numeric_limits<int>::max())  // the kernel counts a face's points in 32 bits
    throw Error(ExitCode::invalid_value, "a ghost face of " + std::to_string(largest) +
                                             " points: the GPU backends fill at most 2^31 - 1 a face");
  const dim3 grid(grid_for(largest, 256), faces.count * (also ? 2 : 1));
  launch_after_previous(ghost_kernel<D, Real>, grid, dim3(256), stream, field, also, domain_.layout, faces);
}

// Through a device staging buffer and one contiguous copy to or from the host.
template <int D, class Real>
void DeviceFields<D, Real>::read(const Real* field, Real* host) {
  const Box<D> box = domain_.layout.owned_box();
  const long n = box.size();
  staging_.reserve(n);
  pack(field, box, staging_.get());
  HW_CUDA(cudaMemcpyAsync(host, staging_.get(), n * sizeof(Real), cudaMemcpyDeviceToHost, stream_));
  synchronize();
}

template <int D, class Real>
void DeviceFields<D, Real>::write(Real* field, const Real* host) {
  const Box<D> box = domain_.layout.owned_box();
  const long n = box.size();
  staging_.reserve(n);
  HW_CUDA(cudaMemcpyAsync(staging_.get(), host, n * sizeof(Real), cudaMemcpyHostToDevice, stream_));
  unpack(field, box, staging_.get());
  synchronize();  // the host buffer may be reused at once
}

template <class Real>
__global__ void gather_kernel(const Real* __restrict__ field, const long* __restrict__ offsets, long n,
                              Real* __restrict__ out) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = field[offsets[i]];
}

template <int D, class Real>
void DeviceFields<D, Real>::gather(const Real* field, const std::vector<long>& offsets, Real* host) {
  if (offsets.empty()) return;
  const long n = static_cast<long>(offsets.size());
  if (offsets != gathered_) {
    gather_offsets_.allocate(offsets.size());
    gather_values_.allocate(offsets.size());
    HW_CUDA(cudaMemcpyAsync(gather_offsets_.get(), offsets.data(), n * sizeof(long), cudaMemcpyHostToDevice, stream_));
    gathered_ = offsets;
  }
  gather_kernel<<<grid_for(n, 128), 128, 0, stream_>>>(field, gather_offsets_.get(), n, gather_values_.get());
  HW_CUDA(cudaGetLastError());
  HW_CUDA(cudaMemcpyAsync(host, gather_values_.get(), n * sizeof(Real), cudaMemcpyDeviceToHost, stream_));
  synchronize();
}

template <int D, class Real>
void DeviceFields<D, Real>::pack(const Real* field, const Box<D>& box, Real* buffer) {
  if (box.empty()) return;
  copy_box_kernel<D, Real, true>
      <<<grid_for(box.size(), 256), 256, 0, stream_>>>(const_cast<Real*>(field), domain_.layout, box, buffer);
  HW_CUDA(cudaGetLastError());
}

template <int D, class Real>
void DeviceFields<D, Real>::unpack(Real* field, const Box<D>& box, const Real* buffer) {
  if (box.empty()) return;
  copy_box_kernel<D, Real, false>
      <<<grid_for(box.size(), 256), 256, 0, stream_>>>(field, domain_.layout, box, const_cast<Real*>(buffer));
  HW_CUDA(cudaGetLastError());
}

template <int D, class Real>
LocalStats DeviceFields<D, Real>::stats(const Real* u_now, const Real* u_prev, bool energy, double c2,
                                        const KineticWeight<Real>& kinetic_weight) {
  return with_radius(problem_.radius,
                     [&]<int R>() { return stats_radius<R>(u_now, u_prev, energy, c2, kinetic_weight); });
}

template <int D, class Real>
template <int R>
LocalStats DeviceFields<D, Real>::stats_radius(const Real* u_now, const Real* u_prev, bool energy, double c2,
                                               const KineticWeight<Real>& kinetic_weight) {
  const int blocks = std::max(1, std::min(grid_for(domain_.layout.owned_box().size(), stats_threads), 1024));
  partials_.reserve(static_cast<long>(blocks) * stats_slots);
  stats_kernel<D, R, Real><<<blocks, stats_threads, 0, stream_>>>(
      u_now, u_prev, LaplacianWeights<D, R, Real>::make(problem_.spacing, domain_.layout.strides()), domain_,
      domain_.update_box(R, 0), problem_.dt, c2, energy, kinetic_weight, partials_.get());
  HW_CUDA(cudaGetLastError());
  std::vector<double> host(static_cast<std::size_t>(blocks) * stats_slots);
  HW_CUDA(cudaMemcpyAsync(host.data(), partials_.get(), host.size() * sizeof(double), cudaMemcpyDeviceToHost, stream_));
  synchronize();
  LocalStats s;
  s.min = std::numeric_limits<double>::infinity(), s.max = -s.min;
  double bad = 0;
  for (int b = 0; b < blocks; ++b) {
    const double* x = &host[static_cast<std::size_t>(b) * stats_slots];
    s.min = std::min(s.min, x[0]), s.max = std::max(s.max, x[1]);
    s.weight += x[2], s.sum += x[3], s.sum_squares += x[4], s.kinetic += x[5], s.potential += x[6], bad += x[7];
  }
  s.non_finite = static_cast<long>(bad);
  s.points = domain_.layout.owned_box().size();
  return s;
}

template <int D, class Real>
double DeviceFields<D, Real>::stop_timer() {
  HW_CUDA(cudaEventRecord(stop_, stream_));
  HW_CUDA(cudaEventSynchronize(stop_));
  float ms = 0;
  HW_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
  return ms * 1e-3;
}

template class DeviceFields<2, float>;
template class DeviceFields<2, double>;
template class DeviceFields<3, float>;
template class DeviceFields<3, double>;

}  // namespace heatwave::cuda
