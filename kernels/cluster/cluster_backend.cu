// backend: cuda-cluster. A GPU backend whose advance() runs the cluster
// kernels, k steps a launch, out of place; the plan is chosen (and tuned)
// here. The parts of a step the halo exchange overlaps run the baseline kernel
// (GpuBackend::update).
#include "kernels/cluster/cluster_backend.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "io/startup_progress.hpp"
#include "kernels/cluster/kernel.cuh"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/gpu_backend.cuh"
#include "solver/box_difference.hpp"

namespace heatwave::cuda {

namespace {

template <int D, class Real>
class ClusterBackend final : public GpuBackend<D, Real> {
  using GpuBackend<D, Real>::fields_, GpuBackend<D, Real>::problem_, GpuBackend<D, Real>::equation_,
      GpuBackend<D, Real>::step_, GpuBackend<D, Real>::inner_stream_, GpuBackend<D, Real>::inner_done_;

 public:
  ClusterBackend(const Problem& problem, const LocalDomain<D>& domain, const ClusterSettings& settings)
      : GpuBackend<D, Real>(problem, domain), settings_(settings) {}

  BackendKind kind() const override { return BackendKind::cuda_cluster; }
  std::string plan() const override { return kernel_->plan().text(); }
  // A streaming plan blocks k steps a launch: deep halos of k steps let every
  // launch run k. (A resident plan runs any chunk in one launch: its k says nothing.)
  int preferred_exchange_every() const override { return kernel_->plan().resident ? 1 : kernel_->plan().k; }

  // Receivers: the launches record them as they make the levels (sorted for
  // the kernels' binary search: 3D by y, then x; 2D by x), into sample rows
  // on the device that take_samples() copies back.
  bool record_samples(Level level, const std::vector<Index<D>>& points, long every) override {
    if (!kernel_->records_samples()) return false;
    set_samples(level, points, every);
    return true;
  }
  void take_samples(std::vector<long>& steps, std::vector<Real>& values) override {
    steps = recorded_steps_;
    values.assign(steps.size() * static_cast<std::size_t>(sample_count_), Real(0));
    if (!values.empty()) {
      HW_CUDA(cudaMemcpyAsync(values.data(), sample_rows_.get(), values.size() * sizeof(Real), cudaMemcpyDeviceToHost,
                              fields_.stream()));
      fields_.synchronize();
    }
    recorded_steps_.clear();
  }

  // Launches of up to plan k steps (a resident plan: the chunk in one); each
  // writes as far into exchanged halos as the rest of the chunk reads.
  void advance(int k) override {
    for (int done = 0; done < k;) {
      const int steps = launch_steps(k - done);
      done += steps;
      run_cluster(*kernel_, steps, {write_box(k - done)}, fields_.stream());
      finish_launch(steps);
    }
  }

  // Overlap without the one-step kernel: the chunk's first launch is split by
  // tiles. The inner window (owned points whose cone over the launch's steps
  // lies in the owned box, less whole tiles: inner_box) runs on a stream of its own while the halo
  // exchange packs, moves and unpacks on stream(); the rims of the write box,
  // and the chunk's other launches, follow on stream() once the halos are in.
  // Out of place, the launches read levels that only the unpacks write (in
  // halos no inner tile reads) and write outputs nobody reads: no race, and
  // each point is computed as in advance(): bitwise the same.
  // (A deep plan computes its rank's whole box in one launch a chunk: not split.)
  bool splits_chunks() const override { return !kernel_->plan().resident && !kernel_->plan().deep; }
  void advance_inner(int k) override {
    split_.chunk = k, split_.steps = launch_steps(k), split_.inner = inner_box(split_.steps);
    this->begin_inner();
    if (!split_.inner.empty())
      launch_outputs(*kernel_, split_.steps, split_.inner, samples(split_.steps), inner_stream_.get());
    this->end_inner();
  }
  void advance_outer() override {
    std::vector<Box<D>> rims = box_difference(write_box(split_.chunk - split_.steps), split_.inner);
    run_cluster(*kernel_, split_.steps, rims, fields_.stream(), inner_done_);
    finish_launch(split_.steps);
    if (split_.chunk > split_.steps) advance(split_.chunk - split_.steps);
  }

  // The plan, from HEATWAVE_CLUSTER_PLAN, the config's overrides, the plan
  // cache or a short autotune, in that order. False, with `reason`, where no
  // cluster plan runs or the baseline kernel is faster. `run_samples` is
  // asked only where the cache or the autotune is (its key names them).
  bool choose_plan(const SampleSource<D>& run_samples, std::string& reason) {
    if (const std::string why = unbuilt_case(problem_); !why.empty() && !cluster_plan_from_environment())
      return reason = "the baseline step kernel runs this case: " + why, false;
    std::string origin = "built-in";
    ClusterPlan plan = default_cluster_plan(problem_);
    std::unique_ptr<ClusterKernel<D, Real>> cached_kernel;  // a cached plan's, made once to check it runs
    if (cluster_plan_from_environment()) {
      origin = "HEATWAVE_CLUSTER_PLAN";
    } else if (settings_.overridden()) {
      plan = config_plan(problem_, settings_), origin = "config";
    } else if (settings_.autotune) {
      const ClusterPlanCache cache(settings_.cache);
      const LocalDomain<D>& domain = fields_.domain();
      std::vector<long> owned(domain.layout.owned.begin(), domain.layout.owned.end());
      bool exchanged = false;
      for (int a = 0; a < D; ++a) exchanged = exchanged || domain.exchanged[a][0] || domain.exchanged[a][1];
      const SampleRequest<D> sampled = run_samples ? run_samples() : SampleRequest<D>{};
      const std::string key = ClusterPlanCache::key(current_device().name, problem_, owned, exchanged,
                                                    sampled.any() ? sampled.points.size() : 0, sampled.every);
      std::optional<ClusterPlan> cached = cache.find(key);
      std::string why;
      if (cached && !cached->baseline() &&
          !(cached_kernel = make_cluster_kernel<Real>(problem_, domain, *cached, media(), why))) {
        // Cached by another build, or for a case this key does not tell
        // apart, and refused here: tuned again, not the baseline kernel.
        warning_line("the cached cluster plan (" + cached->text() + ") cannot run this case (" + why +
                     "): tuning again");
        cached.reset();
      }
      if (cached) {
        plan = *cached, origin = "cached in " + cache.path();
      } else if (auto tuned = autotune(sampled, origin)) {
        plan = tuned->first;
        cache.store(key, plan, tuned->second);
        origin += ", cached in " + cache.path();
      }
    }
    // Where the baseline kernel won, it runs: the cluster path ships only where it is faster.
    if (plan.baseline()) return reason = "the baseline step kernel is faster for this case (" + origin + ")", false;
    kernel_ = cached_kernel ? std::move(cached_kernel)
                            : make_cluster_kernel<Real>(problem_, fields_.domain(), plan, media(), reason);
    if (!kernel_) return false;
    allocate_outputs();
    reason = "plan (" + origin + "): " + kernel_->plan().text() + ", " +
             std::to_string(kernel_->shared_bytes() / 1024) + " KiB shared a block, " +
             std::to_string(kernel_->active_clusters()) +
             (kernel_->plan().resident ? " blocks fit at once" : " clusters active at once");
    return true;
  }

 private:
  // The launches record `level` at `points` every `every` steps from now on (every 0: nothing).
  void set_samples(Level level, const std::vector<Index<D>>& points, long every) {
    recording_ = every > 0;
    sample_every_ = every, sample_previous_ = level == Level::previous;
    recorded_steps_.clear();
    std::vector<SamplePoint> sorted(recording_ ? points.size() : 0);
    for (std::size_t k = 0; k < sorted.size(); ++k) {
      for (int a = 0; a < D; ++a) sorted[k].i[a] = static_cast<int>(points[k][a]);
      sorted[k].slot = static_cast<int>(k);
    }
    const int major = D == 3 ? 1 : 0, minor = D == 3 ? 0 : 1;
    std::sort(sorted.begin(), sorted.end(), [&](const SamplePoint& a, const SamplePoint& b) {
      return std::tie(a.i[major], a.i[minor], a.i[2]) < std::tie(b.i[major], b.i[minor], b.i[2]);
    });
    sample_count_ = static_cast<int>(sorted.size());
    if (!sorted.empty()) {
      sample_points_.allocate(sorted.size());
      HW_CUDA(
          cudaMemcpy(sample_points_.get(), sorted.data(), sorted.size() * sizeof(SamplePoint), cudaMemcpyHostToDevice));
    }
  }
  // The media as the cuda backend's step kernel holds them on the device, and its sources' points.
  ClusterMedia<D, Real> media() const {
    ClusterMedia<D, Real> m;
    m.flux = this->step_kernel_->flux_view();
    if (cluster_flux_tiles(problem_)) m.flux_pairs = this->step_kernel_->flux_pairs();  // dense: made on this call
    m.point_updates = this->step_kernel_->point_updates();
    m.listed = this->step_kernel_->source_terms(m.sources, m.source_times);
    return m;
  }

  // Two levels: the launches' outputs (both input levels stay intact for the
  // halos other clusters load).
  void allocate_outputs() {
    if (equation_.levels < 2 || out_u_.get()) return;
    fields_.allocate_poisoned(out_u_);
    fields_.allocate_poisoned(out_u_prev_);
  }

  // Seconds a step of `run` (which returns the steps it advanced), timed
  // with CUDA events: a warm-up, then the median of `repeats`.
  template <class Run>
  double seconds_per_step(Run run, int repeats = 5) {
    std::vector<double> seconds;
    for (int r = 0; r <= repeats; ++r) {
      fields_.start_timer();
      const int steps = run();
      const double t = fields_.stop_timer() / steps;
      if (r > 0) seconds.push_back(t);
    }
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2];
  }

  // Times each candidate plan on fresh random fields (a warm-up launch, then
  // the median of five, CUDA events), the fastest `finalists` again over runs
  // of four launches (the median of nine), and returns the fastest with its
  // seconds per step; `origin` says what was done. Every timing records the
  // run's receivers as the run will: in the launches, or (a kernel that does
  // not record them, and the baseline kernel) with gather() every `every`
  // steps, which then also ends launches. The fields are initialised
  // afterwards, so nothing of this stays.
  std::optional<std::pair<ClusterPlan, double>> autotune(const SampleRequest<D>& sampled, std::string& origin) {
    constexpr int resident_chunk = 8;  // steps a resident plan (any chunk in one launch) is timed over
    constexpr std::size_t finalists = 3;
    allocate_outputs();
    InitialCondition noise{InitialType::random};
    noise.seed = 20261123;
    fields_.set_initial(fields_.u.get(),
                        InitialSpec::make(noise, problem_.dims, problem_.points, problem_.length, problem_.spacing));
    noise.seed += 1;
    fields_.set_initial(fields_.u_next.get(),
                        InitialSpec::make(noise, problem_.dims, problem_.points, problem_.length, problem_.spacing));
    fields_.fill_ghosts(fields_.u.get(), fields_.u_next.get());
    const auto t0 = std::chrono::steady_clock::now();
    // The run's receivers. A timed run goes on from the step the last one
    // ended at (sample steps fall as in the run); the steps it records
    // reuse the same sample rows.
    std::vector<Real> gathered(sampled.points.size());
    long samples_taken = 0;  // by the plans' timings
    if (sampled.any()) set_samples(sampled.level, sampled.points, sampled.every);
    auto sample_due = [&] { return sampled.any() && step_ % sampled.every == 0; };
    std::vector<std::pair<ClusterPlan, double>> fastest;  // the fastest few, by their first timing
    int tried = 0;
    // Seconds a step of `launches` launches of `plan` (each as launch_cluster
    // runs it: the launch, then the ghosts of its outputs), median of
    // `repeats`; 0 where the plan cannot run. The kernel object is made
    // here: making one sets its kernels' shared memory size, which another
    // plan of the same kernels may have changed since.
    auto time = [&](const ClusterPlan& plan, int launches, int repeats) {
      std::string why;
      const auto kernel = make_cluster_kernel<Real>(problem_, fields_.domain(), plan, media(), why);
      if (!kernel) return 0.0;
      recording_ = sampled.any() && kernel->records_samples();
      const bool gathers = sampled.any() && !recording_;
      const int chunk = plan.resident ? resident_chunk : plan.k;
      return seconds_per_step(
          [&] {
            recorded_steps_.clear();
            int steps = 0;
            for (int l = 0; l < launches; ++l) {
              // Launches end at sample steps where the run gathers them.
              const int next = kernel->launch_steps(
                  gathers ? static_cast<int>(std::min<long>(chunk, sampled.every - step_ % sampled.every)) : chunk);
              run_cluster(*kernel, next, {write_box(0)}, fields_.stream());
              step_ += next, steps += next;
              if (gathers && sample_due())
                this->gather(sampled.level, sampled.points, gathered.data()), ++samples_taken;
            }
            samples_taken += static_cast<long>(recorded_steps_.size());
            return steps;
          },
          repeats);
    };
    for (const ClusterPlan& plan : cluster_plan_candidates(problem_)) {
      const double seconds = time(plan, 1, 5);
      if (seconds == 0) continue;
      ++tried;
      startup_progress("autotuning the cluster plans (" + std::to_string(tried) + " tried)");
      debug_line(std::string("autotune: ") + plan.text() + ": " + std::to_string(seconds * 1e3) + " ms a step");
      fastest.emplace_back(plan, seconds);
      std::sort(fastest.begin(), fastest.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
      if (fastest.size() > finalists) fastest.pop_back();
    }
    // The final round: the fastest few again, runs of several launches,
    // median of more (one launch's median of five differs between plans a few
    // percent apart by less than its noise: the seismic shot's run took a
    // plan 1.5% slower than another's).
    std::optional<std::pair<ClusterPlan, double>> best;
    for (const auto& [plan, first] : fastest) {
      const double seconds = time(plan, 4, 9);
      debug_line(std::string("autotune, final round: ") + plan.text() + ": " + std::to_string(seconds * 1e3) +
                 " ms a step");
      if (seconds > 0 && (!best || seconds < best->second)) best = std::make_pair(plan, seconds);
    }
    // The baseline step kernel, timed alike: the plan to beat, with the
    // fills of the cuda backend that runs it (only what a step reads, after
    // its first new level).
    const int k = best && !best->first.resident ? best->first.k : resident_chunk;
    this->step_reads_only_ = true, this->full_fills_ = 1;
    const double baseline = seconds_per_step([&] {
      for (int m = 0; m < k; ++m) {
        this->update(fields_.domain().update_box(problem_.radius, 0));
        this->finish_step();
        if (sample_due()) this->gather(sampled.level, sampled.points, gathered.data());
      }
      return k;
    });
    this->step_reads_only_ = false;
    debug_line("autotune: the baseline step kernel: " + std::to_string(baseline * 1e3) + " ms a step");
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Nothing of the timings is recorded for the run.
    if (sampled.any()) set_samples(sampled.level, {}, 0);
    char text[192];
    if (best && best->second < baseline) {
      std::snprintf(
          text, sizeof text,
          "autotuned: fastest of %d plans, %.3g ms a step against %.3g for the baseline kernel, tuning took %.2f s",
          tried, best->second * 1e3, baseline * 1e3, spent);
    } else {
      std::snprintf(text, sizeof text,
                    "autotuned: %.3g ms a step against %.3g for the fastest of %d cluster plans, tuning took %.2f s",
                    baseline * 1e3, best ? best->second * 1e3 : 0.0, tried, spent);
      best = std::make_pair(ClusterPlan::baseline_plan(), baseline);
    }
    origin = text;
    if (sampled.any())
      origin += " (timed recording the run's receivers: " + std::to_string(sampled.points.size()) + " points every " +
                std::to_string(sampled.every) + " steps, " + std::to_string(samples_taken) +
                " samples taken by the plans' timings)";
    step_ = 0;
    return best;
  }

  // Steps of the next launch, with `left` steps of the chunk to go.
  int launch_steps(int left) const { return kernel_->launch_steps(left); }

  // The points a launch writes back: the owned box, reaching `ahead` steps of
  // radius into exchanged halos (the chunk's later launches read them).
  Box<D> write_box(int ahead) const {
    const LocalDomain<D>& domain = fields_.domain();
    Box<D> box = domain.layout.owned_box();
    for (int a = 0; a < D; ++a) {
      if (domain.exchanged[a][0]) box.lo[a] -= static_cast<long>(ahead) * problem_.radius;
      if (domain.exchanged[a][1]) box.hi[a] += static_cast<long>(ahead) * problem_.radius;
    }
    return box;
  }
  // The owned points whose dependency cone over `steps` steps reads no
  // exchanged halo, less whole cluster tiles: the rims are then as deep as a
  // tile (no tile computed for a few points stored) and at least the cone's
  // steps*r. x ends on 16-byte boundaries, where the kernels load and store whole packs.
  Box<D> inner_box(int steps) const {
    const LocalDomain<D>& domain = fields_.domain();
    const ClusterPlan& q = kernel_->plan();
    const long reach = static_cast<long>(steps) * problem_.radius;
    Box<D> box = domain.layout.owned_box();
    for (int a = 0; a < D; ++a) {
      // (A columns plan computes any window point by point: rims of the cone's depth.)
      const long tile = q.columns ? 1 : a == 0 ? q.tile_x * q.cluster_x : a == 1 ? q.tile_y * q.cluster_y : q.tile_z;
      const long rim = (reach + tile - 1) / tile * tile;
      if (domain.exchanged[a][0]) box.lo[a] += rim;
      if (domain.exchanged[a][1]) box.hi[a] -= rim;
    }
    constexpr long align = 16 / sizeof(Real);
    box.lo[0] = (box.lo[0] + align - 1) / align * align;
    box.hi[0] = std::max(box.lo[0], box.hi[0] / align * align);
    return box;
  }

  // One launch of `kernel` writing the window, out of place: the inputs stay
  // intact for the halos other clusters load. One level: u^{n+steps} into
  // u_next; two levels: u^{n+steps} and u^{n+steps-1} into the outputs.
  void launch_outputs(ClusterKernel<D, Real>& kernel, int steps, const Box<D>& window,
                      const ClusterSamples<Real>& samples, cudaStream_t stream) {
    if (equation_.levels == 2)
      kernel.launch(fields_.u.get(), fields_.u_next.get(), out_u_.get(), out_u_prev_.get(), steps, window, step_,
                    samples, stream);
    else
      kernel.launch(fields_.u.get(), nullptr, fields_.u_next.get(), nullptr, steps, window, step_, samples, stream);
  }
  // The receivers a launch of `steps` steps from step_ records: its sampled
  // steps join the recorded ones (a split chunk's launches share them), a
  // sample row each, the rows growing where needed.
  ClusterSamples<Real> samples(int steps) {
    ClusterSamples<Real> s;
    if (!recording_) return s;
    const long first = (step_ / sample_every_ + 1) * sample_every_;
    if (first > step_ + steps) return s;
    const auto at = std::find(recorded_steps_.begin(), recorded_steps_.end(), first);
    const std::size_t row = static_cast<std::size_t>(at - recorded_steps_.begin());
    if (at == recorded_steps_.end())
      for (long m = first; m <= step_ + steps; m += sample_every_) recorded_steps_.push_back(m);
    const std::size_t needed = recorded_steps_.size() * static_cast<std::size_t>(sample_count_);
    if (needed > sample_rows_.size()) {  // rows not yet taken move to a larger buffer
      DeviceBuffer<Real> rows;
      rows.allocate(std::max(needed, 2 * sample_rows_.size()));
      HW_CUDA(cudaDeviceSynchronize());
      if (sample_rows_.size())
        HW_CUDA(cudaMemcpy(rows.get(), sample_rows_.get(), sample_rows_.size() * sizeof(Real), cudaMemcpyDeviceToDevice));
      sample_rows_ = std::move(rows);
    }
    s.points = sample_points_.get(), s.count = sample_count_;
    s.rows = sample_count_ ? sample_rows_.get() + row * sample_count_ : nullptr;
    s.first = static_cast<int>(first - step_), s.every = static_cast<int>(sample_every_);
    s.previous = sample_previous_;
    return s;
  }
  // `steps` steps of `kernel` over the windows on `stream`, after the work
  // `after` marks (an event, or null), then the outputs' ghosts, as after a step.
  void run_cluster(ClusterKernel<D, Real>& kernel, int steps, const std::vector<Box<D>>& windows, cudaStream_t stream,
                   cudaEvent_t after = nullptr) {
    for (const Box<D>& window : windows)
      if (!window.empty()) launch_outputs(kernel, steps, window, samples(steps), stream);
    if (after) HW_CUDA(cudaStreamWaitEvent(stream, after, 0));
    if (equation_.levels == 2)
      fields_.fill_ghosts(out_u_.get(), out_u_prev_.get());
    else
      fields_.fill_ghosts(fields_.u_next.get());
  }
  // After a launch: its outputs become the fields.
  void finish_launch(int steps) {
    if (equation_.levels == 2) {
      std::swap(fields_.u, out_u_);
      std::swap(fields_.u_next, out_u_prev_);
    } else {
      std::swap(fields_.u, fields_.u_next);
    }
    step_ += steps;
  }

  ClusterSettings settings_;
  std::unique_ptr<ClusterKernel<D, Real>> kernel_;
  // Receivers recorded by the launches (record_samples).
  bool recording_ = false, sample_previous_ = false;
  long sample_every_ = 0;
  int sample_count_ = 0;
  DeviceBuffer<SamplePoint> sample_points_;
  DeviceBuffer<Real> sample_rows_;  // [recorded step][point]
  std::vector<long> recorded_steps_;
  DeviceBuffer<Real> out_u_, out_u_prev_;
  // The split chunk: its steps, and those of its first (split) launch.
  struct {
    int chunk = 0, steps = 0;
    Box<D> inner;  // the first launch's inner window
  } split_;
};

}  // namespace

template <int D, class Real>
std::unique_ptr<Backend<D, Real>> make_cluster_backend(const Problem& problem, const LocalDomain<D>& domain,
                                                       const ClusterSettings& settings, const SampleSource<D>& samples,
                                                       std::string& reason) {
  auto backend = std::make_unique<ClusterBackend<D, Real>>(problem, domain, settings);
  if (!backend->choose_plan(samples, reason)) return nullptr;
  return backend;
}

template std::unique_ptr<Backend<2, float>> make_cluster_backend(const Problem&, const LocalDomain<2>&,
                                                                 const ClusterSettings&, const SampleSource<2>&,
                                                                 std::string&);
template std::unique_ptr<Backend<2, double>> make_cluster_backend(const Problem&, const LocalDomain<2>&,
                                                                  const ClusterSettings&, const SampleSource<2>&,
                                                                  std::string&);
template std::unique_ptr<Backend<3, float>> make_cluster_backend(const Problem&, const LocalDomain<3>&,
                                                                 const ClusterSettings&, const SampleSource<3>&,
                                                                 std::string&);
template std::unique_ptr<Backend<3, double>> make_cluster_backend(const Problem&, const LocalDomain<3>&,
                                                                  const ClusterSettings&, const SampleSource<3>&,
                                                                  std::string&);

}  // namespace heatwave::cuda
