// The baseline CUDA backend: one time step per launch, fields in device memory.
//
// Each thread owns one x (2D) or one (x, y) column (3D) of a block tile and
// streams along the last axis through a chunk of it, keeping the 2R+1 values
// along that axis in registers: every value is read from device memory about
// once per step, neighbours along the other axes come from L1/L2. The stencil
// expression is solver/stencil.hpp's, compiled with -fmad=false, so a step
// rounds exactly as the host backend's does (bitwise equal fields).
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "io/errors.hpp"
#include "kernels/cluster.cuh"
#include "kernels/cuda_backend.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/pack.cuh"
#include "solver/initial.hpp"
#include "solver/stencil.hpp"

namespace heatwave::cuda {

// ---------------------------------------------------------------- devices ---

std::vector<DeviceInfo> devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: not an error here
    return {};
  }
  std::vector<DeviceInfo> out;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    HW_CUDA(cudaGetDeviceProperties(&p, i));
    DeviceInfo d;
    d.index = i;
    d.name = p.name;
    d.compute_major = p.major, d.compute_minor = p.minor;
    d.multiprocessors = p.multiProcessorCount;
    d.memory_gib = p.totalGlobalMem / double(1 << 30);
    d.l2_mib = p.l2CacheSize / double(1 << 20);
    d.shared_per_block_optin_kib = static_cast<int>(p.sharedMemPerBlockOptin / 1024);
    int cluster = 0;
    cudaDeviceGetAttribute(&cluster, cudaDevAttrClusterLaunch, i);
    d.clusters = cluster != 0;
    out.push_back(d);
  }
  return out;
}

DeviceInfo select_device(int node_local_rank) {
  const auto all = devices();
  if (all.empty()) throw Error(ExitCode::cuda_error, "no CUDA device is visible to this process");
  const DeviceInfo& d = all[node_local_rank % all.size()];
  HW_CUDA(cudaSetDevice(d.index));
  return d;
}

// ---------------------------------------------------------------- kernels ---

namespace {

enum class StepKind { heat, wave, wave_start };

struct LaunchShape {
  int block_x, block_y, chunk;  // threads per block in x (and y in 3D); points along the streamed axis
  int prefetch;                 // rows loaded ahead of use: 0, 2 or 4
};

// The launch shape per case, from the H100 sweep in docs/performance.md: 32
// threads (128 points) along x, 4 rows of them in 3D, 32 rows per thread along
// the streamed axis, no prefetch (with 16-byte packs enough bytes are in
// flight), except the 3D wave, which reads the most bytes per point and gains
// from 2 rows of prefetch and shorter chunks.
// HEATWAVE_CUDA_LAUNCH="bx,by,chunk,prefetch" overrides it for experiments.
template <int D>
LaunchShape launch_shape(Equation equation, Precision precision) {
  LaunchShape s = D == 2 ? LaunchShape{32, 1, 32, 0} : LaunchShape{32, 4, 32, 0};
  if (D == 3 && equation == Equation::wave) s = LaunchShape{32, 4, 16, 2};
  if (const char* env = std::getenv("HEATWAVE_CUDA_LAUNCH"))
    std::sscanf(env, "%d,%d,%d,%d", &s.block_x, &s.block_y, &s.chunk, &s.prefetch);
  if (D == 2) s.block_y = 1;
  if (s.block_x * s.block_y > 256 || s.block_x < 1 || s.block_y < 1 || s.chunk < 1 ||
      (s.prefetch != 0 && s.prefetch != 2 && s.prefetch != 4))
    throw Error(ExitCode::invalid_value, "HEATWAVE_CUDA_LAUNCH: at most 256 threads a block, chunk >= 1, prefetch 0, 2 or 4");
  return s;
}

// One step over `box`. Each thread owns V = 16/sizeof(Real) consecutive x
// points (one 16-byte access per row: enough bytes in flight to keep HBM busy)
// and streams along S = D-1 through `chunk` rows, keeping a register window
// win[j] = the pack at offset j-R along S, P rows deeper than the stencil
// needs so that P loads are in flight while it computes (the previous level,
// read by the wave, likewise). y rows in 3D are packs too; the R x neighbours
// past each end of the pack come from L1. The stencil is LaplacianWeights::along,
// point by point, in axis order: the same rounding as the host.
template <int D, int R, int P, class Real, StepKind K>
__global__ void __launch_bounds__(256) step_kernel(const Real* __restrict__ u, Real* __restrict__ out,
                                                   const LaplacianWeights<D, R, Real> lap, const TimeUpdate<Real> up,
                                                   const Box<D> box, const Layout<D> layout, const int chunk) {
  using Vec = Pack<Real>;
  constexpr int V = Vec::width;
  constexpr int S = D - 1;
  constexpr bool reads_previous = K != StepKind::heat;
  Index<D> i;
  const long x_first = box.lo[0] - ((box.lo[0] % V) + V) % V;  // the aligned pack holding lo
  i[0] = x_first + static_cast<long>(V) * (blockIdx.x * blockDim.x + threadIdx.x);
  if (i[0] >= box.hi[0]) return;
  if constexpr (D == 3) {
    i[1] = box.lo[1] + blockIdx.y * blockDim.y + threadIdx.y;
    if (i[1] >= box.hi[1]) return;
  }
  const long first = box.lo[S] + static_cast<long>(D == 2 ? blockIdx.y : blockIdx.z) * chunk;
  const long last = min(first + chunk, box.hi[S]);
  if (first >= last) return;
  i[S] = first;
  const long st = lap.stride[S];
  long p = layout.offset(i);
  const bool whole = i[0] >= box.lo[0] && i[0] + V <= box.hi[0];

  // Rows past last-1+R are outside what the stencil may read: never load them.
  Vec win[2 * R + 1 + P], previous[P + 1];
#pragma unroll
  for (int j = 0; j < 2 * R + 1 + P; ++j) win[j] = first - R + j <= last - 1 + R ? load_pack(u + p + (j - R) * st) : Vec{};
  if constexpr (reads_previous) {
#pragma unroll
    for (int j = 0; j <= P; ++j) previous[j] = first + j < last ? load_pack(out + p + j * st) : Vec{};
  }
  // Neighbours along the other axes: x past the ends of the pack
  // (left[m] = u[p-m], right[m] = u[p+V-1+m]) and, in 3D, the y rows of the
  // pack. With prefetch they are loaded one row ahead of use too.
  struct Sides {
    Real left[R + 1], right[R + 1];
    Vec rows_minus[R + 1], rows_plus[R + 1];
  };
  auto load_sides = [&](long q, Sides& n) {
#pragma unroll
    for (int m = 1; m <= R; ++m) n.left[m] = u[q - m], n.right[m] = u[q + V - 1 + m];
    if constexpr (D == 3) {
#pragma unroll
      for (int j = 1; j <= R; ++j) n.rows_minus[j] = load_pack(u + q - j * lap.stride[1]), n.rows_plus[j] = load_pack(u + q + j * lap.stride[1]);
    }
  };
  Sides next;
  if constexpr (P > 0) load_sides(p, next);
  for (long s = first; s < last; ++s, p += st) {
    Sides sides;
    if constexpr (P > 0) {
      sides = next;
      if (s + 1 < last) load_sides(p + st, next);
    } else {
      load_sides(p, sides);
    }
    const Real* left = sides.left;
    const Real* right = sides.right;
    const Vec* rows_minus = sides.rows_minus;
    const Vec* rows_plus = sides.rows_plus;
    Vec result;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const Real centre = win[R].v[v];
      Real lap_value = 0;
#pragma unroll
      for (int a = 0; a < D; ++a) {
        Real minus[R + 1], plus[R + 1];
#pragma unroll
        for (int j = 1; j <= R; ++j) {
          if (a == 0) {
            minus[j] = v - j >= 0 ? win[R].v[v - j] : left[j - v];
            plus[j] = v + j < V ? win[R].v[v + j] : right[v + j - V + 1];
          } else if (a == S) {
            minus[j] = win[R - j].v[v], plus[j] = win[R + j].v[v];
          } else {
            minus[j] = rows_minus[j].v[v], plus[j] = rows_plus[j].v[v];
          }
        }
        lap_value = lap.add_axis(a, lap_value, lap.along(a, centre, minus, plus));
      }
      if constexpr (K == StepKind::heat) result.v[v] = up.heat(centre, lap_value);
      else if constexpr (K == StepKind::wave) result.v[v] = up.wave(centre, previous[0].v[v], lap_value);
      else result.v[v] = up.wave_start(centre, previous[0].v[v], lap_value);
    }
    if (whole) {
      *reinterpret_cast<Vec*>(out + p) = result;
    } else {  // a pack across the box edge: only the points inside
#pragma unroll
      for (int v = 0; v < V; ++v)
        if (i[0] + v >= box.lo[0] && i[0] + v < box.hi[0]) out[p + v] = result.v[v];
    }
#pragma unroll
    for (int j = 0; j < 2 * R + P; ++j) win[j] = win[j + 1];
    if (s + R + P + 1 <= last - 1 + R) win[2 * R + P] = load_pack(u + p + (R + P + 1) * st);
    if constexpr (reads_previous) {
#pragma unroll
      for (int j = 0; j < P; ++j) previous[j] = previous[j + 1];
      if (s + P + 1 < last) previous[P] = load_pack(out + p + (P + 1) * st);
    }
  }
}

// Index of the n-th point of a box, x fastest.
template <int D>
__device__ __forceinline__ Index<D> box_point(const Box<D>& box, long n) {
  Index<D> i;
#pragma unroll
  for (int a = 0; a < D; ++a) {
    const long e = box.extent(a);
    i[a] = box.lo[a] + n % e;
    n /= e;
  }
  return i;
}

// The ghosts of the physical faces of one axis (both sides: blockIdx.y).
template <int D, class Real>
struct AxisFaces {
  int count;
  int axis;
  Box<D> box[2];
  FaceRule rule[2];
};

template <int D, class Real>
__global__ void ghost_kernel(Real* u, const Layout<D> layout, const AxisFaces<D, Real> faces) {
  if (blockIdx.y >= faces.count) return;
  const Box<D> box = faces.box[blockIdx.y];
  const FaceRule rule = faces.rule[blockIdx.y];
  const int a = faces.axis;
  const long n = box.size();
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < n; k += static_cast<long>(gridDim.x) * blockDim.x) {
    Index<D> i = box_point(box, k), src = i;
    src[a] = rule.source(i[a]);
    u[layout.offset(i)] = rule.ghost(i[a], u[layout.offset(src)]);
  }
}

template <int D, class Real>
__global__ void initial_kernel(Real* u, const Layout<D> layout, const Index<D> offset, const InitialSpec spec) {
  const Box<D> box = layout.owned_box();
  const long n = box.size();
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < n; k += static_cast<long>(gridDim.x) * blockDim.x) {
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
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < n; k += static_cast<long>(gridDim.x) * blockDim.x) {
    const long p = layout.offset(box_point(box, k));
    if constexpr (ToBuffer) buffer[k] = u[p];
    else u[p] = buffer[k];
  }
}

// Diagnostics: per-block partial sums in double, reduced on the host in block
// order (deterministic). Slots: min, max, weight, sum, squares, kinetic,
// potential, non-finite count.
constexpr int stats_slots = 8;
constexpr int stats_threads = 256;

template <int D, int R, class Real>
__global__ void __launch_bounds__(stats_threads) stats_kernel(const Real* u, const Real* prev,
                                                              const LaplacianWeights<D, R, Real> lap,
                                                              const LocalDomain<D> domain, const Box<D> updated,
                                                              const double dt, const double c2, const bool energy,
                                                              double* partials) {
  const Box<D> owned = domain.layout.owned_box();
  const long n = owned.size();
  double v_min = INFINITY, v_max = -INFINITY, w_sum = 0, sum = 0, sq = 0, kin = 0, pot = 0, bad = 0;
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < n; k += static_cast<long>(gridDim.x) * blockDim.x) {
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
      kin += w * du * du;
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
    for (int w = 1; w < stats_threads / 32; ++w) x = s == 0 ? fmin(x, shared[s][w]) : s == 1 ? fmax(x, shared[s][w]) : x + shared[s][w];
    partials[blockIdx.x * stats_slots + s] = x;
  }
}

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, std::size_t n) {
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n; k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[k] = in[k];
}

int grid_for(long n, int threads) { return static_cast<int>(std::min<long>((n + threads - 1) / threads, 65536L)); }

// ---------------------------------------------------------------- backend ---

template <int D, class Real>
class CudaBackend final : public Backend<D, Real> {
 public:
  CudaBackend(const Problem& problem, const LocalDomain<D>& domain, HaloTransportKind transport)
      : problem_(problem),
        domain_(domain),
        shape_(launch_shape<D>(problem.config.equation, problem.config.precision)),
        transport_(transport) {
    domain_.layout.align = Pack<Real>::width;  // rows padded for 16-byte packs
    const std::size_t n = domain_.layout.storage_size();
    current_.allocate(n);
    second_.allocate(n);
    // Poison (all bits set is a NaN): a read of a point nobody wrote shows up.
    HW_CUDA(cudaMemset(current_.get(), 0xff, n * sizeof(Real)));
    HW_CUDA(cudaMemset(second_.get(), 0xff, n * sizeof(Real)));
    HW_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    HW_CUDA(cudaEventCreate(&start_));
    HW_CUDA(cudaEventCreate(&stop_));
    const double dt = problem.dt, c = problem.config.c;
    update_ = {static_cast<Real>(problem.config.alpha * dt), static_cast<Real>(c * c * dt * dt),
               static_cast<Real>(0.5 * c * c * dt * dt), static_cast<Real>(dt)};
  }
  ~CudaBackend() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(stream_);
  }

  std::string name() const override { return cluster_ ? "cuda-cluster" : "cuda"; }
  std::string plan() const override { return cluster_ ? cluster_->plan().text() : std::string(); }
  long step() const override { return step_; }
  void set_step(long step) override { step_ = step; }

  void initialize() override {
    set_initial(current_.get(), InitialSpec::initial(problem_));
    fill_ghosts(current_.get());
    if (wave()) {
      set_initial(second_.get(), InitialSpec::velocity(problem_));
    } else {
      HW_CUDA(cudaMemcpyAsync(second_.get(), current_.get(), domain_.layout.storage_size() * sizeof(Real),
                              cudaMemcpyDeviceToDevice, stream_));
    }
    HW_CUDA(cudaStreamSynchronize(stream_));
    step_ = 0;
  }

  void advance(int k) override {
    if (cluster_) {
      // Launches of up to plan k steps (a resident plan: the chunk in one);
      // each writes as far into exchanged halos as the rest of the chunk reads.
      for (int done = 0; done < k;) {
        const int steps = cluster_->plan().resident ? k : std::min(k - done, cluster_->plan().k);
        done += steps;
        launch_cluster(steps, k - done);
      }
      return;
    }
    for (int m = 0; m < k; ++m) {
      update(domain_.update_box(problem_.config.radius, k - 1 - m));
      finish_step();
    }
  }
  // The same step kernel on a part of the update box, queued on the compute
  // stream: it runs while the host waits on MPI.
  void update(const Box<D>& region) override {
    problem_.config.radius == 1 ? launch_step<1>(region) : launch_step<2>(region);
  }
  void finish_step() override {
    std::swap(current_, second_);
    fill_ghosts(current_.get());
    ++step_;
  }

  std::shared_ptr<Real[]> make_exchange_buffer(std::size_t count) override {
    const std::size_t bytes = std::max<std::size_t>(count, 1) * sizeof(Real);
    Real* p = nullptr;
    if (device_halo_buffers()) {  // NCCL or CUDA-aware MPI read and write device memory themselves
      HW_CUDA(cudaMalloc(&p, bytes));
      return std::shared_ptr<Real[]>(p, [](Real* q) { cudaFree(q); });
    }
    // Pinned host memory: MPI without CUDA support stages halos through it.
    HW_CUDA(cudaMallocHost(&p, bytes));
    return std::shared_ptr<Real[]>(p, [](Real* q) { cudaFreeHost(q); });
  }
  std::string halo_path() const override {
    switch (transport_) {
      case HaloTransportKind::nccl: return "device buffers, stream-ordered on a halo stream";
      case HaloTransportKind::mpi_cuda_aware: return "device buffers";
      default: return "pinned host staging";
    }
  }
  void* stream() override { return stream_; }

  // With device buffers the faces move by kernels on the compute stream. NCCL
  // runs on a stream ordered after them (and before the unpacks), so nothing
  // waits here; MPI reads and writes outside any stream, so for it the host
  // waits for the pack before the send, and for the unpack before the next
  // receive may overwrite the buffer.
  void pack(Level level, const Box<D>& box, Real* buffer) override {
    if (!device_halo_buffers()) return copy_box(field(level), box, buffer, true);
    copy_box_kernel<D, Real, true><<<grid_for(box.size(), 256), 256, 0, stream_>>>(field(level), domain_.layout, box, buffer);
    HW_CUDA(cudaGetLastError());
    if (transport_ != HaloTransportKind::nccl) HW_CUDA(cudaStreamSynchronize(stream_));
  }
  void unpack(Level level, const Box<D>& box, const Real* buffer) override {
    if (!device_halo_buffers()) return copy_box(field(level), box, const_cast<Real*>(buffer), false);
    copy_box_kernel<D, Real, false><<<grid_for(box.size(), 256), 256, 0, stream_>>>(field(level), domain_.layout, box,
                                                                                     const_cast<Real*>(buffer));
    HW_CUDA(cudaGetLastError());
    if (transport_ != HaloTransportKind::nccl) HW_CUDA(cudaStreamSynchronize(stream_));
  }
  void read(Level level, Real* owned) override { copy_box(field(level), domain_.layout.owned_box(), owned, true); }
  void write(Level level, const Real* owned) override {
    copy_box(field(level), domain_.layout.owned_box(), const_cast<Real*>(owned), false);
    if (level == Level::current) fill_ghosts(current_.get());
    HW_CUDA(cudaStreamSynchronize(stream_));
  }

  LocalStats stats() override {
    fill_ghosts(current_.get());
    return problem_.config.radius == 1 ? stats_radius<1>() : stats_radius<2>();
  }

  void synchronize() override { HW_CUDA(cudaStreamSynchronize(stream_)); }

  // Switches advance() to the cluster kernels where they can run; otherwise
  // says why in `reason` and stays the baseline backend. The plan comes from
  // HEATWAVE_CLUSTER_PLAN, the config's `cluster:` overrides, the plan cache,
  // or a short autotune (then cached), in that order.
  bool enable_cluster(const std::string& device_name, std::string& reason) {
    const ClusterSettings& settings = problem_.config.cluster;
    std::string origin = "built-in";
    ClusterPlan plan = default_cluster_plan(problem_);
    if (cluster_plan_from_environment()) {
      origin = "HEATWAVE_CLUSTER_PLAN";
    } else if (settings.overridden()) {
      plan = with_overrides(plan, settings), origin = "config";
    } else if (settings.autotune) {
      const ClusterPlanCache cache(settings.cache);
      std::vector<long> owned(domain_.layout.owned.begin(), domain_.layout.owned.end());
      bool exchanged = false;
      for (int a = 0; a < D; ++a) exchanged = exchanged || domain_.exchanged[a][0] || domain_.exchanged[a][1];
      const std::string key = ClusterPlanCache::key(device_name, problem_, owned, exchanged);
      if (auto cached = cache.find(key)) {
        plan = *cached, origin = "cached in " + cache.path();
      } else if (auto tuned = autotune_cluster(origin)) {
        plan = tuned->first;
        cache.store(key, plan, tuned->second);
        origin += ", cached in " + cache.path();
      }
    }
    // Where the baseline kernel won, it runs: the cluster path ships only where it is faster.
    if (plan.baseline()) return reason = "the baseline step kernel is faster for this case (" + origin + ")", false;
    auto kernel = std::make_unique<ClusterKernel<D, Real>>();
    if (!kernel->configure(problem_, domain_, plan, reason)) return false;
    allocate_wave_outputs();
    reason = "plan (" + origin + "): " + kernel->plan().text() + ", " + std::to_string(kernel->shared_bytes() / 1024) +
             " KiB shared a block, " + std::to_string(kernel->active_clusters()) +
             (kernel->plan().resident ? " blocks fit at once" : " clusters active at once");
    cluster_ = std::move(kernel);
    return true;
  }
  void start_timer() override { HW_CUDA(cudaEventRecord(start_, stream_)); }
  double stop_timer() override {
    HW_CUDA(cudaEventRecord(stop_, stream_));
    HW_CUDA(cudaEventSynchronize(stop_));
    float ms = 0;
    HW_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3;
  }

 private:
  bool wave() const { return problem_.config.equation == Equation::wave; }
  bool device_halo_buffers() const { return transport_ != HaloTransportKind::mpi_host; }

  // The wave's outputs: both input levels stay intact for other clusters' halos.
  void allocate_wave_outputs() {
    if (!wave() || third_.get()) return;
    const std::size_t n = domain_.layout.storage_size();
    third_.allocate(n);
    fourth_.allocate(n);
    HW_CUDA(cudaMemset(third_.get(), 0xff, n * sizeof(Real)));
    HW_CUDA(cudaMemset(fourth_.get(), 0xff, n * sizeof(Real)));
  }

  // Seconds a step of `run` (which advances `steps` steps), timed with CUDA
  // events: a warm-up, then the median of five.
  template <class Run>
  double seconds_per_step(int steps, Run run) {
    std::vector<double> seconds;
    for (int r = 0; r < 6; ++r) {
      start_timer();
      run();
      const double t = stop_timer() / steps;
      if (r > 0) seconds.push_back(t);
    }
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2];
  }

  // Times each candidate plan on fresh random fields (a warm-up launch, then
  // the median of five, CUDA events) and returns the fastest with its
  // seconds per step; `origin` says what was done. The fields are
  // initialised afterwards, so nothing of this stays.
  std::optional<std::pair<ClusterPlan, double>> autotune_cluster(std::string& origin) {
    constexpr int resident_chunk = 8;  // steps a resident plan (any chunk in one launch) is timed over
    allocate_wave_outputs();
    InitialCondition noise{InitialType::random};
    noise.seed = 20261123;
    set_initial(current_.get(), InitialSpec::make(noise, problem_.dims, problem_.points, problem_.config.length, problem_.spacing));
    noise.seed += 1;
    set_initial(second_.get(), InitialSpec::make(noise, problem_.dims, problem_.points, problem_.config.length, problem_.spacing));
    fill_ghosts(current_.get());
    fill_ghosts(second_.get());
    const auto t0 = std::chrono::steady_clock::now();
    std::optional<std::pair<ClusterPlan, double>> best;
    int tried = 0;
    for (const ClusterPlan& plan : cluster_plan_candidates(problem_)) {
      ClusterKernel<D, Real> kernel;
      std::string why;
      if (!kernel.configure(problem_, domain_, plan, why)) continue;
      ++tried;
      const int steps = plan.resident ? resident_chunk : plan.k;
      // What launch_cluster runs: the launch, then the ghosts of its outputs.
      const double seconds = seconds_per_step(steps, [&] { run_cluster(kernel, steps, 0, false); });
      if (!best || seconds < best->second) best = std::make_pair(plan, seconds);
    }
    // The baseline step kernel, timed alike: the plan to beat.
    const int k = best && !best->first.resident ? best->first.k : resident_chunk;
    const double baseline = seconds_per_step(k, [&] {
      for (int m = 0; m < k; ++m) {
        update(domain_.update_box(problem_.config.radius, 0));
        finish_step();
      }
    });
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char text[192];
    if (best && best->second < baseline) {
      std::snprintf(text, sizeof text, "autotuned: fastest of %d plans, %.3g ms a step against %.3g for the baseline kernel, tuning took %.2f s",
                    tried, best->second * 1e3, baseline * 1e3, spent);
    } else {
      std::snprintf(text, sizeof text, "autotuned: %.3g ms a step against %.3g for the fastest of %d cluster plans, tuning took %.2f s",
                    baseline * 1e3, best ? best->second * 1e3 : 0.0, tried, spent);
      best = std::make_pair(ClusterPlan::baseline_plan(), baseline);
    }
    origin = text;
    step_ = 0;
    return best;
  }

  // `steps` steps of `kernel` in one launch, out of place: the inputs stay
  // intact for the halos other clusters load. Heat writes u^{n+steps} into
  // second_; the wave writes u^{n+steps} and u^{n+steps-1} into third_ and
  // fourth_. The outputs' ghosts are then filled as after a step.
  void run_cluster(ClusterKernel<D, Real>& kernel, int steps, int ahead, bool start) {
    if (wave()) {
      kernel.launch(current_.get(), second_.get(), third_.get(), fourth_.get(), steps, ahead, start, stream_);
      fill_ghosts(third_.get());
      fill_ghosts(fourth_.get());
    } else {
      kernel.launch(current_.get(), nullptr, second_.get(), nullptr, steps, ahead, false, stream_);
      fill_ghosts(second_.get());
    }
  }
  // The backend's cluster plan for `steps` steps; the outputs become the fields.
  void launch_cluster(int steps, int ahead) {
    run_cluster(*cluster_, steps, ahead, step_ == 0);
    if (wave()) {
      std::swap(current_, third_);
      std::swap(second_, fourth_);
    } else {
      std::swap(current_, second_);
    }
    step_ += steps;
  }

  Real* field(Level level) {
    if (level == Level::previous && !wave()) throw Error(ExitCode::internal, "the heat equation has no previous level");
    return level == Level::current ? current_.get() : second_.get();
  }

  template <int R>
  LaplacianWeights<D, R, Real> laplacian() const {
    return LaplacianWeights<D, R, Real>::make(problem_.spacing, domain_.layout.strides());
  }

  template <int R>
  void launch_step(const Box<D>& box) {
    if (box.empty()) return;
    constexpr int S = D - 1;
    const dim3 block(shape_.block_x, shape_.block_y);
    const unsigned chunks = static_cast<unsigned>((box.extent(S) + shape_.chunk - 1) / shape_.chunk);
    const long width = Pack<Real>::width;
    const long x_first = box.lo[0] - ((box.lo[0] % width) + width) % width;
    const long packs = (box.hi[0] - x_first + width - 1) / width;
    dim3 grid(static_cast<unsigned>((packs + block.x - 1) / block.x), chunks);
    if constexpr (D == 3) grid = dim3(grid.x, static_cast<unsigned>((box.extent(1) + block.y - 1) / block.y), chunks);
    switch (shape_.prefetch) {
      case 0: return launch_step_with<R, 0>(grid, block, box);
      case 2: return launch_step_with<R, 2>(grid, block, box);
      default: return launch_step_with<R, 4>(grid, block, box);
    }
  }

  template <int R, int P>
  void launch_step_with(dim3 grid, dim3 block, const Box<D>& box) {
    const auto lap = laplacian<R>();
    const Real* u = current_.get();
    Real* out = second_.get();
    if (!wave())
      step_kernel<D, R, P, Real, StepKind::heat><<<grid, block, 0, stream_>>>(u, out, lap, update_, box, domain_.layout, shape_.chunk);
    else if (step_ == 0)
      step_kernel<D, R, P, Real, StepKind::wave_start><<<grid, block, 0, stream_>>>(u, out, lap, update_, box, domain_.layout, shape_.chunk);
    else
      step_kernel<D, R, P, Real, StepKind::wave><<<grid, block, 0, stream_>>>(u, out, lap, update_, box, domain_.layout, shape_.chunk);
    HW_CUDA(cudaGetLastError());
  }

  // Axis by axis, as the host backend does, so ghost corners come out alike.
  void fill_ghosts(Real* u) {
    const int r = problem_.config.radius;
    for (int a = 0; a < D; ++a) {
      AxisFaces<D, Real> faces{0, a, {}, {}};
      long largest = 0;
      for (int side = 0; side < 2; ++side) {
        if (domain_.exchanged[a][side]) continue;
        faces.box[faces.count] = domain_.ghost_box(a, side, r);
        faces.rule[faces.count] = domain_.face[a][side];
        largest = std::max(largest, faces.box[faces.count].size());
        ++faces.count;
      }
      if (faces.count == 0) continue;
      ghost_kernel<D, Real><<<dim3(grid_for(largest, 256), faces.count), 256, 0, stream_>>>(u, domain_.layout, faces);
      HW_CUDA(cudaGetLastError());
    }
  }

  void set_initial(Real* u, const InitialSpec& spec) {
    initial_kernel<D, Real><<<grid_for(domain_.layout.owned_box().size(), 256), 256, 0, stream_>>>(u, domain_.layout, domain_.offset, spec);
    HW_CUDA(cudaGetLastError());
  }

  // Through a device staging buffer and one contiguous copy to or from the host.
  void copy_box(Real* u, const Box<D>& box, Real* host, bool to_host) {
    const long n = box.size();
    if (n == 0) return;
    staging_.reserve(n);
    if (to_host) {
      copy_box_kernel<D, Real, true><<<grid_for(n, 256), 256, 0, stream_>>>(u, domain_.layout, box, staging_.get());
      HW_CUDA(cudaGetLastError());
      HW_CUDA(cudaMemcpyAsync(host, staging_.get(), n * sizeof(Real), cudaMemcpyDeviceToHost, stream_));
      HW_CUDA(cudaStreamSynchronize(stream_));
    } else {
      HW_CUDA(cudaMemcpyAsync(staging_.get(), host, n * sizeof(Real), cudaMemcpyHostToDevice, stream_));
      copy_box_kernel<D, Real, false><<<grid_for(n, 256), 256, 0, stream_>>>(u, domain_.layout, box, staging_.get());
      HW_CUDA(cudaGetLastError());
      HW_CUDA(cudaStreamSynchronize(stream_));  // the host buffer may be reused at once
    }
  }

  template <int R>
  LocalStats stats_radius() {
    const int blocks = std::max(1, std::min(grid_for(domain_.layout.owned_box().size(), stats_threads), 1024));
    partials_.reserve(static_cast<long>(blocks) * stats_slots);
    const double c = problem_.config.c;
    stats_kernel<D, R, Real><<<blocks, stats_threads, 0, stream_>>>(
        current_.get(), second_.get(), laplacian<R>(), domain_, domain_.update_box(R, 0), problem_.dt, c * c,
        wave() && step_ > 0, partials_.get());
    HW_CUDA(cudaGetLastError());
    std::vector<double> host(static_cast<std::size_t>(blocks) * stats_slots);
    HW_CUDA(cudaMemcpyAsync(host.data(), partials_.get(), host.size() * sizeof(double), cudaMemcpyDeviceToHost, stream_));
    HW_CUDA(cudaStreamSynchronize(stream_));
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

  Problem problem_;
  LocalDomain<D> domain_;
  LaunchShape shape_;
  HaloTransportKind transport_;  // how halos move: where exchange buffers live, whether packs wait
  TimeUpdate<Real> update_;
  DeviceBuffer<Real> current_, second_, staging_;
  DeviceBuffer<double> partials_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  long step_ = 0;
  // cuda-cluster
  std::unique_ptr<ClusterKernel<D, Real>> cluster_;
  DeviceBuffer<Real> third_, fourth_;  // the wave's outputs (both input levels are read by other clusters)
};

}  // namespace

template <int D, class Real>
std::unique_ptr<Backend<D, Real>> make_backend(const Problem& problem, const LocalDomain<D>& domain, HaloTransportKind transport) {
  return std::make_unique<CudaBackend<D, Real>>(problem, domain, transport);
}

template std::unique_ptr<Backend<2, float>> make_backend(const Problem&, const LocalDomain<2>&, HaloTransportKind);
template std::unique_ptr<Backend<2, double>> make_backend(const Problem&, const LocalDomain<2>&, HaloTransportKind);
template std::unique_ptr<Backend<3, float>> make_backend(const Problem&, const LocalDomain<3>&, HaloTransportKind);
template std::unique_ptr<Backend<3, double>> make_backend(const Problem&, const LocalDomain<3>&, HaloTransportKind);

template <int D, class Real>
std::unique_ptr<Backend<D, Real>> make_cluster_backend(const Problem& problem, const LocalDomain<D>& domain,
                                                       HaloTransportKind transport, std::string& reason) {
  auto backend = std::make_unique<CudaBackend<D, Real>>(problem, domain, transport);
  std::string why;
  int device = 0;
  HW_CUDA(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  HW_CUDA(cudaGetDeviceProperties(&prop, device));
  if (backend->enable_cluster(prop.name, why)) reason = why;
  else reason = "falling back to the cuda backend: " + why;
  return backend;
}

template std::unique_ptr<Backend<2, float>> make_cluster_backend(const Problem&, const LocalDomain<2>&, HaloTransportKind, std::string&);
template std::unique_ptr<Backend<2, double>> make_cluster_backend(const Problem&, const LocalDomain<2>&, HaloTransportKind, std::string&);
template std::unique_ptr<Backend<3, float>> make_cluster_backend(const Problem&, const LocalDomain<3>&, HaloTransportKind, std::string&);
template std::unique_ptr<Backend<3, double>> make_cluster_backend(const Problem&, const LocalDomain<3>&, HaloTransportKind, std::string&);

double copy_bandwidth(std::size_t bytes, int repeats) {
  const std::size_t n = bytes / sizeof(float4);
  DeviceBuffer<float4> a, b;
  a.allocate(n);
  b.allocate(n);
  HW_CUDA(cudaMemset(a.get(), 0x3f, n * sizeof(float4)));
  cudaEvent_t start, stop;
  HW_CUDA(cudaEventCreate(&start));
  HW_CUDA(cudaEventCreate(&stop));
  int sms = 0;
  HW_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::vector<double> seconds;
  for (int r = 0; r < repeats + 2; ++r) {  // two warm-ups
    HW_CUDA(cudaEventRecord(start));
    copy_kernel<<<sms * 8, 512>>>(a.get(), b.get(), n);
    HW_CUDA(cudaGetLastError());
    HW_CUDA(cudaEventRecord(stop));
    HW_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    HW_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (r >= 2) seconds.push_back(ms * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(seconds.begin(), seconds.end());
  return 2.0 * n * sizeof(float4) / seconds[seconds.size() / 2];
}

}  // namespace heatwave::cuda
