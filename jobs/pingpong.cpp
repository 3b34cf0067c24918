// heatwave_pingpong: MPI ping-pong between ranks 0 and 1, the halo-exchange
// cost model's input (jobs/model.py): one-way time per message size (8 B to
// 8 MiB), the latency (8 B) and the asymptotic bandwidth (8 MiB). Host buffers (what heatwave's host-staged
// exchange sends).
//   mpirun -n 2 heatwave_pingpong [out.json]
// Run one rank per node (or per GPU) to measure the link the halos cross.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

// Median one-way seconds for `bytes`, over repetitions that last ~20 ms each.
double one_way_seconds(int rank, long bytes, std::vector<char>& buffer) {
  const int peer = 1 - rank;
  const int reps = static_cast<int>(std::clamp(2e7 / (bytes + 2000.0), 4.0, 2000.0));
  std::vector<double> samples;
  for (int trial = 0; trial < 5; ++trial) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < reps; ++i) {
      if (rank == 0) {
        MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      }
    }
    samples.push_back((MPI_Wtime() - start) / (2.0 * reps));
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "heatwave_pingpong: run on exactly 2 ranks (got %d)\n", size);
    MPI_Finalize();
    return 2;
  }
  const long max_bytes = 8L << 20;
  std::vector<char> buffer(max_bytes, 1);
  std::vector<std::pair<long, double>> results;
  for (long bytes = 8; bytes <= max_bytes; bytes *= 4)
    results.emplace_back(bytes, one_way_seconds(rank, bytes, buffer));

  // latency: the smallest message; bandwidth: the largest, less the latency.
  const double latency = results.front().second;
  const double bandwidth = results.back().first / (results.back().second - latency);
  if (rank == 0) {
    char hosts[2][MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    MPI_Get_processor_name(hosts[0], &len);
    MPI_Recv(hosts[1], MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    FILE* out = argc > 1 ? std::fopen(argv[1], "w") : stdout;
    if (!out) {
      std::fprintf(stderr, "heatwave_pingpong: cannot write %s\n", argv[1]);
      MPI_Abort(MPI_COMM_WORLD, 13);
    }
    std::fprintf(out, "{\n  \"hosts\": [\"%s\", \"%s\"],\n  \"buffers\": \"host\",\n", hosts[0], hosts[1]);
    std::fprintf(out, "  \"latency_seconds\": %.6e,\n  \"bandwidth_bytes_per_second\": %.6e,\n", latency, bandwidth);
    std::fprintf(out, "  \"messages\": [\n");
    for (size_t i = 0; i < results.size(); ++i)
      std::fprintf(out, "    {\"bytes\": %ld, \"one_way_seconds\": %.6e}%s\n", results[i].first, results[i].second,
                   i + 1 < results.size() ? "," : "");
    std::fprintf(out, "  ]\n}\n");
    if (out != stdout) std::fclose(out);
  } else {
    char host[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    MPI_Get_processor_name(host, &len);
    MPI_Send(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
