#pragma once
// The NCCL halo transport behind a plain C++ header (built with HEATWAVE_NCCL).
#include <mpi.h>

#include <memory>

#include "solver/halo_transport.hpp"

namespace heatwave::cuda {

// Collective over `comm`: rank 0 makes the NCCL id, MPI broadcasts it, every
// rank joins the communicator on its current device (one GPU per rank).
// `compute` is the backend's stream: each stage's messages move on a halo
// stream that waits for the packs queued on it, and wait() makes it wait for
// the messages, so the interior computes meanwhile and the host never blocks.
// Buffers are device memory. NCCL failures throw Error(mpi_error) with
// ncclGetErrorString and NCCL's last error text.
std::unique_ptr<HaloTransport> make_nccl_transport(MPI_Comm comm, GpuStream compute, int element_bytes);

}  // namespace heatwave::cuda
