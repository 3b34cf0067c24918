#include "io/collective.hpp"

#include <string>
#include <vector>

namespace heatwave {

void check_mpi(int result, const char* call) {
  if (result == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(result, text, &length);
  throw Error(ExitCode::mpi_error, std::string(call) + " failed: " + std::string(text, length));
}

void throw_if_any_rank_failed(MPI_Comm comm, const std::optional<Error>& failure) {
  int rank = 0, size = 1;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const int mine = failure ? rank : size;
  int first = size;
  check_mpi(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (first == size) return;
  // The failing rank sends its code and message to all.
  std::string message = rank == first ? failure->what() : std::string();
  int header[2] = {rank == first ? static_cast<int>(failure->code()) : 0, static_cast<int>(message.size())};
  check_mpi(MPI_Bcast(header, 2, MPI_INT, first, comm), "MPI_Bcast");
  message.resize(static_cast<std::size_t>(header[1]));
  check_mpi(MPI_Bcast(message.data(), header[1], MPI_CHAR, first, comm), "MPI_Bcast");
  throw Error(static_cast<ExitCode>(header[0]), message);
}

}  // namespace heatwave
