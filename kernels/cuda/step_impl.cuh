// The baseline step kernel where the coefficients are constant (the kernel
// itself: step_kernel.cuh).
//
// Each thread owns one x (2D) or one (x, y) column (3D) of a block tile and
// streams along the last axis through a chunk of it, keeping the 2R+1 values
// along that axis in registers: every value is read from device memory about
// once per step, neighbours along the other axes come from L1/L2. The stencil
// expression is solver/stencil.hpp's and the update the equation's, compiled
// with -fmad=false, so a step rounds exactly as the host backend's does
// (bitwise equal fields). Included by the units CMakeLists.txt generates
// from step.cu.in, a dimension and precision each.
#pragma once
#include "kernels/cuda/step.cuh"

#include "kernels/cuda/media_step.cuh"
#include "kernels/cuda/plane_step.cuh"
#include "kernels/cuda/step_kernel.cuh"

namespace heatwave::cuda {

namespace {

// 3D radii from which the plane-staged kernel runs (plane_step.cuh), where it
// measured faster than the register kernel (H200, 512^3, Gcells/s): fp32
// r 4 (wave 118.0 -> 158.1, heat 173.6 -> 174.9; r 3 loses 2-4%), fp64
// r 3 and 4 (wave 89.7 -> 95.6 and 81.0 -> 86.4, heat 114.8 -> 118.0 and
// 93.0 -> 98.8).
template <class Real>
constexpr int plane_step_radius = sizeof(Real) == 8 ? 3 : 4;

template <int D, class Real, class Eq>
class StepKernelOf final : public StepKernel<D, Real> {
 public:
  StepKernelOf(const Problem& problem, const Layout<D>& layout)
      : problem_(problem),
        layout_(layout),
        shape_(launch_shape<D>(Eq::levels)),
        update_(make_update<Eq, Real>(problem.coefficients, problem.dt)) {}

  void launch(const Real* u, Real* u_next, const Box<D>& box, long step, cudaStream_t stream) const override {
    if (box.empty()) return;
    with_radius(problem_.radius, [&]<int R>() {
      const UniformOp<D, R, Real, Eq> op{LaplacianWeights<D, R, Real>::make(problem_.spacing, layout_.strides()),
                                         update_};
      if constexpr (D == 3 && R >= plane_step_radius<Real>) {
        if (shape_.planes) return launch_plane_step<R, Real, Eq>(op, shape_, u, u_next, box, step == 0, layout_, stream);
      }
      launch_step<D, R, Real, Eq, 0, 2, 4>(op, shape_, u, u_next, box, step == 0, layout_, stream);
    });
  }

 private:
  Problem problem_;
  Layout<D> layout_;
  LaunchShape shape_;
  typename Eq::template Update<Real> update_;
};

}  // namespace

template <int D, class Real>
std::unique_ptr<StepKernel<D, Real>> make_plain_step_kernel(const Problem& problem, const LocalDomain<D>& domain) {
  return with_equation(problem.equation, [&]<class Eq>() -> std::unique_ptr<StepKernel<D, Real>> {
    return std::make_unique<StepKernelOf<D, Real, Eq>>(problem, domain.layout);
  });
}

template <int D, class Real>
std::unique_ptr<StepKernel<D, Real>> make_step_kernel(const Problem& problem, const LocalDomain<D>& domain) {
  if (problem.varies() || !problem.sources.empty()) return make_media_step_kernel<D, Real>(problem, domain);
  return make_plain_step_kernel<D, Real>(problem, domain);
}

#define HW_STEP(D, Real)                                                                                           \
  template std::unique_ptr<StepKernel<D, Real>> make_plain_step_kernel(const Problem&, const LocalDomain<D>&); \
  template std::unique_ptr<StepKernel<D, Real>> make_step_kernel(const Problem&, const LocalDomain<D>&);
}  // namespace heatwave::cuda
