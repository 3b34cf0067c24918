#include "io/metrics.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "build_info.hpp"
#include "io/errors.hpp"
#include "io/files.hpp"

namespace heatwave {

namespace {
nlohmann::json summary_json(const FieldSummary& s) {
  nlohmann::json j = {{"step", s.step},
                      {"time", s.time},
                      {"min", s.min},
                      {"max", s.max},
                      {"mean", s.mean},
                      {"l2", s.l2},
                      {"non_finite", s.non_finite}};
  if (s.has_energy) j["energy"] = s.energy;
  return j;
}

nlohmann::json phases_json(const PhaseTimes& p) {
  return {{"compute", p.compute},         {"pack", p.pack}, {"communicate", p.communicate}, {"unpack", p.unpack},
          {"diagnostics", p.diagnostics}, {"io", p.io}};
}
}  // namespace

void write_metrics_json(const std::string& path, const Config& c, const RunMetrics& m) {
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));

  nlohmann::json j;
  j["heatwave_version"] = build::version;
  j["git_commit"] = build::git_commit;
  j["timestamp"] = stamp;
  j["host"] = host;
  j["config_source"] = c.source;
  j["config_hash"] = config_hash(c);
  j["config"] = to_yaml(c);
  j["equation"] = to_string(c.equation);
  j["precision"] = to_string(c.precision);
  j["dims"] = c.dims;
  j["grid"] = std::vector<long>(c.points.begin(), c.points.begin() + c.dims);
  j["radius"] = c.radius;
  j["backend"] = m.backend;
  j["backend_reason"] = m.backend_reason;
  j["ranks"] = m.ranks;
  j["threads"] = m.threads;
  j["decomposition"] = std::vector<int>(m.decomposition.begin(), m.decomposition.begin() + c.dims);
  j["steps"] = m.steps;
  j["dt"] = m.dt;
  j["simulated_time"] = m.simulated_time;
  j["wall_seconds"] = m.wall_seconds;
  j["halo_transport"] = m.halo_transport;
  j["halo_path"] = m.halo_path;
  j["overlap"] = m.overlap;
  j["exchange_every"] = {{"steps", m.exchange_every}, {"reason", m.exchange_every_reason}};
  j["phases_seconds"] = phases_json(m.phases);
  j["phases_mean_seconds"] = phases_json(m.phases_mean);
  j["phases_clock"] = m.phases_clock;
  j["cell_updates"] = m.cell_updates;
  j["cells_per_second"] = m.cells_per_second;
  j["bytes_per_update"] = m.bytes_per_update;
  j["effective_bandwidth_bytes_per_second"] = m.cells_per_second * m.bytes_per_update;
  j["initial"] = summary_json(m.initial);
  j["final"] = summary_json(m.final);
  if (m.first_energy.has_energy) j["first_energy"] = summary_json(m.first_energy);
  if (!m.restarted_from.empty())
    j["restart"] = {{"checkpoint", m.restarted_from},
                    {"step", m.first_step},
                    {"time", m.initial.time},
                    {"clock", {{"step", m.clock_step}, {"time", m.clock_time}, {"dt", m.dt}}}};

  write_text_file(path, j.dump(2) + "\n", "metrics file");
}

}  // namespace heatwave
