// GPU tests: skip visibly (exit 77, ctest SKIP_RETURN_CODE) where no CUDA
// device is visible, and with --clusters (the cuda-cluster tests) where the
// device cannot launch thread-block clusters: they would test the fallback.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "kernels/cuda/device.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const auto devices = heatwave::cuda::devices();
  if (devices.empty()) {
    std::printf("SKIPPED: no CUDA device visible; the gpu tests need one\n");
    MPI_Finalize();
    return 77;
  }
  const bool clusters = argc > 1 && std::string(argv[1]) == "--clusters";
  if (clusters) {
    for (int i = 1; i + 1 < argc; ++i) argv[i] = argv[i + 1];
    --argc;
    if (!devices[0].clusters) {
      std::printf(
          "SKIPPED: %s cannot launch thread-block clusters (sm_90 or newer); the cuda-cluster tests need them\n",
          devices[0].name.c_str());
      MPI_Finalize();
      return 77;
    }
  }
  std::printf("running on %s (sm_%d%d)\n", devices[0].name.c_str(), devices[0].compute_major, devices[0].compute_minor);
  // Autotuned cluster plans go to a cache of this run's own, not the user's.
  char dir[] = "/tmp/heatwave-gpu-tests-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("HEATWAVE_CACHE_DIR", dir, 1);
  ::testing::InitGoogleTest(&argc, argv);
  const int result = RUN_ALL_TESTS();
  std::filesystem::remove_all(dir);
  MPI_Finalize();
  return result;
}
