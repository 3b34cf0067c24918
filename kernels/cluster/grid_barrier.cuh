#pragma once
// The grid barrier of a cooperative launch (cooperative_groups'
// grid_group::sync), for the resident 2D tiles and the deep 3D family.
// cooperative_groups.h brings in libcu++ unless
// _CG_LIMIT_INCLUDED_DEPENDENCIES is defined: 3.5 s of nvcc a unit, for the
// same barrier (its PTX compared: docs/performance.md, "The build's units").
#ifndef _CG_LIMIT_INCLUDED_DEPENDENCIES
#define _CG_LIMIT_INCLUDED_DEPENDENCIES
#endif
#include <cooperative_groups.h>
