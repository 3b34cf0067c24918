#pragma once
// The one interface every compute backend implements (kernels/host, cuda,
// cluster). Like BabelStream's Stream: small, and the only thing the time loop
// and the halo exchange know about where and how the fields live. A backend
// reports where its memory is and the stream its work is queued on; how halos
// travel between ranks is the halo transport's business (halo_transport.hpp).
#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "solver/box.hpp"
#include "solver/domain.hpp"
#include "solver/problem.hpp"
#include "core/run_settings.hpp"

// A CUDA stream as plain C++ sees it (cudaStream_t is CUstream_st*): typed,
// without the CUDA headers.
struct CUstream_st;

namespace heatwave {

using GpuStream = CUstream_st*;

// Field levels a backend holds: u^n, and for an equation second order in time
// u^{n-1} (before the first step it holds v0).
enum class Level : int { current = 0, previous = 1 };

enum class MemorySpace { host, device };

// The receivers a run records on this rank (Backend::record_samples' arguments):
// `level` at `points` (owned, local coordinates) every `every` steps; every 0:
// none. Known before the backend is made, so that one which tunes its launches
// (cuda-cluster) times them recording what the run will.
template <int D>
struct SampleRequest {
  Level level = Level::current;
  std::vector<Index<D>> points;
  long every = 0;

  bool any() const { return every > 0 && !points.empty(); }
};

// Per-rank partial sums for the diagnostics; the time loop reduces them over
// ranks. Weighted sums use the trapezoid weights of LocalDomain::weight.
struct LocalStats {
  double min = 0, max = 0;
  double weight = 0;       // sum w
  double sum = 0;          // sum w u
  double sum_squares = 0;  // sum w u^2
  double kinetic = 0;      // energy: sum w ((u^n - u^{n-1})/dt)^2
  double potential = 0;    // energy: -c^2 sum w u^{n-1} lap(u^n)
  long non_finite = 0;     // NaN/Inf count in u
  long points = 0;
};

template <int D, class Real>
class Backend {
 public:
  virtual ~Backend() = default;

  virtual BackendKind kind() const = 0;
  std::string name() const { return to_string(kind()); }
  // The launch plan a backend runs ("" where it has none: cuda-cluster's, e.g.
  // "cluster 1x1, tile 112x88, k 8, 8 thread rows").
  virtual std::string plan() const { return {}; }
  // Steps between halo exchanges this backend runs best with, for
  // parallel.exchange_every: auto (a temporal-blocking backend: its k; a
  // GPU backend: deep halos that pay an exchange's fixed cost once for k steps),
  // and the multiple a chunk's length is where no face is exchanged.
  virtual int preferred_exchange_every() const { return 1; }
  // Fill the fields from the problem's initial conditions, where they live.
  virtual void initialize() = 0;
  // Advance k steps. The caller guarantees neighbour halos valid for k steps
  // (depth >= k*radius); physical faces are the backend's own business.
  // Same as k times: update(LocalDomain::update_box(radius, steps left)), finish_step().
  virtual void advance(int k) = 0;
  // One step in parts, so that a halo exchange can run while a part computes:
  // update() computes the next level at the points of `region` (a part of the
  // step's update box) from the current level, and may return before the work
  // is done; finish_step() makes the next level current (physical ghosts, step
  // count). Every point is computed alike whatever the parts: bitwise the same.
  virtual void update(const Box<D>& region) = 0;
  virtual void finish_step() = 0;
  // A chunk of k steps in two parts, so that the halo exchange runs while the
  // first computes (a temporal-blocking backend, whose k-step launches
  // update() cannot split): advance_inner(k) queues the chunk's work that
  // reads no exchanged halo, apart from stream(), so packs, messages and
  // unpacks on stream() go on meanwhile (they read the current levels and
  // write their halos; it writes neither); advance_outer() queues the rest,
  // after the unpacks, and ends the k steps. The same as advance(k), bitwise.
  virtual bool splits_chunks() const { return false; }
  virtual void advance_inner(int /*k*/) {}
  virtual void advance_outer() {}
  // Steps taken so far; set when the fields come from a checkpoint (restart),
  // because the first step of an equation second order in time differs.
  virtual long step() const = 0;
  virtual void set_step(long step) = 0;

  // Receivers recorded as the levels are made, by a backend whose launches
  // run many steps (cuda-cluster): from now on it records `level` at `points`
  // (owned, local coordinates) at every step that is a multiple of `every`,
  // so sample steps need not end chunks; false where it cannot (the caller
  // then samples with gather() between chunks). No points (every 0) stops it.
  // take_samples() hands over what was recorded since its last call, in step
  // order: the steps, and the values [sample][point]; it waits for the work.
  virtual bool record_samples(Level /*level*/, const std::vector<Index<D>>& /*points*/, long /*every*/) {
    return false;
  }
  virtual void take_samples(std::vector<long>& steps, std::vector<Real>& values) { steps.clear(), values.clear(); }

  // Halo exchange support: copy a box of a level to or from a contiguous
  // buffer in this backend's memory (x fastest). Queued on stream() where the
  // backend has one: the halo transport orders its messages after them.
  virtual void pack(Level, const Box<D>&, Real* buffer) = 0;
  virtual void unpack(Level, const Box<D>&, const Real* buffer) = 0;
  virtual MemorySpace memory() const { return MemorySpace::host; }
  virtual GpuStream stream() const { return nullptr; }

  // The owned points of a level, x fastest (I/O, checkpoints, tests).
  virtual void read(Level, Real* owned) = 0;
  // The values of a level at a few owned points (local coordinates; each
  // backend finds them in its own layout), into host memory; waits.
  // Receivers sample with it (solver/receivers.hpp).
  virtual void gather(Level, const std::vector<Index<D>>& points, Real* out) = 0;
  virtual void write(Level, const Real* owned) = 0;

  // Diagnostics of the current state. Needs halos of depth radius valid.
  virtual LocalStats stats() = 0;

  // Wait for the work issued so far (GPU backends launch asynchronously): the
  // time loop calls it before reading the clock, so phases are honest.
  virtual void synchronize() {}

  // Device time of the work queued for a phase: span_begin(), queue the work,
  // span_end(phase). A GPU backend records CUDA events on its stream and sums
  // them in device_seconds() (which waits for the work); where the work runs
  // on the host, the host clock measures it already and device_seconds() is empty.
  enum class Span { compute, pack, unpack };
  virtual void span_begin() {}
  virtual void span_end(Span) {}
  virtual std::optional<std::array<double, 3>> device_seconds() { return std::nullopt; }

  // Seconds taken by the work issued between start_timer() and stop_timer(),
  // timed where it runs (CUDA events on a GPU backend); waits for that work.
  virtual void start_timer() { timer_start_ = std::chrono::steady_clock::now(); }
  virtual double stop_timer() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - timer_start_).count();
  }

 private:
  std::chrono::steady_clock::time_point timer_start_;
};

}  // namespace heatwave
