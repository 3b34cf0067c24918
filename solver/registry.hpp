#pragma once
// The backend registry: builds the backend a run asks for (or the best one
// this machine has, for auto), with the reason it was chosen and the halo
// transport its halos move through. Declared here for the time loop, defined
// in kernels/registry.cpp (the one place that knows every backend).
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "solver/backend.hpp"
#include "core/run_settings.hpp"

namespace heatwave {

template <int D, class Real>
struct ChosenBackend {
  std::unique_ptr<Backend<D, Real>> backend;
  std::string reason;           // why it runs: requested or auto, the device, a plan, a fallback
  HaloTransportKind transport;  // how its halos move between ranks
};

// Whether make_backend builds a GPU backend for these settings (cuda or
// cuda-cluster asked, or auto with a CUDA device visible).
bool gpu_backend_runs(const RunSettings& run);

// Collective over `comm` (ranks agree on the transport). Throws Error naming
// the config key where the request cannot be met (no device, no such build).
template <int D, class Real>
ChosenBackend<D, Real> make_backend(const Problem& problem, const RunSettings& run, const LocalDomain<D>& domain,
                                    MPI_Comm comm);

// The backends and transports this build has (heatwave info).
std::vector<BackendKind> built_backends();
std::vector<HaloTransportKind> built_transports();

}  // namespace heatwave
