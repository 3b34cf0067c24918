#pragma once
// The part of a GPU backend that is not its time stepping: device fields
// (DeviceFields), one step by the baseline kernel (the cuda backend's every
// step; cuda-cluster's overlapped parts), halo packs, I/O, diagnostics and
// timers. cuda and cuda-cluster derive from it and differ in advance().
// CUDA-only: include from .cu files.
#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "kernels/cuda/device_fields.cuh"
#include "kernels/cuda/step.cuh"
#include "solver/backend.hpp"

namespace heatwave::cuda {

// Device time between begin() and end(kind), summed per kind from CUDA events
// on one stream. Finished spans are settled as new ones end (events reused,
// nothing waits); seconds() waits for the rest.
class EventSpans {
 public:
  explicit EventSpans(cudaStream_t stream) : stream_(stream) {}
  ~EventSpans();
  EventSpans(const EventSpans&) = delete;
  EventSpans& operator=(const EventSpans&) = delete;
  void begin();
  void end(int kind);
  std::array<double, 3> seconds();

 private:
  struct Open {
    int kind;
    cudaEvent_t start, stop;
  };
  cudaEvent_t take();
  void settle(bool wait);

  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr;
  std::vector<Open> pending_;
  std::vector<cudaEvent_t> free_;
  std::array<double, 3> totals_{};
};

template <int D, class Real>
class GpuBackend : public Backend<D, Real> {
 public:
  GpuBackend(const Problem& problem, const LocalDomain<D>& domain);

  // Deep halos for parallel.exchange_every: auto. A GPU exchange costs
  // kernel launches and a message's latency whatever its size; exchanging
  // every k steps pays them once for k (2 x H200, heat 3D fp32 512^3 a GPU,
  // nccl: 2 GPUs at 504 GCells/s with k = 1, 590 with k = 4), for (k-1)r
  // redundant halo rows a chunk.
  int preferred_exchange_every() const override { return D == 2 ? 8 : 4; }
  long step() const override { return step_; }
  void set_step(long step) override { step_ = step; }
  void initialize() override;
  // The baseline kernel on a part of the update box, queued on the stream:
  // it runs while the host waits on MPI.
  void update(const Box<D>& region) override;
  void finish_step() override;

  void pack(Level level, const Box<D>& box, Real* buffer) override { fields_.pack(field(level), box, buffer); }
  void unpack(Level level, const Box<D>& box, const Real* buffer) override {
    fields_.unpack(field(level), box, buffer);
  }
  MemorySpace memory() const override { return MemorySpace::device; }
  GpuStream stream() const override { return fields_.stream(); }
  void read(Level level, Real* owned) override { fields_.read(field(level), owned); }
  void gather(Level level, const std::vector<Index<D>>& points, Real* out) override {
    std::vector<long> offsets;  // in the device fields' own (padded) layout
    for (const Index<D>& i : points) offsets.push_back(fields_.domain().layout.offset(i));
    fields_.gather(field(level), offsets, out);
  }
  void write(Level level, const Real* owned) override;
  LocalStats stats() override;
  void synchronize() override { fields_.synchronize(); }
  void span_begin() override { spans_.begin(); }
  void span_end(typename Backend<D, Real>::Span span) override { spans_.end(static_cast<int>(span)); }
  std::optional<std::array<double, 3>> device_seconds() override {
    std::array<double, 3> s = spans_.seconds();
    s[0] += inner_spans_.seconds()[0];
    return s;
  }
  void start_timer() override { fields_.start_timer(); }
  double stop_timer() override { return fields_.stop_timer(); }

 protected:
  // u^n, or u^{n-1} for an equation second order in time (kept in u_next between steps).
  Real* field(Level level);

  // A split chunk's inner part (Backend::advance_inner) goes on a stream of
  // its own between begin_inner(), which orders it after the work queued on
  // stream() so far, and end_inner(); advance_outer() orders its rims after
  // inner_done_.
  void begin_inner() {
    HW_CUDA(cudaEventRecord(inner_ready_, fields_.stream()));
    HW_CUDA(cudaStreamWaitEvent(inner_stream_.get(), inner_ready_, 0));
    inner_spans_.begin();
  }
  void end_inner() {
    inner_spans_.end(static_cast<int>(Backend<D, Real>::Span::compute));
    HW_CUDA(cudaEventRecord(inner_done_, inner_stream_.get()));
  }

  // The ghosts a step's new level gets. Where every step of the backend is
  // the one-step kernel (step_reads_only_), only those the next step reads,
  // once both fields hold g at their Dirichlet face points. No step writes
  // them: the current level has g there from its fill at initialize() or
  // write(), the other may hold anything (u^{n-1} written, v0), so the first
  // new level after either is filled whole.
  using Ghosts = typename DeviceFields<D, Real>::Ghosts;
  Ghosts ghosts_of_new_level() {
    if (full_fills_ > 0) return --full_fills_, Ghosts::all;
    return step_reads_only_ ? Ghosts::step_reads : Ghosts::all;
  }

  Problem problem_;
  EquationInfo equation_;
  DeviceFields<D, Real> fields_;
  std::unique_ptr<StepKernel<D, Real>> step_kernel_;
  EventSpans spans_{fields_.stream()};
  long step_ = 0;
  Stream inner_stream_;
  Event inner_ready_, inner_done_;
  EventSpans inner_spans_{inner_stream_.get()};
  bool step_reads_only_ = false;
  int full_fills_ = 1;  // new levels left to fill whole (ghosts_of_new_level)
};

}  // namespace heatwave::cuda
