// The backend registry: one switch over BackendKind. Adding a backend is its
// folder under kernels/, a BackendKind entry (core/run_settings.hpp) and a
// case here.
#include "solver/registry.hpp"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "io/collective.hpp"
#include "io/errors.hpp"
#include "kernels/host/host_backend.hpp"
#include "solver/halo_transport.hpp"
#include "solver/memory_check.hpp"
#include "solver/media.hpp"
#include "solver/receivers.hpp"
#ifdef HEATWAVE_HAVE_CUDA
#include "kernels/cluster/cluster_backend.hpp"
#include "kernels/cluster/plan.hpp"
#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/device.hpp"
#endif

namespace heatwave {

namespace {

// This rank's index among the ranks of its node (it picks the GPU), and their count.
std::pair<int, int> node_local_rank(MPI_Comm comm) {
  MPI_Comm node;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int rank = 0, size = 1;
  check_mpi(MPI_Comm_rank(node, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(node, &size), "MPI_Comm_size");
  check_mpi(MPI_Comm_free(&node), "MPI_Comm_free");
  return {rank, size};
}

// The halo transport (parallel.halo_transport): what the config asks for if
// this build, this MPI and the backend can do it (else a clear error), or for
// auto: nccl on a GPU backend with several ranks, one GPU each; else CUDA-aware
// MPI where the MPI says so; else host memory.
HaloTransportKind choose_transport(const Problem& p, const RunSettings& run, BackendKind backend, bool gpu_per_rank,
                                   int ranks) {
  const auto& asked = run.parallel.halo_transport;
  const bool gpu_backend = backend != BackendKind::host;
  if (asked == HaloTransportKind::mpi_host) return HaloTransportKind::mpi_host;
  const std::string key = p.source + ": 'parallel.halo_transport' = '" + (asked ? to_string(*asked) : "auto") + "'";
  if (asked && !gpu_backend)
    throw Error(ExitCode::invalid_value,
                key + " moves device memory, but the " + to_string(backend) +
                    " backend runs on the host (its halos are host memory: use mpi-host or auto)");
  if (asked == HaloTransportKind::nccl) {
    if (!nccl_available())
      throw Error(ExitCode::invalid_value, key +
                                               ": this build has no NCCL (built with HEATWAVE_NCCL=OFF or NCCL not "
                                               "found; heatwave info lists it): use auto or an mpi transport");
    return HaloTransportKind::nccl;
  }
  if (asked == HaloTransportKind::mpi_cuda_aware) {
    if (!cuda_aware_mpi())
      throw Error(ExitCode::invalid_value, key +
                                               ": this MPI is not CUDA-aware (MPIX_Query_cuda_support): use auto, nccl "
                                               "or mpi-host");
    return HaloTransportKind::mpi_cuda_aware;
  }
  if (!gpu_backend) return HaloTransportKind::mpi_host;
  if (nccl_available() && ranks > 1 && gpu_per_rank) return HaloTransportKind::nccl;
  return cuda_aware_mpi() ? HaloTransportKind::mpi_cuda_aware : HaloTransportKind::mpi_host;
}

// The GPU a rank computes on, and how many of its node's ranks share it.
struct GpuShare {
  int index = 0;
  int ranks = 1;
};

// Refuses, on every rank alike, a run whose fields and buffers do not fit:
// host memory is shared by the node's `local_ranks`, a GPU's by its share.
// `extra_fields`: fields of u's size the backend holds beyond u and u_next.
// `advise`: the error says what to do (a run refused), else only the shortfall.
template <int D>
void check_memory(const Problem& p, const RunSettings& run, const LocalDomain<D>& domain, int local_ranks,
                  std::optional<GpuShare> gpu, int extra_fields, MPI_Comm comm, bool advise = true) {
  const auto from_file = [](const std::optional<InitialCondition>& ic) { return ic && ic->type == InitialType::file; };
  const bool field_files = run.checkpoint.every > 0 || run.checkpoint.every_seconds > 0 || run.output.every > 0 ||
                           from_file(p.initial) || from_file(p.velocity);
  on_every_rank(comm, [&] {
    MemoryNeed need = memory_need(p, domain, gpu.has_value(), field_files);
    // Media and sources as the config defines them: fields read from files
    // where they compute, and on the host the staging that reads them.
    const MediaMemory media = media_memory(p, domain);
    need.host += media.staging + (gpu ? 0 : media.held);
    if (gpu) {
      need.host += media.held;  // made on the host, then copied
      need.device += media.held + static_cast<std::size_t>(extra_fields) * field_bytes(p, domain, true);
    }
    std::size_t receivers = 0;  // this rank's host bytes for them
    if (run.receivers.any()) {
      int rank = 0;
      check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
      need.host += receivers = receiver_memory(run.receivers, D, rank == 0);
      if (gpu) need.device += receiver_memory(run.receivers, D, false);  // the gather kernel's points and values
    }
    std::vector<long> owned(domain.layout.owned.begin(), domain.layout.owned.end());
    std::string what =
        fmt::format("{}: {} {} points a rank ({} of [{}])", p.source, to_string(p.precision), fmt::join(owned, " x "),
                    to_string(p.equation), fmt::join(domain.global, ", "));
    std::string advice = advise ? memory_advice : "";
    // Receivers that take most of it are named: fewer of them is the way.
    if (2 * receivers > need.host) {
      what += fmt::format(" with {} receivers ({} of it)", run.receivers.count(), format_gib(receivers));
      if (advise) advice = "use fewer receivers (or several runs over parts of them), or " + advice;
    }
    if (const auto host = host_memory_available()) {
      const std::string where = local_ranks > 1 ? fmt::format("host, shared by {} ranks", local_ranks) : "host";
      require_memory(need.host, *host / static_cast<std::size_t>(local_ranks), where, what, advice);
    }
#ifdef HEATWAVE_HAVE_CUDA
    if (gpu)
      require_memory(
          need.device, cuda::free_memory() / static_cast<std::size_t>(gpu->ranks),
          fmt::format("GPU {}{}", gpu->index, gpu->ranks > 1 ? fmt::format(", shared by {} ranks", gpu->ranks) : ""),
          what, advise ? memory_advice : "");
#endif
  });
}

}  // namespace

bool gpu_backend_runs(const RunSettings& run) {
  if (run.backend == BackendKind::host) return false;
#ifdef HEATWAVE_HAVE_CUDA
  return run.backend || !cuda::devices().empty();
#else
  return run.backend.has_value();  // make_backend refuses it, naming the key
#endif
}

template <int D, class Real>
ChosenBackend<D, Real> make_backend(const Problem& p, const RunSettings& run, const LocalDomain<D>& domain,
                                    MPI_Comm comm) {
  int ranks = 1;
  check_mpi(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
  const std::optional<BackendKind>& asked = run.backend;
  if (!gpu_backend_runs(run)) {
    check_memory(p, run, domain, node_local_rank(comm).second, std::nullopt, 0, comm);
#ifdef HEATWAVE_HAVE_CUDA
    const char* reason = asked ? "requested in the config" : "auto: no CUDA device visible";
#else
    const char* reason = asked ? "requested in the config" : "auto: this build has no CUDA backend";
#endif
    return {make_host_backend<D, Real>(p, domain), reason, choose_transport(p, run, BackendKind::host, false, ranks)};
  }
#ifdef HEATWAVE_HAVE_CUDA
  const auto gpus = cuda::devices();
  // auto: cuda-cluster, which runs the cuda backend's one-step kernel itself
  // where no cluster plan is faster, so a run gets the fastest kernels
  // without asking. Asked for by name, its fallbacks are warnings.
  const BackendKind kind = asked.value_or(BackendKind::cuda_cluster);
  if (gpus.empty())
    throw Error(ExitCode::cuda_error,
                p.source + ": 'backend' = '" + to_string(kind) + "' but no CUDA device is visible");
  const auto [local_rank, local_ranks] = node_local_rank(comm);
  // All ranks agree whether each has a GPU of its own (NCCL needs it): nodes may differ.
  int shared = local_ranks > static_cast<int>(gpus.size()) ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &shared, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  const HaloTransportKind transport = choose_transport(p, run, kind, shared == 0, ranks);
  const cuda::DeviceInfo device = cuda::select_device(local_rank);
  std::string reason = (asked ? "requested: " : "auto: ") + device.name + " (device " + std::to_string(device.index) +
                       ", sm_" + std::to_string(device.compute_major) + std::to_string(device.compute_minor) + ")";
  const int sharing = (local_ranks + static_cast<int>(gpus.size()) - 1) / static_cast<int>(gpus.size());
  const GpuShare gpu{device.index, sharing};
  auto fall_back = [&](const std::string& why) {
    if (asked) spdlog::warn("backend cuda-cluster: {}", why);
    reason += "; falling back to the cuda backend: " + why;
  };
  bool cluster = kind == BackendKind::cuda_cluster;
  if (const std::string gap = cuda::cluster_gap(p); cluster && !gap.empty()) {
    fall_back(gap + " (docs/design.md)");
    cluster = false;
  }
  // auto takes cuda-cluster only where its extra fields fit (the check is
  // collective: every rank falls back alike). Without extra fields the one
  // check below decides.
  const int extra = cuda::cluster_extra_fields(p);
  bool checked = false;
  if (cluster && !asked && extra > 0) {
    try {
      check_memory(p, run, domain, local_ranks, gpu, extra, comm, false);
      checked = true;
    } catch (const Error& e) {
      fall_back(fmt::format("its {} more fields of the grid's size do not fit: {}", extra, e.what()));
      cluster = false;
    }
  }
  if (!checked) check_memory(p, run, domain, local_ranks, gpu, cluster ? extra : 0, comm);
  if (cluster) {
    std::string why;
    const cuda::SampleSource<D> samples = [&] { return receiver_request(run.receivers, p, domain); };
    if (auto backend = cuda::make_cluster_backend<D, Real>(p, domain, run.cluster, samples, why))
      return {std::move(backend), reason + "; " + why, transport};
    fall_back(why);
  }
  return {cuda::make_cuda_backend<D, Real>(p, domain), reason, transport};
#else
  throw Error(ExitCode::cuda_error, p.source + ": 'backend' = '" + to_string(*asked) +
                                        "' needs a CUDA device, and this build is without CUDA (HEATWAVE_CUDA=OFF; "
                                        "heatwave info lists the backends): use backend: host or auto");
#endif
}

template ChosenBackend<2, float> make_backend(const Problem&, const RunSettings&, const LocalDomain<2>&, MPI_Comm);
template ChosenBackend<2, double> make_backend(const Problem&, const RunSettings&, const LocalDomain<2>&, MPI_Comm);
template ChosenBackend<3, float> make_backend(const Problem&, const RunSettings&, const LocalDomain<3>&, MPI_Comm);
template ChosenBackend<3, double> make_backend(const Problem&, const RunSettings&, const LocalDomain<3>&, MPI_Comm);

std::vector<BackendKind> built_backends() {
#ifdef HEATWAVE_HAVE_CUDA
  return {BackendKind::host, BackendKind::cuda, BackendKind::cuda_cluster};
#else
  return {BackendKind::host};
#endif
}

std::vector<HaloTransportKind> built_transports() {
  std::vector<HaloTransportKind> out{HaloTransportKind::mpi_host};
  if (cuda_aware_mpi()) out.push_back(HaloTransportKind::mpi_cuda_aware);
  if (nccl_available()) out.push_back(HaloTransportKind::nccl);
  return out;
}

}  // namespace heatwave
