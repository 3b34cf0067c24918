#pragma once
// Errors that may strike one rank only (a file one rank cannot read, a chunk
// whose checksum fails) made collective: every rank throws the same Error, so
// none is left waiting in a later MPI call and rank 0 reports the cause.
#include <mpi.h>

#include <optional>
#include <utility>

#include "io/errors.hpp"

namespace heatwave {

// Every rank calls this with its own failure (or none); when any rank failed,
// every rank throws the lowest failing rank's Error.
void throw_if_any_rank_failed(MPI_Comm comm, const std::optional<Error>& failure);

// Runs `work` on every rank and then agrees on failure as above.
template <class F>
void on_every_rank(MPI_Comm comm, F&& work) {
  std::optional<Error> failure;
  try {
    std::forward<F>(work)();
  } catch (const Error& e) {
    failure = e;
  }
  throw_if_any_rank_failed(comm, failure);
}

// Throws Error(mpi_error) naming `call` when an MPI call does not return MPI_SUCCESS.
void check_mpi(int result, const char* call);

}  // namespace heatwave
