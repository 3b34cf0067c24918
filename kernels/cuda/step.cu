// The baseline step kernel.
//
// Each thread owns one x (2D) or one (x, y) column (3D) of a block tile and
// streams along the last axis through a chunk of it, keeping the 2R+1 values
// along that axis in registers: every value is read from device memory about
// once per step, neighbours along the other axes come from L1/L2. The stencil
// expression is solver/stencil.hpp's and the update the equation's, compiled
// with -fmad=false, so a step rounds exactly as the host backend's does
// (bitwise equal fields).
#include "kernels/cuda/step.cuh"

#include <cstdio>
#include <cstdlib>

#include "io/errors.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/media_step.cuh"
#include "kernels/cuda/pack.cuh"
#include "core/dispatch.hpp"
#include "solver/stencil.hpp"

namespace heatwave::cuda {

namespace {

struct LaunchShape {
  int block_x, block_y, chunk;  // threads per block in x (and y in 3D); points along the streamed axis
  int prefetch;                 // rows loaded ahead of use: 0, 2 or 4
};

// The launch shape per case, from the H100 sweep in docs/performance.md: 32
// threads (128 points) along x, 4 rows of them in 3D, 32 rows per thread along
// the streamed axis, no prefetch (with 16-byte packs enough bytes are in
// flight), except 3D equations that read two levels, which read the most bytes
// per point and gain from 2 rows of prefetch and shorter chunks.
// HEATWAVE_CUDA_LAUNCH="bx,by,chunk,prefetch" overrides it for experiments.
template <int D>
LaunchShape launch_shape(int levels) {
  LaunchShape s = D == 2 ? LaunchShape{32, 1, 32, 0} : LaunchShape{32, 4, 32, 0};
  if (D == 3 && levels == 2) s = LaunchShape{32, 4, 16, 2};
  if (const char* env = std::getenv("HEATWAVE_CUDA_LAUNCH"))
    std::sscanf(env, "%d,%d,%d,%d", &s.block_x, &s.block_y, &s.chunk, &s.prefetch);
  if (D == 2) s.block_y = 1;
  if (s.block_x * s.block_y > 256 || s.block_x < 1 || s.block_y < 1 || s.chunk < 1 ||
      (s.prefetch != 0 && s.prefetch != 2 && s.prefetch != 4))
    throw Error(ExitCode::invalid_value,
                "HEATWAVE_CUDA_LAUNCH: at most 256 threads a block, chunk >= 1, prefetch 0, 2 or 4");
  return s;
}

// One step over `box`. Each thread owns V = 16/sizeof(Real) consecutive x
// points (one 16-byte access per row: enough bytes in flight to keep HBM busy)
// and streams along S = D-1 through `chunk` rows, keeping a register window
// win[j] = the pack at offset j-R along S, P rows deeper than the stencil
// needs so that P loads are in flight while it computes (u^{n-1}, read by an
// equation second order in time, likewise). y rows in 3D are packs too; the R
// x neighbours past each end of the pack come from L1. The stencil is
// LaplacianWeights::start and add, point by point, in axis order: the same rounding
// as the host. Start: the first step of an equation second order in time.
template <int D, int R, int P, class Real, class Eq, bool Start>
__global__ void __launch_bounds__(256)
    step_kernel(const Real* __restrict__ u, Real* __restrict__ out, const LaplacianWeights<D, R, Real> lap,
                const typename Eq::template Update<Real> up, const Box<D> box, const Layout<D> layout,
                const int chunk) {
  using Vec = Pack<Real>;
  constexpr int V = Vec::width;
  constexpr int S = D - 1;
  constexpr bool reads_previous = Eq::levels == 2;
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
  for (int j = 0; j < 2 * R + 1 + P; ++j)
    win[j] = first - R + j <= last - 1 + R ? load_pack(u + p + (j - R) * st) : Vec{};
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
      for (int j = 1; j <= R; ++j)
        n.rows_minus[j] = load_pack(u + q - j * lap.stride[1]), n.rows_plus[j] = load_pack(u + q + j * lap.stride[1]);
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
      Real lap_value = lap.start(centre);
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
        lap_value = lap.add(a, lap_value, minus, plus);
      }
      if constexpr (!reads_previous)
        result.v[v] = up.step(centre, centre, lap_value);
      else if constexpr (Start)
        result.v[v] = up.start(centre, previous[0].v[v], lap_value);
      else
        result.v[v] = up.step(centre, previous[0].v[v], lap_value);
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

template <int D, class Real, class Eq>
class StepKernelOf final : public StepKernel<D, Real> {
 public:
  StepKernelOf(const Problem& problem, const Layout<D>& layout)
      : problem_(problem),
        layout_(layout),
        shape_(launch_shape<D>(Eq::levels)),
        update_(Eq::template Update<Real>::make(problem.coefficients, problem.dt)) {}

  void launch(const Real* u, Real* u_next, const Box<D>& box, long step, cudaStream_t stream) const override {
    if (box.empty()) return;
    const bool start = step == 0;
    constexpr int S = D - 1;
    const dim3 block(shape_.block_x, shape_.block_y);
    const unsigned chunks = static_cast<unsigned>((box.extent(S) + shape_.chunk - 1) / shape_.chunk);
    const long width = Pack<Real>::width;
    const long x_first = box.lo[0] - ((box.lo[0] % width) + width) % width;
    const long packs = (box.hi[0] - x_first + width - 1) / width;
    dim3 grid(static_cast<unsigned>((packs + block.x - 1) / block.x), chunks);
    if constexpr (D == 3) grid = dim3(grid.x, static_cast<unsigned>((box.extent(1) + block.y - 1) / block.y), chunks);
    with_radius(problem_.radius, [&]<int R>() {
      with_index<3>(static_cast<std::size_t>(shape_.prefetch / 2), [&]<std::size_t Half>() {
        const auto lap = LaplacianWeights<D, R, Real>::make(problem_.spacing, layout_.strides());
        auto run = [&]<bool Start>() {
          step_kernel<D, R, 2 * static_cast<int>(Half), Real, Eq, Start>
              <<<grid, block, 0, stream>>>(u, u_next, lap, update_, box, layout_, shape_.chunk);
        };
        if constexpr (Eq::levels == 2)
          with_bool(start, run);
        else
          run.template operator()<false>();
      });
    });
    HW_CUDA(cudaGetLastError());
  }

 private:
  Problem problem_;
  Layout<D> layout_;
  LaunchShape shape_;
  typename Eq::template Update<Real> update_;
};

}  // namespace

template <int D, class Real>
std::unique_ptr<StepKernel<D, Real>> make_step_kernel(const Problem& problem, const LocalDomain<D>& domain) {
  if (problem.varies() || !problem.sources.empty()) return make_media_step_kernel<D, Real>(problem, domain);
  return with_equation(problem.equation, [&]<class Eq>() -> std::unique_ptr<StepKernel<D, Real>> {
    return std::make_unique<StepKernelOf<D, Real, Eq>>(problem, domain.layout);
  });
}

template std::unique_ptr<StepKernel<2, float>> make_step_kernel(const Problem&, const LocalDomain<2>&);
template std::unique_ptr<StepKernel<2, double>> make_step_kernel(const Problem&, const LocalDomain<2>&);
template std::unique_ptr<StepKernel<3, float>> make_step_kernel(const Problem&, const LocalDomain<3>&);
template std::unique_ptr<StepKernel<3, double>> make_step_kernel(const Problem&, const LocalDomain<3>&);

}  // namespace heatwave::cuda
