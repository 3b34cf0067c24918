#pragma once
// backend: cuda-cluster, behind a plain C++ header (the registry includes it).
#include <functional>
#include <memory>
#include <string>

#include "solver/backend.hpp"

namespace heatwave::cuda {

// The run's receivers, made when asked (finding a rank's points is a pass over its receivers).
template <int D>
using SampleSource = std::function<SampleRequest<D>()>;

// Temporal blocking over thread-block clusters (kernel_2d_object.cuh, kernel_3d_object.cuh)
// with the plan from HEATWAVE_CLUSTER_PLAN, the config's `cluster:`
// overrides, the plan cache, or a short autotune (then cached), in that order.
// The autotune times each plan recording `samples()`, the receivers the run
// will record (their cost differs between plans); asked only where a plan is
// looked up in the cache or tuned. Null where no cluster plan
// runs, or the baseline step kernel was faster: `reason` says which (the
// registry then runs the cuda backend); else it describes the plan.
template <int D, class Real>
std::unique_ptr<Backend<D, Real>> make_cluster_backend(const Problem& problem, const LocalDomain<D>& domain,
                                                       const ClusterSettings& settings, const SampleSource<D>& samples,
                                                       std::string& reason);

}  // namespace heatwave::cuda
