#include "kernels/cluster/source_boxes.hpp"

#include <algorithm>
#include <utility>

namespace heatwave::cuda {

template <int D, class Real>
SourceBoxes<Real> make_source_boxes(const std::vector<SourceTerm<D, Real>>& sources,
                                    const std::array<SourceAxis, D>& axes) {
  SourceBoxes<Real> out;
  for (std::size_t t = 0; t < sources.size(); ++t) {
    const SourceTerm<D, Real>& term = sources[t];
    // Along each axis: the coordinates kept, in order, each with its first
    // index in the term; their runs, each with where its factors start.
    std::array<std::vector<std::pair<int, std::size_t>>, D> kept;
    std::array<std::vector<std::pair<std::size_t, int>>, D> runs;
    for (int a = 0; a < D; ++a) {
      const SourceAxis& axis = axes[a];
      for (std::size_t k = 0; k < term.index[a].size(); ++k) {
        const long c = axis.periodic ? sample_index(term.index[a][k], axis.n, true) : term.index[a][k];
        if (c >= axis.lo && c < axis.hi) kept[a].emplace_back(static_cast<int>(c), k);
      }
      std::stable_sort(kept[a].begin(), kept[a].end(), [](const auto& l, const auto& r) { return l.first < r.first; });
      kept[a].erase(std::unique(kept[a].begin(), kept[a].end(),
                                [](const auto& l, const auto& r) { return l.first == r.first; }),
                    kept[a].end());
      for (std::size_t k = 0; k < kept[a].size(); ++k) {
        if (k == 0 || kept[a][k].first != kept[a][k - 1].first + 1)
          runs[a].emplace_back(k, static_cast<int>(out.weights.size()));
        out.weights.push_back(term.factor[a][kept[a][k].second]);
      }
    }
    std::array<std::size_t, D> run{};  // a box's run along each axis, x fastest
    for (bool more = std::all_of(runs.begin(), runs.end(), [](const auto& r) { return !r.empty(); }); more;) {
      SourceBox box;
      box.source = static_cast<int>(t);
      for (int a = 0; a < D; ++a) {
        const std::size_t begin = runs[a][run[a]].first;
        const std::size_t end = run[a] + 1 < runs[a].size() ? runs[a][run[a] + 1].first : kept[a].size();
        box.lo[a] = kept[a][begin].first, box.hi[a] = kept[a][end - 1].first + 1;
        box.factor[a] = runs[a][run[a]].second;
      }
      out.boxes.push_back(box);
      more = false;
      for (int a = 0; a < D && !more; ++a) more = ++run[a] < runs[a].size() || (run[a] = 0, false);
    }
  }
  return out;
}

template SourceBoxes<float> make_source_boxes<2, float>(const std::vector<SourceTerm<2, float>>&,
                                                        const std::array<SourceAxis, 2>&);
template SourceBoxes<double> make_source_boxes<2, double>(const std::vector<SourceTerm<2, double>>&,
                                                          const std::array<SourceAxis, 2>&);
template SourceBoxes<float> make_source_boxes<3, float>(const std::vector<SourceTerm<3, float>>&,
                                                        const std::array<SourceAxis, 3>&);
template SourceBoxes<double> make_source_boxes<3, double>(const std::vector<SourceTerm<3, double>>&,
                                                          const std::array<SourceAxis, 3>&);

}  // namespace heatwave::cuda
