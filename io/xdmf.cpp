#include "io/xdmf.hpp"

#include <spdlog/fmt/fmt.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <fstream>

#include "io/errors.hpp"
#include "io/files.hpp"

namespace heatwave {

void write_xdmf(const std::string& path, const XdmfGrid& grid, const std::vector<XdmfStep>& steps) {
  const bool three_d = grid.shape.size() == 3;
  const std::string dims = fmt::format("{}", fmt::join(grid.shape, " "));
  std::ostringstream out;
  {
    out << "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n<Xdmf Version=\"2.0\">\n  <Domain>\n"
        << "    <Grid Name=\"heatwave\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for (const XdmfStep& s : steps) {
      out << fmt::format("      <Grid Name=\"{}\" GridType=\"Uniform\">\n", s.file)
          << fmt::format("        <Time Value=\"{}\"/>\n", s.time)
          << fmt::format("        <Topology TopologyType=\"{}DCoRectMesh\" Dimensions=\"{}\"/>\n", three_d ? 3 : 2,
                         dims)
          << fmt::format("        <Geometry GeometryType=\"{}\">\n", three_d ? "ORIGIN_DXDYDZ" : "ORIGIN_DXDY");
      for (const auto& [name, values] : {std::pair{"Origin", &grid.origin}, std::pair{"Spacing", &grid.spacing}})
        out << fmt::format(
            "          <DataItem Name=\"{}\" Dimensions=\"{}\" NumberType=\"Float\" Precision=\"8\" "
            "Format=\"XML\">{}</DataItem>\n",
            name, values->size(), fmt::join(*values, " "));
      out << "        </Geometry>\n";
      for (const std::string& field : s.fields)
        out << fmt::format("        <Attribute Name=\"{}\" AttributeType=\"Scalar\" Center=\"Node\">\n", field)
            << fmt::format(
                   "          <DataItem Dimensions=\"{}\" NumberType=\"Float\" Precision=\"{}\" "
                   "Format=\"HDF\">{}:/{}</DataItem>\n",
                   dims, grid.precision_bytes, s.file, field)
            << "        </Attribute>\n";
      out << "      </Grid>\n";
    }
    out << "    </Grid>\n  </Domain>\n</Xdmf>\n";
  }
  write_text_file(path, out.str(), "XDMF file");
}

}  // namespace heatwave
