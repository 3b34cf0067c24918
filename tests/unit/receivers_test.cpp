// Receivers recorded by the backend as it makes the levels
// (Backend::record_samples), the way cuda-cluster records them inside its
// launches, so that sample steps end no chunk: the file is bitwise the one
// sampled between single steps. The recording backend here is the host
// backend stepping one step at a time and gathering at each sampled step:
// this tests the loop's side (Receivers::record_with and collect), which CI
// runs without a GPU; the kernels' side is GpuCluster.RecordsReceivers.
#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "io/hdf5.hpp"
#include "kernels/host/host_backend.hpp"
#include "solver/decomposition.hpp"
#include "solver/receivers.hpp"
#include "solver/simulation.hpp"
#include "tests/support.hpp"

namespace heatwave {
namespace {

// The host backend, recording receivers as it advances.
template <int D, class Real>
class RecordingHost final : public Backend<D, Real> {
 public:
  RecordingHost(const Problem& p, const LocalDomain<D>& domain) : host_(make_host_backend<D, Real>(p, domain)) {}

  bool record_samples(Level level, const std::vector<Index<D>>& points, long every) override {
    level_ = level, points_ = points, every_ = every;
    return true;
  }
  // What the receivers asked it to record.
  SampleRequest<D> recording() const { return {level_, points_, every_}; }
  void take_samples(std::vector<long>& steps, std::vector<Real>& values) override {
    steps = std::move(steps_), values = std::move(values_);
    steps_.clear(), values_.clear();
  }
  void advance(int k) override {
    for (int m = 0; m < k; ++m) {
      host_->advance(1);
      if (every_ == 0 || host_->step() % every_ != 0) continue;
      std::vector<Real> at(points_.size());
      host_->gather(level_, points_, at.data());
      steps_.push_back(host_->step());
      values_.insert(values_.end(), at.begin(), at.end());
    }
  }

  BackendKind kind() const override { return host_->kind(); }
  void initialize() override { host_->initialize(); }
  void update(const Box<D>& region) override { host_->update(region); }
  void finish_step() override { host_->finish_step(); }
  long step() const override { return host_->step(); }
  void set_step(long step) override { host_->set_step(step); }
  void pack(Level l, const Box<D>& box, Real* buffer) override { host_->pack(l, box, buffer); }
  void unpack(Level l, const Box<D>& box, const Real* buffer) override { host_->unpack(l, box, buffer); }
  void read(Level l, Real* owned) override { host_->read(l, owned); }
  void gather(Level l, const std::vector<Index<D>>& points, Real* out) override { host_->gather(l, points, out); }
  void write(Level l, const Real* owned) override { host_->write(l, owned); }
  LocalStats stats() override { return host_->stats(); }

 private:
  std::unique_ptr<Backend<D, Real>> host_;
  Level level_ = Level::current;
  std::vector<Index<D>> points_;
  long every_ = 0;
  std::vector<long> steps_;
  std::vector<Real> values_;
};

std::string shot_yaml(const std::string& file, const char* field) {
  return fmt::format(
      "equation: wave\ngrid: {{points: [61, 45], length: [1.2, 1.0]}}\n"
      "material: {{c: {{type: layers, axis: y, interfaces: [0.5], values: [1.0, 0.6]}}}}\n"
      "boundary: {{default: {{type: absorbing, width: 8}}, y_high: {{type: neumann, value: 0.0}}}}\n"
      "sources: [{{type: point, position: [0.61, 0.8], amplitude: 1.0, time: {{type: ricker, frequency: 6.0}}}}]\n"
      "time: {{dt: auto, steps: 40}}\ninitial: {{type: constant, value: 0.0}}\nbackend: host\n"
      "receivers: {{every: 3, field: {}, file: {}, points: [[0.0, 0.5], [0.33, 0.71]], "
      "lines: [{{from: [0.05, 0.9], to: [1.15, 0.9], count: 17}}]}}\n",
      field, file);
}

// A run sampled between single steps, and one whose backend records the
// samples through chunks of 7 steps (sample steps every 3 fall inside them).
TEST(UnitReceivers, RecordedSamplesMakeTheFileSampledBetweenSteps) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "heatwave-receivers-test";
  std::filesystem::create_directories(dir);
  for (const char* field : {"u", "u_previous"}) {
    const std::string sampled = (dir / "sampled.h5").string(), recorded = (dir / "recorded.h5").string();
    const Config a = test::config_from(shot_yaml(sampled, field)), b = test::config_from(shot_yaml(recorded, field));
    const Problem p = Problem::from(a);
    Decomposition decomposition(p, {}, p.radius, MPI_COMM_SELF);
    const LocalDomain<2> domain = decomposition.local_domain<2>();

    auto host = make_host_backend<2, double>(p, domain);
    Receivers<2, double> by_steps(a, p, domain, MPI_COMM_SELF);
    host->initialize();
    by_steps.start(0, false);
    EXPECT_FALSE(by_steps.record_with(*host));  // the host backend is sampled between chunks
    by_steps.sample(*host, 0, p.time_at(0));
    for (long n = 1; n <= p.steps; ++n) {
      host->advance(1);
      if (n % by_steps.every() == 0) by_steps.sample(*host, n, p.time_at(n));
    }
    by_steps.flush();

    RecordingHost<2, double> recording(p, domain);
    Receivers<2, double> by_chunks(b, p, domain, MPI_COMM_SELF);
    recording.initialize();
    by_chunks.start(0, false);
    ASSERT_TRUE(by_chunks.record_with(recording));
    // What the registry hands a backend before the run (receiver_request):
    // the same points, level and steps, 19 receivers' 4 points each.
    const SampleRequest<2> asked = receiver_request(b.run.receivers, p, domain), told = recording.recording();
    EXPECT_EQ(asked.points.size(), 76u) << field;
    EXPECT_EQ(asked.points, told.points) << field;
    EXPECT_EQ(asked.level, told.level) << field;
    EXPECT_EQ(asked.every, told.every) << field;
    by_chunks.sample(recording, 0, p.time_at(0));
    for (long done = 0; done < p.steps; done += 7) {
      recording.advance(static_cast<int>(std::min<long>(7, p.steps - done)));
      by_chunks.collect(recording);
    }
    by_chunks.flush();

    const hdf5::Traces x = hdf5::read_traces(sampled), y = hdf5::read_traces(recorded);
    ASSERT_EQ(x.samples, 14u) << field;  // steps 0, 3, ..., 39
    EXPECT_EQ(y.samples, x.samples) << field;
    EXPECT_EQ(y.step, x.step) << field;
    EXPECT_EQ(y.time, x.time) << field;
    EXPECT_EQ(y.traces, x.traces) << field;  // bitwise: operator== on doubles
    double largest = 0;
    for (double v : x.traces) largest = std::max(largest, std::abs(v));
    EXPECT_GT(largest, 0) << field << ": the pulse never reached a receiver";
  }
  std::filesystem::remove_all(dir);
}

// What a benchmark of a case with receivers times
// (Simulation::advance_with_receivers): the samples that run() takes, in
// pieces of any length (here 10, 17 and 13 steps), but for run()'s sample of
// step 0.
TEST(UnitReceivers, AdvancingWithReceiversSamplesAsARunDoes) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "heatwave-advance-receivers-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string ran = (dir / "ran.h5").string(), advanced = (dir / "advanced.h5").string();
  const std::string checkpoints = fmt::format("checkpoint: {{dir: {}}}\n", (dir / "checkpoints").string());
  {
    Simulation<2, double> run(test::config_from(shot_yaml(ran, "u") + checkpoints), MPI_COMM_SELF);
    run.run();
  }
  {
    Simulation<2, double> pieces(test::config_from(shot_yaml(advanced, "u") + checkpoints), MPI_COMM_SELF);
    for (long steps : {10, 17, 13}) pieces.advance_with_receivers(steps);
    pieces.write_checkpoint();  // the samples go to the file first
  }
  const hdf5::Traces x = hdf5::read_traces(ran), y = hdf5::read_traces(advanced);
  ASSERT_EQ(x.samples, 14u);  // steps 0, 3, ..., 39
  ASSERT_EQ(y.samples, 13u);  // steps 3, ..., 39
  const std::size_t r = x.receivers;
  EXPECT_EQ(std::vector<long long>(x.step.begin() + 1, x.step.end()), y.step);
  EXPECT_EQ(std::vector<double>(x.traces.begin() + static_cast<long>(r), x.traces.end()), y.traces);  // bitwise
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace heatwave
