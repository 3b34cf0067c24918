// backend: cuda. Every step is one launch of the baseline step kernel over
// the step's update box; the rest is GpuBackend's.
#include "kernels/cuda/cuda_backend.hpp"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "io/errors.hpp"
#include "kernels/cuda/gpu_backend.cuh"
#include "solver/box_difference.hpp"

namespace heatwave::cuda {

namespace {

bool fills_every_ghost() {
  const char* env = std::getenv("HEATWAVE_CUDA_FILL");
  if (!env || std::string(env) == "step-reads") return false;
  if (std::string(env) == "all") return true;
  throw Error(ExitCode::invalid_value, std::string("HEATWAVE_CUDA_FILL=") + env + ": step-reads or all");
}

template <int D, class Real>
class CudaBackend final : public GpuBackend<D, Real> {
  using GpuBackend<D, Real>::fields_, GpuBackend<D, Real>::problem_, GpuBackend<D, Real>::step_,
      GpuBackend<D, Real>::step_kernel_, GpuBackend<D, Real>::inner_stream_, GpuBackend<D, Real>::inner_done_;

 public:
  // Every step is the one-step kernel: its fills need only what it reads
  // (HEATWAVE_CUDA_FILL=all: every ghost, as before, for an A/B in one build).
  CudaBackend(const Problem& problem, const LocalDomain<D>& domain) : GpuBackend<D, Real>(problem, domain) {
    this->step_reads_only_ = !fills_every_ghost();
  }
  BackendKind kind() const override { return BackendKind::cuda; }
  void advance(int k) override {
    for (int m = 0; m < k; ++m) {
      this->update(fields_.domain().update_box(problem_.radius, k - 1 - m));
      this->finish_step();
    }
  }

  // Overlap of a whole chunk of k steps (deep halos): a trapezoid. While the
  // halos move on stream(), the inner stream runs every step of the chunk on
  // the points it can compute without them: step j on the owned points at
  // least H + (j-1)r from an exchanged face (H = the halo depth, so no step
  // writes what the exchange sends, and each step's stencil stays inside the
  // last one's points). Once the halos are in, step j's rims (the rest of its
  // update box) follow in order. Level j lives in u (j even) or u_next (j
  // odd), as k single steps leave it; step j of the rims reads level j-1
  // within r of its points, which no later inner step wrote (it is r+1 away),
  // so every point is computed from the same values as in advance(k):
  // bitwise the same.
  bool splits_chunks() const override { return true; }
  void advance_inner(int k) override {
    chunk_ = k;
    ghosts_.clear();
    for (int j = 1; j <= k; ++j) ghosts_.push_back(this->ghosts_of_new_level());
    this->begin_inner();
    for (int j = 1; j <= k; ++j) {
      const Box<D> inner = inner_box(j);
      if (inner.empty()) break;
      step_kernel_->launch(level(j - 1), level(j), inner, step_ + j - 1, inner_stream_.get());
      // The physical ghosts the next inner step reads: along exchanged axes
      // only those of the inner points (the rest of the field is the exchange's).
      Box<D> window = fields_.domain().layout.storage_box();
      for (int a = 0; a < D; ++a) {
        if (fields_.domain().exchanged[a][0]) window.lo[a] = inner.lo[a];
        if (fields_.domain().exchanged[a][1]) window.hi[a] = inner.hi[a];
      }
      fields_.fill_ghosts(level(j), inner_stream_.get(), &window, ghosts_[j - 1]);
    }
    this->end_inner();
  }
  void advance_outer() override {
    HW_CUDA(cudaStreamWaitEvent(fields_.stream(), inner_done_, 0));
    for (int j = 1; j <= chunk_; ++j) {
      for (const Box<D>& rim : box_difference(fields_.domain().update_box(problem_.radius, chunk_ - j), inner_box(j)))
        step_kernel_->launch(level(j - 1), level(j), rim, step_ + j - 1, fields_.stream());
      fields_.fill_ghosts(level(j), nullptr, nullptr, ghosts_[j - 1]);
    }
    if (chunk_ % 2) std::swap(fields_.u, fields_.u_next);
    step_ += chunk_;
  }

 private:
  // Level j of the chunk (0: u^n as it starts).
  Real* level(int j) { return j % 2 == 0 ? fields_.u.get() : fields_.u_next.get(); }
  // Step j's inner points: its update box at least H + (j-1)r from every exchanged face.
  Box<D> inner_box(int j) const {
    const LocalDomain<D>& domain = fields_.domain();
    const long depth = domain.layout.halo + static_cast<long>(j - 1) * problem_.radius;
    Box<D> box = domain.update_box(problem_.radius, 0);
    for (int a = 0; a < D; ++a) {
      if (domain.exchanged[a][0]) box.lo[a] += depth;
      if (domain.exchanged[a][1]) box.hi[a] -= depth;
    }
    return box;
  }

  int chunk_ = 0;  // the split chunk's steps
  std::vector<typename GpuBackend<D, Real>::Ghosts> ghosts_;  // the ghosts each of its levels gets
};

}  // namespace

template <int D, class Real>
std::unique_ptr<Backend<D, Real>> make_cuda_backend(const Problem& problem, const LocalDomain<D>& domain) {
  return std::make_unique<CudaBackend<D, Real>>(problem, domain);
}

template std::unique_ptr<Backend<2, float>> make_cuda_backend(const Problem&, const LocalDomain<2>&);
template std::unique_ptr<Backend<2, double>> make_cuda_backend(const Problem&, const LocalDomain<2>&);
template std::unique_ptr<Backend<3, float>> make_cuda_backend(const Problem&, const LocalDomain<3>&);
template std::unique_ptr<Backend<3, double>> make_cuda_backend(const Problem&, const LocalDomain<3>&);

}  // namespace heatwave::cuda
