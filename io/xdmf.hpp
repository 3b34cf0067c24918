#pragma once
// XDMF: the small XML file that lets ParaView and VisIt open a time series of
// HDF5 field files directly (no plugin), on a uniform (co-rectilinear) grid.
#include <cstdint>
#include <string>
#include <vector>

namespace heatwave {

// The grid, C order (slowest axis first: z, y, x), as the HDF5 datasets are stored.
struct XdmfGrid {
  std::vector<std::uint64_t> shape;
  std::vector<double> origin, spacing;
  int precision_bytes = 8;  // 4: float32, 8: float64
};

struct XdmfStep {
  double time = 0;
  std::string file;  // relative to the XDMF file
  std::vector<std::string> fields;
};

// Writes the whole series to `path` through a temporary name, so the file is
// always a valid, complete description. Throws Error(io_error).
void write_xdmf(const std::string& path, const XdmfGrid& grid, const std::vector<XdmfStep>& steps);

}  // namespace heatwave
