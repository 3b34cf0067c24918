#pragma once
// The equation types, as device code includes them (no host-only header):
// the kernels' units instantiate them by name. equations.hpp adds their
// list, the dispatch and the run-time facts.
#include "core/equations/damped_wave.hpp"
#include "core/equations/heat.hpp"
#include "core/equations/wave.hpp"
