// The step kernel where coefficients vary in space or sources are given.
//
// One thread a point, the host backend's expressions point for point
// (HostBackend::step_box_media): the flux-form operator or the Laplacian, the
// point's own update or the uniform one, then the sources' f(t) q(x) summed
// in config order and added by Update::force. So the fields are bitwise the
// host's. It reads the media fields a step from device memory: simple first,
// not tuned (docs/performance.md gives its rate).
#include <cuda_runtime.h>

#include <algorithm>

#include "io/errors.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/media_step.cuh"
#include "core/dispatch.hpp"
#include "solver/media.hpp"

namespace heatwave::cuda {

namespace {

// Sources a launch takes by value; more are refused when the backend is made.
constexpr int max_sources = 16;

template <int D, int R, class Real, class Eq>
struct MediaStep {
  using Update = typename Eq::template Update<Real>;
  LaplacianWeights<D, R, Real> lap;
  FluxDivergence<D, R, Real> flux;
  bool flux_form;
  const Update* updates;  // one a point, or null: `uniform` everywhere
  Update uniform;
  int sources;
  const Real* q[max_sources];
  Real f[max_sources];
};

template <int D, int R, class Real, class Eq>
__global__ void __launch_bounds__(256)
    media_step_kernel(const Real* __restrict__ u, Real* __restrict__ out, const MediaStep<D, R, Real, Eq> m,
                      const Box<D> box, const Layout<D> layout, const bool start) {
  // x from the thread, the other axes from the grid (strided past its
  // 65535 limit): no 64-bit divisions for the index.
  Index<D> i;
  i[0] = box.lo[0] + blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i[0] >= box.hi[0]) return;
  const long z_lo = D == 3 ? box.lo[D - 1] + blockIdx.z : 0, z_hi = D == 3 ? box.hi[D - 1] : 1;
  for (long z = z_lo; z < z_hi; z += gridDim.z)
    for (i[1] = box.lo[1] + blockIdx.y; i[1] < box.hi[1]; i[1] += gridDim.y) {
      if constexpr (D == 3) i[2] = z;
      const long p = layout.offset(i);
      const auto& up = m.updates ? m.updates[p] : m.uniform;
      const Real l = m.flux_form ? m.flux(u, p) : m.lap(u, p);
      Real v = start ? up.start(u[p], out[p], l) : up.step(u[p], out[p], l);
      if (m.sources > 0) {
        Real sum = 0;
        for (int t = 0; t < m.sources; ++t) sum = fused(m.f[t], m.q[t][p], sum);
        v = up.force(v, sum, start);
      }
      out[p] = v;
    }
}

template <class T>
DeviceBuffer<T> upload(const std::vector<T>& host) {
  DeviceBuffer<T> d;
  if (host.empty()) return d;
  d.allocate(host.size());
  HW_CUDA(cudaMemcpy(d.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <int D, class Real, class Eq>
class MediaStepKernel final : public StepKernel<D, Real> {
 public:
  MediaStepKernel(const Problem& problem, const LocalDomain<D>& domain) : problem_(problem), layout_(domain.layout) {
    if (problem.sources.size() > static_cast<std::size_t>(max_sources))
      throw Error(ExitCode::invalid_value, problem.source + ": 'sources' has " +
                                               std::to_string(problem.sources.size()) +
                                               " sources; the GPU backends take at most " +
                                               std::to_string(max_sources) + " (use backend: host)");
    const auto media = MediaFields<D, Real, Eq>::make(problem, domain);
    for (const auto& pair : media.pairs) pairs_.push_back(upload(pair));
    updates_ = upload(media.updates);
    kinetic_weight_ = upload(media.kinetic_weight);
    for (const auto& q : media.sources) sources_.push_back(upload(q));
    uniform_ = media.uniform;
    times_ = media.times;
  }

  void launch(const Real* u, Real* u_next, const Box<D>& box, long step, cudaStream_t stream) const override {
    if (box.empty()) return;
    const bool start = Eq::levels == 2 && step == 0;
    const double t = problem_.time_at(step);
    const auto capped = [](long n) { return static_cast<unsigned>(std::min(n, 65535L)); };
    const dim3 blocks(static_cast<unsigned>((box.extent(0) + 255) / 256), capped(box.extent(1)),
                      D == 3 ? capped(box.extent(2)) : 1u);
    with_radius(problem_.radius, [&]<int R>() {
      MediaStep<D, R, Real, Eq> m{};
      m.lap = LaplacianWeights<D, R, Real>::make(problem_.spacing, layout_.strides());
      m.flux_form = !pairs_.empty();
      for (int a = 0; a < D && m.flux_form; ++a) {
        m.flux.stride[a] = layout_.strides()[a];
        for (int j = 0; j < R; ++j) m.flux.pair[a][j] = pairs_[a * R + j].get();
      }
      m.updates = updates_.get();
      m.uniform = uniform_;
      m.sources = static_cast<int>(sources_.size());
      const std::vector<Real> f = source_factors<Real>(times_, t);
      for (std::size_t i = 0; i < sources_.size(); ++i) m.q[i] = sources_[i].get(), m.f[i] = f[i];
      media_step_kernel<D, R, Real, Eq><<<blocks, 256, 0, stream>>>(u, u_next, m, box, layout_, start);
    });
    HW_CUDA(cudaGetLastError());
  }
  const double* kinetic_weight() const override { return kinetic_weight_.get(); }
  std::vector<const Real*> flux_pairs() const override {
    std::vector<const Real*> out;
    for (const auto& pair : pairs_) out.push_back(pair.get());
    return out;
  }

 private:
  Problem problem_;
  Layout<D> layout_;
  std::vector<DeviceBuffer<Real>> pairs_, sources_;
  DeviceBuffer<typename Eq::template Update<Real>> updates_;
  DeviceBuffer<double> kinetic_weight_;
  typename Eq::template Update<Real> uniform_{};
  std::vector<TimeFunction> times_;
};

}  // namespace

template <int D, class Real>
std::unique_ptr<StepKernel<D, Real>> make_media_step_kernel(const Problem& problem, const LocalDomain<D>& domain) {
  return with_equation(problem.equation, [&]<class Eq>() -> std::unique_ptr<StepKernel<D, Real>> {
    return std::make_unique<MediaStepKernel<D, Real, Eq>>(problem, domain);
  });
}

template std::unique_ptr<StepKernel<2, float>> make_media_step_kernel(const Problem&, const LocalDomain<2>&);
template std::unique_ptr<StepKernel<2, double>> make_media_step_kernel(const Problem&, const LocalDomain<2>&);
template std::unique_ptr<StepKernel<3, float>> make_media_step_kernel(const Problem&, const LocalDomain<3>&);
template std::unique_ptr<StepKernel<3, double>> make_media_step_kernel(const Problem&, const LocalDomain<3>&);

}  // namespace heatwave::cuda
