#pragma once
// Index boxes over a rank's local storage. Local coordinates: owned points are
// [0, owned[a]) on each axis; the halo extends H points further on every side.
#include <array>
#include <cstddef>

#include "core/hd.hpp"

namespace heatwave {

template <int D>
using Index = std::array<long, D>;

// A half-open box [lo, hi) of local indices.
template <int D>
struct Box {
  Index<D> lo{}, hi{};

  HW_HD long extent(int a) const { return hi[a] > lo[a] ? hi[a] - lo[a] : 0; }
  HW_HD long size() const {
    long n = 1;
    for (int a = 0; a < D; ++a) n *= extent(a);
    return n;
  }
  HW_HD bool empty() const { return size() == 0; }
};

// The n-th point of a box, x fastest.
template <int D>
HW_HD Index<D> box_point(const Box<D>& box, long n) {
  Index<D> i;
  HW_UNROLL
  for (int a = 0; a < D; ++a) {
    const long e = box.extent(a);
    i[a] = box.lo[a] + n % e;
    n /= e;
  }
  return i;
}

// Linear addressing of a local field with a halo of width `halo`, x fastest.
// With align > 1 (the CUDA backend's vector loads) every x row is padded so
// that x = 0 and the row pitch fall on multiples of `align` elements, with at
// least `align` spare points beyond the halo on both sides, so that a vector
// group overlapping the halo edge stays inside the allocation.
template <int D>
struct Layout {
  Index<D> owned{};
  int halo = 0;
  int align = 1;

  HW_HD static long round_up(long n, long m) { return (n + m - 1) / m * m; }
  // Position of x = 0 within a row.
  HW_HD long lead() const { return align == 1 ? halo : round_up(halo, align) + align; }
  HW_HD long extent(int a) const {
    if (a == 0 && align > 1) return lead() + round_up(owned[0] + halo + align, align);
    return owned[a] + 2 * halo;
  }
  HW_HD Index<D> strides() const {
    Index<D> s{};
    s[0] = 1;
    for (int a = 1; a < D; ++a) s[a] = s[a - 1] * extent(a - 1);
    return s;
  }
  HW_HD std::size_t storage_size() const {
    std::size_t n = 1;
    for (int a = 0; a < D; ++a) n *= static_cast<std::size_t>(extent(a));
    return n;
  }
  HW_HD long offset(const Index<D>& i) const {
    const auto s = strides();
    long p = i[0] + lead();
    for (int a = 1; a < D; ++a) p += (i[a] + halo) * s[a];
    return p;
  }
  HW_HD Box<D> owned_box() const {
    Box<D> b;
    for (int a = 0; a < D; ++a) b.lo[a] = 0, b.hi[a] = owned[a];
    return b;
  }
  HW_HD Box<D> storage_box() const {
    Box<D> b;
    for (int a = 0; a < D; ++a) b.lo[a] = -halo, b.hi[a] = owned[a] + halo;
    return b;
  }
};

}  // namespace heatwave
